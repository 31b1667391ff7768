/* memd engine — planner internals shared by plan*.c (not part of the engine API). */
#ifndef MEMD_ENGINE_PLAN_INTERNAL_H
#define MEMD_ENGINE_PLAN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdatomic.h>

#include "plan.h"

/* Conflict graph: adj[off[i] .. off[i+1]) are the buffers whose lifetimes overlap i's
 * (both non-empty). Built only when the edge count stays under a cap, because dense
 * traces with tens of thousands of buffers would need gigabytes. */
typedef struct plan_graph {
    size_t n;
    size_t *off;
    uint32_t *adj;
} plan_graph;

/* The caller's progress callback and the cancel it may ask for, shared by every phase
 * of one memd_plan_solve call (budgets are copied into sub-budgets; this is not). */
typedef struct plan_watch {
    memd_plan_progress_fn fn; /* NULL: nothing to call, never cancelled */
    void *ctx;
    memd_plan_clock_fn clock;
    void *clock_ctx;
    uint64_t t0, last_ns, period_ns, lb;
    uint64_t arena;     /* best arena known (phases report theirs as they go) */
    uint64_t polls;     /* without a clock: calls every 4096 polls */
    uint64_t iterations; /* the most reported so far */
    bool have;
    atomic_bool cancelled; /* read by every lane */
} plan_watch;

/* Tells the watch of a better arena (calls the callback). */
void memd_plan_watch_best(plan_watch *w, uint64_t arena, uint64_t iterations);
/* Periodic call point: calls the callback when its period is over. True once cancelled
 * (sticky). w may be NULL. */
bool memd_plan_watch_poll(plan_watch *w, uint64_t iterations);

/* Work limits shared by every improvement phase: an iteration budget (deterministic)
 * and an optional deadline on the caller's clock. */
typedef struct plan_budget {
    uint64_t used;
    uint64_t limit;          /* iterations this phase may use (absolute, vs used) */
    memd_plan_clock_fn clock;
    void *clock_ctx;
    uint64_t deadline_ns;    /* only with clock */
    unsigned tick;
    unsigned clock_mask;     /* read the clock when (tick & clock_mask) == 0 */
    bool expired;
    plan_watch *watch;       /* may be NULL; lanes other than 0 get NULL and ... */
    atomic_bool *cancel;     /* ... read only this (may be NULL) */
} plan_budget;

/* True (and sticky) once the iteration limit or the deadline is reached; counts one
 * iteration per call. */
bool memd_plan_budget_spend(plan_budget *bu);
/* The same for work worth k iterations (k >= 1). */
bool memd_plan_budget_spend_n(plan_budget *bu, uint64_t k);
/* For long steps that check now and then (placer runs): deadline passed, or cancelled
 * (polls the watch). Does not count an iteration. */
bool memd_plan_budget_stop_now(const plan_budget *bu);
/* True once the caller cancelled (through the watch or the lane's flag). */
bool memd_plan_budget_cancelled(const plan_budget *bu);

static inline uint64_t plan_align_up(uint64_t x, uint64_t a)
{
    return (x + a - 1) & ~(a - 1); /* callers ensure no overflow (memd_plan_check) */
}

static inline uint64_t plan_splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Saturating product (area keys). */
static inline uint64_t plan_sat_mul(uint64_t a, uint64_t b)
{
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* qsort comparator: u64 ascending. */
int memd_plan_cmp_u64(const void *x, const void *y);

/* memd_partition_point predicate over elements starting with a buffer index: true
 * while the buffer's offset is at or below the key's. */
typedef struct plan_off_key {
    const uint64_t *off;
    uint64_t o;
} plan_off_key;
bool memd_plan_off_at_or_below(const void *elem, const void *key);

/* The best plan so far: its offsets live in off (the caller's output array). */
typedef struct plan_best {
    uint64_t arena;
    uint64_t *off;
    const char *strategy;
    bool have; /* arena UINT64_MAX is a legal arena, so no sentinel */
    const plan_budget *clock; /* for first_ns */
    uint64_t t0, first_ns;
} plan_best;

/* Keeps off (n offsets, arena) as the best plan if it is the first or a lower one. */
void memd_plan_best_take(plan_best *bp, uint64_t arena, const uint64_t *off, size_t n,
                         const char *name);

/* Counts the conflict edges (each unordered pair once) with a sweep, O(n log n),
 * stopping early once above cap. -ENOMEM. */
int memd_plan_count_edges(const memd_plan_buffer *b, size_t n, uint64_t cap, uint64_t *edges);

/* Builds the conflict graph (zero-size buffers get no edges). -ENOMEM. */
int memd_plan_graph_build(const memd_plan_buffer *b, size_t n, plan_graph *g);
void memd_plan_graph_free(plan_graph *g);

/* Segment tree over time (plan_tree.c): where a buffer fits among the inserted ones,
 * reading merged unions of offset intervals at O(log T) nodes, not the buffers. For
 * problems too big for a walk over every overlapping buffer. -ENOMEM. */
typedef struct plan_tree plan_tree;
int memd_plan_tree_new(const memd_plan_buffer *b, size_t n, plan_tree **out);
void memd_plan_tree_free(plan_tree *t);
/* Removes every buffer. */
void memd_plan_tree_clear(plan_tree *t);
/* Removes every buffer and lends the pool's memory (resident after a run, and dead
 * until the next insert) as scratch of at least bytes bytes, 8-aligned; NULL when the
 * pool is smaller. Valid until the next insert. */
void *memd_plan_tree_scratch(plan_tree *t, size_t bytes);
/* Adds buffer x at [off, off + size) (no-op for an empty buffer). -ENOMEM. */
int memd_plan_tree_insert(plan_tree *t, uint32_t x, uint64_t off, uint64_t size);
/* The offset the list placers would give x among the inserted buffers: the lowest
 * aligned free offset (first fit) or the start of the tightest fitting gap (best fit)
 * among the lowest max_gaps gaps that fit (0: all of them, exactly the list placers'
 * best fit; each gap read costs a pass over the sets). */
uint64_t memd_plan_tree_fit(plan_tree *t, uint32_t x, uint64_t size, uint64_t align,
                            bool best_fit, unsigned max_gaps);
/* Starts reading what memd_plan_tree_fit and _insert will read first for x (its ranks),
 * a few placements ahead. */
void memd_plan_tree_prefetch(const plan_tree *t, uint32_t x);
/* The placers' default max_gaps over the tree. */
#define PLAN_TREE_FIT_GAPS 8u
/* True when the tree keeps path unions (deep trees only; for tests). */
bool memd_plan_tree_path_unions(const plan_tree *t);

/* Sorts idx[0..n) by key descending, ties by idx ascending (stable, deterministic). */
int memd_plan_sort_desc(uint32_t *idx, size_t n, const uint64_t *key);
/* The same for idx = 0, 1, ..., n - 1 without a copy of the keys: key and scratch (n
 * values each) are clobbered; iscratch: n indices of scratch, or NULL (allocated). */
int memd_plan_sort_desc_clobber(uint32_t *idx, size_t n, uint64_t *key, uint64_t *scratch,
                                uint32_t *iscratch);
/* The same by key ascending, ties by idx ascending. */
int memd_plan_sort_asc(uint32_t *idx, size_t n, const uint64_t *key);

/* An arena to beat, shared by runs that may be on other threads: a run whose top
 * passes it cannot give a better plan and stops (UINT64_MAX: nothing to beat). */
typedef _Atomic uint64_t plan_bound;

static inline uint64_t plan_bound_get(plan_bound *bd)
{
    return bd ? atomic_load_explicit(bd, memory_order_relaxed) : UINT64_MAX;
}

/* *bd = min(*bd, arena). */
static inline void plan_bound_lower(plan_bound *bd, uint64_t arena)
{
    uint64_t cur = atomic_load_explicit(bd, memory_order_relaxed);
    while (arena < cur &&
           !atomic_compare_exchange_weak_explicit(bd, &cur, arena, memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

/* Greedy placement in a given order (pinned buffers first): each buffer goes to the
 * lowest gap (first fit) or the tightest gap (best fit) among the already placed
 * buffers it overlaps in time. Three modes with the same results: over the conflict
 * graph (g != NULL: cost ~ edges x log degree, for sparse problems), over one list of
 * placed buffers sorted by offset (cost ~ n^2 / 2 simple checks, no graph, for dense
 * problems of moderate size), or over a segment tree of time (tr != NULL: cost ~
 * n (log T)^2 lookups in merged interval sets, for the biggest problems; its best fit
 * looks at the lowest fit_gaps gaps that fit only). */
typedef struct plan_placer {
    const memd_plan_buffer *b;
    size_t n;
    const plan_graph *g;
    plan_tree *tr;
    const plan_budget *stop; /* with a clock: a run past its deadline is abandoned */
    uint64_t *pairs;  /* graph mode: (offset, end) pairs of placed neighbours */
    uint32_t *pos;    /* position of each buffer in the current order (caller fills
                         through memd_plan_placer_set_order; NULL in tree mode) */
    uint32_t *lst;    /* list mode: committed placements sorted by offset */
    uint32_t *work;   /* list mode: placements of the last run */
    size_t nlst, nwork;
    unsigned fit_gaps; /* tree mode: best fit's max_gaps (init: PLAN_TREE_FIT_GAPS) */
    plan_bound *bound; /* may be NULL: an arena to beat */
    plan_watch *beat; /* may be NULL: polled like stop, but never stops the run */
    bool failed;      /* tree mode: the last run ran out of memory, or overlap */
    bool overlap;     /* the start-order sweep found a placement of its own overlapping a
                         live buffer: a planner bug (every placement is checked) */
    bool beaten;      /* the last run stopped as its top passed *bound (never commit it) */
} plan_placer;

int memd_plan_placer_init(plan_placer *p, const memd_plan_buffer *b, size_t n, const plan_graph *g);
/* Tree mode keeps no pos[] (memory at a million buffers): NULL. */
int memd_plan_placer_init_tree(plan_placer *p, const memd_plan_buffer *b, size_t n);
/* Fills pos[] from order[0..n) (nothing in tree mode). */
void memd_plan_placer_set_order(plan_placer *p, const uint32_t *order);
void memd_plan_placer_free(plan_placer *p);
/* Places order[from..n) given that order[0..from) already have offsets in off[] (and,
 * in list mode, were committed); pos[] must match order. Returns the max end over
 * order[from..n), or UINT64_MAX (off[] is then partial) when stop's deadline passed,
 * when the max end passed *bound (beaten set; see plan_run_stops) or, in tree mode,
 * when out of memory (failed set). */
uint64_t memd_plan_place_range(plan_placer *p, const uint32_t *order, size_t from, bool best_fit,
                               uint64_t *off);
/* Makes the last run the state later runs start from (list mode; no-op for the others). */
void memd_plan_placer_commit(plan_placer *p);

/* A placer run's check after its placement number k (from its first, `from`): true
 * when it must stop, because the deadline passed (asked every 256 placements) or its
 * top passed the bound (p->beaten set; *cap is the bound, re-read every 256). Every 256
 * placements it also lets p->beat's callback run. */
static inline bool plan_run_stops(plan_placer *p, size_t k, size_t from, uint64_t top,
                                  uint64_t *cap)
{
    if (((k - from) & 255) == 255) {
        if (p->beat)
            memd_plan_watch_poll(p->beat, 0);
        if (p->stop && memd_plan_budget_stop_now(p->stop))
            return true;
        *cap = plan_bound_get(p->bound);
    }
    if (top > *cap) {
        p->beaten = true;
        return true;
    }
    return false;
}

/* Greedy placement in start-time order (plan_sweep.c), tree mode's fast path: true when
 * order[0..n) is sorted by start (any ties) with no pinned buffer. Then
 * memd_plan_sweep_place gives exactly the tree's offsets (first fit, or best fit over
 * the lowest p->fit_gaps gaps that fit, 0: all) in O(n log n), sweeping over time, with
 * p's stop, bound, failed and beaten as memd_plan_place_range has them (p->tr unused).
 * Each placement is checked against the buffers live with it (free on the insertion
 * path): its plan is valid by construction but for alignment, or p->overlap is set. */
/* memd_plan_validate without the overlap sweep: each buffer's own checks (pins,
 * alignment, range) and the arena, O(n). For plans valid by construction. */
int memd_plan_validate_placed(const memd_plan_buffer *bufs, size_t n, const uint64_t *offsets,
                              memd_plan_violation *v, uint64_t *arena);
bool memd_plan_sweep_applies(const memd_plan_buffer *b, const uint32_t *order, size_t n);
uint64_t memd_plan_sweep_place(plan_placer *p, const uint32_t *order, bool best_fit, uint64_t *off);

/* Exact search (MiniMalloc-style canonical branch and bound) for a plan with arena <=
 * capacity; no pinned buffers. The context holds what every run shares (time sections,
 * heuristic keys); -E2BIG if the section membership would exceed max_members. */
typedef struct plan_search_ctx plan_search_ctx;
int memd_plan_search_new(const memd_plan_buffer *b, size_t n, const plan_graph *g,
                         uint64_t max_members, plan_search_ctx **out);
void memd_plan_search_free(plan_search_ctx *c);
/* heuristic: 0..2 picks one of MiniMalloc's static preorders, 3..5 other key orders,
 * PLAN_HEUR_GUIDED the order of the offsets last given to memd_plan_search_guide; a non-zero
 * seed perturbs the order (for restarts). max_disc bounds the discrepancies (taking
 * a node's k-th best candidate costs k) of a limited discrepancy search;
 * PLAN_DISC_ALL searches everything. Returns 1 found (out filled), 0 proven
 * impossible, -EAGAIN when the node limit, the discrepancy limit or the budget cut the
 * search short, -ENOMEM. */
#define PLAN_DISC_ALL UINT32_MAX
#define PLAN_HEUR_GUIDED 6
#define PLAN_HEUR_COUNT 7
int memd_plan_search_run(plan_search_ctx *c, uint64_t capacity, int heuristic, uint64_t seed,
                         uint32_t max_disc, uint64_t node_limit, plan_budget *bu, uint64_t *out);
/* Sets the order PLAN_HEUR_GUIDED follows: by offset, lowest first. */
void memd_plan_search_guide(plan_search_ctx *c, const uint64_t *offsets);
/* Nodes the last run visited. */
uint64_t memd_plan_search_nodes(const plan_search_ctx *c);

/* The exact search within budget bu (plan_exact.c), lowering bp (which must hold a
 * plan), in two lanes run by opts->runner (or in order; opts may be NULL): the same
 * plan on any runner for an iteration budget. Returns 1 when bp is proven optimal, 0
 * when not (also when the problem is too big to search), -ENOMEM. */
int memd_plan_exact(const memd_plan_buffer *b, size_t n, const plan_graph *g, uint64_t lb,
                    uint64_t seed, const memd_plan_opts *opts, plan_budget *bu, plan_best *bp);

/* The greedy portfolio's priority orders (plan_keys.c), keys sorted descending. */
enum plan_order {
    PLAN_ORD_SIZE,
    PLAN_ORD_AREA,
    PLAN_ORD_LENGTH,
    PLAN_ORD_LOAD,
    PLAN_ORD_START,
    PLAN_ORD_COUNT
};
const char *memd_plan_greedy_name(int ord, bool best_fit);
/* load[i] = the sum of the sizes of every buffer whose lifetime overlaps i's (i
 * included), O(n log n). -ENOMEM. */
int memd_plan_load_keys(const memd_plan_buffer *b, size_t n, uint64_t *load);
/* key[i] for order ord (load: memd_plan_load_keys' output, read for PLAN_ORD_LOAD only). */
void memd_plan_order_keys(const memd_plan_buffer *b, size_t n, const uint64_t *load, int ord,
                          uint64_t *key);
/* Pinned buffers first (they are fixed obstacles), then the rest by key descending, ties
 * by index. Returns the number pinned. */
size_t memd_plan_build_order(const memd_plan_buffer *b, size_t n, const uint64_t *key,
                             uint32_t *order);

/* One greedy run of the solver's portfolio (benchmarks: the best greedy plan to compare
 * with): order 0..4 = size, area, length, load, start; the placer the solver would use.
 * 0, -EINVAL (bad order or problem), -ENOMEM. */
#define MEMD_PLAN_GREEDY_ORDERS 5
int memd_plan_greedy_run(const memd_plan_buffer *b, size_t n, int ord, bool best_fit,
                         uint64_t *off, uint64_t *arena);

/* The greedy portfolio over the segment tree (plan_portfolio.c): every order with first
 * and best fit (size order first fit too unless skip_first), in two lanes run by
 * opts->runner (or in order), each with a tree of its own; lowers bp with the best run
 * (ties: the earlier run), the same on any runner. A run stops once its top passes bp's
 * arena or a finished run's (*beaten counts those runs; may be NULL). With a clock, a
 * run starts while the last full run's duration (run_ns) still fits. -ENOMEM. */
int memd_plan_portfolio_tree(const memd_plan_buffer *b, size_t n, uint64_t lb,
                             const memd_plan_opts *opts, uint64_t run_ns, bool skip_first,
                             plan_budget *bu, plan_best *bp, unsigned *beaten);

/* Squeaky-wheel improvement for problems placed over the segment tree (plan_large.c),
 * in lanes run by opts->runner (or in order); lowers bp. run_ns: how long one placer
 * run took (with a clock). sched: NULL for the defaults. -ENOMEM. */
#define PLAN_LARGE_LANES 2
/* Above this many buffers the lanes (and the tree portfolio's) run one after the other
 * even with a runner (each holds a tree of its own, about 150 bytes a buffer: memory
 * counts more there), and a lane starts a run only when all of it fits before
 * its deadline (a run takes seconds there, and one cut short holds its keys beside the
 * full tree). */
#define PLAN_LARGE_SERIAL_ABOVE 300000u
typedef struct plan_large_sched {
    size_t serial_above;                /* PLAN_LARGE_SERIAL_ABOVE (tests lower it) */
    unsigned runs[PLAN_LARGE_LANES];    /* out: the runs each lane started */
} plan_large_sched;
int memd_plan_large_improve(const memd_plan_buffer *b, size_t n, uint64_t lb,
                            const memd_plan_opts *opts, uint64_t run_ns, plan_budget *bu,
                            plan_best *bp, plan_large_sched *sched);
/* The time rules of the biggest problems (plan_large.c), pure. Whether a run measured
 * at run_ns may start at now: all of it must end before deadline (whole), or half of it
 * (a run past its deadline is cut short and its work lost; half is the bet that it
 * ends when runs are short). */
bool memd_plan_run_fits(uint64_t now, uint64_t deadline, uint64_t run_ns, bool whole);
/* Lanes run one after the other: the deadline of the next of lanes_left lanes (>= 1)
 * is an equal share of what is left, unless that share is shorter than one run: then
 * all that is left (one finished run beats two started ones). */
uint64_t memd_plan_lane_deadline(uint64_t now, uint64_t deadline, unsigned lanes_left,
                                 uint64_t run_ns);

/* Iterated local search over the placement order, starting from `order` (pinned
 * first, npinned of them). Improves off/arena in place. -ENOMEM. */
int memd_plan_local_search(const memd_plan_buffer *b, size_t n, const plan_graph *g,
                           uint32_t *order, size_t npinned, bool best_fit, uint64_t lb,
                           uint64_t seed, plan_budget *bu, uint64_t *off, uint64_t *arena);

#endif

/* memd engine — offline memory planner and plan validator.
 *
 * A plan problem is a set of buffers, each with a size, an alignment and a lifetime
 * [lower, upper) (half-open: a buffer ending at t and one starting at t may share
 * bytes). A plan gives every buffer an offset inside one arena so that no two buffers
 * that are live at the same time share a byte. The arena size is max(offset + size).
 *
 * Conventions (the contract the tests check):
 *  - lower < upper, else -EINVAL. Times are opaque unsigned integers.
 *  - size 0 is allowed: such a buffer occupies no bytes, overlaps nothing, adds nothing
 *    to the lower bound, and is placed at offset 0 (or its pin).
 *  - align 0 means 1; otherwise it must be a power of two (-EINVAL).
 *  - pinned: the buffer must be placed at exactly `offset` (a precomputed placement a
 *    compiler insists on); the pin must be aligned and two pinned buffers must not
 *    overlap (-EINVAL, the pair is reported through the violation out-parameter).
 *  - Any arithmetic that could leave uint64_t (offset + size, the sum of live sizes,
 *    the worst-case arena) is checked up front: -EOVERFLOW.
 *  - Buffers are named by their index in the input array; callers map indices to
 *    their own ids.
 *
 * The engine is pure: no I/O, no globals. Time limits use a clock the caller passes
 * in; with no clock the planner is fully deterministic for a given seed and
 * iteration budget (and with a clock, deterministic until the clock stops it).
 */
#ifndef MEMD_ENGINE_PLAN_H
#define MEMD_ENGINE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct memd_plan_buffer {
    uint64_t lower;  /* first time step the buffer is live */
    uint64_t upper;  /* first time step it is no longer live (exclusive) */
    uint64_t size;   /* bytes */
    uint64_t align;  /* power of two; 0 means 1 */
    uint64_t offset; /* the pinned offset when pinned, else ignored */
    bool pinned;
} memd_plan_buffer;

/* What the validator (or the input check) found. For OVERLAP and PIN_CONFLICT, a and b
 * name the pair (a < b is NOT implied: a is the buffer found first, see
 * memd_plan_validate); for the per-buffer kinds only a is meaningful. */
typedef enum memd_plan_issue {
    MEMD_PLAN_VALID = 0,
    MEMD_PLAN_OVERLAP,      /* a and b are live together and share bytes */
    MEMD_PLAN_MISALIGNED,   /* offset of a is not a multiple of its alignment */
    MEMD_PLAN_PIN_MOVED,    /* a is pinned but the plan gives it another offset */
    MEMD_PLAN_OUT_OF_RANGE, /* offset + size of a overflows uint64_t */
    MEMD_PLAN_BAD_LIFETIME, /* lower >= upper for a */
    MEMD_PLAN_BAD_ALIGN,    /* alignment of a is not a power of two */
    MEMD_PLAN_PIN_CONFLICT, /* pinned buffers a and b overlap: no plan can exist */
} memd_plan_issue;

typedef struct memd_plan_violation {
    memd_plan_issue issue;
    size_t a, b;
} memd_plan_violation;

/* Human-readable name of an issue ("overlap", "misaligned", ...). */
const char *memd_plan_issue_name(memd_plan_issue issue);
/* Why it is an issue, for a message ("two buffers live at the same time share bytes",
 * ...); "invalid" for an unknown value. */
const char *memd_plan_issue_reason(memd_plan_issue issue);

/* Checks the problem itself. 0 if plannable; -EINVAL with *v describing the first bad
 * buffer (or pinned pair); -EOVERFLOW when sizes/offsets could leave uint64_t
 * (v->issue = OUT_OF_RANGE, v->a the buffer that tipped it); -ENOMEM. v may be NULL. */
int memd_plan_check(const memd_plan_buffer *bufs, size_t n, memd_plan_violation *v);

/* Lower bound on any plan's arena: the maximum over time of the sum of the sizes of
 * the buffers live at that time (exact, O(n log n)). Alignment and pins are not taken
 * into account (they can only raise the optimum). -EINVAL on a bad lifetime,
 * -EOVERFLOW if a sum overflows, -ENOMEM. */
int memd_plan_lower_bound(const memd_plan_buffer *bufs, size_t n, uint64_t *lb);

/* Checks ANY plan in O(n log n): per buffer (index order) lifetime, alignment, pin and
 * range; then a sweep over time keeping the live buffers ordered by offset. The
 * overlap reported is the first one the sweep meets: buffers are visited by (lower,
 * index); `a` is the first visited buffer that shares bytes with a buffer live at its
 * start, `b` that buffer. Returns 0 when valid (v->issue = VALID), 1 when a violation
 * was found (described in *v), -ENOMEM. arena (may be NULL) receives max(offset+size)
 * when the plan is valid. */
int memd_plan_validate(const memd_plan_buffer *bufs, size_t n, const uint64_t *offsets,
                       memd_plan_violation *v, uint64_t *arena);

typedef uint64_t (*memd_plan_clock_fn)(void *ctx); /* monotonic nanoseconds */

/* What a progress callback sees. */
typedef struct memd_plan_progress {
    uint64_t arena;       /* best plan so far (valid only when have_plan) */
    uint64_t lower_bound;
    uint64_t elapsed_ns;  /* since the call began (0 without a clock) */
    uint64_t iterations;  /* improvement iterations spent so far */
    bool have_plan;       /* false until the first greedy run has ended */
} memd_plan_progress;

/* Called on the planner's thread (with a runner: on lane 0's thread while the lanes
 * run, one call at a time) each time the best plan improves, and, while it works,
 * about every progress_ns of the clock (without a clock: every 4096 iterations and
 * greedy runs). Returning true cancels: the planner stops as soon as it has a valid plan
 * (the first greedy run always ends) and returns the best one found, with
 * res->cancelled set. A callback that never cancels changes no result. */
typedef bool (*memd_plan_progress_fn)(void *ctx, const memd_plan_progress *p);

/* Parallel work without threads in the engine: the planner hands the caller `lanes`
 * independent pieces of work, and the caller runs fn(arg, lane) once for every lane in
 * [0, lanes), concurrently on threads of its own (or one after the other), returning
 * when all have returned. Lanes share nothing writable but the cancel flag. The plan
 * does not depend on how the lanes were run: for a fixed iteration budget (no clock) it
 * is the same as with no runner at all. */
typedef void (*memd_plan_lane_fn)(void *arg, unsigned lane);
typedef void (*memd_plan_runner_fn)(void *ctx, unsigned lanes, memd_plan_lane_fn fn, void *arg);

typedef struct memd_plan_opts {
    uint64_t seed;           /* randomized improvement steps draw from this */
    uint64_t max_iterations; /* improvement budget (search nodes + placer runs);
                                0: none (then a clock budget is required, or a default
                                of MEMD_PLAN_DEFAULT_ITERATIONS applies) */
    memd_plan_clock_fn clock; /* NULL: no time limit (fully deterministic) */
    void *clock_ctx;
    uint64_t budget_ns;       /* with a clock: stop improving after this long */
    memd_plan_progress_fn progress; /* NULL: none */
    void *progress_ctx;
    uint64_t progress_ns;     /* with a clock: call period; 0 means 100 ms */
    memd_plan_runner_fn runner; /* NULL: the lanes run one after the other */
    void *runner_ctx;
} memd_plan_opts;

#define MEMD_PLAN_DEFAULT_ITERATIONS 200000u

typedef struct memd_plan_result {
    uint64_t arena;       /* max(offset + size) of the returned plan */
    uint64_t lower_bound; /* see memd_plan_lower_bound */
    const char *strategy; /* static string naming what produced the plan */
    uint64_t iterations;  /* improvement iterations spent */
    uint64_t first_ns;    /* with a clock: from the call to the first valid plan */
    bool optimal;         /* arena == lower_bound, or the search proved it minimal */
    bool cancelled;       /* the progress callback stopped the planner early */
} memd_plan_result;

/* Plans the buffers: offsets[i] receives buffer i's offset. Runs a portfolio of greedy
 * placers (several priority orders x first/best fit; size order first, so a plan is
 * out early), then, within the budget, for unpinned problems of up to a few thousand
 * buffers an exact branch-and-bound search (the decision problem at the lower bound,
 * interleaved with restarted short searches at capacities below the best plan; in two
 * lanes that opts->runner may put on threads, sharing their best plan in rounds), or,
 * for the problems it cannot take, an iterated local search over the placement order.
 * Above 20000 buffers with too many overlapping pairs for a conflict graph, the placers
 * work over a segment tree of time (about n (log T)^2, no pairs), the first plan is
 * size order first fit, then squeaky-wheel greedy runs in two lanes (opts->runner may
 * put them on threads) take most of the budget and the rest of the portfolio what is
 * left. At any size, a first greedy run still running at half the budget (with a
 * clock or a progress callback), or cancelled, is cut short (or, past half the budget
 * already, not started) and start order first fit, a sweep over time in O(n log n)
 * that checks each placement as it goes, makes the plan instead ("greedy-start-first";
 * pinned buffers at their pins, the others above the highest; nothing more runs);
 * later runs start while one is expected to end within the budget and are cut short
 * at its deadline;
 * returns the best plan found, which is always valid (the caller may re-check it with
 * memd_plan_validate). Errors as memd_plan_check (with *v filled when v is not NULL),
 * -ENOMEM. */
int memd_plan_solve(const memd_plan_buffer *bufs, size_t n, const memd_plan_opts *opts,
                    uint64_t *offsets, memd_plan_result *res, memd_plan_violation *v);

#endif

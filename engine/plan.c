/* memd engine — the planner: greedy portfolio, exact search, local search. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "plan_internal.h"

/* Above this many conflicting pairs the conflict graph (8 bytes per pair) is not built
 * and the planner falls back to the time-ordered greedy, which needs no graph. */
#define PLAN_EDGE_CAP 6000000u
/* The exact search pays O(n) per node and keeps section member lists: only for
 * problems where a node stays cheap. */
#define PLAN_SEARCH_MAX_N 3000u
#define PLAN_SEARCH_MAX_MEMBERS 4000000u
/* The offset-list placer is quadratic: above this, without a sparse graph, only the
 * time-ordered greedy runs. */
#define PLAN_LIST_MAX_N 20000u

enum plan_order {
    ORD_SIZE,
    ORD_AREA,
    ORD_LENGTH,
    ORD_LOAD,
    ORD_START,
    ORD_COUNT
};

static const char *const greedy_names[ORD_COUNT][2] = {
    {"greedy-size-first", "greedy-size-best"},
    {"greedy-area-first", "greedy-area-best"},
    {"greedy-length-first", "greedy-length-best"},
    {"greedy-load-first", "greedy-load-best"},
    {"greedy-start-first", "greedy-start-best"},
};

static const char *const local_names[ORD_COUNT][2] = {
    {"local-size-first", "local-size-best"},
    {"local-area-first", "local-area-best"},
    {"local-length-first", "local-length-best"},
    {"local-load-first", "local-load-best"},
    {"local-start-first", "local-start-best"},
};

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* load[i] = sum of the sizes of every buffer whose lifetime overlaps i's (i included):
 * those starting before i ends minus those ending before (or as) i starts. Sorted
 * (time, size) pairs with prefix sums: O(n log n), no graph. Sums are bounded by the
 * total size, which memd_plan_check bounded. */
static int load_keys(const memd_plan_buffer *b, size_t n, uint64_t *load)
{
    uint64_t *lo = malloc(2 * (n ? n : 1) * sizeof(*lo));
    uint64_t *up = malloc(2 * (n ? n : 1) * sizeof(*up));
    uint64_t *plo = malloc((n + 1) * sizeof(*plo));
    uint64_t *pup = malloc((n + 1) * sizeof(*pup));
    uint64_t *tl = malloc((n ? n : 1) * sizeof(*tl));
    uint64_t *tu = malloc((n ? n : 1) * sizeof(*tu));
    int rc = -ENOMEM;
    if (!lo || !up || !plo || !pup || !tl || !tu)
        goto out;
    for (size_t i = 0; i < n; i++) {
        lo[2 * i] = b[i].lower;
        lo[2 * i + 1] = b[i].size;
        up[2 * i] = b[i].upper;
        up[2 * i + 1] = b[i].size;
    }
    qsort(lo, n, 2 * sizeof(*lo), cmp_u64); /* sorts (time, size) pairs by time */
    qsort(up, n, 2 * sizeof(*up), cmp_u64);
    plo[0] = pup[0] = 0;
    for (size_t i = 0; i < n; i++) {
        tl[i] = lo[2 * i];
        tu[i] = up[2 * i];
        plo[i + 1] = plo[i] + lo[2 * i + 1];
        pup[i + 1] = pup[i] + up[2 * i + 1];
    }
    for (size_t i = 0; i < n; i++)
        load[i] = plo[memd_lower_bound_u64(tl, n, b[i].upper)] -
                  pup[memd_lower_bound_u64(tu, n, b[i].lower + 1)];
    rc = 0;
out:
    free(lo);
    free(up);
    free(plo);
    free(pup);
    free(tl);
    free(tu);
    return rc;
}

/* Priority keys (sorted descending). */
static void order_keys(const memd_plan_buffer *b, size_t n, const uint64_t *load, int ord,
                       uint64_t *key)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t len = b[i].upper - b[i].lower;
        switch (ord) {
        case ORD_SIZE: key[i] = b[i].size; break;
        case ORD_AREA: key[i] = sat_mul(b[i].size, len); break;
        case ORD_LENGTH: key[i] = len; break;
        case ORD_LOAD: key[i] = load[i]; break;
        default: key[i] = UINT64_MAX - b[i].lower; break;
        }
    }
}

/* Pinned buffers first (they are fixed obstacles), then the rest by key. */
static size_t build_order(const memd_plan_buffer *b, size_t n, const uint64_t *key,
                          uint32_t *order)
{
    size_t np = 0, k;
    for (size_t i = 0; i < n; i++)
        if (b[i].pinned)
            order[np++] = (uint32_t)i;
    k = np;
    for (size_t i = 0; i < n; i++)
        if (!b[i].pinned)
            order[k++] = (uint32_t)i;
    plan_sort_desc(order + np, n - np, key);
    return np;
}

/* A phase gets a share of what is left of the parent's budget (iterations and time). */
static plan_budget sub_budget(const plan_budget *p, unsigned pct)
{
    plan_budget c = *p;
    if (p->limit && p->limit > p->used)
        c.limit = p->used + (p->limit - p->used) * pct / 100;
    if (p->clock) {
        uint64_t now = p->clock(p->clock_ctx);
        if (now < p->deadline_ns)
            c.deadline_ns = now + (p->deadline_ns - now) / 100 * pct;
    }
    c.tick = 0;
    c.clock_mask = 0;
    return c;
}

static void join_budget(plan_budget *p, const plan_budget *c)
{
    p->used = c->used;
    if ((p->limit && p->used >= p->limit) ||
        (p->clock && p->clock(p->clock_ctx) >= p->deadline_ns))
        p->expired = true;
}

typedef struct best_plan {
    uint64_t arena;
    uint64_t *off;
    const char *strategy;
    bool have; /* arena UINT64_MAX is a legal arena, so no sentinel */
    const plan_budget *clock; /* for first_ns */
    uint64_t t0, first_ns;
} best_plan;

static void take(best_plan *bp, uint64_t arena, const uint64_t *off, size_t n, const char *name)
{
    if (!bp->have && bp->clock && bp->clock->clock)
        bp->first_ns = bp->clock->clock(bp->clock->clock_ctx) - bp->t0;
    if (!bp->have || arena < bp->arena) {
        bp->have = true;
        bp->arena = arena;
        memcpy(bp->off, off, n * sizeof(*off));
        bp->strategy = name;
    }
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static uint64_t plan_top(const memd_plan_buffer *b, size_t n, const uint64_t *off)
{
    uint64_t top = 0;
    for (size_t i = 0; i < n; i++)
        if (off[i] + b[i].size > top)
            top = off[i] + b[i].size;
    return top;
}

/* Exact search portfolio, two interleaved halves with equal node shares:
 *  - the decision problem at the lower bound, round robin over MiniMalloc's three
 *    preorders with a doubling node limit (it settles tight instances, and proves
 *    optimality);
 *  - descent: short randomized runs (restarts over perturbed preorders, and the order
 *    of the best plan so far with a time window ruined) at a capacity some steps below
 *    the best plan; a success lowers the best plan, a run of failures halves the step.
 *    Loose instances, where a complete search at the bound would wander forever (a
 *    depth-first search never revisits its first, lowest placements), improve here.
 * Every capacity is a multiple of the granule (the gcd of sizes and alignments: every
 * canonical plan's arena is one). Returns 1 when the best plan is proven optimal, 0
 * when not, -ENOMEM. */
static int run_search(const memd_plan_buffer *b, size_t n, const plan_graph *g, uint64_t lb,
                      uint64_t seed, plan_budget *bu, best_plan *bp, uint64_t *scratch)
{
    plan_search_ctx *c;
    int rc = plan_search_new(b, n, g, PLAN_SEARCH_MAX_MEMBERS, &c);
    if (rc == -E2BIG)
        return 0;
    if (rc)
        return rc;
    size_t m = 0;
    uint64_t gran = 0;
    for (size_t i = 0; i < n; i++)
        if (b[i].size) {
            m++;
            gran = gcd_u64(gran, b[i].size);
            gran = gcd_u64(gran, b[i].align ? b[i].align : 1);
        }
    if (!gran)
        gran = 1;
    uint64_t lo = lb;              /* no plan has an arena below lo (proven) */
    uint64_t exact_limit = 2 * (uint64_t)(m ? m : 1);
    uint64_t short_limit = 4 * (uint64_t)(m ? m : 1) + 64;
    uint64_t step = 0, rng = seed ^ 0x5EA5C4ull, tries = 0;
    unsigned fails = 0;
    bool proven = false;
    while (!bu->expired && !proven && bp->arena > lo) {
        /* Decision at the bound. */
        uint64_t before = bu->used;
        for (int h = 0; h < 3 && !bu->expired && bp->arena > lo; h++) {
            rc = plan_search_run(c, lo, h, 0, PLAN_DISC_ALL, exact_limit, bu, scratch);
            if (rc == 1) {
                take(bp, plan_top(b, n, scratch), scratch, n, "search");
            } else if (rc == 0) {
                lo += gran; /* proven: nothing fits at lo */
                if (lo >= bp->arena)
                    proven = true;
            } else if (rc != -EAGAIN) {
                goto out;
            }
        }
        exact_limit *= 2;
        if (bp->arena <= lo) {
            proven = true;
            break;
        }
        /* Descent, for as many nodes as the exact half just used. */
        uint64_t share = 2 * (bu->used - before), start = bu->used;
        while (!bu->expired && bp->arena > lo && bu->used - start < share) {
            uint64_t room = (bp->arena - lo) / gran;
            if (!step || step > room)
                step = room > 4 ? room / 4 : 1;
            uint64_t cap = bp->arena - step * gran;
            /* Every other run follows the best plan, in three of four of them with
             * the buffers live during one random buffer's lifetime shuffled (ruin and
             * recreate: the search starts next to the best plan and rebuilds around
             * that window); the others restart from a perturbed preorder. */
            int h = tries % 2 ? PLAN_HEUR_GUIDED : (int)((tries / 2) % PLAN_HEUR_GUIDED);
            if (h == PLAN_HEUR_GUIDED) {
                memcpy(scratch, bp->off, n * sizeof(*scratch));
                uint64_t r = plan_splitmix(&rng);
                size_t w = (size_t)(r % n);
                for (size_t i = 0; i < n && (r >> 32) % 4 != 0; i++)
                    if (b[i].lower < b[w].upper && b[w].lower < b[i].upper)
                        scratch[i] = plan_splitmix(&rng) % (bp->arena ? bp->arena : 1);
                plan_search_guide(c, scratch);
            }
            tries++;
            rc = plan_search_run(c, cap, h, plan_splitmix(&rng) | 1, PLAN_DISC_ALL, short_limit,
                                 bu, scratch);
            if (rc == 1) {
                take(bp, plan_top(b, n, scratch), scratch, n, "search");
                fails = 0;
            } else if (rc == 0) {
                lo = cap + gran;
                step = 0;
            } else if (rc == -EAGAIN) {
                /* Halve the step after a full cycle of preorders failed. */
                if (++fails >= 2 * PLAN_HEUR_COUNT) {
                    fails = 0;
                    step = step > 1 ? step / 2 : 1;
                }
            } else {
                goto out;
            }
        }
    }
    rc = proven || bp->arena <= lo;
out:
    plan_search_free(c);
    return rc;
}

int memd_plan_solve(const memd_plan_buffer *bufs, size_t n, const memd_plan_opts *opts,
                    uint64_t *offsets, memd_plan_result *res, memd_plan_violation *v)
{
    memd_plan_opts dflt = {0};
    if (!opts)
        opts = &dflt;
    memset(res, 0, sizeof(*res));
    /* The budget and first_ns count from here: the checks are part of the work. */
    uint64_t t0 = opts->clock ? opts->clock(opts->clock_ctx) : 0;
    int rc = memd_plan_check(bufs, n, v);
    if (rc)
        return rc;
    uint64_t lb;
    rc = memd_plan_lower_bound(bufs, n, &lb);
    if (rc)
        return rc;
    res->lower_bound = lb;
    if (n == 0) {
        res->strategy = "empty";
        res->optimal = true;
        return 0;
    }

    plan_budget bu = {.clock = opts->clock, .clock_ctx = opts->clock_ctx,
                      .limit = opts->max_iterations};
    if (!bu.limit && !bu.clock)
        bu.limit = MEMD_PLAN_DEFAULT_ITERATIONS;
    if (bu.clock)
        bu.deadline_ns = t0 + opts->budget_ns;

    size_t nn = n ? n : 1;
    best_plan bp = {.arena = UINT64_MAX, .off = offsets, .strategy = "empty", .clock = &bu,
                    .t0 = t0};
    uint64_t *off = malloc(nn * sizeof(*off));
    uint64_t *key = malloc(nn * sizeof(*key));
    uint32_t *order = malloc(nn * sizeof(*order));
    uint32_t *best_order = malloc(nn * sizeof(*best_order));
    plan_graph g = {0};
    plan_placer pl = {0};
    if (!off || !key || !order || !best_order) {
        rc = -ENOMEM;
        goto out;
    }
    uint64_t edges;
    rc = plan_count_edges(bufs, n, PLAN_EDGE_CAP, &edges);
    if (rc)
        goto out;
    /* Placer cost model: the graph costs ~ 2E log(degree), the offset list ~ n^2/2. */
    double dn = (double)n, de = (double)edges, deg = 2.0 * de / (dn > 0 ? dn : 1);
    bool graph_placer = edges <= PLAN_EDGE_CAP &&
                        2.0 * de * (2.0 + log2(1.0 + deg)) < dn * dn / 2.0;
    size_t npinned = 0;
    for (size_t i = 0; i < n; i++)
        npinned += bufs[i].pinned;
    bool searchable = npinned == 0 && n <= PLAN_SEARCH_MAX_N && edges <= PLAN_EDGE_CAP;
    if (!graph_placer && n > PLAN_LIST_MAX_N) {
        /* Too big for either placer within a second: the time-ordered greedy only. */
        static const char *const names[2] = {"sweep-first", "sweep-best"};
        for (int fit = 0; fit < 2; fit++) {
            uint64_t arena;
            rc = plan_sweep_place(bufs, n, fit, off, &arena);
            if (rc)
                goto out;
            take(&bp, arena, off, n, names[fit]);
        }
        goto done;
    }
    if (graph_placer || searchable) {
        rc = plan_graph_build(bufs, n, &g);
        if (rc)
            goto out;
    }
    plan_graph *pg = graph_placer ? &g : NULL;
    rc = plan_placer_init(&pl, bufs, n, pg);
    if (rc)
        goto out;
    /* Load keys cost a sort: computed when their order comes up, after the first
     * plan (size order) is out. */
    uint64_t *load = malloc(nn * sizeof(*load));
    bool have_load = false;
    if (!load) {
        rc = -ENOMEM;
        goto out;
    }

    /* Greedy portfolio: every order with first and best fit. */
    int best_ord = 0, best_fit = 0;
    uint64_t run_ns = 0; /* duration of the last placer run */
    for (int ord = 0; ord < ORD_COUNT && (!bp.have || bp.arena > lb); ord++) {
        if (ord == ORD_LOAD && !have_load) {
            rc = load_keys(bufs, n, load);
            if (rc) {
                free(load);
                goto out;
            }
            have_load = true;
        }
        order_keys(bufs, n, load, ord, key);
        build_order(bufs, n, key, order);
        for (size_t k = 0; k < n; k++)
            pl.pos[order[k]] = (uint32_t)k;
        for (int fit = 0; fit < 2 && (!bp.have || bp.arena > lb); fit++) {
            /* Once a plan is out, start a run only if it can finish in time. */
            uint64_t now = bu.clock ? bu.clock(bu.clock_ctx) : 0;
            if (bp.have && bu.clock && now + run_ns >= bu.deadline_ns)
                break;
            uint64_t arena = plan_place_range(&pl, order, 0, fit, off);
            if (bu.clock)
                run_ns = bu.clock(bu.clock_ctx) - now;
            if (!bp.have || arena < bp.arena) {
                take(&bp, arena, off, n, greedy_names[ord][fit]);
                best_ord = ord;
                best_fit = fit;
                memcpy(best_order, order, n * sizeof(*order));
            }
        }
    }
    free(load);
    plan_placer_free(&pl);

    if (bp.arena > lb && searchable) {
        plan_budget sb = sub_budget(&bu, 85);
        sb.clock_mask = 63; /* search nodes are short: read the clock every 64 */
        rc = run_search(bufs, n, &g, lb, opts->seed, &sb, &bp, off);
        join_budget(&bu, &sb);
        if (rc < 0)
            goto out;
        res->optimal = rc == 1;
    }
    /* The local search starts with a full placer run: only if that fits in time. */
    if (bp.arena > lb && !res->optimal && !bu.expired &&
        !(bu.clock && bu.clock(bu.clock_ctx) + run_ns >= bu.deadline_ns)) {
        uint64_t arena = UINT64_MAX;
        rc = plan_local_search(bufs, n, pg, best_order, npinned, best_fit, lb, opts->seed, &bu,
                               off, &arena);
        if (rc)
            goto out;
        take(&bp, arena, off, n, local_names[best_ord][best_fit]);
    }
done:
    res->arena = bp.have ? bp.arena : 0;
    res->strategy = bp.strategy;
    res->iterations = bu.used;
    res->first_ns = bp.first_ns;
    if (res->arena == lb)
        res->optimal = true;
    /* A planner bug must never hand out an overlapping plan. */
    memd_plan_violation chk;
    uint64_t arena_chk = 0;
    rc = memd_plan_validate(bufs, n, offsets, &chk, &arena_chk);
    if (rc == 1 || (rc == 0 && arena_chk != res->arena)) {
        if (v)
            *v = chk;
        rc = -ENOTRECOVERABLE;
    }
out:
    plan_placer_free(&pl);
    plan_graph_free(&g);
    free(off);
    free(key);
    free(order);
    free(best_order);
    return rc;
}

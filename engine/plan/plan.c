/* memd engine — the planner: greedy portfolio, then the exact search (plan_exact.c)
 * and the local search (plan_local.c) within the budget. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "plan_internal.h"

/* Above this many conflicting pairs the conflict graph (8 bytes per pair) is not built
 * and the planner falls back to the time-ordered greedy, which needs no graph. */
#define PLAN_EDGE_CAP 6000000u
/* The exact search pays O(n) per node: only for problems where a node stays cheap. */
#define PLAN_SEARCH_MAX_N 3000u
/* The offset-list placer is quadratic: above this, without a sparse graph, the placers
 * use the segment tree of time and the improvement is the squeaky-wheel greedy. */
#define PLAN_LIST_MAX_N 20000u

static const char *const local_names[PLAN_ORD_COUNT][2] = {
    {"local-size-first", "local-size-best"},
    {"local-area-first", "local-area-best"},
    {"local-length-first", "local-length-best"},
    {"local-load-first", "local-load-best"},
    {"local-start-first", "local-start-best"},
};

/* A phase gets a share of what is left of the parent's budget (iterations and time). */
static plan_budget sub_budget(const plan_budget *p, unsigned pct)
{
    plan_budget c = *p;
    if (p->limit && p->limit > p->used) {
        c.limit = p->used + (p->limit - p->used) * pct / 100;
        /* A share that rounds to nothing is spent, not "no limit" (limit 0). */
        c.expired = c.expired || c.limit <= c.used;
    }
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

/* One memd_plan_solve call, past the checks. */
typedef struct solver {
    const memd_plan_buffer *b;
    size_t n, npinned;
    uint64_t lb;
    plan_budget bu;
    plan_best bp;
    plan_graph g;
    const plan_graph *pg; /* the placers' graph, or NULL: offset-list mode */
    bool searchable;      /* the exact search may run */
    bool large;           /* placers over the segment tree (no graph, too big for a list) */
    bool cut;             /* the first run overran half the budget: the sweep's plan stands */
    plan_placer pl;
    uint64_t *off, *key;
    uint32_t *order, *best_order;
    int best_ord, best_fit; /* the greedy run local search starts from */
    uint64_t run_ns;        /* with a clock: duration of the last placer run */
    const memd_plan_opts *opts;
} solver;

/* The first run's stop: half of the budget, or a cancel. A first run costs n times the
 * buffers live together (list and tree modes) or the conflicts (graph mode): on a dense
 * problem a hundred times the budget (101 s for 1 s at a million buffers, seconds at
 * 20000). */
static bool arm_cut(solver *s, plan_budget *half)
{
    if (!(s->bu.clock || s->bu.watch))
        return false;
    *half = sub_budget(&s->bu, 50);
    s->pl.stop = half;
    return true;
}

/* Stands in for a cut first run: start order first fit, a sweep over time in
 * O(n log n) (plan_sweep.c), whatever the placer's mode, that checks each placement
 * as it goes. Pinned buffers stay at their pins and the others are swept above the
 * highest pin (a fallback: no time to fit them between). s->key and s->order are
 * scratch. Returns the arena, UINT64_MAX with s->pl.failed or s->pl.overlap set. */
static uint64_t place_by_start(solver *s)
{
    s->pl.stop = NULL;
    memd_plan_order_keys(s->b, s->n, NULL, PLAN_ORD_START, s->key);
    memd_plan_build_order(s->b, s->n, s->key, s->order);
    uint64_t pin_top = 0, align = 1;
    size_t m = 0;
    for (size_t k = 0; k < s->n; k++) {
        const memd_plan_buffer *b = &s->b[s->order[k]];
        if (b->pinned) {
            s->off[s->order[k]] = b->offset;
            pin_top = b->offset + b->size > pin_top ? b->offset + b->size : pin_top;
        } else {
            s->order[m++] = s->order[k];
            align = b->align > align ? b->align : align;
        }
    }
    plan_placer sp = s->pl; /* not initialized when the tree was never built */
    sp.b = s->b;
    sp.n = m;
    uint64_t top = memd_plan_sweep_place(&sp, s->order, false, s->off);
    s->pl.failed = sp.failed;
    s->pl.overlap = sp.overlap;
    if (top == UINT64_MAX || !s->npinned)
        return top;
    /* memd_plan_check bounded pins plus every size and padding: no overflow. */
    uint64_t base = plan_align_up(pin_top, align);
    for (size_t k = 0; k < m; k++)
        if (s->b[s->order[k]].size) /* empty ones stay at 0: they add nothing */
            s->off[s->order[k]] += base;
    return top ? base + top : pin_top;
}

/* Runs the placer over s->order with first and best fit, while no plan reached the
 * bound and (once a plan is out) a run can finish in time. */
static int place_order(solver *s, int ord)
{
    memd_plan_placer_set_order(&s->pl, s->order);
    plan_budget *bu = &s->bu;
    /* A run that passes the best plan's arena cannot replace it: it stops there. */
    plan_bound bound;
    atomic_init(&bound, UINT64_MAX);
    s->pl.bound = &bound;
    for (int fit = 0; fit < 2 && (!s->bp.have || s->bp.arena > s->lb); fit++) {
        uint64_t now = bu->clock ? bu->clock(bu->clock_ctx) : 0;
        if (s->bp.have && ((bu->clock && now + s->run_ns >= bu->deadline_ns) ||
                           memd_plan_watch_poll(bu->watch, bu->used)))
            break;
        atomic_store_explicit(&bound, s->bp.have ? s->bp.arena : UINT64_MAX,
                              memory_order_relaxed);
        plan_budget half;
        bool armed = !s->bp.have && arm_cut(s, &half);
        uint64_t arena = memd_plan_place_range(&s->pl, s->order, 0, fit, s->off);
        s->pl.stop = NULL;
        if (s->pl.failed)
            return -ENOMEM;
        if (armed && arena == UINT64_MAX && !s->pl.beaten) {
            arena = place_by_start(s);
            if (s->pl.failed)
                return s->pl.overlap ? -ENOTRECOVERABLE : -ENOMEM;
            memd_plan_best_take(&s->bp, arena, s->off, s->n,
                                memd_plan_greedy_name(PLAN_ORD_START, false));
            s->cut = true;
            break;
        }
        if (s->pl.beaten)
            continue;
        if (bu->clock) /* a whole run's time */
            s->run_ns = bu->clock(bu->clock_ctx) - now;
        if (!s->bp.have || arena < s->bp.arena) {
            memd_plan_best_take(&s->bp, arena, s->off, s->n, memd_plan_greedy_name(ord, fit));
            s->best_ord = ord;
            s->best_fit = fit;
            if (s->best_order) /* the local search's start */
                memcpy(s->best_order, s->order, s->n * sizeof(*s->order));
        }
    }
    s->pl.bound = NULL;
    return 0;
}

/* Greedy portfolio: every order with first and best fit, size order first so a plan is
 * out early. Load keys cost a sort: computed when their order comes up. -ENOMEM. */
static int greedy_portfolio(solver *s)
{
    int rc = memd_plan_placer_init(&s->pl, s->b, s->n, s->pg);
    if (rc)
        return rc;
    uint64_t *load = malloc(s->n * sizeof(*load));
    if (!load)
        rc = -ENOMEM;
    for (int ord = 0; rc == 0 && ord < PLAN_ORD_COUNT && (!s->bp.have || s->bp.arena > s->lb);
         ord++) {
        if (ord == PLAN_ORD_LOAD && (rc = memd_plan_load_keys(s->b, s->n, load)) != 0)
            break;
        memd_plan_order_keys(s->b, s->n, load, ord, s->key);
        memd_plan_build_order(s->b, s->n, s->key, s->order);
        rc = place_order(s, ord);
        if (s->cut)
            break;
    }
    free(load);
    memd_plan_placer_free(&s->pl);
    return rc;
}

/* Within the budget: the exact search, then (for problems it cannot take, or if it
 * stopped early) the local search from the best greedy order, if its first full placer
 * run fits in time. The exact search gets the whole budget: on the challenging files a
 * local search after it never lowered the plan (nor from the search's own best order),
 * and its placer runs made most of the wall time of an iteration budget (memctl plan D
 * --iterations 300000: 2.7 s -> 0.7 s, same or lower plans). */
static int improve(solver *s, uint64_t seed, memd_plan_result *res)
{
    plan_budget *bu = &s->bu;
    if (s->bp.arena > s->lb && s->searchable) {
        plan_budget sb = sub_budget(bu, 100);
        int rc = memd_plan_exact(s->b, s->n, &s->g, s->lb, seed, s->opts, &sb, &s->bp);
        join_budget(bu, &sb);
        if (rc < 0)
            return rc;
        res->optimal = rc == 1;
    }
    if (s->bp.arena <= s->lb || res->optimal || bu->expired || memd_plan_budget_cancelled(bu) ||
        (bu->clock && bu->clock(bu->clock_ctx) + s->run_ns >= bu->deadline_ns))
        return 0;
    uint64_t arena = UINT64_MAX;
    int rc = memd_plan_local_search(s->b, s->n, s->pg, s->best_order, s->npinned, s->best_fit,
                                    s->lb, seed, bu, s->off, &arena);
    if (rc)
        return rc;
    memd_plan_best_take(&s->bp, arena, s->off, s->n, local_names[s->best_ord][s->best_fit]);
    return 0;
}

/* The biggest problems (placers over the segment tree): the first plan from size
 * order, first fit; then the squeaky-wheel lanes (plan_large.c) get most of the budget;
 * the rest of the greedy portfolio runs with what is left. */
static int solve_large(solver *s)
{
    plan_budget *bu = &s->bu;
    plan_budget half;
    bool armed = arm_cut(s, &half);
    /* The checks and the bound can take half the budget at a million buffers: then the
     * tree (seconds to build and run) is not even started. */
    bool late = armed && memd_plan_budget_stop_now(&half);
    uint64_t t0 = bu->clock ? bu->clock(bu->clock_ctx) : 0, arena = UINT64_MAX;
    int ord = PLAN_ORD_SIZE;
    if (!late) {
        /* The order before the tree: the sort's scratch, freed, then holds the tree's
         * nodes (memory at a million buffers); the keys are not needed until the rest
         * of the portfolio. */
        memd_plan_order_keys(s->b, s->n, NULL, PLAN_ORD_SIZE, s->key);
        memd_plan_build_order(s->b, s->n, s->key, s->order);
        free(s->key);
        s->key = NULL;
        int rc = memd_plan_placer_init_tree(&s->pl, s->b, s->n);
        if (rc)
            return rc;
        /* The caller hears from the first run (seconds at a million buffers); cut past
         * half the budget. */
        s->pl.beat = bu->watch;
        s->pl.stop = armed ? &half : NULL;
        arena = memd_plan_place_range(&s->pl, s->order, 0, false, s->off);
        s->pl.stop = NULL;
    }
    if (armed && arena == UINT64_MAX && !s->pl.failed) {
        ord = PLAN_ORD_START;
        s->cut = true;
        if (!s->key && !(s->key = malloc(s->n * sizeof(*s->key)))) {
            memd_plan_placer_free(&s->pl);
            return -ENOMEM;
        }
        arena = place_by_start(s);
        free(s->key);
        s->key = NULL;
    }
    bool failed = s->pl.failed, overlap = s->pl.overlap;
    memd_plan_placer_free(&s->pl);
    if (failed)
        return overlap ? -ENOTRECOVERABLE : -ENOMEM;
    if (bu->clock)
        s->run_ns = bu->clock(bu->clock_ctx) - t0;
    memd_plan_best_take(&s->bp, arena, s->off, s->n, memd_plan_greedy_name(ord, false));
    if (s->cut) /* nothing more runs (finish() relies on it) */
        return 0;
    /* The lanes and the rest of the portfolio hold their own arrays. */
    free(s->off);
    free(s->order);
    s->off = NULL;
    s->order = NULL;
    /* Nothing more starts once the time is up: a million buffers' first run can take
     * the whole budget, and every further step would allocate a tree first. */
    if (bu->clock && !memd_plan_run_fits(bu->clock(bu->clock_ctx), bu->deadline_ns, s->run_ns,
                                         false))
        return 0;
    plan_budget sb = sub_budget(bu, 85);
    int rc = memd_plan_large_improve(s->b, s->n, s->lb, s->opts, s->run_ns, &sb, &s->bp, NULL);
    join_budget(bu, &sb);
    if (rc || memd_plan_budget_cancelled(bu) ||
        (bu->clock && bu->clock(bu->clock_ctx) + s->run_ns >= bu->deadline_ns))
        return rc;
    bu->expired = false; /* the rest of the portfolio checks its own time */
    return memd_plan_portfolio_tree(s->b, s->n, s->lb, s->opts, s->run_ns, true, bu, &s->bp,
                                    NULL);
}

static int solve(solver *s, uint64_t seed, memd_plan_result *res)
{
    size_t n = s->n;
    s->off = malloc(n * sizeof(*s->off));
    s->key = malloc(n * sizeof(*s->key));
    s->order = malloc(n * sizeof(*s->order));
    if (!s->off || !s->key || !s->order)
        return -ENOMEM;
    uint64_t edges;
    int rc = memd_plan_count_edges(s->b, n, PLAN_EDGE_CAP, &edges);
    if (rc)
        return rc;
    /* Placer cost model: the graph costs ~ 2E log(degree), the offset list ~ n^2/2. */
    double dn = (double)n, de = (double)edges, deg = 2.0 * de / dn;
    bool graph_placer = edges <= PLAN_EDGE_CAP &&
                        2.0 * de * (2.0 + log2(1.0 + deg)) < dn * dn / 2.0;
    for (size_t i = 0; i < n; i++)
        s->npinned += s->b[i].pinned;
    s->searchable = s->npinned == 0 && n <= PLAN_SEARCH_MAX_N && edges <= PLAN_EDGE_CAP;
    s->large = !graph_placer && n > PLAN_LIST_MAX_N;
    if (graph_placer || s->searchable) {
        rc = memd_plan_graph_build(s->b, n, &s->g);
        if (rc)
            return rc;
    }
    s->pg = graph_placer ? &s->g : NULL;
    if (s->large)
        return solve_large(s);
    s->best_order = malloc(n * sizeof(*s->best_order));
    if (!s->best_order)
        return -ENOMEM;
    rc = greedy_portfolio(s);
    return rc || s->cut ? rc : improve(s, seed, res);
}

int memd_plan_greedy_run(const memd_plan_buffer *b, size_t n, int ord, bool best_fit,
                         uint64_t *off, uint64_t *arena)
{
    if (ord < 0 || ord >= PLAN_ORD_COUNT)
        return -EINVAL;
    int rc = memd_plan_check(b, n, NULL);
    if (rc)
        return rc;
    size_t nn = n ? n : 1;
    uint64_t *key = malloc(nn * sizeof(*key));
    uint32_t *order = malloc(nn * sizeof(*order));
    uint64_t edges = 0;
    plan_graph g = {0};
    plan_placer pl = {0};
    rc = !key || !order ? -ENOMEM : memd_plan_count_edges(b, n, PLAN_EDGE_CAP, &edges);
    if (rc == 0 && ord == PLAN_ORD_LOAD)
        rc = memd_plan_load_keys(b, n, key); /* order_keys reads load from key's own array */
    if (rc)
        goto out;
    memd_plan_order_keys(b, n, key, ord, key);
    memd_plan_build_order(b, n, key, order);
    /* The solver's choice of placer (one cost model, plan.c's). */
    double dn = (double)n, de = (double)edges, deg = n ? 2.0 * de / dn : 0;
    bool graph = edges <= PLAN_EDGE_CAP && 2.0 * de * (2.0 + log2(1.0 + deg)) < dn * dn / 2.0;
    if (graph && (rc = memd_plan_graph_build(b, n, &g)) != 0)
        goto out;
    rc = !graph && n > PLAN_LIST_MAX_N ? memd_plan_placer_init_tree(&pl, b, n)
                                       : memd_plan_placer_init(&pl, b, n, graph ? &g : NULL);
    if (rc)
        goto out;
    memd_plan_placer_set_order(&pl, order);
    *arena = memd_plan_place_range(&pl, order, 0, best_fit, off);
    rc = pl.failed ? -ENOMEM : 0;
out:
    memd_plan_placer_free(&pl);
    memd_plan_graph_free(&g);
    free(key);
    free(order);
    return rc;
}

/* The result, and a last check: a planner bug must never hand out an overlapping plan. */
static int finish(const solver *s, memd_plan_result *res, memd_plan_violation *v)
{
    res->arena = s->bp.have ? s->bp.arena : 0;
    res->strategy = s->bp.strategy;
    res->iterations = s->bu.used;
    res->first_ns = s->bp.first_ns;
    res->cancelled = memd_plan_budget_cancelled(&s->bu);
    if (res->arena == s->lb)
        res->optimal = true;
    memd_plan_violation chk;
    uint64_t arena_chk = 0;
    /* The cut's sweep checked each placement against the buffers live with it; the
     * overlap sweep would cost more than the whole budget at a million buffers. */
    int rc = s->cut ? memd_plan_validate_placed(s->b, s->n, s->bp.off, &chk, &arena_chk)
                    : memd_plan_validate(s->b, s->n, s->bp.off, &chk, &arena_chk);
    if (rc == 1 || (rc == 0 && arena_chk != res->arena)) {
        if (v)
            *v = chk;
        rc = -ENOTRECOVERABLE;
    }
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
    solver s = {.b = bufs, .n = n, .lb = lb, .opts = opts,
                .bu = {.clock = opts->clock, .clock_ctx = opts->clock_ctx,
                       .limit = opts->max_iterations}};
    if (!s.bu.limit && !s.bu.clock)
        s.bu.limit = MEMD_PLAN_DEFAULT_ITERATIONS;
    if (s.bu.clock)
        s.bu.deadline_ns = t0 + opts->budget_ns;
    plan_watch watch = {.fn = opts->progress, .ctx = opts->progress_ctx, .clock = opts->clock,
                        .clock_ctx = opts->clock_ctx, .t0 = t0, .last_ns = t0, .lb = lb,
                        .period_ns = opts->progress_ns ? opts->progress_ns : 100000000u};
    s.bu.watch = &watch;
    s.bp = (plan_best){.arena = UINT64_MAX, .off = offsets, .strategy = "empty",
                       .clock = &s.bu, .t0 = t0};
    rc = solve(&s, opts->seed, res);
    if (rc == 0)
        rc = finish(&s, res, v);
    memd_plan_placer_free(&s.pl);
    memd_plan_graph_free(&s.g);
    free(s.off);
    free(s.key);
    free(s.order);
    free(s.best_order);
    return rc;
}

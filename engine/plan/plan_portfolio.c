/* memd engine — the greedy portfolio over the segment tree (the biggest problems), in
 * two lanes that opts->runner may put on threads: every (order, fit) run but size order
 * first fit (the solver's first plan) when the caller made it, split by a fixed rule,
 * each lane with a tree of its own. The runs do not depend on each other, and the best is chosen by (arena, run
 * number) whatever ran where: the plan is the same on any runner.
 *
 * A run stops as soon as its top passes the best arena known (the caller's plan, or a
 * finished run of either lane): it can no longer give the best plan. Which runs stop
 * depends on timing, the plan does not: the best run's top never passes any arena, so
 * it always finishes, and among runs with its arena the lowest number wins. Most runs
 * stop within their first few percent of placements (synth_60k: 1-10 % but start
 * order's ~50 %). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

#define PF_LANES 2
#define PF_RUNS (2 * PLAN_ORD_COUNT)

typedef struct pf_lane {
    const memd_plan_buffer *b;
    size_t n;
    uint64_t lb;
    const uint64_t *load;
    plan_budget bu;
    uint64_t run_ns;     /* with a clock: the last run's duration */
    uint64_t best;       /* UINT64_MAX: no run ended */
    int best_run;
    uint64_t *best_off;
    unsigned beaten;     /* runs stopped at the bound */
    int rc;
} pf_lane;

typedef struct pf {
    pf_lane ln[PF_LANES];
    plan_bound bound;    /* the best arena known, lanes and caller */
    bool skip_first;     /* run 0 (size, first fit) is done already */
} pf;

/* Run r: order r / 2, best fit when r is odd. Each lane starts with a full run that
 * gives a bound soon (size first fit: usually the best; start order first fit: the
 * cheapest, a sweep), then its first fits, then its best fits (with a short budget the
 * cheap runs are the ones that end). The split balances what the runs cost once bounded
 * (synth_60k: ~50 ms of CPU a lane). */
static const int8_t pf_seq[PF_LANES][PF_RUNS / PF_LANES] = {
    {0, 2, 4, 3, 5},
    {8, 6, 1, 7, 9},
};

static void pf_run(void *arg, unsigned idx)
{
    pf *p = arg;
    pf_lane *ln = &p->ln[idx];
    size_t n = ln->n;
    plan_budget *bu = &ln->bu;
    plan_placer pl = {0};
    uint64_t *off = malloc(n * sizeof(*off)), *key = malloc(n * sizeof(*key));
    uint32_t *order = malloc(n * sizeof(*order));
    ln->best_off = malloc(n * sizeof(*ln->best_off));
    ln->rc = !off || !key || !order || !ln->best_off ? -ENOMEM : 0;
    for (int k = 0; ln->rc == 0 && k < PF_RUNS / PF_LANES; k++) {
        int r = pf_seq[idx][k];
        if (r == 0 && p->skip_first)
            continue;
        uint64_t now = bu->clock ? bu->clock(bu->clock_ctx) : 0;
        if ((bu->clock && now + ln->run_ns >= bu->deadline_ns) || memd_plan_budget_cancelled(bu) ||
            memd_plan_watch_poll(bu->watch, bu->used))
            break;
        int ord = r / 2;
        memd_plan_order_keys(ln->b, n, ln->load, ord, key);
        memd_plan_build_order(ln->b, n, key, order);
        if (!pl.tr && (ln->rc = memd_plan_placer_init_tree(&pl, ln->b, n)) != 0)
            break;
        pl.stop = bu; /* a run past the deadline is cut short */
        pl.bound = &p->bound;
        uint64_t arena = memd_plan_place_range(&pl, order, 0, r & 1, off);
        if (pl.failed) {
            ln->rc = -ENOMEM;
            break;
        }
        if (pl.beaten) {
            ln->beaten++;
            continue;
        }
        if (arena == UINT64_MAX)
            break;
        plan_bound_lower(&p->bound, arena);
        if (bu->clock)
            ln->run_ns = bu->clock(bu->clock_ctx) - now;
        if (arena < ln->best || (arena == ln->best && r < ln->best_run)) {
            ln->best = arena;
            ln->best_run = r;
            memcpy(ln->best_off, off, n * sizeof(*off));
        }
        if (arena <= ln->lb)
            break;
    }
    memd_plan_placer_free(&pl);
    free(off);
    free(key);
    free(order);
}

static void pf_in_order(void *ctx, unsigned nlanes, memd_plan_lane_fn fn, void *arg)
{
    (void)ctx;
    for (unsigned i = 0; i < nlanes; i++)
        fn(arg, i);
}

int memd_plan_portfolio_tree(const memd_plan_buffer *b, size_t n, uint64_t lb,
                             const memd_plan_opts *opts, uint64_t run_ns, bool skip_first,
                             plan_budget *bu, plan_best *bp, unsigned *beaten)
{
    if (n == 0)
        return 0;
    uint64_t *load = malloc(n * sizeof(*load));
    if (!load)
        return -ENOMEM;
    int rc = memd_plan_load_keys(b, n, load); /* before any tree: its scratch is freed */
    if (rc) {
        free(load);
        return rc;
    }
    pf p = {.skip_first = skip_first};
    atomic_init(&p.bound, bp->have ? bp->arena : UINT64_MAX);
    atomic_bool *cancel = bu->watch ? &bu->watch->cancelled : NULL;
    for (unsigned i = 0; i < PF_LANES; i++) {
        p.ln[i] = (pf_lane){.b = b, .n = n, .lb = lb, .load = load, .bu = *bu,
                            .run_ns = run_ns, .best = UINT64_MAX, .best_run = -1};
        p.ln[i].bu.cancel = cancel;
        if (i)
            p.ln[i].bu.watch = NULL; /* one caller of the callback at a time */
    }
    /* As the lanes: above this, one tree at a time (memory). */
    if (opts->runner && n <= PLAN_LARGE_SERIAL_ABOVE)
        opts->runner(opts->runner_ctx, PF_LANES, pf_run, &p);
    else
        pf_in_order(NULL, PF_LANES, pf_run, &p);
    int pick = -1;
    unsigned nbeaten = 0;
    for (unsigned i = 0; i < PF_LANES; i++) {
        pf_lane *ln = &p.ln[i];
        nbeaten += ln->beaten;
        if (ln->rc && !rc)
            rc = ln->rc;
        if (!ln->rc && ln->best != UINT64_MAX &&
            (pick < 0 || ln->best < p.ln[pick].best ||
             (ln->best == p.ln[pick].best && ln->best_run < p.ln[pick].best_run)))
            pick = (int)i;
    }
    if (rc == 0 && pick >= 0)
        memd_plan_best_take(bp, p.ln[pick].best, p.ln[pick].best_off, n,
                            memd_plan_greedy_name(p.ln[pick].best_run / 2,
                                                  p.ln[pick].best_run & 1));
    if (beaten)
        *beaten = nbeaten;
    for (unsigned i = 0; i < PF_LANES; i++)
        free(p.ln[i].best_off);
    free(load);
    return rc;
}

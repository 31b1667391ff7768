/* memd engine — the exact search within a budget, in two lanes that share their best
 * plan between rounds. A lane interleaves, with equal node shares:
 *  - the decision problem at the lower bound, round robin over MiniMalloc's three
 *    preorders with a doubling node limit (it settles tight instances, and proves
 *    optimality); lane 0 only;
 *  - descent: short randomized runs (restarts over perturbed preorders, and the order
 *    of the best plan so far with a time window ruined) at a capacity some steps below
 *    the best plan; a success lowers the best plan, a run of failures halves the step.
 *    Loose instances, where a complete search at the bound would wander forever (a
 *    depth-first search never revisits its first, lowest placements), improve here.
 *    Lane 1 only descends, and restarts three runs in four (lane 0: one in two): on
 *    loose instances the restarts find what the guided runs next to the best plan
 *    cannot, and the guided runs of both lanes then start from the better plan. When
 *    lane 1 has found nothing lower for EXACT_STALE rounds it starts over from the
 *    plan the search began with and follows its own trajectory (not the shared plan)
 *    until it beats the shared plan: on challenging/E the shared plan can settle where
 *    no guided run gets out, and a new trajectory often ends lower.
 * Every capacity is a multiple of the granule (the gcd of sizes and alignments: every
 * canonical plan's arena is one).
 *
 * Rounds keep the plan independent of how the lanes ran (opts->runner on threads, in
 * any order, or none): in a round each lane runs from the best plan and proven bound
 * of the round's start for a fixed node quantum (its last run may overshoot it), then
 * the lanes' plans are taken in lane order. So for an iteration budget the plan is the
 * same on one thread or two; with a clock two threads run twice the nodes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

/* The exact search keeps section member lists: only where they stay small. */
#define PLAN_SEARCH_MAX_MEMBERS 4000000u
#define EXACT_LANES 2
/* Rounds without a lower plan of its own before lane 1 starts a trajectory of its own
 * (some instances settle in one place every guided run returns to). */
#define EXACT_STALE 8

typedef struct exact {
    plan_search_ctx *c;
    const memd_plan_buffer *b;
    size_t n;
    plan_budget bu;       /* the lane's own: used counts across rounds */
    uint64_t arena;       /* the lane's best plan, in off */
    uint64_t *off, *scratch;
    uint64_t lo;          /* no plan has an arena below lo (proven) */
    uint64_t gran;        /* every capacity tried is a multiple of it */
    uint64_t exact_limit; /* node limit of a decision run, doubling */
    uint64_t short_limit; /* node limit of a descent run */
    uint64_t round_end;   /* the round ends once bu.used reaches it */
    uint64_t round_cap;   /* no run of this round may take more nodes */
    uint64_t step;        /* descent: granules below the best plan, 0 to pick anew */
    uint64_t rng, tries;
    uint64_t share, start; /* descent may run share nodes from start */
    unsigned fails;       /* descent runs cut short since the last success */
    unsigned dh;          /* the next decision preorder */
    unsigned restart_of;  /* descent restarts (1 - 1/restart_of) of its runs */
    bool decides;         /* the lane runs the decision half */
    bool alone;           /* on a trajectory of its own: does not take the shared plan */
    unsigned stale;       /* rounds without a lower plan of the lane's own */
    uint64_t round_arena; /* the lane's plan at the round's start */
    bool descending;
    int rc;
} exact;

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The gcd of the sizes and alignments of the non-empty buffers (1 if none); *m counts
 * those buffers. */
static uint64_t granule(const memd_plan_buffer *b, size_t n, size_t *m)
{
    uint64_t gran = 0;
    *m = 0;
    for (size_t i = 0; i < n; i++)
        if (b[i].size) {
            (*m)++;
            gran = gcd_u64(gran, b[i].size);
            gran = gcd_u64(gran, b[i].align ? b[i].align : 1);
        }
    return gran ? gran : 1;
}

static void take_found(exact *e)
{
    uint64_t top = 0;
    for (size_t i = 0; i < e->n; i++)
        if (e->scratch[i] + e->b[i].size > top)
            top = e->scratch[i] + e->b[i].size;
    if (top >= e->arena)
        return;
    e->arena = top;
    memcpy(e->off, e->scratch, e->n * sizeof(*e->off));
    memd_plan_watch_best(e->bu.watch, top, e->bu.used); /* lane 0 only has a watch */
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* Decision at the bound: one run of the next preorder; after all three the node limit
 * doubles and descent gets twice the nodes they took. 0, or a negative error. */
static int decide(exact *e)
{
    if (e->dh == 0)
        e->start = e->bu.used;
    int rc = memd_plan_search_run(e->c, e->lo, (int)e->dh, 0, PLAN_DISC_ALL,
                                  min_u64(e->exact_limit, e->round_cap), &e->bu, e->scratch);
    if (rc == 1)
        take_found(e);
    else if (rc == 0)
        e->lo += e->gran; /* proven: nothing fits at lo */
    else if (rc != -EAGAIN)
        return rc;
    if (++e->dh == 3) {
        e->dh = 0;
        e->exact_limit *= 2;
        e->share = 2 * (e->bu.used - e->start);
        e->start = e->bu.used;
        e->descending = true;
    }
    return 0;
}

/* Guides the next run along the best plan, in three of four of them with the buffers
 * live during one random buffer's lifetime shuffled (ruin and recreate: the search
 * starts next to the best plan and rebuilds around that window). */
static void guide_ruined(exact *e)
{
    const memd_plan_buffer *b = e->b;
    memcpy(e->scratch, e->off, e->n * sizeof(*e->scratch));
    uint64_t r = plan_splitmix(&e->rng);
    size_t w = (size_t)(r % e->n);
    for (size_t i = 0; i < e->n && (r >> 32) % 4 != 0; i++)
        if (b[i].lower < b[w].upper && b[w].lower < b[i].upper)
            e->scratch[i] = plan_splitmix(&e->rng) % (e->arena ? e->arena : 1);
    memd_plan_search_guide(e->c, e->scratch);
}

/* One descent run: one in restart_of follows the best plan (guide_ruined); the
 * others restart from a perturbed preorder. 0, or a negative error. */
static int descend(exact *e)
{
    uint64_t room = (e->arena - e->lo) / e->gran;
    if (!e->step || e->step > room)
        e->step = room > 4 ? room / 4 : 1;
    uint64_t cap = e->arena - e->step * e->gran;
    bool guided = e->tries % e->restart_of == e->restart_of - 1;
    int h = guided ? PLAN_HEUR_GUIDED : (int)((e->tries / 2) % PLAN_HEUR_GUIDED);
    if (h == PLAN_HEUR_GUIDED)
        guide_ruined(e);
    e->tries++;
    int rc = memd_plan_search_run(e->c, cap, h, plan_splitmix(&e->rng) | 1, PLAN_DISC_ALL,
                                  e->short_limit, &e->bu, e->scratch);
    if (rc == 1) {
        take_found(e);
        e->fails = 0;
    } else if (rc == 0) {
        e->lo = cap + e->gran;
        e->step = 0;
    } else if (rc == -EAGAIN) {
        /* Halve the step after a full cycle of preorders failed. */
        if (++e->fails >= 2 * PLAN_HEUR_COUNT) {
            e->fails = 0;
            e->step = e->step > 1 ? e->step / 2 : 1;
        }
    } else {
        return rc;
    }
    if (e->decides && e->bu.used - e->start >= e->share)
        e->descending = false;
    return 0;
}

/* The lanes and what one round shares. With a clock and a runner, a lane that spent
 * its quantum goes on while another still works on its own (it would idle: a decision
 * run may overshoot the quantum), once every lane has started (a runner may run them
 * one after the other). Without a clock the quantum alone ends a lane's round. */
typedef struct exact_lanes {
    exact ln[EXACT_LANES];
    bool overlap;
    atomic_uint started, short_of; /* lanes started; lanes short of their quantum */
} exact_lanes;

/* One lane's round: runs until its quantum is spent (see exact_lanes), the budget ends or
 * its plan reaches the proven bound. */
static void lane_round(void *arg, unsigned idx)
{
    exact_lanes *ls = arg;
    exact *e = &ls->ln[idx];
    bool spent = false;
    atomic_fetch_add(&ls->started, 1);
    while (e->rc == 0 && e->arena > e->lo && !e->bu.expired && !memd_plan_budget_cancelled(&e->bu)) {
        if (e->bu.used >= e->round_end) {
            if (!spent)
                atomic_fetch_sub(&ls->short_of, 1);
            spent = true;
            if (!ls->overlap || atomic_load(&ls->started) < EXACT_LANES ||
                atomic_load(&ls->short_of) == 0)
                break;
        }
        e->rc = e->decides && !e->descending ? decide(e) : descend(e);
    }
    if (!spent)
        atomic_fetch_sub(&ls->short_of, 1);
}

static int lane_init(exact *e, unsigned idx, const memd_plan_buffer *b, size_t n,
                     const plan_graph *g, uint64_t lb, uint64_t seed, const plan_budget *bu,
                     const plan_best *bp)
{
    size_t m;
    *e = (exact){.b = b, .n = n, .lo = lb, .arena = bp->arena, .bu = *bu,
                 .rng = idx ? plan_splitmix(&seed) ^ 0x1A4E2ull : seed ^ 0x5EA5C4ull,
                 .decides = idx == 0, .restart_of = idx == 0 ? 2 : 4};
    e->bu.used = 0;
    e->bu.tick = 0;
    e->bu.clock_mask = 63; /* search nodes are short: read the clock every 64 */
    if (idx) /* one caller of the progress callback at a time: lane 0 */
        e->bu.watch = NULL;
    e->bu.cancel = bu->watch ? &bu->watch->cancelled : bu->cancel;
    e->gran = granule(b, n, &m);
    e->exact_limit = 2 * (uint64_t)(m ? m : 1);
    e->short_limit = 4 * (uint64_t)(m ? m : 1) + 64;
    e->off = malloc(n * sizeof(*e->off));
    e->scratch = malloc(n * sizeof(*e->scratch));
    if (!e->off || !e->scratch)
        return -ENOMEM;
    memcpy(e->off, bp->off, n * sizeof(*e->off));
    return memd_plan_search_new(b, n, g, PLAN_SEARCH_MAX_MEMBERS, &e->c);
}

static void lane_free(exact *e)
{
    memd_plan_search_free(e->c);
    free(e->off);
    free(e->scratch);
}

static void run_in_order(void *ctx, unsigned lanes, memd_plan_lane_fn fn, void *arg)
{
    (void)ctx;
    for (unsigned i = 0; i < lanes; i++)
        fn(arg, i);
}

int memd_plan_exact(const memd_plan_buffer *b, size_t n, const plan_graph *g, uint64_t lb,
                    uint64_t seed, const memd_plan_opts *opts, plan_budget *bu, plan_best *bp)
{
    exact_lanes ls = {.overlap = opts && opts->runner && bu->clock};
    exact *ln = ls.ln;
    int rc = 0;
    unsigned k = 0;
    for (; k < EXACT_LANES && rc == 0; k++)
        rc = lane_init(&ln[k], k, b, n, g, lb, seed, bu, bp);
    uint64_t lo = lb, start_arena = bp->arena;
    uint64_t *start_off = malloc(n * sizeof(*start_off));
    if (!start_off && rc == 0)
        rc = -ENOMEM;
    if (start_off)
        memcpy(start_off, bp->off, n * sizeof(*start_off));
    /* Rounds of q nodes a lane, doubling every eight rounds. */
    uint64_t q = 16 * (ln[0].short_limit - 64) + 1024;
    for (unsigned r = 0; rc == 0 && !bu->expired && bp->arena > lo; r++) {
        if (memd_plan_budget_cancelled(bu))
            break;
        uint64_t left = bu->limit > bu->used ? bu->limit - bu->used : 0;
        if (bu->limit && left < EXACT_LANES)
            break;
        uint64_t quantum = q << (r / 8 < 20 ? r / 8 : 20);
        uint64_t used0[EXACT_LANES];
        atomic_store(&ls.started, 0);
        atomic_store(&ls.short_of, EXACT_LANES);
        for (unsigned i = 0; i < EXACT_LANES; i++) {
            exact *e = &ln[i];
            if (bp->arena < e->arena && !e->alone) {
                e->arena = bp->arena;
                memcpy(e->off, bp->off, n * sizeof(*e->off));
            }
            e->lo = e->lo > lo ? e->lo : lo;
            e->round_arena = e->arena;
            used0[i] = e->bu.used;
            e->round_end = e->bu.used + quantum;
            e->round_cap = quantum;
            e->bu.limit = bu->limit ? e->bu.used + left / EXACT_LANES : 0;
            e->bu.expired = false;
        }
        if (opts && opts->runner)
            opts->runner(opts->runner_ctx, EXACT_LANES, lane_round, &ls);
        else
            run_in_order(NULL, EXACT_LANES, lane_round, &ls);
        for (unsigned i = 0; i < EXACT_LANES; i++) {
            exact *e = &ln[i];
            bu->used += e->bu.used - used0[i];
            if (e->rc && !rc)
                rc = e->rc;
            if (e->arena < bp->arena) {
                memd_plan_best_take(bp, e->arena, e->off, n, "search");
                e->alone = false;
            }
            e->stale = e->arena < e->round_arena ? 0 : e->stale + 1;
            if (!e->decides && e->stale >= EXACT_STALE) {
                /* A fresh trajectory from the plan the search started from. */
                e->alone = true;
                e->stale = 0;
                e->arena = start_arena;
                memcpy(e->off, start_off, n * sizeof(*e->off));
                e->step = 0;
                e->fails = 0;
            }
            lo = e->lo > lo ? e->lo : lo;
        }
        if ((bu->limit && bu->used >= bu->limit) ||
            (bu->clock && bu->clock(bu->clock_ctx) >= bu->deadline_ns))
            bu->expired = true;
    }
    for (unsigned i = 0; i < k; i++)
        lane_free(&ln[i]);
    free(start_off);
    if (rc == -E2BIG)
        return 0;
    return rc < 0 ? rc : bp->arena <= lo;
}

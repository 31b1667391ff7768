/* memd engine — improvement for the biggest problems (placed over the segment tree,
 * where a search or a local search over the order is far too slow): squeaky-wheel
 * greedy. Each iteration is one first-fit run in the order of a key; the buffers the
 * run left above the lower bound (the ones that made the arena) get their key doubled
 * (up to three times for the highest), so the next run places them earlier, below the
 * buffers that blocked them. On traces
 * of big models the arena comes from long-lived mid-sized buffers stacked on top of
 * everything (no gap stays free over their whole life once the short ones are in);
 * promoting them is what closes the gap.
 *
 * Keys are size x length^alpha x 2^boost: a small alpha already favours long lives and
 * beats plain size order on those traces; a chain that stops improving starts over with
 * its next alpha. Chains are independent lanes (memd_plan_opts.runner may run them on
 * threads); each has a fixed share of the iteration budget, so the plan does not depend
 * on how they ran. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

#define LARGE_LANES PLAN_LARGE_LANES
/* Runs without improvement before a chain starts over with its next alpha. */
#define LARGE_STALE 8
#define LARGE_MAX_BOOST 40

static const double lane_alpha[] = {0.1, 0.15, 0.125, 0.05, 0.075, 0.2};
#define NALPHA (sizeof(lane_alpha) / sizeof(lane_alpha[0]))

static const char *const lane_names[LARGE_LANES] = {"squeaky-0", "squeaky-1"};

typedef struct lane {
    const memd_plan_buffer *b;
    size_t n;
    uint64_t lb, start_arena;
    plan_budget bu;
    uint64_t run_ns;    /* duration of the first run (with a clock) */
    uint64_t best;      /* UINT64_MAX: none better than start_arena */
    uint64_t *best_off; /* lane's best plan (lanes on a runner) */
    plan_best *direct;  /* lanes in order: improvements go straight to the plan (no
                           copy of n offsets a lane at the peak) */
    plan_watch *watch;  /* lane 0 only: reports improvements */
    bool serial;        /* above the serial threshold: a run starts only if all of it fits */
    unsigned runs;      /* runs started */
    int rc;
} lane;

typedef struct lane_work {
    plan_placer pl;
    uint64_t *off, *key;
    uint32_t *order;
    uint8_t *boost;
    double alpha;
} lane_work;

static void work_free(lane_work *w)
{
    memd_plan_placer_free(&w->pl);
    free(w->off);
    free(w->key);
    free(w->order);
    free(w->boost);
}

static void set_alpha(const lane *ln, lane_work *w, double alpha)
{
    w->alpha = alpha;
    memset(w->boost, 0, ln->n);
}

/* Pinned buffers first (key max), then by weighted key, ties by index. The keys live
 * only for the sort: the placement, where the tree is fullest, runs without them (8
 * bytes a buffer at the peak). After the first run the keys and the sort's index
 * scratch live in the tree's pool, resident since that run and dead until the next:
 * allocated, they came on top of the pool's pages (12 MB more at a million buffers
 * from the second run on). -ENOMEM. */
static int build_order(const lane *ln, lane_work *w)
{
    size_t n = ln->n;
    uint32_t *iscratch = NULL;
    uint64_t *key = w->pl.tr ? memd_plan_tree_scratch(w->pl.tr, n * (sizeof(*key) +
                                                                     sizeof(*iscratch)))
                             : NULL;
    if (key) {
        iscratch = (uint32_t *)(key + n);
    } else {
        key = w->key = malloc((n ? n : 1) * sizeof(*w->key));
        if (!key)
            return -ENOMEM;
    }
    for (size_t i = 0; i < ln->n; i++) {
        /* size x length^alpha x 2^boost (computed each run: an array of them would
         * cost 8 bytes a buffer at the peak) */
        double len = (double)(ln->b[i].upper - ln->b[i].lower);
        double k = ldexp((double)ln->b[i].size * pow(len, w->alpha), w->boost[i]);
        key[i] = ln->b[i].pinned ? UINT64_MAX
                 : k >= 1.8e19   ? UINT64_MAX - 1
                                 : (uint64_t)k;
        w->order[i] = (uint32_t)i;
    }
    /* The last run's offsets are spent (boosts are in): they are the sort's scratch. */
    memd_plan_sort_desc_clobber(w->order, n, key, w->off, iscratch);
    free(w->key);
    w->key = NULL;
    memd_plan_placer_set_order(&w->pl, w->order);
    return 0;
}

static int lane_loop(lane *ln, lane_work *w, unsigned idx)
{
    const memd_plan_buffer *b = ln->b;
    size_t n = ln->n;
    plan_budget *bu = &ln->bu;
    uint64_t cost = n / 8 + 1; /* iterations one run is worth: about a placement each 8 */
    unsigned stale = 0, alpha = idx;
    uint64_t chain_best = UINT64_MAX;
    set_alpha(ln, w, lane_alpha[alpha % NALPHA]);
    while (!memd_plan_budget_spend_n(bu, cost)) {
        uint64_t t0 = bu->clock ? bu->clock(bu->clock_ctx) : 0;
        if (bu->clock && !memd_plan_run_fits(t0, bu->deadline_ns, ln->run_ns, ln->serial))
            break;
        int rc = build_order(ln, w);
        if (rc)
            return rc;
        /* The tree after the first sort: the sort's freed scratch then holds its nodes
         * (memory at a million buffers). */
        if (!w->pl.tr) {
            rc = memd_plan_placer_init_tree(&w->pl, b, n);
            if (rc)
                return rc;
            w->pl.stop = bu;
        }
        ln->runs++;
        uint64_t arena = memd_plan_place_range(&w->pl, w->order, 0, false, w->off);
        if (w->pl.failed)
            return -ENOMEM;
        if (arena == UINT64_MAX)
            break; /* deadline or cancel in the middle of the run */
        if (bu->clock)
            ln->run_ns = bu->clock(bu->clock_ctx) - t0;
        if (arena < (ln->best != UINT64_MAX ? ln->best : ln->start_arena)) {
            ln->best = arena;
            if (ln->direct)
                memd_plan_best_take(ln->direct, arena, w->off, n, lane_names[idx]);
            else
                memcpy(ln->best_off, w->off, n * sizeof(*w->off));
            memd_plan_watch_best(ln->watch, arena, bu->used);
        }
        if (arena <= ln->lb)
            break;
        stale = arena < chain_best ? 0 : stale + 1;
        chain_best = arena < chain_best ? arena : chain_best;
        if (stale >= LARGE_STALE) {
            alpha += LARGE_LANES;
            set_alpha(ln, w, lane_alpha[alpha % NALPHA]);
            stale = 0;
            chain_best = UINT64_MAX;
            continue;
        }
        /* The higher a buffer ended, the more it moves up: 1 to 3 doublings. */
        double span = (double)(arena - ln->lb) + 1.0;
        for (size_t i = 0; i < n; i++) {
            uint64_t end = w->off[i] + b[i].size;
            if (!b[i].size || end <= ln->lb)
                continue;
            unsigned up = 1u + (unsigned)(2.0 * (double)(end - ln->lb) / span);
            w->boost[i] = (uint8_t)(w->boost[i] + up < LARGE_MAX_BOOST ? w->boost[i] + up
                                                                       : LARGE_MAX_BOOST);
        }
    }
    return 0;
}

typedef struct lanes {
    lane ln[LARGE_LANES];
} lanes;

static void lane_run(void *arg, unsigned idx)
{
    lane *ln = &((lanes *)arg)->ln[idx];
    lane_work w = {0};
    size_t n = ln->n, nn = n ? n : 1;
    w.off = malloc(nn * sizeof(*w.off));
    w.order = malloc(nn * sizeof(*w.order));
    w.boost = malloc(nn);
    ln->best_off = ln->direct ? NULL : malloc(nn * sizeof(*ln->best_off));
    if (!w.off || !w.order || !w.boost || (!ln->direct && !ln->best_off))
        ln->rc = -ENOMEM;
    else
        ln->rc = lane_loop(ln, &w, idx);
    work_free(&w);
}

bool memd_plan_run_fits(uint64_t now, uint64_t deadline, uint64_t run_ns, bool whole)
{
    uint64_t need = whole ? run_ns : run_ns / 2;
    return now < deadline && need < deadline - now; /* now + need < deadline */
}

uint64_t memd_plan_lane_deadline(uint64_t now, uint64_t deadline, unsigned lanes_left,
                                 uint64_t run_ns)
{
    uint64_t left = now < deadline ? deadline - now : 0;
    /* A share too short for one run would be spent on a run cut short (a million
     * buffers: one run takes seconds). */
    return left && left / lanes_left >= run_ns ? now + left / lanes_left : deadline;
}

static void run_in_order(void *ctx, unsigned nlanes, memd_plan_lane_fn fn, void *arg)
{
    (void)ctx;
    lanes *ls = arg;
    for (unsigned i = 0; i < nlanes; i++) {
        plan_budget *bu = &ls->ln[i].bu;
        if (bu->clock)
            bu->deadline_ns = memd_plan_lane_deadline(bu->clock(bu->clock_ctx), bu->deadline_ns,
                                                      nlanes - i, ls->ln[i].run_ns);
        fn(arg, i);
    }
}

int memd_plan_large_improve(const memd_plan_buffer *b, size_t n, uint64_t lb,
                            const memd_plan_opts *opts, uint64_t run_ns, plan_budget *bu,
                            plan_best *bp, plan_large_sched *sched)
{
    plan_large_sched dflt = {.serial_above = PLAN_LARGE_SERIAL_ABOVE};
    if (!sched)
        sched = &dflt;
    memset(sched->runs, 0, sizeof(sched->runs));
    if (!bp->have || bp->arena <= lb || bu->expired || memd_plan_budget_cancelled(bu))
        return 0;
    bool serial = n > sched->serial_above;
    lanes ls;
    uint64_t left = bu->limit > bu->used ? bu->limit - bu->used : 0;
    atomic_bool *cancel = bu->watch ? &bu->watch->cancelled : NULL;
    for (unsigned i = 0; i < LARGE_LANES; i++) {
        ls.ln[i] = (lane){.b = b, .n = n, .lb = lb, .start_arena = bp->arena, .bu = *bu,
                          .run_ns = run_ns, .best = UINT64_MAX,
                          .watch = i == 0 ? bu->watch : NULL, .serial = serial};
        ls.ln[i].bu.used = 0;
        ls.ln[i].bu.limit = bu->limit ? left / LARGE_LANES : 0;
        ls.ln[i].bu.tick = 0;
        ls.ln[i].bu.clock_mask = 0;
        ls.ln[i].bu.expired = bu->limit && ls.ln[i].bu.limit == 0;
        if (i)
            ls.ln[i].bu.watch = NULL; /* one caller of the callback at a time */
        ls.ln[i].bu.cancel = cancel;
    }
    if (opts->runner && !serial) {
        opts->runner(opts->runner_ctx, LARGE_LANES, lane_run, &ls);
    } else {
        /* In order, lane 0 first: taking each improvement at once gives the plan the
         * runner's path takes at the end (the lowest, ties to lane 0). */
        for (unsigned i = 0; i < LARGE_LANES; i++)
            ls.ln[i].direct = bp;
        run_in_order(NULL, LARGE_LANES, lane_run, &ls);
    }
    int rc = 0;
    for (unsigned i = 0; i < LARGE_LANES; i++) {
        lane *ln = &ls.ln[i];
        bu->used += ln->bu.used;
        sched->runs[i] = ln->runs;
        if (ln->rc && !rc)
            rc = ln->rc;
        if (!ln->rc && ln->best != UINT64_MAX && !ln->direct)
            memd_plan_best_take(bp, ln->best, ln->best_off, n, lane_names[i]);
        free(ln->best_off);
    }
    if ((bu->limit && bu->used >= bu->limit) || (bu->clock && bu->clock(bu->clock_ctx) >= bu->deadline_ns))
        bu->expired = true;
    return rc;
}

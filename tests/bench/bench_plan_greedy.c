/* memd-bench-plan-greedy FILE.csv — every run of the planner's greedy portfolio (orders
 * size, area, length, load, start x first/best fit, the placer the solver would pick),
 * as a reference for what the improvement steps must beat: one JSON line with the
 * lower bound, each run's arena and time (setup included: each run alone), and the best.
 *
 * memd-bench-plan-greedy --portfolio FILE.csv — the whole ten-run portfolio over the
 * segment tree as the solver runs it on big problems (shared setup, two lanes), from no
 * plan at all, once in one thread and once on two: wall and CPU milliseconds of each,
 * the best arena and run, and how many runs stopped once they could not beat it. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan.h"
#include "plan_csv.h"
#include "plan_internal.h"
#include "test_clock.h"

typedef struct lane_arg {
    memd_plan_lane_fn fn;
    void *arg;
} lane_arg;

static void *lane_main(void *p)
{
    lane_arg *a = p;
    a->fn(a->arg, 1);
    return NULL;
}

/* Two lanes: lane 1 on a thread of its own, lane 0 here. */
static void two_threads(void *ctx, unsigned lanes, memd_plan_lane_fn fn, void *arg)
{
    (void)ctx;
    pthread_t th;
    lane_arg a = {fn, arg};
    bool spawned = lanes > 1 && pthread_create(&th, NULL, lane_main, &a) == 0;
    fn(arg, 0);
    if (spawned)
        pthread_join(th, NULL);
    for (unsigned i = spawned ? 2 : 1; i < lanes; i++)
        fn(arg, i);
}

static int portfolio(const memd_plan_csv *csv, uint64_t lb, uint64_t *off)
{
    printf("{\"bench\":\"plan-portfolio\",\"buffers\":%zu,\"lower_bound\":%" PRIu64
           ",\"runs\":[", csv->n, lb);
    for (int threads = 1; threads <= 2; threads++) {
        plan_budget bu = {0};
        plan_best bp = {.arena = UINT64_MAX, .off = off, .strategy = ""};
        memd_plan_opts opts = {.runner = threads > 1 ? two_threads : NULL};
        unsigned beaten = 0;
        double w0 = (double)memd_test_now_ns() / 1e6,
               c0 = (double)memd_test_clock_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e6;
        int rc = memd_plan_portfolio_tree(csv->bufs, csv->n, lb, &opts, 0, false, &bu, &bp,
                                          &beaten);
        double wall = (double)memd_test_now_ns() / 1e6 - w0,
               cpu = (double)memd_test_clock_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e6 - c0;
        uint64_t chk = 0;
        if (rc || !bp.have || memd_plan_validate(csv->bufs, csv->n, off, NULL, &chk) != 0 ||
            chk != bp.arena) {
            fprintf(stderr, "memd-bench-plan-greedy: the portfolio failed\n");
            return 1;
        }
        printf("%s{\"threads\":%d,\"wall_ms\":%.1f,\"cpu_ms\":%.1f,\"best\":%" PRIu64
               ",\"best_run\":\"%s\",\"runs_beaten\":%u}",
               threads > 1 ? "," : "", threads, wall, cpu, bp.arena, bp.strategy, beaten);
    }
    printf("]}\n");
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const names[MEMD_PLAN_GREEDY_ORDERS] = {"size", "area", "length",
                                                               "load", "start"};
    bool whole = argc == 3 && strcmp(argv[1], "--portfolio") == 0;
    if (argc != 2 && !whole) {
        fprintf(stderr, "usage: memd-bench-plan-greedy [--portfolio] FILE.csv\n");
        return 2;
    }
    const char *path = argv[argc - 1];
    memd_plan_csv csv;
    memd_error err = {0};
    if (memd_plan_csv_read(path, &csv, &err)) {
        char msg[sizeof err.file + sizeof err.msg + 32];
        memd_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "memd-bench-plan-greedy: %s\n", msg);
        return 1;
    }
    uint64_t lb = 0, best = UINT64_MAX;
    uint64_t *off = malloc((csv.n ? csv.n : 1) * sizeof(*off));
    int ret = 1;
    if (!off || memd_plan_lower_bound(csv.bufs, csv.n, &lb)) {
        fprintf(stderr, "memd-bench-plan-greedy: %s: cannot compute the lower bound\n", path);
        goto out;
    }
    if (whole) {
        ret = portfolio(&csv, lb, off);
        goto out;
    }
    const char *best_name = "";
    int best_fit = 0;
    printf("{\"bench\":\"plan-greedy\",\"buffers\":%zu,\"lower_bound\":%" PRIu64 ",\"runs\":[",
           csv.n, lb);
    for (int ord = 0; ord < MEMD_PLAN_GREEDY_ORDERS; ord++)
        for (int fit = 0; fit < 2; fit++) {
            uint64_t arena = 0;
            double t0 = (double)memd_test_now_ns() / 1e6;
            int rc = memd_plan_greedy_run(csv.bufs, csv.n, ord, fit, off, &arena);
            double ms = (double)memd_test_now_ns() / 1e6 - t0;
            uint64_t chk = 0;
            if (rc || memd_plan_validate(csv.bufs, csv.n, off, NULL, &chk) != 0 || chk != arena) {
                fprintf(stderr, "memd-bench-plan-greedy: %s: run %s/%s failed\n", path,
                        names[ord], fit ? "best" : "first");
                goto out;
            }
            printf("%s{\"order\":\"%s\",\"fit\":\"%s\",\"arena\":%" PRIu64 ",\"ms\":%.1f}",
                   ord || fit ? "," : "", names[ord], fit ? "best" : "first", arena, ms);
            if (arena < best) {
                best = arena;
                best_name = names[ord];
                best_fit = fit;
            }
        }
    printf("],\"best\":%" PRIu64 ",\"best_run\":\"%s-%s\",\"best_gap_pct\":%.3f}\n", best,
           best_name, best_fit ? "best" : "first", lb ? ((double)best - (double)lb) * 100.0 / (double)lb : 0.0);
    ret = 0;
out:
    free(off);
    memd_plan_csv_free(&csv);
    return ret;
}

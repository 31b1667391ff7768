/* memd-bench-plan-greedy FILE.csv — every run of the planner's greedy portfolio (orders
 * size, area, length, load, start x first/best fit, the placer the solver would pick),
 * as a reference for what the improvement steps must beat: one JSON line with the
 * lower bound, each run's arena and time, and the best. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan.h"
#include "plan_csv.h"
#include "plan_internal.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    static const char *const names[MEMD_PLAN_GREEDY_ORDERS] = {"size", "area", "length",
                                                               "load", "start"};
    if (argc != 2) {
        fprintf(stderr, "usage: memd-bench-plan-greedy FILE.csv\n");
        return 2;
    }
    memd_plan_csv csv;
    char err[512];
    if (memd_plan_csv_read(argv[1], &csv, err, sizeof(err))) {
        fprintf(stderr, "memd-bench-plan-greedy: %s\n", err);
        return 1;
    }
    uint64_t lb = 0, best = UINT64_MAX;
    uint64_t *off = malloc((csv.n ? csv.n : 1) * sizeof(*off));
    int ret = 1;
    if (!off || memd_plan_lower_bound(csv.bufs, csv.n, &lb)) {
        fprintf(stderr, "memd-bench-plan-greedy: %s: cannot compute the lower bound\n", argv[1]);
        goto out;
    }
    const char *best_name = "";
    int best_fit = 0;
    printf("{\"bench\":\"plan-greedy\",\"buffers\":%zu,\"lower_bound\":%" PRIu64 ",\"runs\":[",
           csv.n, lb);
    for (int ord = 0; ord < MEMD_PLAN_GREEDY_ORDERS; ord++)
        for (int fit = 0; fit < 2; fit++) {
            uint64_t arena = 0;
            double t0 = now_ms();
            int rc = memd_plan_greedy_run(csv.bufs, csv.n, ord, fit, off, &arena);
            double ms = now_ms() - t0;
            uint64_t chk = 0;
            if (rc || memd_plan_validate(csv.bufs, csv.n, off, NULL, &chk) != 0 || chk != arena) {
                fprintf(stderr, "memd-bench-plan-greedy: %s: run %s/%s failed\n", argv[1],
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

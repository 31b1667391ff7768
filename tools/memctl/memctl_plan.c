/* memctl plan — plan a CSV problem offline (no daemon), or validate a given plan. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "plan.h"
#include "memctl.h"
#include "plan_csv.h"

#define PLAN_USAGE                                                                        \
    "usage: memctl plan INPUT.csv [--output OUT.csv] [--budget-ms MS] [--seed S] [--json]\n" \
    "                   [--threads N] [--iterations N]\n"                                 \
    "       memctl plan --validate INPUT.csv [--json]\n"                                   \
    "  on a terminal the best arena so far is shown while it plans; Ctrl-C stops it and\n" \
    "  keeps (writes and prints) the best plan found\n"
#define MAX_BUDGET_MS (24ull * 3600 * 1000)

static uint64_t mono_ns(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The planner's lanes (independent pieces of its work) on threads: lane 0 on this
 * thread, the others on threads of their own; at most `threads` at once. A thread
 * that cannot start leaves its lanes to this one. The plan does not depend on it. */
typedef struct lane_pool {
    unsigned threads;
    memd_plan_lane_fn fn;
    void *arg;
    unsigned lanes, next;
    pthread_mutex_t mu;
} lane_pool;

static void *lane_worker(void *p)
{
    lane_pool *lp = p;
    for (;;) {
        pthread_mutex_lock(&lp->mu);
        unsigned lane = lp->next < lp->lanes ? lp->next++ : UINT32_MAX;
        pthread_mutex_unlock(&lp->mu);
        if (lane == UINT32_MAX)
            return NULL;
        lp->fn(lp->arg, lane);
    }
}

static void run_lanes(void *ctx, unsigned lanes, memd_plan_lane_fn fn, void *arg)
{
    lane_pool *lp = ctx;
    lp->fn = fn;
    lp->arg = arg;
    lp->lanes = lanes;
    lp->next = 0;
    pthread_t th[8];
    unsigned nth = 0;
    while (nth + 1 < lp->threads && nth + 1 < lanes && nth < 8 &&
           pthread_create(&th[nth], NULL, lane_worker, lp) == 0)
        nth++;
    lane_worker(lp);
    for (unsigned i = 0; i < nth; i++)
        pthread_join(th[i], NULL);
}

static int parse_u64_arg(const char *flag, const char *s, uint64_t max, uint64_t *v)
{
    if (!s || !*s) {
        fprintf(stderr, "memctl plan: %s needs a value\n", flag);
        return -1;
    }
    uint64_t x = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') {
            fprintf(stderr, "memctl plan: %s: '%s' is not an unsigned integer\n", flag, s);
            return -1;
        }
        unsigned d = (unsigned)(*p - '0');
        if (x > (UINT64_MAX - d) / 10) {
            fprintf(stderr, "memctl plan: %s: '%s' is too large\n", flag, s);
            return -1;
        }
        x = x * 10 + d;
    }
    if (x > max) {
        fprintf(stderr, "memctl plan: %s: %" PRIu64 " is above the maximum %" PRIu64 "\n", flag,
                x, max);
        return -1;
    }
    *v = x;
    return 0;
}

static void print_violation(FILE *f, const memd_plan_csv *csv, const memd_plan_violation *v)
{
    fprintf(f, "\"issue\":\"%s\",\"a\":", memd_plan_issue_name(v->issue));
    memd_json_str(f, memd_plan_csv_id(csv, v->a));
    fprintf(f, ",\"line_a\":%" PRIu32, csv->lines[v->a]);
    if (v->issue == MEMD_PLAN_OVERLAP || v->issue == MEMD_PLAN_PIN_CONFLICT) {
        fputs(",\"b\":", f);
        memd_json_str(f, memd_plan_csv_id(csv, v->b));
        fprintf(f, ",\"line_b\":%" PRIu32, csv->lines[v->b]);
    }
}

/* What went wrong, for a person, at the input's line: "memctl plan: FILE:LINE: WHAT:
 * ISSUE (why): 'a'[ and 'b' (line N)]". rc: the error behind it (-EOVERFLOW: sums, not
 * one buffer's offset + size). Without a buffer to name, the error alone. */
static void report_text(const char *input, const memd_plan_csv *csv, const char *what,
                        const memd_plan_violation *v, int rc)
{
    if (v->issue == MEMD_PLAN_VALID || v->a >= csv->n) {
        fprintf(stderr, "memctl plan: %s: %s: %s\n", input, what, strerror(rc < 0 ? -rc : EINVAL));
        return;
    }
    const char *reason = rc == -EOVERFLOW ? "the sizes live together, or offset + size, do not "
                                            "fit in 64 bits"
                                          : memd_plan_issue_reason(v->issue);
    fprintf(stderr, "memctl plan: %s:%" PRIu32 ": %s: %s (%s): '%s'", input, csv->lines[v->a], what,
            memd_plan_issue_name(v->issue), reason, memd_plan_csv_id(csv, v->a));
    if ((v->issue == MEMD_PLAN_OVERLAP || v->issue == MEMD_PLAN_PIN_CONFLICT) && v->b < csv->n)
        fprintf(stderr, " and '%s' (line %" PRIu32 ")", memd_plan_csv_id(csv, v->b), csv->lines[v->b]);
    fputc('\n', stderr);
}

/* An invalid plan: one JSON object on stdout with --json, else a line on stderr. */
static void report_violation(const char *input, const memd_plan_csv *csv,
                             const memd_plan_violation *v, bool json)
{
    if (json) {
        printf("{\"valid\": false, \"buffers\": %zu, ", csv->n);
        print_violation(stdout, csv, v);
        printf("}\n");
        return;
    }
    report_text(input, csv, "the plan is not valid", v, -EINVAL);
}

static int cmd_validate(const char *input, bool json)
{
    uint64_t t0 = mono_ns(NULL);
    /* Big arrays straight from the system and back to it when freed: by default glibc
     * raises its mmap threshold once the file's buffer (tens of MB at a million rows)
     * is freed, and then keeps every phase's freed scratch in the heap while the next
     * phase maps its own (about 50 MB more at the peak at a million buffers). */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    memd_plan_csv csv;
    memd_error err = {0};
    if (memd_plan_csv_read(input, &csv, &err)) {
        memctl_print_error("memctl plan: ", &err);
        return 1;
    }
    int ret = 1;
    uint64_t *off = malloc((csv.n ? csv.n : 1) * sizeof(*off));
    memd_plan_buffer *b = malloc((csv.n ? csv.n : 1) * sizeof(*b));
    if (!off || !b) {
        fprintf(stderr, "memctl plan: out of memory\n");
        goto out;
    }
    if (!csv.has_offset) {
        fprintf(stderr, "memctl plan: %s: --validate needs an 'offset' column\n", input);
        goto out;
    }
    for (size_t i = 0; i < csv.n; i++) {
        if (!csv.bufs[i].pinned) {
            fprintf(stderr, "memctl plan: %s:%" PRIu32 ": --validate needs an offset on every row\n",
                    input, csv.lines[i]);
            goto out;
        }
        off[i] = csv.bufs[i].offset;
        b[i] = csv.bufs[i];
        b[i].pinned = false; /* the offsets are the plan under test, not constraints */
    }
    memd_plan_violation v;
    uint64_t arena = 0, lb = 0;
    int rc = memd_plan_validate(b, csv.n, off, &v, &arena);
    if (rc < 0 || memd_plan_lower_bound(b, csv.n, &lb) < 0) {
        fprintf(stderr, "memctl plan: %s\n", strerror(rc < 0 ? -rc : ENOMEM));
        goto out;
    }
    if (rc == 0) {
        memctl_plan_summary sum = {.buffers = csv.n, .arena = arena, .lower_bound = lb,
                                   .strategy = "precomputed", .optimal = arena == lb,
                                   .validated = true,
                                   .plan_ms = (double)(mono_ns(NULL) - t0) / 1e6,
                                   .first_ms = -1};
        memctl_plan_print(stdout, &sum, json);
        ret = 0;
    } else {
        report_violation(input, &csv, &v, json);
    }
out:
    free(off);
    free(b);
    memd_plan_csv_free(&csv);
    return ret;
}

/* Ctrl-C while planning: the planner stops at its next progress call and the best plan
 * found so far is checked, written and printed as usual (with "cancelled": true). */
static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

typedef struct progress_ctx {
    bool tty;                 /* stderr is a terminal: show the best arena so far */
    bool shown;
} progress_ctx;

static bool on_progress(void *vctx, const memd_plan_progress *p)
{
    progress_ctx *ctx = vctx;
    if (ctx->tty && p->have_plan) {
        double lb = (double)p->lower_bound;
        fprintf(stderr, "\r\033[Kmemctl plan: best arena %" PRIu64 " bytes (%.3f%% over the "
                        "lower bound %" PRIu64 "), %.1f s, %" PRIu64 " iterations; Ctrl-C "
                        "keeps it", p->arena, lb > 0 ? 100.0 * ((double)p->arena - lb) / lb : 0.0,
                p->lower_bound, (double)p->elapsed_ns / 1e9, p->iterations);
        ctx->shown = true;
    }
    return interrupted != 0;
}

/* iterations: 0 plans against the clock (budget_ms); else exactly that many
 * improvement iterations, no clock: the same plan on every machine and thread count. */
static int cmd_plan(const char *input, const char *output, uint64_t budget_ms, uint64_t seed,
                    bool json, unsigned threads, uint64_t iterations)
{
    uint64_t t0 = mono_ns(NULL);
    /* Big arrays straight from the system and back to it when freed: by default glibc
     * raises its mmap threshold once the file's buffer (tens of MB at a million rows)
     * is freed, and then keeps every phase's freed scratch in the heap while the next
     * phase maps its own (about 50 MB more at the peak at a million buffers). */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    /* On a terminal, a line says what it is doing from the start: at a million buffers
     * reading takes a second or two and the first plan (one greedy run, which the
     * engine does not interrupt to report) several more; the best arena replaces it. */
    bool tty = isatty(STDERR_FILENO) == 1;
    if (tty)
        fprintf(stderr, "\r\033[Kmemctl plan: reading %s ...", input);
    memd_plan_csv csv;
    memd_error err = {0};
    if (memd_plan_csv_read(input, &csv, &err)) {
        memctl_print_error(tty ? "\r\033[Kmemctl plan: " : "memctl plan: ", &err);
        return 1;
    }
    if (tty)
        fprintf(stderr, "\r\033[Kmemctl plan: %zu buffers read in %.1f s; placing the first "
                        "plan ...", csv.n, (double)(mono_ns(NULL) - t0) / 1e9);
    int ret = 1;
    uint64_t *off = malloc((csv.n ? csv.n : 1) * sizeof(*off));
    if (!off) {
        fprintf(stderr, "memctl plan: out of memory\n");
        goto out;
    }
    /* The budget covers the whole command: what reading the file took is spent, and
     * validating and writing the result need time too (measured about 1-2 us per row;
     * the reserve doubles that, plus 2 ms). */
    uint64_t spent = mono_ns(NULL) - t0, budget = budget_ms * 1000000ull;
    uint64_t reserve = 2000000u + (uint64_t)csv.n * (output ? 4000u : 2000u);
    progress_ctx pctx = {.tty = tty, .shown = tty};
    lane_pool pool = {.threads = threads};
    pthread_mutex_init(&pool.mu, NULL);
    memd_plan_opts opts = {.seed = seed, .clock = iterations ? NULL : mono_ns,
                           .budget_ns = budget > spent + reserve ? budget - spent - reserve : 0,
                           .max_iterations = iterations,
                           .runner = threads > 1 ? run_lanes : NULL, .runner_ctx = &pool,
                           .progress = on_progress, .progress_ctx = &pctx,
                           .progress_ns = 200000000u};
    memd_plan_result res;
    memd_plan_violation v = {0};
    struct sigaction sa = {.sa_handler = on_sigint}, old_sa;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_sa);
    uint64_t plan_t0 = mono_ns(NULL);
    int rc = memd_plan_solve(csv.bufs, csv.n, &opts, off, &res, &v);
    pthread_mutex_destroy(&pool.mu);
    sigaction(SIGINT, &old_sa, NULL); /* a second Ctrl-C while writing ends memctl */
    if (pctx.shown)
        fputs("\r\033[K", stderr);
    if (res.cancelled)
        fprintf(stderr, "memctl plan: interrupted: keeping the best plan found\n");
    if (rc == -EINVAL || rc == -EOVERFLOW || rc == -ENOTRECOVERABLE) {
        report_text(input, &csv, rc == -ENOTRECOVERABLE ? "the planner produced an invalid plan (bug)"
                                                        : "no plan possible",
                    &v, rc);
        goto out;
    }
    if (rc) {
        fprintf(stderr, "memctl plan: %s: %s\n", input, strerror(-rc));
        goto out;
    }
    /* Independent re-check: never print or write a plan the validator rejects. */
    uint64_t arena = 0;
    rc = memd_plan_validate(csv.bufs, csv.n, off, &v, &arena);
    if (rc != 0 || arena != res.arena) {
        if (rc != 1)
            v.issue = MEMD_PLAN_VALID; /* no buffer to name: the arena differs */
        report_text(input, &csv, "plan failed validation (planner bug)", &v, -ENOTRECOVERABLE);
        goto out;
    }
    if (output) {
        if (memd_plan_csv_save(output, &csv, off, &err) < 0) {
            memctl_print_error("memctl plan: ", &err);
            goto out;
        }
    }
    double ms = (double)(mono_ns(NULL) - t0) / 1e6;
    /* first_ms: from reading the file to the planner's first valid plan. */
    double first_ms = (double)(plan_t0 - t0 + res.first_ns) / 1e6;
    memctl_plan_summary sum = {.buffers = csv.n, .arena = res.arena,
                               .lower_bound = res.lower_bound, .strategy = res.strategy,
                               .optimal = res.optimal, .plan_ms = ms, .first_ms = first_ms,
                               .cancelled = res.cancelled};
    memctl_plan_print(stdout, &sum, json);
    ret = 0;
out:
    free(off);
    memd_plan_csv_free(&csv);
    return ret;
}

int memctl_cmd_plan(const memctl_globals *g, int argc, char **argv)
{
    (void)g; /* offline: no daemon, no socket */
    const char *input = NULL, *output = NULL;
    uint64_t budget_ms = 1000, seed = 1, threads = 2, iterations = 0;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu == 1)
        threads = 1;
    bool validate = false, json = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--output") || !strcmp(a, "-o")) {
            if (++i >= argc || !argv[i][0]) {
                fprintf(stderr, "memctl plan: %s needs a path\n", a);
                return 2;
            }
            output = argv[i];
        } else if (!strcmp(a, "--budget-ms")) {
            if (parse_u64_arg(a, i + 1 < argc ? argv[++i] : NULL, MAX_BUDGET_MS, &budget_ms))
                return 2;
        } else if (!strcmp(a, "--seed")) {
            if (parse_u64_arg(a, i + 1 < argc ? argv[++i] : NULL, UINT64_MAX, &seed))
                return 2;
        } else if (!strcmp(a, "--iterations")) {
            if (parse_u64_arg(a, i + 1 < argc ? argv[++i] : NULL, UINT64_MAX, &iterations))
                return 2;
        } else if (!strcmp(a, "--threads")) {
            if (parse_u64_arg(a, i + 1 < argc ? argv[++i] : NULL, 8, &threads))
                return 2;
            if (threads == 0) {
                fprintf(stderr, "memctl plan: --threads needs at least 1\n");
                return 2;
            }
        } else if (!strcmp(a, "--validate")) {
            validate = true;
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(PLAN_USAGE, stdout);
            return 0;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "memctl plan: unknown option '%s'\n%s", a, PLAN_USAGE);
            return 2;
        } else if (input) {
            fprintf(stderr, "memctl plan: more than one input ('%s', '%s')\n%s", input, a,
                    PLAN_USAGE);
            return 2;
        } else {
            input = a;
        }
    }
    if (!input) {
        fprintf(stderr, "memctl plan: missing INPUT.csv\n%s", PLAN_USAGE);
        return 2;
    }
    if (validate && output) {
        fprintf(stderr, "memctl plan: --validate writes nothing; drop --output\n");
        return 2;
    }
    return validate ? cmd_validate(input, json)
                    : cmd_plan(input, output, budget_ms, seed, json, (unsigned)threads, iterations);
}

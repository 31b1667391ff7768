/* memctl plan-submit — a CSV plan problem (the format of `memctl plan`) planned by the
 * daemon and cached there, or with --validate a precomputed plan (every row has an
 * offset) checked by it:
 *   memctl plan-submit INPUT.csv [--validate] [--budget-ms MS] [--seed S] [--output OUT.csv]
 *                             [--json]
 * Prints the plan's summary as `memctl plan` does (memctl_plan_print). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memctl_model.h"
#include "plan_csv.h"

#define USAGE                                                                              \
    "usage: memctl plan-submit INPUT.csv [--validate] [--budget-ms MS] [--seed S]\n"       \
    "                          [--output OUT.csv] [--json]\n"

/* 0 to go on, -1 after --help, else an exit code. */
static int parse_args(int argc, char **argv, memclient_plan_opts *o, const char **input,
                      const char **output, bool *json)
{
    const char *cmd = "plan-submit";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--validate")) {
            o->flags |= MEMCLIENT_PLAN_PRECOMPUTED;
        } else if (!strcmp(a, "--budget-ms")) {
            if (!(v = memctl_optarg(cmd, argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
            if (memctl_parse_budget(cmd, a, v, &o->budget_ms) < 0)
                return MEMCTL_EXIT_USAGE;
        } else if (!strcmp(a, "--seed")) {
            if (!(v = memctl_optarg(cmd, argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
            if (memctl_parse_u64(v, &o->seed) < 0)
                return memctl_bad_value(cmd, a, v, "an unsigned integer");
        } else if (!strcmp(a, "--json")) {
            *json = true;
        } else if (!strcmp(a, "--output")) {
            if (!(*output = memctl_optarg(cmd, argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(USAGE, stdout);
            return -1;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "memctl plan-submit: unknown option '%s'\n", a);
            return MEMCTL_EXIT_USAGE;
        } else if (!*input) {
            *input = a;
        } else {
            fprintf(stderr, "memctl plan-submit: one INPUT.csv only ('%s')\n", a);
            return MEMCTL_EXIT_USAGE;
        }
    }
    if (!*input) {
        fputs(USAGE, stderr);
        return MEMCTL_EXIT_USAGE;
    }
    return 0;
}

/* --validate checks a whole plan: every row needs its offset. */
static bool all_pinned(const char *input, const memd_plan_csv *csv)
{
    for (size_t i = 0; i < csv->n; i++) {
        if (!csv->bufs[i].pinned) {
            fprintf(stderr, "memctl plan-submit: %s:%" PRIu32 ": --validate needs an offset on "
                    "every row (row '%s' has none)\n", input, csv->lines[i], memd_plan_csv_id(csv, i));
            return false;
        }
    }
    return true;
}

/* Sends the rows, prints the reply's summary; off receives the plan. 0 or an exit code. */
static int submit(const memctl_globals *g, const memd_plan_csv *csv, const memclient_plan_opts *o,
                  bool json, uint64_t *off)
{
    bool validate = o->flags & MEMCLIENT_PLAN_PRECOMPUTED;
    memclient_plan_buffer *b = calloc(csv->n ? csv->n : 1, sizeof *b);
    if (!b) {
        fprintf(stderr, "memctl plan-submit: out of memory\n");
        return MEMCTL_EXIT_FAIL;
    }
    for (size_t i = 0; i < csv->n; i++) {
        const memd_plan_buffer *x = &csv->bufs[i];
        /* Validating, the offsets are the plan itself, not pins. */
        b[i] = (memclient_plan_buffer){.lower = x->lower, .upper = x->upper, .size = x->size,
                                       .alignment = x->align, .offset = x->offset,
                                       .pinned = !validate && x->pinned};
    }
    memclient *c = NULL;
    memclient_plan_info pi;
    int code = memctl_connect(g, &c), r;
    if (code == 0 && (r = memclient_plan_submit(c, b, csv->n, o, &pi, off)) < 0)
        code = memctl_fail(c, "plan-submit", validate ? "the plan is not valid" : "planning failed", r);
    else if (code == 0)
        memctl_plan_print(stdout, &(memctl_plan_summary){
                              .plan_id = pi.plan_id, .buffers = pi.buffers, .arena = pi.arena,
                              .lower_bound = pi.lower_bound, .strategy = pi.strategy,
                              .optimal = pi.optimal, .cached = pi.cached,
                              .validated = pi.precomputed,
                              .plan_ms = (double)pi.plan_us / 1000.0, .first_ms = -1},
                          json);
    memclient_disconnect(c);
    free(b);
    return code;
}

int memctl_cmd_plan_submit(const memctl_globals *g, int argc, char **argv)
{
    const char *input = NULL, *output = NULL;
    memclient_plan_opts o = {0};
    bool json = false;
    int code = parse_args(argc, argv, &o, &input, &output, &json);
    if (code)
        return code < 0 ? 0 : code;
    memd_plan_csv csv;
    memd_error err = {0};
    if (memd_plan_csv_read(input, &csv, &err) < 0) {
        memctl_print_error("memctl plan-submit: ", &err);
        return MEMCTL_EXIT_FAIL;
    }
    if ((o.flags & MEMCLIENT_PLAN_PRECOMPUTED) && !all_pinned(input, &csv)) {
        memd_plan_csv_free(&csv);
        return MEMCTL_EXIT_FAIL;
    }
    uint64_t *off = calloc(csv.n ? csv.n : 1, sizeof *off);
    if (!off) {
        fprintf(stderr, "memctl plan-submit: out of memory\n");
        code = MEMCTL_EXIT_FAIL;
    } else if ((code = submit(g, &csv, &o, json, off)) == 0 && output) {
        if (memd_plan_csv_save(output, &csv, off, &err) < 0) {
            memctl_print_error("memctl plan-submit: ", &err);
            code = MEMCTL_EXIT_FAIL;
        }
    }
    free(off);
    memd_plan_csv_free(&csv);
    return code;
}

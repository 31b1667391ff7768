/* memctl — one plan's summary, the same for `plan`, `plan-submit` and `model load`
 * (memctl.h). They used to print three formats (JSON, key=value, prose) of the same
 * figures. */
#include <inttypes.h>
#include <stdio.h>

#include "json.h"
#include "memctl.h"

static double gap_pct(uint64_t arena, uint64_t lb)
{
    return lb ? ((double)arena - (double)lb) * 100.0 / (double)lb : 0.0;
}

static void text(FILE *f, const memctl_plan_summary *p)
{
    fputs("plan", f);
    if (p->plan_id)
        fprintf(f, " %016" PRIx64, p->plan_id);
    fprintf(f, ": %" PRIu64 " buffers, arena %" PRIu64 " bytes, lower bound %" PRIu64
            " bytes, gap %.2f%%, strategy %s%s, ", p->buffers, p->arena, p->lower_bound,
            gap_pct(p->arena, p->lower_bound), p->strategy, p->optimal ? " (optimal)" : "");
    if (p->cached)
        fputs("cached", f);
    else
        fputs(p->validated ? "validated" : "planned now", f);
    if (!p->cached && p->plan_ms >= 0)
        fprintf(f, " in %.1f ms", p->plan_ms);
    if (p->first_ms >= 0)
        fprintf(f, " (first plan after %.1f ms)", p->first_ms);
    if (p->cancelled)
        fputs(", interrupted: the best plan found so far", f);
    fputc('\n', f);
}

static void ms_or_null(FILE *f, double ms)
{
    if (ms >= 0)
        fprintf(f, "%.1f", ms);
    else
        fputs("null", f);
}

static void json(FILE *f, const memctl_plan_summary *p)
{
    /* plan_id as a string: a 64-bit number is past what JSON readers keep exactly. */
    fputs("{\"plan_id\": ", f);
    if (p->plan_id)
        fprintf(f, "\"%016" PRIx64 "\"", p->plan_id);
    else
        fputs("null", f);
    fprintf(f, ", \"buffers\": %" PRIu64 ", \"arena\": %" PRIu64 ", \"lower_bound\": %" PRIu64
            ", \"gap_pct\": %.3f, \"strategy\": ", p->buffers, p->arena, p->lower_bound,
            gap_pct(p->arena, p->lower_bound));
    memd_json_str(f, p->strategy);
    fprintf(f, ", \"optimal\": %s, \"cached\": %s, \"validated\": %s, \"plan_ms\": ",
            p->optimal ? "true" : "false", p->cached ? "true" : "false",
            p->validated ? "true" : "false");
    ms_or_null(f, p->plan_ms);
    fputs(", \"first_ms\": ", f);
    ms_or_null(f, p->first_ms);
    fprintf(f, ", \"cancelled\": %s}\n", p->cancelled ? "true" : "false");
}

void memctl_plan_print(FILE *f, const memctl_plan_summary *p, bool as_json)
{
    if (as_json)
        json(f, p);
    else
        text(f, p);
}

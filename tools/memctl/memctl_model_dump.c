/* memctl: plans, models and instances in `memctl dump` (table and JSON) and `memctl
 * model list`. gap = (arena - lower_bound) / lower_bound: how far a plan is from the
 * best any plan could do. */
#include <inttypes.h>
#include <stdio.h>

#include "report.h"
#include "memctl_model.h"

#define HB(v) memctl_human_bytes((v), (char[24]){0}, 24)

void memctl_models_table(FILE *f, const memclient_snapshot *s)
{
    fprintf(f, "\nmodels: %zu\n", s->nmodels);
    if (s->nmodels) {
        fprintf(f, "  %6s %-24s %6s %5s %7s %11s %11s %11s %9s %-16s\n", "ID", "NAME", "DEVICE",
                "USERS", "TENSORS", "CODE", "CONSTANTS", "ARENA", "INSTANCES", "PLAN");
        for (size_t i = 0; i < s->nmodels; i++) {
            const memclient_model_rec *m = &s->models[i];
            fprintf(f, "  %6" PRIu64 " %-24s %6" PRIu32 " %5" PRIu32 " %7" PRIu32
                    " %11s %11s %11s %9" PRIu32 " %016" PRIx64 "\n",
                    m->model_id, TX(m->name), m->device, m->users, m->ntensors, HB(m->code_bytes),
                    HB(m->const_bytes), HB(m->arena), m->instances, m->plan_id);
        }
    }
    fprintf(f, "\nplans: %zu\n", s->nplans);
    if (s->nplans) {
        fprintf(f, "  %-16s %8s %11s %11s %7s %-20s %9s %6s %6s\n", "PLAN", "BUFFERS", "ARENA",
                "LOWER", "GAP", "STRATEGY", "PLAN_MS", "HITS", "MODELS");
        for (size_t i = 0; i < s->nplans; i++) {
            const memclient_plan_rec *p = &s->plans[i];
            char gap[16];
            snprintf(gap, sizeof gap, "%.2f%%", memd_report_gap_pct(p->arena, p->lower_bound));
            fprintf(f, "  %016" PRIx64 " %8" PRIu32 " %11s %11s %7s %-20s %9.1f %6" PRIu64
                    " %6" PRIu32 "\n", p->plan_id, p->buffers, HB(p->arena), HB(p->lower_bound),
                    gap, p->strategy, (double)p->plan_us / 1000.0, p->hits, p->models);
        }
    }
    fprintf(f, "\ninstances: %zu\n", s->ninstances);
    if (s->ninstances) {
        fprintf(f, "  %8s %6s %7s %7s %-5s %8s %14s %11s %12s\n", "ID", "MODEL", "SESSION", "PID",
                "STATE", "ARENA_H", "ARENA_ADDR", "ARENA", "PLACEHOLDERS");
        for (size_t i = 0; i < s->ninstances; i++) {
            const memclient_instance_rec *x = &s->instances[i];
            char addr[24];
            snprintf(addr, sizeof addr, "0x%" PRIx64, x->arena_address);
            fprintf(f, "  %8" PRIu64 " %6" PRIu64 " %7" PRIu32 " %7" PRIu32 " %-5s %8" PRIu64
                    " %14s %11s %12s\n", x->instance_id, x->model_id, x->session_id, x->pid,
                    x->busy ? "busy" : "idle", x->arena_handle, addr, HB(x->arena_bytes),
                    HB(x->placeholder_bytes));
        }
    }
}

/* memctl: plans, models and instances in `memctl dump` (table and JSON) and `memctl
 * model list`. gap = (arena - lower_bound) / lower_bound: how far a plan is from the
 * best any plan could do. */
#include <inttypes.h>
#include <stdio.h>

#include "units.h"
#include "report.h"
#include "memctl_model.h"
#include "memctl_table.h"

#define HB(v) memd_human_bytes((v), (char[24]){0}, 24)

/* Prints t (when it has rows) and frees it. */
static void flush(FILE *f, memctl_table *t, size_t rows)
{
    if (t && rows)
        memctl_table_print(t, f, "  ");
    memctl_table_free(t);
}

static void models(FILE *f, const memclient_snapshot *s)
{
    static const char *const head[] = {"ID", "NAME", "DEVICE", "USERS", "TENSORS", "CODE",
                                       "CONSTANTS", "ARENA", "INSTANCES", "PLAN", "STATE"};
    memctl_table *t = memctl_table_new(11, head, "rlrrrrrrrll");
    for (size_t i = 0; t && i < s->nmodels; i++) {
        const memclient_model_rec *m = &s->models[i];
        memctl_table_cell(t, "%" PRIu64, m->model_id);
        memctl_table_cell(t, "%s", m->name);
        memctl_table_cell(t, "%" PRIu32, m->device);
        memctl_table_cell(t, "%" PRIu32, m->users);
        memctl_table_cell(t, "%" PRIu32, m->ntensors);
        memctl_table_cell(t, "%s", HB(m->code_bytes));
        memctl_table_cell(t, "%s", HB(m->const_bytes));
        memctl_table_cell(t, "%s", HB(m->arena));
        memctl_table_cell(t, "%" PRIu32, m->instances);
        memctl_table_cell(t, "%016" PRIx64, m->plan_id);
        /* Filling until its filler sets it ready; "-": the dump did not ask. */
        if (!m->state_known)
            memctl_table_cell(t, "-");
        else if (m->ready)
            memctl_table_cell(t, "ready");
        else if (m->filler_session)
            memctl_table_cell(t, "filling (session %" PRIu32 ", pid %" PRIu32 ", %" PRIu32
                              " waiting)", m->filler_session, m->filler_pid, m->waiters);
        else
            memctl_table_cell(t, "filling (nobody yet, %" PRIu32 " waiting)", m->waiters);
    }
    flush(f, t, s->nmodels);
}

static void plans(FILE *f, const memclient_snapshot *s)
{
    static const char *const head[] = {"PLAN", "BUFFERS", "ARENA", "LOWER", "GAP", "STRATEGY",
                                       "PLAN_MS", "HITS", "MODELS"};
    memctl_table *t = memctl_table_new(9, head, "lrrrrlrrr");
    for (size_t i = 0; t && i < s->nplans; i++) {
        const memclient_plan_rec *p = &s->plans[i];
        memctl_table_cell(t, "%016" PRIx64, p->plan_id);
        memctl_table_cell(t, "%" PRIu32, p->buffers);
        memctl_table_cell(t, "%s", HB(p->arena));
        memctl_table_cell(t, "%s", HB(p->lower_bound));
        memctl_table_cell(t, "%.2f%%", memd_report_gap_pct(p->arena, p->lower_bound));
        memctl_table_cell(t, "%s", p->strategy);
        memctl_table_cell(t, "%.1f", (double)p->plan_us / 1000.0);
        memctl_table_cell(t, "%" PRIu64, p->hits);
        memctl_table_cell(t, "%" PRIu32, p->models);
    }
    flush(f, t, s->nplans);
}

static void instances(FILE *f, const memclient_snapshot *s)
{
    static const char *const head[] = {"ID", "MODEL", "SESSION", "PID", "STATE", "ARENA_H",
                                       "ARENA_ADDR", "ARENA", "PLACEHOLDERS"};
    memctl_table *t = memctl_table_new(9, head, "rrrrlrrrr");
    for (size_t i = 0; t && i < s->ninstances; i++) {
        const memclient_instance_rec *x = &s->instances[i];
        memctl_table_cell(t, "%" PRIu64, x->instance_id);
        memctl_table_cell(t, "%" PRIu64, x->model_id);
        memctl_table_cell(t, "%" PRIu32, x->session_id);
        memctl_table_cell(t, "%" PRIu32, x->pid);
        memctl_table_cell(t, "%s", x->busy ? "busy" : "idle");
        memctl_table_cell(t, "%" PRIu64, x->arena_handle);
        memctl_table_cell(t, "0x%" PRIx64, x->arena_address);
        memctl_table_cell(t, "%s", HB(x->arena_bytes));
        memctl_table_cell(t, "%s", HB(x->placeholder_bytes));
    }
    flush(f, t, s->ninstances);
}

void memctl_models_table(FILE *f, const memclient_snapshot *s)
{
    fprintf(f, "\nmodels: %zu\n", s->nmodels);
    models(f, s);
    fprintf(f, "\nplans: %zu\n", s->nplans);
    plans(f, s);
    fprintf(f, "\ninstances: %zu\n", s->ninstances);
    instances(f, s);
}

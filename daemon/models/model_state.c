/* memd daemon — plans and models: the registry itself, session teardown, and the
 * helpers the handlers share (see model.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "model_internal.h"

static void on_session_closing(void *data, memd_session *s);
static void on_destroy(void *data);

/* model_restore.c's hooks, through ms->restore: that file calls this one, so this one
 * only holds its table (one registration, freed with the layer). */
static int on_record_restore(void *data, const memd_record *r, memd_error *err)
{
    const memd_models *ms = ((memd_state *)data)->models;
    return ms->restore ? ms->restore->record_restore(data, r, err) : 0;
}

static void on_session_reclaimed(void *data, memd_session *o, memd_session *s)
{
    const memd_models *ms = ((memd_state *)data)->models;
    if (ms->restore)
        ms->restore->session_reclaimed(data, o, s);
}

static const memd_state_events models_events = {
    .session_closing = on_session_closing,
    .record_restore = on_record_restore,
    .session_reclaimed = on_session_reclaimed,
    .destroy = on_destroy,
};

memd_models *memd_models_of(memd_state *st)
{
    if (!st->models) {
        st->models = calloc(1, sizeof *st->models);
        if (st->models) {
            st->models->st = st;
            st->models->next_model_id = 1;
            st->models->next_instance_id = 1;
            memd_hook_add(st, &st->models->hook, &models_events, st);
        }
    }
    return st->models;
}

int memd_models_set_runner(memd_state *st, memd_models_runner run, void *ctx)
{
    memd_models *ms = memd_models_of(st);
    if (!ms)
        return -ENOMEM;
    ms->run = run;
    ms->run_ctx = ctx;
    return 0;
}

bool memd_models_busy(const memd_state *st, const memd_session *s)
{
    const memd_models *ms = st->models;
    if (!ms || (ms->njobs == 0 && ms->nwaits == 0))
        return false;
    for (const memd_model_wait *w = ms->waits; w; w = w->next)
        if (w->s == s)
            return true;
    for (const memd_model_job *j = ms->jobs; j; j = j->next)
        if (j->s == s)
            return true;
    return false;
}

int memd_models_manage(memd_models *ms, uint64_t handle)
{
    if (handle == 0)
        return 0;
    uint64_t *v = memd_map_get(&ms->managed, handle);
    if (v) {
        (*v)++;
        return 0;
    }
    return memd_map_put(&ms->managed, handle, 1);
}

void memd_models_unmanage(memd_models *ms, uint64_t handle)
{
    uint64_t *v = memd_map_get(&ms->managed, handle);
    if (v && --*v == 0)
        memd_map_remove(&ms->managed, handle);
}

bool memd_models_managed(const memd_state *st, uint64_t handle)
{
    return st->models && memd_map_get(&st->models->managed, handle) != NULL;
}

void memd_models_release_handle(memd_state *st, memd_session *s, uint64_t handle)
{
    memd_alloc *a = handle ? memd_alloc_find(st, handle) : NULL;
    memd_hold *h = a ? memd_alloc_hold_of(a, s) : NULL;
    if (h)
        memd_hold_release(st, h);
}

uint64_t memd_models_handle_address(const memd_state *st, uint64_t handle)
{
    const memd_alloc *a = handle ? memd_alloc_find(st, handle) : NULL;
    return a ? a->pl.address : 0;
}

memd_instance *memd_models_instance_new(memd_model_use *u)
{
    size_t n = u->m->nph ? u->m->nph : 1;
    memd_instance *in = calloc(1, sizeof *in);
    if (!in)
        return NULL;
    in->use = u;
    in->ph_handle = calloc(n, sizeof *in->ph_handle);
    in->ph_address = calloc(n, sizeof *in->ph_address);
    if (!in->ph_handle || !in->ph_address) {
        memd_models_instance_built(in, -ENOMEM);
        return NULL;
    }
    return in;
}

int memd_models_instance_built(memd_instance *in, int rc)
{
    if (rc < 0) {
        free(in->ph_handle);
        free(in->ph_address);
        free(in);
        return rc;
    }
    memd_model_use *u = in->use;
    in->next = u->insts;
    u->insts = in;
    u->m->instances++;
    return 0;
}

void memd_models_instance_destroy(memd_state *st, memd_models *ms, memd_instance *in)
{
    memd_model_use *u = in->use;
    memd_session *s = u->s;
    if (in->busy)
        memd_models_record(st, s, MEMD_HIST_INSTANCE_RELEASE, u->m, in);
    for (memd_instance **pp = &u->insts; *pp; pp = &(*pp)->next) {
        if (*pp == in) {
            *pp = in->next;
            break;
        }
    }
    memd_map_remove(&ms->instances, in->id);
    memd_models_save_gone(ms, MEMD_RECORD_INSTANCE, in->id);
    memd_models_unmanage(ms, in->arena_handle);
    memd_models_release_handle(st, s, in->arena_handle);
    for (uint32_t i = 0; i < u->m->nph; i++) {
        memd_models_unmanage(ms, in->ph_handle[i]);
        memd_models_release_handle(st, s, in->ph_handle[i]);
    }
    u->m->instances--;
    free(in->ph_handle);
    free(in->ph_address);
    free(in);
}

static void model_destroy(memd_models *ms, memd_model *m)
{
    for (memd_model **pp = &ms->models; *pp; pp = &(*pp)->next) {
        if (*pp == m) {
            *pp = m->next;
            break;
        }
    }
    memd_models_save_gone(ms, MEMD_RECORD_MODEL, m->id);
    memd_models_unmanage(ms, m->code_handle);
    memd_models_unmanage(ms, m->const_handle);
    memd_plan_cache_unref(ms, m->plan);
    free(m->t);
    free(m->ph);
    free(m);
}

void memd_models_use_release(memd_state *st, memd_models *ms, memd_model_use *u)
{
    while (u->insts)
        memd_models_instance_destroy(st, ms, u->insts);
    memd_model *m = u->m;
    memd_models_record(st, u->s, MEMD_HIST_MODEL_UNLOAD, m, NULL);
    memd_models_filler_gone(st, ms, u);
    memd_models_release_handle(st, u->s, m->code_handle);
    memd_models_release_handle(st, u->s, m->const_handle);
    for (memd_model_use **pp = &ms->uses; *pp; pp = &(*pp)->next) {
        if (*pp == u) {
            *pp = u->next;
            break;
        }
    }
    free(u);
    if (--m->users == 0)
        model_destroy(ms, m);
    else
        memd_models_save_model(ms, m); /* one user less */
}

/* Hook: s goes away, its instances, model loads and uploads are released before its
 * remaining holds are dropped; a job of its own is detached (once planning, it still
 * completes and fills the cache, but sends no reply). */
static void on_session_closing(void *data, memd_session *s)
{
    memd_state *st = data;
    memd_models *ms = st->models;
    for (memd_model_job *j = ms->jobs; j; j = j->next) {
        if (j->s == s) {
            j->s = NULL;
            j->out = NULL;
        }
    }
    memd_models_waits_drop(ms, s);
    for (memd_model_use *u = ms->uses, *next; u; u = next) {
        next = u->next;
        if (u->s == s)
            memd_models_use_release(st, ms, u);
    }
    memd_models_uploads_drop(ms, s);
}

/* Hook: memd_state_fini, after every session closed: frees the plan cache and the
 * rest. */
static void on_destroy(void *data)
{
    memd_state *st = data;
    memd_models *ms = st->models;
    ms->quiet = true; /* the store is closed: what it holds stays for the next start */
    /* Sessions are gone, so no use, instance or upload is left; jobs finished with the
     * loop. Whatever a bug left behind is freed all the same. */
    while (ms->uses)
        memd_models_use_release(st, ms, ms->uses);
    memd_models_uploads_drop(ms, NULL);
    while (ms->waits)
        memd_models_waits_drop(ms, ms->waits->s);
    while (ms->jobs) {
        memd_model_job *j = ms->jobs;
        ms->jobs = j->next;
        memd_model_job_free(j);
    }
    memd_plan_cache_free(ms);
    memd_map_free(&ms->instances);
    memd_map_free(&ms->managed);
    free(ms->enc);
    memd_hook_remove(st, &ms->hook);
    free(ms);
    st->models = NULL;
}

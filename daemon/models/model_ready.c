/* memd daemon — model readiness: the filler, MODEL_SET_READY, and the MODEL_WAITs parked
 * until the model is ready or the fill job comes to them (proto/memd.toml, "Model
 * readiness"). Waits live here, not in the service: the service only asks, after each
 * event and on its tick, whether a session's parked wait has its answer. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "event.h"
#include "model_internal.h"

static uint32_t event_device(const memd_state *st, const memd_model *m)
{
    return st->devs[m->dev].spec->id;
}

/* s fills m from now on (a waiter or loader taking over from a filler that left). */
static void become_filler(memd_state *st, memd_models *ms, memd_session *s, memd_model *m)
{
    m->filler = s->id;
    memd_models_save_model(ms, m);
    memd_event(st, s, MEMD_EVENT_MODEL_LOAD, LOG_NOTICE, event_device(st, m),
               m->const_bytes, "model %s filling: session %u (pid %u, %s) takes the job over",
               m->name, s->id, s->pid, s->comm[0] ? s->comm : "?");
}

/* Nobody ahead of w (NULL: of a new wait) waits for the same model. */
static bool first_waiter(const memd_models *ms, const memd_model_wait *w, uint64_t model_id)
{
    for (const memd_model_wait *x = ms->waits; x && x != w; x = x->next)
        if (x->model_id == model_id)
            return false;
    return true;
}

bool memd_models_take_fill(memd_state *st, memd_models *ms, memd_session *s, memd_model *m)
{
    if (m->ready || m->filler != 0 || !first_waiter(ms, NULL, m->id))
        return false;
    become_filler(st, ms, s, m);
    return true;
}

void memd_models_filler_gone(memd_state *st, memd_models *ms, memd_model_use *u)
{
    memd_model *m = u->m;
    if (m->ready || m->filler != u->s->id)
        return;
    m->filler = 0; /* the caller records the model (one user less) */
    if (!ms->quiet && m->users > 1)
        memd_event(st, u->s, MEMD_EVENT_MODEL_LOAD, LOG_WARNING, event_device(st, m),
                   0, "model %s filling: its filler, session %u (pid %u), left before "
                   "MODEL_SET_READY; the next waiter or loader fills it", m->name, u->s->id,
                   u->s->pid);
}

int memd_models_set_ready(memd_state *st, memd_session *s, uint64_t id, memd_error *err)
{
    memd_models *ms = st->models;
    memd_model_use *u = ms ? memd_models_use_of(ms, s, id) : NULL;
    if (!u)
        return memd_error_set(err, -ENOENT, "this session has not loaded a model with id %llu",
                              (unsigned long long)id);
    memd_model *m = u->m;
    if (m->ready)
        return 0;
    if (m->filler != s->id) {
        const memd_session *f = m->filler ? memd_models_session_by_id(st, m->filler) : NULL;
        return memd_error_set(err, -EPERM, "model %s: only its filler may set it ready "
                              "(session %u, pid %u; this session did not create it: wait "
                              "for it with MODEL_WAIT)", m->name, m->filler, f ? f->pid : 0);
    }
    m->ready = true;
    m->filler = 0;
    memd_models_save_model(ms, m);
    memd_event(st, s, MEMD_EVENT_MODEL_LOAD, LOG_INFO, event_device(st, m),
               m->const_bytes, "model %s ready: session %u (pid %u, %s) filled its %llu bytes "
               "of constants", m->name, s->id, s->pid, s->comm[0] ? s->comm : "?",
               (unsigned long long)m->const_bytes);
    return 0;
}

/* The answer for wait w of s (w not yet parked: a new request), as memd_models_wait_poll
 * gives it. */
static int check(memd_state *st, memd_models *ms, memd_session *s, const memd_model_wait *w,
                 uint64_t now_ms, memd_model **out, bool *fill, memd_error *err)
{
    memd_model_use *u = memd_models_use_of(ms, s, w->model_id);
    if (!u)
        return memd_error_set(err, -ENOENT, "this session has not loaded a model with id %llu "
                              "(or unloaded it while it waited)", (unsigned long long)w->model_id);
    memd_model *m = u->m;
    *out = m;
    *fill = !m->ready && m->filler == s->id;
    if (m->ready || *fill)
        return 1;
    if (m->filler == 0 && first_waiter(ms, w, m->id)) {
        become_filler(st, ms, s, m);
        *fill = true;
        return 1;
    }
    if (now_ms < w->until_ms)
        return 0;
    const memd_session *f = m->filler ? memd_models_session_by_id(st, m->filler) : NULL;
    return memd_error_set(err, -ETIMEDOUT, "model %s is still filling after %u ms (filler: "
                          "session %u, pid %u)", m->name, w->timeout_ms, m->filler,
                          f ? f->pid : 0);
}

int memd_models_wait(memd_state *st, memd_session *s, uint64_t id, uint32_t timeout_ms,
                     uint64_t req_id, uint64_t now_ms, memd_model **out, bool *fill,
                     memd_error *err)
{
    memd_models *ms = st->models;
    if (!ms)
        return memd_error_set(err, -ENOENT, "this session has not loaded a model with id %llu",
                              (unsigned long long)id);
    memd_model_wait probe = {
        .s = s, .model_id = id, .req_id = req_id, .timeout_ms = timeout_ms,
        .until_ms = timeout_ms == MEMD_MODEL_WAIT_FOREVER ? UINT64_MAX : now_ms + timeout_ms};
    /* A new wait queues behind those already parked for the model. */
    memd_model_wait *last = ms->waits;
    while (last && last->next)
        last = last->next;
    if (last)
        last->next = &probe;
    else
        ms->waits = &probe;
    int rc = check(st, ms, s, &probe, now_ms, out, fill, err);
    if (last)
        last->next = NULL;
    else
        ms->waits = NULL;
    if (rc != 0)
        return rc;
    memd_model_wait *w = malloc(sizeof *w);
    if (!w)
        return memd_error_set(err, -ENOMEM, "daemon out of memory to wait for model %llu",
                              (unsigned long long)id);
    *w = probe;
    if (last)
        last->next = w;
    else
        ms->waits = w;
    ms->nwaits++;
    return 0;
}

static void unlink_wait(memd_models *ms, memd_model_wait **pp)
{
    memd_model_wait *w = *pp;
    *pp = w->next;
    free(w);
    ms->nwaits--;
}

int memd_models_wait_poll(memd_state *st, memd_session *s, uint64_t now_ms, uint64_t *req_id,
                          memd_model **out, bool *fill, memd_error *err)
{
    memd_models *ms = st->models;
    if (!ms || ms->nwaits == 0)
        return 0;
    for (memd_model_wait **pp = &ms->waits; *pp; pp = &(*pp)->next) {
        if ((*pp)->s != s)
            continue;
        *req_id = (*pp)->req_id;
        int rc = check(st, ms, s, *pp, now_ms, out, fill, err);
        if (rc != 0)
            unlink_wait(ms, pp);
        return rc;
    }
    return 0;
}

bool memd_models_waiting(const memd_state *st)
{
    return st->models && st->models->nwaits > 0;
}

void memd_models_waits_drop(memd_models *ms, const memd_session *s)
{
    for (memd_model_wait **pp = &ms->waits; *pp;) {
        if ((*pp)->s == s)
            unlink_wait(ms, pp);
        else
            pp = &(*pp)->next;
    }
}

void memd_models_readiness(const memd_state *st, const memd_model *m, memd_model_readiness *r)
{
    const memd_session *f = m->filler ? memd_models_session_by_id(st, m->filler) : NULL;
    r->ready = m->ready;
    r->filler_session = m->filler;
    r->filler_pid = f ? f->pid : 0;
    r->waiters = 0;
    for (const memd_model_wait *w = st->models->waits; w; w = w->next)
        r->waiters += w->model_id == m->id;
}

/* memd daemon — DUMP records of plans, models and instances (MEMD_DUMP_F_MODELS).
 * Plans carry no owner and are listed for everyone; models and instances only for
 * their sessions, unless admin. */
#include <errno.h>
#include <string.h>

#include "dispatch.h"
#include "malformed.h"
#include "model_internal.h"
#include "reply.h"
#include "wire.h"

static bool sees_model(const memd_models *ms, const memd_session *s, const memd_model *m)
{
    if (s->admin)
        return true;
    for (const memd_model_use *u = ms->uses; u; u = u->next)
        if (u->s == s && u->m == m)
            return true;
    return false;
}

/* MODEL_STATES: the models DUMP shows s, on one device or all. */
static bool sees_state(const memd_state *st, const memd_models *ms, const memd_session *s,
                       const memd_model *m, uint32_t device)
{
    return (device == UINT32_MAX || st->devs[m->dev].spec->id == device) &&
           sees_model(ms, s, m);
}

int memd_op_model_states(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                         const uint8_t *p, memd_buf *out)
{
    memd_wire_model_states_req req;
    int rc = memd_wire_model_states_req_get(p, h->len, &req);
    if (rc < 0)
        return memd_malformed(st, h, out, rc);
    const memd_models *ms = st->models;
    uint32_t n = 0;
    for (const memd_model *m = ms ? ms->models : NULL; m; m = m->next)
        n += sees_state(st, ms, s, m, req.device);
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id,
                                  MEMD_WIRE_COUNT_SIZE + n * MEMD_WIRE_MODEL_STATE_REC_SIZE);
    if (!o)
        return -ENOMEM;
    o = memd_wire_put_u32(o, n);
    o = memd_wire_put_u32(o, 0);
    for (const memd_model *m = ms ? ms->models : NULL; m; m = m->next) {
        if (!sees_state(st, ms, s, m, req.device))
            continue;
        memd_model_readiness rd;
        memd_models_readiness(st, m, &rd);
        memd_wire_model_state_rec sr = {.model_id = m->id, .ready = rd.ready,
                                        .filler_session = rd.filler_session,
                                        .filler_pid = rd.filler_pid, .waiters = rd.waiters};
        o = memd_wire_model_state_rec_put(o, &sr);
    }
    return 0;
}

int memd_models_dump(const memd_state *st, const memd_session *s, memd_buf *out)
{
    const memd_models *ms = st->models;
    if (!ms)
        return 0;
    /* Oldest first: the LRU list runs from the most recently used. */
    for (const memd_plan_entry *e = ms->lru_tail; e; e = e->prev) {
        uint8_t *p = memd_dump_rec(out, MEMD_REC_PLAN);
        if (!p)
            return -ENOMEM;
        memd_wire_plan_rec r = {.plan_id = e->id, .arena = e->arena,
                                .lower_bound = e->lower_bound, .created_ns = e->created_ns,
                                .plan_us = e->plan_us, .hits = e->hits, .buffers = e->n,
                                .models = e->models};
        r.flags = (e->optimal ? MEMD_PLAN_I_OPTIMAL : 0) |
                  (e->precomputed ? MEMD_PLAN_I_PRECOMPUTED : 0);
        memcpy(r.strategy, e->strategy, sizeof r.strategy);
        r.strategy[sizeof r.strategy - 1] = '\0';
        memd_wire_plan_rec_put(p, &r);
    }
    for (const memd_model *m = ms->models; m; m = m->next) {
        if (!sees_model(ms, s, m))
            continue;
        uint8_t *p = memd_dump_rec(out, MEMD_REC_MODEL);
        if (!p)
            return -ENOMEM;
        memd_wire_model_rec r = {.model_id = m->id, .plan_id = m->plan->id,
                                 .code_handle = m->code_handle, .const_handle = m->const_handle,
                                 .code_bytes = m->code_bytes, .const_bytes = m->const_bytes,
                                 .arena = m->plan->arena, .created_ns = m->created_ns,
                                 .device = st->devs[m->dev].spec->id, .users = m->users,
                                 .ntensors = m->n, .instances = m->instances};
        memcpy(r.name, m->name, sizeof r.name);
        memd_wire_model_rec_put(p, &r);
    }
    for (const memd_model_use *u = ms->uses; u; u = u->next) {
        if (!s->admin && u->s != s)
            continue;
        for (const memd_instance *in = u->insts; in; in = in->next) {
            uint8_t *p = memd_dump_rec(out, MEMD_REC_INSTANCE);
            if (!p)
                return -ENOMEM;
            memd_wire_instance_rec r = {.instance_id = in->id, .model_id = u->m->id,
                                        .arena_handle = in->arena_handle,
                                        .arena_address = in->arena_address,
                                        .arena_bytes = in->arena_bytes,
                                        .placeholder_bytes = in->ph_bytes,
                                        .session_id = u->s->id, .pid = u->s->pid,
                                        .placeholders = u->m->nph, .busy = in->busy};
            memd_wire_instance_rec_put(p, &r);
        }
    }
    return 0;
}

/* memd daemon — PLAN: the plan info and offsets of a problem, from the plan cache or a
 * planning job (model.h), and the completion of such a job on the loop. */
#include <errno.h>
#include <string.h>

#include "dispatch.h"
#include "model_req.h"
#include "wire.h"

static int reply(memd_buf *out, uint16_t op, uint64_t id, const memd_plan_entry *e,
                 uint32_t flags)
{
    uint8_t *o = memd_reply_begin(out, op, id,
                                  MEMD_WIRE_PLAN_INFO_SIZE + e->n * MEMD_WIRE_HANDLE_SIZE);
    if (!o)
        return -ENOMEM;
    memd_wire_plan_info pi = {.plan_id = e->id, .arena = e->arena,
                              .lower_bound = e->lower_bound, .iterations = e->iterations,
                              .plan_us = e->plan_us, .count = e->n, .flags = flags};
    if (e->optimal)
        pi.flags |= MEMD_PLAN_I_OPTIMAL;
    if (e->precomputed)
        pi.flags |= MEMD_PLAN_I_PRECOMPUTED;
    memcpy(pi.strategy, e->strategy, sizeof pi.strategy);
    pi.strategy[sizeof pi.strategy - 1] = '\0';
    o = memd_wire_plan_info_put(o, &pi);
    for (uint32_t i = 0; i < e->n; i++)
        o = memd_wire_put_u64(o, e->offsets[i]);
    return 0;
}

int memd_model_job_complete(memd_state *st, memd_model_job *j, memd_session **resume)
{
    *resume = j->s;
    memd_error err;
    memd_error_reset(&err);
    memd_plan_entry tmp;
    const memd_plan_entry *e;
    int rc = memd_model_job_finish(st, j, &tmp, &e, &err);
    if (j->out) {
        memd_wire_hdr h = {.opcode = j->op, .id = j->req_id};
        if (rc < 0)
            rc = memd_reply_fail(st, &h, j->out, &err, false) < 0 ? -ENOMEM : 0;
        else
            rc = reply(j->out, j->op, j->req_id, e, 0);
    } else {
        rc = 0;
    }
    memd_model_job_free(j);
    memd_plan_cache_trim(st->models); /* the plan is in the reply: the cache may let it go */
    return rc;
}

int memd_op_plan(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                 const uint8_t *p, memd_buf *out)
{
    memd_model_req q;
    if (memd_model_get_doc(st, s, h, p, out, &q) < 0)
        return q.ret;
    memd_plan_entry *hit;
    memd_model_job *job;
    int rc = memd_models_plan(st, s, &q.doc, out, h->opcode, h->id, &hit, &job, &q.err);
    memd_models_doc_done(st, &q.doc);
    memd_session *resume;
    switch (rc) {
    case MEMD_MODELS_PLAN_CACHED:
        return reply(out, h->opcode, h->id, hit, MEMD_PLAN_I_CACHED);
    case MEMD_MODELS_PLAN_QUEUED:
        return MEMD_PENDING;
    case MEMD_MODELS_PLAN_DONE:
        return memd_model_job_complete(st, job, &resume);
    default:
        return memd_reply_fail_said(st, h, out, &q.err, rc);
    }
}

/* memd daemon — PLAN: the plan info and offsets of a problem, from the plan cache or a
 * planning job (model.h; the reply is built on its worker), and the completion of such
 * a job's stages on the loop. */
#include <errno.h>
#include <string.h>

#include "dispatch.h"
#include "model_req.h"
#include "wire.h"

/* The reply's whole frame (a planning job's encoder, run on a worker). */
static int reply(const memd_plan_entry *e, uint16_t op, uint64_t id, uint32_t flags,
                 memd_plan_reply *r)
{
    memd_buf b = {0};
    uint8_t *o = memd_reply_begin(&b, op, id,
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
    *r = (memd_plan_reply){.data = b.data, .len = b.len, .cap = b.cap};
    return 0;
}

int memd_model_job_complete(memd_state *st, memd_model_job *j, memd_session **resume)
{
    memd_error err;
    memd_error_reset(&err);
    int rc = memd_model_job_step(st, j, &err);
    if (rc == MEMD_MODELS_PLAN_QUEUED) { /* its next stage is on a worker */
        *resume = NULL;
        return 0;
    }
    *resume = j->s;
    if (j->out) {
        memd_wire_hdr h = {.opcode = j->op, .id = j->req_id};
        if (rc < 0) {
            rc = memd_reply_fail(st, &h, j->out, &err, false) < 0 ? -ENOMEM : 0;
        } else {
            /* The frame was built on the worker: handed over, not built here. */
            rc = memd_buf_adopt(j->out, j->reply.data, j->reply.len, j->reply.cap);
            j->reply.data = NULL;
        }
    } else {
        rc = 0;
    }
    memd_model_job_free(j);
    return rc;
}

int memd_op_plan(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                 const uint8_t *p, memd_buf *out)
{
    memd_model_req q;
    if (memd_model_get_doc(st, s, h, p, out, &q) < 0)
        return q.ret;
    memd_model_job *job;
    int rc = memd_models_plan(st, s, &q.doc, out, h->opcode, h->id, reply, &job, &q.err);
    memd_models_doc_done(st, &q.doc);
    memd_session *resume;
    switch (rc) {
    case MEMD_MODELS_PLAN_QUEUED:
        return MEMD_PENDING;
    case MEMD_MODELS_PLAN_DONE:
        return memd_model_job_complete(st, job, &resume);
    default:
        return memd_reply_fail_said(st, h, out, &q.err, rc);
    }
}

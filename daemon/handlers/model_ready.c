/* memd daemon — MODEL_SET_READY and MODEL_WAIT (the model layer's readiness,
 * models/model_ready.c): a wait that cannot be answered yet is parked there and answered
 * by memd_model_wait_answer when the service asks. */
#include <errno.h>

#include "clock.h"
#include "dispatch.h"
#include "model_req.h"
#include "log.h"
#include "malformed.h"
#include "wire.h"

int memd_op_model_set_ready(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                            const uint8_t *p, memd_buf *out)
{
    memd_model_req q;
    if (memd_model_get_ref(st, h, p, out, 0, &q) < 0)
        return q.ret;
    return memd_reply_done(st, h, out, &q.err, memd_models_set_ready(st, s, q.ref.id, &q.err));
}

int memd_op_model_wait(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                       const uint8_t *p, memd_buf *out)
{
    memd_wire_model_wait req;
    int rc = memd_wire_model_wait_get(p, h->len, &req);
    if (rc < 0)
        return memd_malformed(st, h, out, rc);
    memd_error err;
    memd_error_reset(&err);
    memd_model *m;
    bool fill;
    rc = memd_models_wait(st, s, req.model_id, req.timeout_ms, h->id, memd_mono_ms(), &m, &fill,
                          &err);
    if (rc < 0)
        return memd_reply_fail_said(st, h, out, &err, rc);
    if (rc == 0)
        return 0; /* parked: no reply yet, the session's next frames wait */
    return memd_model_reply_info(st, h->opcode, h->id, out, m, fill ? MEMD_MODEL_I_NEW : 0);
}

bool memd_model_wait_answer(memd_state *st, memd_session *s, uint64_t now_ms, memd_buf *out)
{
    memd_error err;
    memd_error_reset(&err);
    memd_model *m;
    bool fill;
    uint64_t req_id = 0;
    int rc = memd_models_wait_poll(st, s, now_ms, &req_id, &m, &fill, &err);
    if (rc == 0)
        return false;
    if (rc > 0)
        rc = memd_model_reply_info(st, MEMD_OP_MODEL_WAIT, req_id, out, m,
                                   fill ? MEMD_MODEL_I_NEW : 0);
    else
        rc = memd_reply_error(out, MEMD_OP_MODEL_WAIT, req_id, &err, s->pm_errors);
    if (rc < 0) /* the wait is over all the same: resume the session */
        memd_log(LOG_ERR, "session %u: out of memory answering its MODEL_WAIT", s->id);
    return true;
}

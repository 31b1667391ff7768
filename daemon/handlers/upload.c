/* memd daemon — UPLOAD: one part of a document a later PLAN or MODEL_LOAD names. */
#include <errno.h>

#include "dispatch.h"
#include "model.h"
#include "wire.h"

int memd_op_upload(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                   const uint8_t *p, memd_buf *out)
{
    memd_error err;
    memd_error_reset(&err);
    memd_wire_upload u;
    int rc = memd_wire_upload_get(p, h->len, &u); /* dispatch checked the length */
    if (rc < 0) {
        memd_error_set(&err, rc, "malformed UPLOAD request: upload id 0");
        return memd_reply_fail(st, h, out, &err, true);
    }
    memd_upload_part part = {.upload_id = u.upload_id, .offset = u.offset, .total = u.total,
                             .data = p + MEMD_WIRE_UPLOAD_SIZE,
                             .len = h->len - MEMD_WIRE_UPLOAD_SIZE};
    if ((rc = memd_models_upload(st, s, &part, &err)) < 0)
        return memd_reply_fail_said(st, h, out, &err, rc);
    return memd_reply_begin(out, h->opcode, h->id, 0) ? 0 : -ENOMEM;
}

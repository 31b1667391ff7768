/* memd daemon — the dispatch table: opcode -> handler, after the opcode table's checks. */
#include "dispatch.h"

#include <errno.h>

#include "error.h"
#include "malformed.h"
#include "model.h"
#include "reply.h"
#include "wire.h"

int memd_dispatch(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                  const uint8_t *payload, memd_buf *out)
{
    st->ctr.requests++;
    st->now_ns = 0;
    s->requests++;
    memd_error err;
    memd_error_reset(&err);
    const memd_wire_op *o = memd_wire_op_of(h->opcode);
    /* An opcode the proto table knows but this table lacks is unknown here too. */
    if (!o || !memd_handlers[h->opcode]) {
        memd_error_set(&err, -EBADRQC, "unknown opcode %u (this memd knows 1..%u)", h->opcode,
                     MEMD_OP_OPCODE_COUNT - 1);
        return memd_reply_fail(st, h, out, &err, true);
    }
    int rc = memd_wire_op_check_len(h->opcode, payload, h->len);
    if (rc < 0)
        return memd_malformed(st, h, out, rc);
    if (o->admin_only && !s->admin) {
        memd_error_set(&err, -EPERM, "%s is for admins only (root or the admin group)",
                     o->name);
        return memd_reply_fail(st, h, out, &err, false);
    }
    return memd_handlers[h->opcode](st, s, h, payload, out);
}

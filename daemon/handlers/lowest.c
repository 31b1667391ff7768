/* memd daemon — LOWEST: the lowest occupied address of one bank. */
#include <errno.h>

#include "dispatch.h"
#include "error.h"
#include "malformed.h"
#include "reply.h"
#include "wire.h"

int memd_op_lowest(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                   memd_buf *out)
{
    (void)s; /* every session may ask: dumps show every region's use too */
    memd_wire_lowest_req q;
    int rc = memd_wire_lowest_req_get(p, h->len, &q);
    if (rc < 0)
        return memd_malformed(st, h, out, rc);
    memd_wire_lowest_rec rec = {0};
    memd_error err;
    memd_error_reset(&err);
    rc = memd_state_bank_lowest(st, q.device, (memd_kind)q.kind, q.bank, &rec.address,
                                &rec.absolute, &err);
    if (rc < 0)
        return memd_reply_fail(st, h, out, &err, false);
    rec.found = (uint8_t)rc;
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id, MEMD_WIRE_LOWEST_REC_SIZE);
    if (!o)
        return -ENOMEM;
    memd_wire_lowest_rec_put(o, &rec);
    return 0;
}

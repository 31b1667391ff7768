/* memd daemon — the one error reply to a request that does not decode. */
#include "malformed.h"

#include <errno.h>
#include <stdio.h>

#include "error.h"
#include "reply.h"
#include "wire.h"

/* What the opcode's row in the table expects, for a length that did not fit it. */
static void expected(const memd_wire_op *o, char *s, size_t n)
{
    switch (o->shape) {
    case MEMD_WIRE_SHAPE_FIXED:
        if (o->len_v1)
            snprintf(s, n, "expected %u or %u bytes", o->len_v1, o->len);
        else
            snprintf(s, n, "expected %u bytes", o->len);
        return;
    case MEMD_WIRE_SHAPE_MIN: /* a record grown since: its older size is the least */
        snprintf(s, n, "expected at least %u bytes", o->len_v1 ? o->len_v1 : o->len);
        return;
    case MEMD_WIRE_SHAPE_COUNT:
        snprintf(s, n, "count does not match the %u-byte records that follow", o->len);
        return;
    case MEMD_WIRE_SHAPE_DOC:
        snprintf(s, n, "expected a u64 upload id, then a document only when the id is 0");
        return;
    }
    snprintf(s, n, "payload length does not match the opcode");
}

int memd_malformed(memd_state *st, const memd_wire_hdr *h, memd_buf *out, int rc)
{
    memd_error err;
    memd_error_reset(&err);
    char why[96] = "a field is out of range or a string lacks its NUL";
    const memd_wire_op *o = memd_wire_op_of(h->opcode);
    if (rc == -EBADMSG && o)
        expected(o, why, sizeof why);
    memd_error_set(&err, rc, "malformed %s request (%u payload bytes): %s", o ? o->name : "?",
                 h->len, why);
    return memd_reply_fail(st, h, out, &err, true);
}

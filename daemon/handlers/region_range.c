/* memd daemon — REGION_RANGE (admin only: dispatch checks): a region's allocatable range
 * shrunk or restored. */
#include <errno.h>

#include "dispatch.h"
#include "error.h"
#include "malformed.h"
#include "region_range.h"
#include "reply.h"
#include "wire.h"

_Static_assert((int)MEMD_RANGE_BOTTOM == (int)MEMD_RANGE_END_BOTTOM &&
                   (int)MEMD_RANGE_TOP == (int)MEMD_RANGE_END_TOP,
               "core's ends are the wire's");

int memd_op_region_range(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                         const uint8_t *p, memd_buf *out)
{
    memd_wire_range_req q;
    int rc = memd_wire_range_req_get(p, h->len, &q);
    if (rc < 0)
        return memd_malformed(st, h, out, rc);
    memd_error err;
    memd_error_reset(&err);
    memd_region_cut cut;
    /* Room in the state store first: what it cannot keep is refused, not forgotten. */
    if ((rc = memd_hooks_prepare(st, s, &err)) == 0)
        rc = memd_region_range_change(st, q.device, (memd_kind)q.kind, q.region,
                                      q.op == MEMD_RANGE_RESET, q.ends, q.bytes, &cut, &err);
    if (rc < 0)
        return memd_reply_fail(st, h, out, &err, false);
    memd_wire_range_rec r = {.device = q.device, .kind = q.kind, .region = q.region,
                             .bottom = cut.bottom, .top = cut.top, .start = cut.start,
                             .end = cut.end};
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id, MEMD_WIRE_RANGE_REC_SIZE);
    if (!o)
        return -ENOMEM;
    memd_wire_range_rec_put(o, &r);
    return 0;
}

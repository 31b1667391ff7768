/* memd daemon — REGION_HOLDERS: the top holders of a region (core/holders.h), the
 * figures behind an out-of-memory message's "held by". */
#include <errno.h>
#include <string.h>

#include "dispatch.h"
#include "holders.h"
#include "malformed.h"
#include "wire.h"

int memd_op_region_holders(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                           const uint8_t *p, memd_buf *out)
{
    (void)s;
    memd_wire_holders_req req;
    int rc = memd_wire_holders_req_get(p, h->len, &req);
    if (rc < 0)
        return memd_malformed(st, h, out, rc);
    memd_error err;
    memd_error_reset(&err);
    int dev = memd_state_dev_index(st, req.device);
    if (dev < 0) {
        memd_error_set(&err, -ENODEV, "no device %u", req.device);
        return memd_reply_fail(st, h, out, &err, false);
    }
    const memd_bank_group_spec *g = &st->devs[dev].spec->groups[req.kind];
    if (req.region >= g->nregions) {
        memd_error_set(&err, -EINVAL, "device %u %s has %u regions, not region %u", req.device,
                       memd_kind_name((memd_kind)req.kind), g->nregions, req.region);
        return memd_reply_fail(st, h, out, &err, false);
    }
    memd_region_holder top[MEMD_HOLDERS_MAX];
    size_t n = memd_region_top_holders(st, (uint32_t)dev, req.kind, req.region, top,
                                       req.max ? req.max : MEMD_HOLDERS_MAX);
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id,
                                  MEMD_WIRE_COUNT_SIZE + n * MEMD_WIRE_HOLDER_REC_SIZE);
    if (!o)
        return -ENOMEM;
    o = memd_wire_put_u32(o, (uint32_t)n);
    o = memd_wire_put_u32(o, 0);
    for (size_t i = 0; i < n; i++) {
        memd_wire_holder_rec r = {.bytes = top[i].bytes, .session_id = top[i].s->id,
                                  .pid = top[i].s->pid, .uid = top[i].s->uid};
        memcpy(r.comm, top[i].s->comm, sizeof r.comm);
        r.comm[sizeof r.comm - 1] = '\0';
        memcpy(r.client_name, top[i].s->client_name, sizeof r.client_name);
        r.client_name[sizeof r.client_name - 1] = '\0';
        o = memd_wire_holder_rec_put(o, &r);
    }
    return 0;
}

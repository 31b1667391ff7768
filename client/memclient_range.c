/* libmemclient: a region's allocatable range shrunk and restored (REGION_RANGE). */
#include <errno.h>
#include <stdlib.h>

#include "memclient_internal.h"
#include "wire.h"

static int range_op(memclient *c, const memd_wire_range_req *q, memclient_range *out)
{
    if ((unsigned)q->kind >= MEMD_KIND_COUNT)
        return memclient_fail(-EINVAL, "unknown bank group %d", (int)q->kind);
    int r;
    uint64_t seq;
    memclient_raw raw;
    uint8_t *p = memclient_begin_raw(c, MEMD_OP_REGION_RANGE, MEMD_WIRE_RANGE_REQ_SIZE,
                                     "REGION_RANGE", &raw, &seq, &r);
    if (!p)
        return r;
    memd_wire_range_req_put(p, q);
    if ((r = memclient_finish(c, seq)) < 0)
        return r;
    memd_wire_range_rec rec;
    if (memd_wire_range_rec_get(raw.data, raw.len, &rec) < 0)
        return memclient_bad_reply(&raw, "REGION_RANGE");
    free(raw.data);
    if (out)
        memclient_range_from_wire(out, &rec);
    return 0;
}

int memclient_region_shrink(memclient *c, uint32_t device, memd_kind kind, uint32_t region,
                            unsigned end, uint64_t bytes, memclient_range *out)
{
    if (end != MEMCLIENT_RANGE_BOTTOM && end != MEMCLIENT_RANGE_TOP)
        return memclient_fail(-EINVAL, "shrink from the bottom or the top, not ends 0x%x", end);
    if (region > UINT8_MAX)
        return memclient_fail(-EINVAL, "no region %u", region);
    memd_wire_range_req q = {.device = device, .kind = (uint8_t)kind, .region = (uint8_t)region,
                             .op = MEMD_RANGE_SHRINK, .ends = (uint8_t)end, .bytes = bytes};
    return range_op(c, &q, out);
}

int memclient_region_reset(memclient *c, uint32_t device, memd_kind kind, uint32_t region,
                           unsigned ends, memclient_range *out)
{
    if (ends == 0 || (ends & ~(unsigned)(MEMCLIENT_RANGE_BOTTOM | MEMCLIENT_RANGE_TOP)))
        return memclient_fail(-EINVAL, "reset the bottom, the top or both, not ends 0x%x", ends);
    if (region > UINT8_MAX)
        return memclient_fail(-EINVAL, "no region %u", region);
    memd_wire_range_req q = {.device = device, .kind = (uint8_t)kind, .region = (uint8_t)region,
                             .op = MEMD_RANGE_RESET, .ends = (uint8_t)ends};
    return range_op(c, &q, out);
}

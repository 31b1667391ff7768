/* libmemclient: the lowest occupied address of one bank (LOWEST). */
#include <errno.h>
#include <stdlib.h>

#include "memclient_internal.h"
#include "wire.h"

int memclient_lowest_occupied(memclient *c, uint32_t device, memd_kind kind, uint32_t bank,
                              uint64_t *address, uint64_t *absolute)
{
    if (!address)
        return memclient_fail(-EINVAL, "memclient_lowest_occupied: address is NULL");
    if ((unsigned)kind >= MEMD_KIND_COUNT)
        return memclient_fail(-EINVAL, "unknown bank group %d", (int)kind);
    int r;
    uint64_t seq;
    memclient_raw raw;
    uint8_t *p = memclient_begin_raw(c, MEMD_OP_LOWEST, MEMD_WIRE_LOWEST_REQ_SIZE, "LOWEST", &raw,
                                     &seq, &r);
    if (!p)
        return r;
    memd_wire_lowest_req q = {.device = device, .bank = bank, .kind = (uint8_t)kind};
    memd_wire_lowest_req_put(p, &q);
    if ((r = memclient_finish(c, seq)) < 0)
        return r;
    memd_wire_lowest_rec rec;
    if (memd_wire_lowest_rec_get(raw.data, raw.len, &rec) < 0)
        return memclient_bad_reply(&raw, "LOWEST");
    free(raw.data);
    *address = rec.address;
    if (absolute)
        *absolute = rec.absolute;
    return rec.found;
}

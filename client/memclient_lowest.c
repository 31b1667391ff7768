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
    int r, err = 0;
    uint64_t seq;
    memclient_raw raw = {0};
    if ((r = memclient_lock(c)) < 0)
        return r;
    uint8_t *p = memclient_begin(c, MEMD_OP_LOWEST, MEMD_WIRE_LOWEST_REQ_SIZE, MEMCLIENT_OUT_RAW,
                                 &raw, 1, true, &seq, &err);
    if (!p) {
        memclient_unlock(c);
        return memclient_fail(err, "LOWEST request: %s", memclient_strerror(err));
    }
    memd_wire_lowest_req q = {.device = device, .bank = bank, .kind = (uint8_t)kind};
    memd_wire_lowest_req_put(p, &q);
    if ((r = memclient_finish(c, seq)) < 0)
        return r;
    memd_wire_lowest_rec rec;
    r = memd_wire_lowest_rec_get(raw.data, raw.len, &rec);
    free(raw.data);
    if (r < 0)
        return memclient_fail(-EBADMSG, "malformed LOWEST reply");
    *address = rec.address;
    if (absolute)
        *absolute = rec.absolute;
    return rec.found;
}

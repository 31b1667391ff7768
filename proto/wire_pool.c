/* memd wire codec: client pool reports and their DUMP records (see wire.h). Field order
 * follows include/memd/protocol.h exactly. */
#include "wire.h"

#include <errno.h>
#include <string.h>

uint8_t *memd_wire_pool_op_put(uint8_t *p, const memd_wire_pool_op *r)
{
    p = memd_wire_put_u64(p, r->pool);
    p = memd_wire_put_u64(p, r->offset);
    p = memd_wire_put_u64(p, r->size);
    *p++ = r->op;
    memset(p, 0, 7);
    return memd_wire_put_str(p + 7, r->name, sizeof r->name);
}

int memd_wire_pool_op_get(const uint8_t *p, size_t len, memd_wire_pool_op *r)
{
    if (len < MEMD_WIRE_POOL_OP_SIZE)
        return -EBADMSG;
    r->pool = memd_wire_u64(p);
    r->offset = memd_wire_u64(p + 8);
    r->size = memd_wire_u64(p + 16);
    r->op = p[24];
    memset(r->pad, 0, sizeof r->pad);
    if (r->op != MEMD_POOL_OP_ALLOC && r->op != MEMD_POOL_OP_FREE && r->op != MEMD_POOL_OP_RESET)
        return -EINVAL;
    return memd_wire_get_str(p + 32, r->name, sizeof r->name);
}

uint8_t *memd_wire_pool_rec_put(uint8_t *p, const memd_wire_pool_rec *r)
{
    p = memd_wire_put_u64(p, r->handle);
    p = memd_wire_put_u64(p, r->as_of_ns);
    p = memd_wire_put_u64(p, r->pooled_bytes);
    p = memd_wire_put_u64(p, r->reports);
    p = memd_wire_put_u32(p, r->suballocs);
    return memd_wire_put_u32(p, 0);
}

int memd_wire_pool_rec_get(const uint8_t *p, size_t len, memd_wire_pool_rec *r)
{
    if (len < MEMD_WIRE_POOL_REC_SIZE)
        return -EBADMSG;
    r->handle = memd_wire_u64(p);
    r->as_of_ns = memd_wire_u64(p + 8);
    r->pooled_bytes = memd_wire_u64(p + 16);
    r->reports = memd_wire_u64(p + 24);
    r->suballocs = memd_wire_u32(p + 32);
    r->pad = 0;
    return 0;
}

uint8_t *memd_wire_suballoc_rec_put(uint8_t *p, const memd_wire_suballoc_rec *r)
{
    p = memd_wire_put_u64(p, r->pool);
    p = memd_wire_put_u64(p, r->offset);
    p = memd_wire_put_u64(p, r->size);
    return memd_wire_put_str(p, r->name, sizeof r->name);
}

int memd_wire_suballoc_rec_get(const uint8_t *p, size_t len, memd_wire_suballoc_rec *r)
{
    if (len < MEMD_WIRE_SUBALLOC_REC_SIZE)
        return -EBADMSG;
    r->pool = memd_wire_u64(p);
    r->offset = memd_wire_u64(p + 8);
    r->size = memd_wire_u64(p + 16);
    return memd_wire_get_str(p + 24, r->name, sizeof r->name);
}

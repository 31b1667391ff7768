/* memd wire codec: the records bank ids follow (ALLOC_BANKS and its batch, SUBDEV_DEFINE,
 * the dump's SUBDEV_BANKS). Their fixed parts are generated (wire_gen.c); this file adds
 * the ids and the lengths that depend on their count. */
#include "wire.h"

#include <errno.h>
#include <string.h>

static uint8_t *ids_put(uint8_t *p, const uint32_t *ids, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        p = memd_wire_put_u32(p, ids[i]);
    return p;
}

uint8_t *memd_wire_bankset_put(uint8_t *p, const memd_wire_bankset *b, const uint32_t *ids)
{
    return ids_put(memd_wire_bankset_fixed_put(p, b), ids, b->count);
}

uint8_t *memd_wire_bankset_sizes_put(uint8_t *p, const uint64_t *sizes, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        p = memd_wire_put_u64(p, sizes[i]);
    return p;
}

int memd_wire_alloc_banks_elem_get(const uint8_t *p, size_t len, memd_wire_alloc_req *r,
                                   memd_wire_bankset *b, const uint8_t **ids, size_t *used)
{
    if (len < MEMD_WIRE_ALLOC_REQ_SIZE + MEMD_WIRE_BANKSET_SIZE)
        return -EBADMSG;
    const uint8_t *q = p + MEMD_WIRE_ALLOC_REQ_SIZE;
    int rc = memd_wire_bankset_fixed_get(q, MEMD_WIRE_BANKSET_SIZE, b);
    if (rc < 0)
        return rc;
    uint64_t need = MEMD_WIRE_ALLOC_REQ_SIZE + MEMD_WIRE_BANKSET_SIZE + 4ull * b->count +
                    (b->flags & MEMD_BANKSET_F_SIZES ? 8ull * b->count : 0);
    if (len < need)
        return -EBADMSG;
    *ids = q + MEMD_WIRE_BANKSET_SIZE;
    *used = (size_t)need;
    return memd_wire_alloc_req_get(p, MEMD_WIRE_ALLOC_REQ_SIZE, r);
}

int memd_wire_alloc_banks_get(const uint8_t *p, size_t len, memd_wire_alloc_req *r,
                              memd_wire_bankset *b, const uint8_t **ids)
{
    size_t used;
    int rc = memd_wire_alloc_banks_elem_get(p, len, r, b, ids, &used);
    return rc == 0 && used != len ? -EBADMSG : rc;
}

uint8_t *memd_wire_subdev_def_put(uint8_t *p, const memd_wire_subdev_def *d, const uint32_t *ids)
{
    return ids_put(memd_wire_subdev_def_fixed_put(p, d), ids, d->count);
}

int memd_wire_subdev_def_get(const uint8_t *p, size_t len, memd_wire_subdev_def *d,
                             const uint8_t **ids)
{
    /* The count is in the part both sizes share; it says which size was sent. */
    uint8_t whole[MEMD_WIRE_SUBDEV_DEF_SIZE] = {0};
    if (len < MEMD_WIRE_SUBDEV_DEF_V1_SIZE)
        return -EBADMSG;
    memcpy(whole, p, MEMD_WIRE_SUBDEV_DEF_V1_SIZE);
    int rc = memd_wire_subdev_def_fixed_get(whole, sizeof whole, d);
    if (rc < 0)
        return rc;
    if (len == MEMD_WIRE_SUBDEV_DEF_V1_SIZE + 4ull * d->count) {
        *ids = p + MEMD_WIRE_SUBDEV_DEF_V1_SIZE;
        return 0;
    }
    if (len != MEMD_WIRE_SUBDEV_DEF_SIZE + 4ull * d->count)
        return -EBADMSG;
    *ids = p + MEMD_WIRE_SUBDEV_DEF_SIZE;
    return memd_wire_subdev_def_fixed_get(p, len, d);
}

uint8_t *memd_wire_subdev_banks_put(uint8_t *p, const uint32_t *ids, uint32_t count)
{
    memd_wire_subdev_banks_rec b = {.count = count};
    return ids_put(memd_wire_subdev_banks_rec_fixed_put(p, &b), ids, count);
}

int memd_wire_subdev_banks_get(const uint8_t *p, size_t len, uint32_t *count,
                               const uint8_t **ids)
{
    memd_wire_subdev_banks_rec b;
    int rc = memd_wire_subdev_banks_rec_fixed_get(p, len, &b);
    if (rc < 0)
        return rc;
    if (len != MEMD_WIRE_SUBDEV_BANKS_REC_SIZE + 4ull * b.count)
        return -EBADMSG;
    *count = b.count;
    *ids = p + MEMD_WIRE_SUBDEV_BANKS_REC_SIZE;
    for (uint32_t i = 1; i < b.count; i++)
        if (memd_wire_u32(*ids + 4 * i) <= memd_wire_u32(*ids + 4 * (i - 1)))
            return -EINVAL;
    return 0;
}

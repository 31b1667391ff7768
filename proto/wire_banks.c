/* memd wire codec: bank subsets (ALLOC_BANKS, BANK_ADDRS, the dump's BANK and
 * ALLOC_BANKS records). Field order follows include/memd/protocol.h exactly. */
#include "wire.h"

#include <errno.h>
#include <string.h>

uint8_t *memd_wire_bankset_put(uint8_t *p, const memd_wire_bankset *b, const uint32_t *ids)
{
    p = memd_wire_put_u32(p, b->flags);
    p = memd_wire_put_u32(p, b->count);
    for (uint32_t i = 0; i < b->count; i++)
        p = memd_wire_put_u32(p, ids[i]);
    return p;
}

int memd_wire_alloc_banks_elem_get(const uint8_t *p, size_t len, memd_wire_alloc_req *r,
                                   memd_wire_bankset *b, const uint8_t **ids, size_t *used)
{
    if (len < MEMD_WIRE_ALLOC_REQ_SIZE + MEMD_WIRE_BANKSET_SIZE)
        return -EBADMSG;
    const uint8_t *q = p + MEMD_WIRE_ALLOC_REQ_SIZE;
    b->flags = memd_wire_u32(q);
    b->count = memd_wire_u32(q + 4);
    if (b->count > MEMD_BANKSET_MAX)
        return -EINVAL;
    uint64_t need = MEMD_WIRE_ALLOC_REQ_SIZE + MEMD_WIRE_BANKSET_SIZE + 4ull * b->count;
    if (len < need)
        return -EBADMSG;
    if (b->flags & ~(uint32_t)MEMD_BANKSET_F_PER_BANK)
        return -EINVAL;
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

static uint8_t *core_put(uint8_t *p, uint16_t lx, uint16_t ly, uint16_t nx, uint16_t ny)
{
    p = memd_wire_put_u16(p, lx);
    p = memd_wire_put_u16(p, ly);
    p = memd_wire_put_u16(p, nx);
    return memd_wire_put_u16(p, ny);
}

uint8_t *memd_wire_bank_addr_put(uint8_t *p, const memd_wire_bank_addr *r)
{
    p = memd_wire_put_u32(p, r->bank);
    p = core_put(p, r->logical_x, r->logical_y, r->noc_x, r->noc_y);
    p = memd_wire_put_u32(p, 0);
    p = memd_wire_put_u64(p, r->address);
    return memd_wire_put_u64(p, r->absolute);
}

int memd_wire_bank_addr_get(const uint8_t *p, size_t len, memd_wire_bank_addr *r)
{
    if (len < MEMD_WIRE_BANK_ADDR_SIZE)
        return -EBADMSG;
    r->bank = memd_wire_u32(p);
    r->logical_x = memd_wire_u16(p + 4);
    r->logical_y = memd_wire_u16(p + 6);
    r->noc_x = memd_wire_u16(p + 8);
    r->noc_y = memd_wire_u16(p + 10);
    r->pad = 0;
    r->address = memd_wire_u64(p + 16);
    r->absolute = memd_wire_u64(p + 24);
    return 0;
}

uint8_t *memd_wire_bank_rec_put(uint8_t *p, const memd_wire_bank_rec *r)
{
    p = memd_wire_put_u32(p, r->device);
    *p++ = r->kind;
    *p++ = r->region;
    p = memd_wire_put_u16(p, 0);
    p = memd_wire_put_u32(p, r->bank);
    p = core_put(p, r->logical_x, r->logical_y, r->noc_x, r->noc_y);
    p = memd_wire_put_u32(p, 0);
    return memd_wire_stats_put(p, &r->stats);
}

int memd_wire_bank_rec_get(const uint8_t *p, size_t len, memd_wire_bank_rec *r)
{
    if (len < MEMD_WIRE_BANK_REC_SIZE)
        return -EBADMSG;
    memset(r, 0, sizeof *r);
    r->device = memd_wire_u32(p);
    r->kind = p[4];
    r->region = p[5];
    r->bank = memd_wire_u32(p + 8);
    r->logical_x = memd_wire_u16(p + 12);
    r->logical_y = memd_wire_u16(p + 14);
    r->noc_x = memd_wire_u16(p + 16);
    r->noc_y = memd_wire_u16(p + 18);
    if (r->kind >= MEMD_KIND_COUNT)
        return -EINVAL;
    return memd_wire_stats_get(p + 24, MEMD_WIRE_STATS_SIZE, &r->stats);
}

uint8_t *memd_wire_alloc_bank_rec_put(uint8_t *p, const memd_wire_alloc_bank_rec *r)
{
    p = memd_wire_put_u64(p, r->handle);
    *p++ = r->bank_mode;
    memset(p, 0, 7);
    return memd_wire_bank_addr_put(p + 7, &r->bank);
}

int memd_wire_alloc_bank_rec_get(const uint8_t *p, size_t len, memd_wire_alloc_bank_rec *r)
{
    if (len < MEMD_WIRE_ALLOC_BANK_REC_SIZE)
        return -EBADMSG;
    memset(r, 0, sizeof *r);
    r->handle = memd_wire_u64(p);
    r->bank_mode = p[8];
    if (r->bank_mode >= MEMD_BANKS_MODE_COUNT)
        return -EINVAL;
    return memd_wire_bank_addr_get(p + 16, len - 16, &r->bank);
}

uint8_t *memd_wire_subdev_def_put(uint8_t *p, const memd_wire_subdev_def *d, const uint32_t *ids)
{
    p = memd_wire_put_str(p, d->name, sizeof d->name);
    p = memd_wire_put_u32(p, d->device);
    *p++ = d->kind;
    memset(p, 0, 3);
    p = memd_wire_put_u64(p + 3, d->budget);
    for (int i = 0; i < MEMD_SUBDEV_OVERLAPS; i++)
        p = memd_wire_put_str(p, d->overlap[i], sizeof d->overlap[i]);
    p = memd_wire_put_u32(p, d->count);
    p = memd_wire_put_u32(p, 0);
    for (uint32_t i = 0; i < d->count; i++)
        p = memd_wire_put_u32(p, ids[i]);
    return p;
}

int memd_wire_subdev_def_get(const uint8_t *p, size_t len, memd_wire_subdev_def *d,
                             const uint8_t **ids)
{
    if (len < MEMD_WIRE_SUBDEV_DEF_SIZE)
        return -EBADMSG;
    memset(d, 0, sizeof *d);
    d->device = memd_wire_u32(p + 64);
    d->kind = p[68];
    d->budget = memd_wire_u64(p + 72);
    d->count = memd_wire_u32(p + 80 + MEMD_SUBDEV_OVERLAPS * MEMD_NAME_MAX);
    if (d->count > MEMD_BANKSET_MAX)
        return -EINVAL;
    if (len != MEMD_WIRE_SUBDEV_DEF_SIZE + 4ull * d->count)
        return -EBADMSG;
    if (d->kind >= MEMD_KIND_COUNT)
        return -EINVAL;
    int rc = memd_wire_get_str(p, d->name, sizeof d->name);
    for (int i = 0; rc == 0 && i < MEMD_SUBDEV_OVERLAPS; i++)
        rc = memd_wire_get_str(p + 80 + i * MEMD_NAME_MAX, d->overlap[i], sizeof d->overlap[i]);
    *ids = p + MEMD_WIRE_SUBDEV_DEF_SIZE;
    return rc;
}

uint8_t *memd_wire_subdev_rec_put(uint8_t *p, const memd_wire_subdev_rec *r)
{
    p = memd_wire_put_str(p, r->name, sizeof r->name);
    p = memd_wire_put_u32(p, r->device);
    *p++ = r->kind;
    *p++ = r->from_config;
    p = memd_wire_put_u16(p, 0);
    p = memd_wire_put_u32(p, r->nbanks);
    p = memd_wire_put_u32(p, r->sessions);
    p = memd_wire_put_u64(p, r->budget);
    p = memd_wire_put_u64(p, r->used);
    p = memd_wire_put_u64(p, r->allocations);
    return memd_wire_put_str(p, r->banks, sizeof r->banks);
}

int memd_wire_subdev_rec_get(const uint8_t *p, size_t len, memd_wire_subdev_rec *r)
{
    if (len < MEMD_WIRE_SUBDEV_REC_SIZE)
        return -EBADMSG;
    memset(r, 0, sizeof *r);
    r->device = memd_wire_u32(p + 64);
    r->kind = p[68];
    r->from_config = p[69];
    r->nbanks = memd_wire_u32(p + 72);
    r->sessions = memd_wire_u32(p + 76);
    r->budget = memd_wire_u64(p + 80);
    r->used = memd_wire_u64(p + 88);
    r->allocations = memd_wire_u64(p + 96);
    if (r->kind >= MEMD_KIND_COUNT)
        return -EINVAL;
    int rc = memd_wire_get_str(p, r->name, sizeof r->name);
    return rc ? rc : memd_wire_get_str(p + 104, r->banks, sizeof r->banks);
}

uint8_t *memd_wire_subdev_banks_put(uint8_t *p, const uint32_t *ids, uint32_t count)
{
    p = memd_wire_put_u32(p, count);
    p = memd_wire_put_u32(p, 0);
    for (uint32_t i = 0; i < count; i++)
        p = memd_wire_put_u32(p, ids[i]);
    return p;
}

int memd_wire_subdev_banks_get(const uint8_t *p, size_t len, uint32_t *count,
                               const uint8_t **ids)
{
    if (len < MEMD_WIRE_SUBDEV_BANKS_REC_SIZE)
        return -EBADMSG;
    *count = memd_wire_u32(p);
    if (*count > MEMD_BANKSET_MAX)
        return -EINVAL;
    if (len != MEMD_WIRE_SUBDEV_BANKS_REC_SIZE + 4ull * *count)
        return -EBADMSG;
    *ids = p + MEMD_WIRE_SUBDEV_BANKS_REC_SIZE;
    for (uint32_t i = 1; i < *count; i++)
        if (memd_wire_u32(*ids + 4 * i) <= memd_wire_u32(*ids + 4 * (i - 1)))
            return -EINVAL;
    return 0;
}

/* memd wire codec: the frame header, batch counts and DUMP tags (see wire.h): the pieces
 * whose checks are more than a record's fields (distinct error codes, lengths that
 * depend on a count). Every record is generated (wire_gen.c). */
#include "wire.h"

#include <errno.h>

uint8_t *memd_wire_hdr_put(uint8_t *p, const memd_wire_hdr *h)
{
    p = memd_wire_put_u32(p, h->magic);
    p = memd_wire_put_u16(p, h->version);
    p = memd_wire_put_u16(p, h->opcode);
    p = memd_wire_put_u64(p, h->id);
    p = memd_wire_put_u32(p, h->len);
    return memd_wire_put_u32(p, (uint32_t)h->status);
}

int memd_wire_hdr_get(const uint8_t *p, size_t len, uint32_t max_len, memd_wire_hdr *h)
{
    if (len < MEMD_HDR_SIZE)
        return -EBADMSG;
    h->magic = memd_wire_u32(p);
    h->version = memd_wire_u16(p + 4);
    h->opcode = memd_wire_u16(p + 6);
    h->id = memd_wire_u64(p + 8);
    h->len = memd_wire_u32(p + 16);
    h->status = (int32_t)memd_wire_u32(p + 20);
    if (h->magic != MEMD_PROTO_MAGIC)
        return -EPROTO;
    if (h->version < 1 || h->version > MEMD_PROTO_VERSION)
        return -EPROTONOSUPPORT;
    if (h->len > max_len)
        return -EMSGSIZE;
    /* A positive status is never sent, but for request flags (protocol.h). */
    if (h->status > 0 && ((uint32_t)h->status & ~(uint32_t)MEMD_REQ_F_RETRY))
        return -EINVAL;
    return 0;
}

uint8_t *memd_wire_count_put(uint8_t *p, uint32_t count)
{
    p = memd_wire_put_u32(p, count);
    return memd_wire_put_u32(p, 0);
}

int memd_wire_count_get(const uint8_t *p, size_t len, size_t rec_size, uint32_t max_count,
                        uint32_t *count)
{
    if (len < MEMD_WIRE_COUNT_SIZE)
        return -EBADMSG;
    uint32_t n = memd_wire_u32(p);
    /* Compare in 64 bits: n * rec_size cannot overflow for n < 2^32, rec_size < 2^31. */
    if ((uint64_t)len - MEMD_WIRE_COUNT_SIZE != (uint64_t)n * rec_size)
        return -EBADMSG;
    if (n > max_count)
        return -E2BIG;
    *count = n;
    return 0;
}

int memd_wire_tag_get(const uint8_t *p, size_t len, uint32_t *tag, size_t *rec_size)
{
    if (len < MEMD_WIRE_TAG_SIZE)
        return -EBADMSG;
    *tag = memd_wire_u32(p);
    size_t n = memd_wire_rec_size(*tag);
    if (n == 0)
        return -EINVAL;
    if (len - MEMD_WIRE_TAG_SIZE < n)
        return -EBADMSG;
    if (*tag == MEMD_REC_SUBDEV_BANKS) { /* its ids follow the fixed part */
        memd_wire_subdev_banks_rec b;
        int rc = memd_wire_subdev_banks_rec_fixed_get(p + MEMD_WIRE_TAG_SIZE, n, &b);
        if (rc < 0)
            return rc;
        n += 4ull * b.count;
        if (len - MEMD_WIRE_TAG_SIZE < n)
            return -EBADMSG;
    }
    *rec_size = n;
    return 0;
}

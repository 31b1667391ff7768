/* memd wire codec: allocation requests and replies, batches and handles (see wire.h).
 * Field order follows include/memd/protocol.h exactly. */
#include "wire.h"

#include <errno.h>
#include <string.h>

#define MEMD_ALLOC_F_KNOWN (MEMD_ALLOC_F_SHARED | MEMD_ALLOC_F_POOL)

uint8_t *memd_wire_alloc_req_put(uint8_t *p, const memd_wire_alloc_req *r)
{
    p = memd_wire_put_u32(p, r->device);
    *p++ = r->cls;
    *p++ = r->scope;
    *p++ = r->dtype;
    *p++ = r->ndim;
    p = memd_wire_put_u64(p, r->bytes);
    for (int i = 0; i < MEMD_MAX_DIMS; i++)
        p = memd_wire_put_u64(p, r->shape[i]);
    p = memd_wire_put_u64(p, r->page_size);
    p = memd_wire_put_u64(p, r->alignment);
    p = memd_wire_put_u32(p, r->banks);
    p = memd_wire_put_u32(p, r->flags);
    return memd_wire_put_str(p, r->name, sizeof r->name);
}

int memd_wire_alloc_req_get(const uint8_t *p, size_t len, memd_wire_alloc_req *r)
{
    if (len < MEMD_WIRE_ALLOC_REQ_SIZE)
        return -EBADMSG;
    r->device = memd_wire_u32(p);
    r->cls = p[4];
    r->scope = p[5];
    r->dtype = p[6];
    r->ndim = p[7];
    r->bytes = memd_wire_u64(p + 8);
    for (int i = 0; i < MEMD_MAX_DIMS; i++)
        r->shape[i] = memd_wire_u64(p + 16 + 8 * i);
    r->page_size = memd_wire_u64(p + 48);
    r->alignment = memd_wire_u64(p + 56);
    r->banks = memd_wire_u32(p + 64);
    r->flags = memd_wire_u32(p + 68);
    if (r->cls >= MEMD_CLASS_COUNT || r->scope >= MEMD_SCOPE_COUNT ||
        r->dtype >= MEMD_DTYPE_COUNT || r->ndim > MEMD_MAX_DIMS ||
        (r->flags & ~(uint32_t)MEMD_ALLOC_F_KNOWN))
        return -EINVAL;
    return memd_wire_get_str(p + 72, r->name, sizeof r->name);
}

uint8_t *memd_wire_buffer_put(uint8_t *p, const memd_wire_buffer *r)
{
    p = memd_wire_put_u64(p, r->handle);
    p = memd_wire_put_u64(p, r->address);
    p = memd_wire_put_u64(p, r->size_per_bank);
    p = memd_wire_put_u64(p, r->page_size);
    p = memd_wire_put_u64(p, r->pitch);
    p = memd_wire_put_u32(p, r->banks);
    p = memd_wire_put_u32(p, r->refcount);
    *p++ = r->kind;
    *p++ = r->region;
    *p++ = r->bank_mode;
    memset(p, 0, 5);
    return p + 5;
}

int memd_wire_buffer_get(const uint8_t *p, size_t len, memd_wire_buffer *r)
{
    if (len < MEMD_WIRE_BUFFER_SIZE)
        return -EBADMSG;
    r->handle = memd_wire_u64(p);
    r->address = memd_wire_u64(p + 8);
    r->size_per_bank = memd_wire_u64(p + 16);
    r->page_size = memd_wire_u64(p + 24);
    r->pitch = memd_wire_u64(p + 32);
    r->banks = memd_wire_u32(p + 40);
    r->refcount = memd_wire_u32(p + 44);
    r->kind = p[48];
    r->region = p[49];
    r->bank_mode = p[50];
    memset(r->pad, 0, sizeof r->pad);
    return r->kind < MEMD_KIND_COUNT && r->bank_mode < MEMD_BANKS_MODE_COUNT ? 0 : -EINVAL;
}

uint8_t *memd_wire_alloc_info_put(uint8_t *p, const memd_wire_alloc_info *r)
{
    p = memd_wire_buffer_put(p, &r->buf);
    p = memd_wire_put_u32(p, r->device);
    *p++ = r->cls;
    *p++ = r->scope;
    p = memd_wire_put_u16(p, r->flags);
    p = memd_wire_put_u32(p, r->pid);
    p = memd_wire_put_u32(p, r->uid);
    p = memd_wire_put_u32(p, r->gid);
    p = memd_wire_put_u32(p, r->session_id);
    p = memd_wire_put_u64(p, r->created_ns);
    p = memd_wire_put_str(p, r->name, sizeof r->name);
    return memd_wire_put_str(p, r->comm, sizeof r->comm);
}

int memd_wire_alloc_info_get(const uint8_t *p, size_t len, memd_wire_alloc_info *r)
{
    if (len < MEMD_WIRE_ALLOC_INFO_SIZE)
        return -EBADMSG;
    int rc = memd_wire_buffer_get(p, len, &r->buf);
    if (rc < 0)
        return rc;
    p += MEMD_WIRE_BUFFER_SIZE;
    r->device = memd_wire_u32(p);
    r->cls = p[4];
    r->scope = p[5];
    r->flags = memd_wire_u16(p + 6);
    r->pid = memd_wire_u32(p + 8);
    r->uid = memd_wire_u32(p + 12);
    r->gid = memd_wire_u32(p + 16);
    r->session_id = memd_wire_u32(p + 20);
    r->created_ns = memd_wire_u64(p + 24);
    if (r->cls >= MEMD_CLASS_COUNT || r->scope >= MEMD_SCOPE_COUNT ||
        (r->flags & ~(uint32_t)MEMD_ALLOC_I_POOL))
        return -EINVAL;
    rc = memd_wire_get_str(p + 32, r->name, sizeof r->name);
    if (rc < 0)
        return rc;
    return memd_wire_get_str(p + 32 + sizeof r->name, r->comm, sizeof r->comm);
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

uint8_t *memd_wire_handle_put(uint8_t *p, uint64_t handle)
{
    return memd_wire_put_u64(p, handle);
}

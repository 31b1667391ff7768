/* memd wire codec: the DUMP request and its tagged records (see wire.h). Field order
 * follows include/memd/protocol.h exactly. */
#include "wire.h"

#include <errno.h>

#define MEMD_DUMP_F_KNOWN (MEMD_DUMP_F_BLOCKS | MEMD_DUMP_F_MODELS | MEMD_DUMP_F_USAGE | \
                           MEMD_DUMP_F_POOLS | MEMD_DUMP_F_SUBALLOCS | MEMD_DUMP_F_PAGED | \
                           MEMD_DUMP_F_BANKS | MEMD_DUMP_F_SUBDEV_BANKS)

uint8_t *memd_wire_dump_req_put(uint8_t *p, const memd_wire_dump_req *r)
{
    p = memd_wire_put_u32(p, r->device);
    p = memd_wire_put_u32(p, r->flags);
    return memd_wire_put_u64(p, r->cursor);
}

int memd_wire_dump_req_get(const uint8_t *p, size_t len, memd_wire_dump_req *r)
{
    if (len < MEMD_WIRE_DUMP_REQ_V1_SIZE)
        return -EBADMSG;
    r->device = memd_wire_u32(p);
    r->flags = memd_wire_u32(p + 4);
    r->cursor = len >= MEMD_WIRE_DUMP_REQ_SIZE ? memd_wire_u64(p + 8) : 0;
    if (r->cursor && !(r->flags & MEMD_DUMP_F_PAGED))
        return -EINVAL;
    return (r->flags & ~(uint32_t)MEMD_DUMP_F_KNOWN) ? -EINVAL : 0;
}

uint8_t *memd_wire_page_rec_put(uint8_t *p, const memd_wire_page_rec *r)
{
    return memd_wire_put_u64(p, r->next);
}

int memd_wire_page_rec_get(const uint8_t *p, size_t len, memd_wire_page_rec *r)
{
    if (len < MEMD_WIRE_PAGE_REC_SIZE)
        return -EBADMSG;
    r->next = memd_wire_u64(p);
    return 0;
}

uint8_t *memd_wire_stats_put(uint8_t *p, const memd_wire_stats *r)
{
    p = memd_wire_put_u64(p, r->total);
    p = memd_wire_put_u64(p, r->allocated);
    p = memd_wire_put_u64(p, r->free);
    p = memd_wire_put_u64(p, r->largest_free);
    p = memd_wire_put_u64(p, r->largest_free_addr);
    p = memd_wire_put_u64(p, r->free_blocks);
    return memd_wire_put_u64(p, r->allocations);
}

int memd_wire_stats_get(const uint8_t *p, size_t len, memd_wire_stats *r)
{
    if (len < MEMD_WIRE_STATS_SIZE)
        return -EBADMSG;
    r->total = memd_wire_u64(p);
    r->allocated = memd_wire_u64(p + 8);
    r->free = memd_wire_u64(p + 16);
    r->largest_free = memd_wire_u64(p + 24);
    r->largest_free_addr = memd_wire_u64(p + 32);
    r->free_blocks = memd_wire_u64(p + 40);
    r->allocations = memd_wire_u64(p + 48);
    return 0;
}

uint8_t *memd_wire_server_rec_put(uint8_t *p, const memd_wire_server_rec *r)
{
    p = memd_wire_put_str(p, r->version, sizeof r->version);
    p = memd_wire_put_u64(p, r->start_ns);
    p = memd_wire_put_u64(p, r->now_ns);
    p = memd_wire_put_u32(p, r->sessions);
    p = memd_wire_put_u32(p, r->pid);
    p = memd_wire_put_u64(p, r->requests);
    p = memd_wire_put_u64(p, r->allocs);
    p = memd_wire_put_u64(p, r->frees);
    p = memd_wire_put_u64(p, r->alloc_failures);
    p = memd_wire_put_u64(p, r->protocol_errors);
    p = memd_wire_put_u64(p, r->sessions_total);
    p = memd_wire_put_u64(p, r->bytes_in);
    return memd_wire_put_u64(p, r->bytes_out);
}

int memd_wire_server_rec_get(const uint8_t *p, size_t len, memd_wire_server_rec *r)
{
    if (len < MEMD_WIRE_SERVER_REC_SIZE)
        return -EBADMSG;
    int rc = memd_wire_get_str(p, r->version, sizeof r->version);
    if (rc < 0)
        return rc;
    p += sizeof r->version;
    r->start_ns = memd_wire_u64(p);
    r->now_ns = memd_wire_u64(p + 8);
    r->sessions = memd_wire_u32(p + 16);
    r->pid = memd_wire_u32(p + 20);
    r->requests = memd_wire_u64(p + 24);
    r->allocs = memd_wire_u64(p + 32);
    r->frees = memd_wire_u64(p + 40);
    r->alloc_failures = memd_wire_u64(p + 48);
    r->protocol_errors = memd_wire_u64(p + 56);
    r->sessions_total = memd_wire_u64(p + 64);
    r->bytes_in = memd_wire_u64(p + 72);
    r->bytes_out = memd_wire_u64(p + 80);
    return 0;
}

uint8_t *memd_wire_device_rec_put(uint8_t *p, const memd_wire_device_rec *r)
{
    p = memd_wire_put_u32(p, r->id);
    p = memd_wire_put_u32(p, r->texture);
    p = memd_wire_put_str(p, r->name, sizeof r->name);
    return memd_wire_put_str(p, r->arch, sizeof r->arch);
}

int memd_wire_device_rec_get(const uint8_t *p, size_t len, memd_wire_device_rec *r)
{
    if (len < MEMD_WIRE_DEVICE_REC_SIZE)
        return -EBADMSG;
    r->id = memd_wire_u32(p);
    r->texture = memd_wire_u32(p + 4);
    if (r->texture > 1)
        return -EINVAL;
    int rc = memd_wire_get_str(p + 8, r->name, sizeof r->name);
    if (rc < 0)
        return rc;
    return memd_wire_get_str(p + 8 + sizeof r->name, r->arch, sizeof r->arch);
}

uint8_t *memd_wire_group_rec_put(uint8_t *p, const memd_wire_group_rec *r)
{
    p = memd_wire_put_u32(p, r->device);
    *p++ = r->kind;
    *p++ = r->nregions;
    p = memd_wire_put_u16(p, 0);
    p = memd_wire_put_u32(p, r->banks);
    p = memd_wire_put_u32(p, r->clients);
    p = memd_wire_put_u64(p, r->bank_size);
    p = memd_wire_put_u64(p, r->alignment);
    return memd_wire_stats_put(p, &r->stats);
}

int memd_wire_group_rec_get(const uint8_t *p, size_t len, memd_wire_group_rec *r)
{
    if (len < MEMD_WIRE_GROUP_REC_SIZE)
        return -EBADMSG;
    r->device = memd_wire_u32(p);
    r->kind = p[4];
    r->nregions = p[5];
    r->pad = 0;
    r->banks = memd_wire_u32(p + 8);
    r->clients = memd_wire_u32(p + 12);
    r->bank_size = memd_wire_u64(p + 16);
    r->alignment = memd_wire_u64(p + 24);
    if (r->kind >= MEMD_KIND_COUNT)
        return -EINVAL;
    return memd_wire_stats_get(p + 32, len - 32, &r->stats);
}

uint8_t *memd_wire_region_rec_put(uint8_t *p, const memd_wire_region_rec *r)
{
    p = memd_wire_put_u32(p, r->device);
    *p++ = r->kind;
    *p++ = r->region;
    *p++ = r->allocatable;
    *p++ = 0;
    p = memd_wire_put_str(p, r->name, sizeof r->name);
    p = memd_wire_put_u64(p, r->base);
    p = memd_wire_put_u64(p, r->size);
    return memd_wire_stats_put(p, &r->stats);
}

int memd_wire_region_rec_get(const uint8_t *p, size_t len, memd_wire_region_rec *r)
{
    if (len < MEMD_WIRE_REGION_REC_SIZE)
        return -EBADMSG;
    r->device = memd_wire_u32(p);
    r->kind = p[4];
    r->region = p[5];
    r->allocatable = p[6];
    r->pad = 0;
    if (r->kind >= MEMD_KIND_COUNT || r->allocatable > 1)
        return -EINVAL;
    int rc = memd_wire_get_str(p + 8, r->name, sizeof r->name);
    if (rc < 0)
        return rc;
    p += 8 + sizeof r->name;
    r->base = memd_wire_u64(p);
    r->size = memd_wire_u64(p + 8);
    return memd_wire_stats_get(p + 16, MEMD_WIRE_STATS_SIZE, &r->stats);
}

uint8_t *memd_wire_block_rec_put(uint8_t *p, const memd_wire_block_rec *r)
{
    p = memd_wire_put_u32(p, r->device);
    *p++ = r->kind;
    *p++ = r->region;
    *p++ = r->allocated;
    *p++ = 0;
    p = memd_wire_put_u64(p, r->address);
    return memd_wire_put_u64(p, r->size);
}

int memd_wire_block_rec_get(const uint8_t *p, size_t len, memd_wire_block_rec *r)
{
    if (len < MEMD_WIRE_BLOCK_REC_SIZE)
        return -EBADMSG;
    r->device = memd_wire_u32(p);
    r->kind = p[4];
    r->region = p[5];
    r->allocated = p[6];
    r->pad = 0;
    r->address = memd_wire_u64(p + 8);
    r->size = memd_wire_u64(p + 16);
    return (r->kind >= MEMD_KIND_COUNT || r->allocated > 1) ? -EINVAL : 0;
}

uint8_t *memd_wire_session_rec_put(uint8_t *p, const memd_wire_session_rec *r)
{
    p = memd_wire_put_u32(p, r->id);
    p = memd_wire_put_u32(p, r->pid);
    p = memd_wire_put_u32(p, r->uid);
    p = memd_wire_put_u32(p, r->gid);
    p = memd_wire_put_u64(p, r->connected_ns);
    p = memd_wire_put_u64(p, r->allocations);
    p = memd_wire_put_u64(p, r->requests);
    p = memd_wire_put_str(p, r->comm, sizeof r->comm);
    p = memd_wire_put_str(p, r->client_name, sizeof r->client_name);
    p = memd_wire_put_u32(p, r->flags);
    p = memd_wire_put_u32(p, r->subdev);
    return memd_wire_put_u64(p, r->reclaim_deadline_ns);
}

int memd_wire_session_rec_get(const uint8_t *p, size_t len, memd_wire_session_rec *r)
{
    if (len < MEMD_WIRE_SESSION_REC_SIZE)
        return -EBADMSG;
    r->id = memd_wire_u32(p);
    r->pid = memd_wire_u32(p + 4);
    r->uid = memd_wire_u32(p + 8);
    r->gid = memd_wire_u32(p + 12);
    r->connected_ns = memd_wire_u64(p + 16);
    r->allocations = memd_wire_u64(p + 24);
    r->requests = memd_wire_u64(p + 32);
    r->flags = memd_wire_u32(p + 88);
    r->subdev = memd_wire_u32(p + 92);
    r->reclaim_deadline_ns = memd_wire_u64(p + 96);
    int rc = memd_wire_get_str(p + 40, r->comm, sizeof r->comm);
    if (rc < 0)
        return rc;
    return memd_wire_get_str(p + 40 + sizeof r->comm, r->client_name, sizeof r->client_name);
}

size_t memd_wire_rec_size(uint32_t tag)
{
    switch (tag) {
    case MEMD_REC_SERVER: return MEMD_WIRE_SERVER_REC_SIZE;
    case MEMD_REC_DEVICE: return MEMD_WIRE_DEVICE_REC_SIZE;
    case MEMD_REC_GROUP: return MEMD_WIRE_GROUP_REC_SIZE;
    case MEMD_REC_REGION: return MEMD_WIRE_REGION_REC_SIZE;
    case MEMD_REC_ALLOC: return MEMD_WIRE_ALLOC_INFO_SIZE;
    case MEMD_REC_BLOCK: return MEMD_WIRE_BLOCK_REC_SIZE;
    case MEMD_REC_SESSION: return MEMD_WIRE_SESSION_REC_SIZE;
    case MEMD_REC_PLAN: return MEMD_WIRE_PLAN_REC_SIZE;
    case MEMD_REC_MODEL: return MEMD_WIRE_MODEL_REC_SIZE;
    case MEMD_REC_INSTANCE: return MEMD_WIRE_INSTANCE_REC_SIZE;
    case MEMD_REC_SESSION_USE: return MEMD_WIRE_SESSION_USE_SIZE;
    case MEMD_REC_POOL: return MEMD_WIRE_POOL_REC_SIZE;
    case MEMD_REC_SUBALLOC: return MEMD_WIRE_SUBALLOC_REC_SIZE;
    case MEMD_REC_PAGE: return MEMD_WIRE_PAGE_REC_SIZE;
    case MEMD_REC_BANK: return MEMD_WIRE_BANK_REC_SIZE;
    case MEMD_REC_ALLOC_BANK: return MEMD_WIRE_ALLOC_BANK_REC_SIZE;
    case MEMD_REC_SUBDEV: return MEMD_WIRE_SUBDEV_REC_SIZE;
    case MEMD_REC_SUBDEV_BANKS: return MEMD_WIRE_SUBDEV_BANKS_REC_SIZE;
    default: return 0;
    }
}

uint8_t *memd_wire_tag_put(uint8_t *p, uint32_t tag)
{
    return memd_wire_put_u32(p, tag);
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
        uint32_t count = memd_wire_u32(p + MEMD_WIRE_TAG_SIZE);
        if (count > MEMD_BANKSET_MAX)
            return -EINVAL;
        n += 4ull * count;
        if (len - MEMD_WIRE_TAG_SIZE < n)
            return -EBADMSG;
    }
    *rec_size = n;
    return 0;
}

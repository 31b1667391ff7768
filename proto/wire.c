/* memd wire codec: see wire.h. Field order follows include/memd/protocol.h exactly. */
#include "wire.h"

#include <errno.h>
#include <string.h>

/* Fixed-size strings: always NUL padded on the wire so no stray bytes leak and a
 * receiver can rely on a terminator. A source without a NUL inside n is truncated. */
static uint8_t *put_str(uint8_t *p, const char *s, size_t n)
{
    size_t l = strnlen(s, n);
    if (l == n)
        l = n - 1;
    memcpy(p, s, l);
    memset(p + l, 0, n - l);
    return p + n;
}

int memd_wire_get_str(const uint8_t *p, char *s, size_t n)
{
    const uint8_t *nul = memchr(p, 0, n);
    if (!nul)
        return -EINVAL;
    size_t l = (size_t)(nul - p);
    memcpy(s, p, l);
    memset(s + l, 0, n - l);
    return 0;
}

void memd_wire_strset(char *dst, size_t n, const char *src)
{
    if (n == 0)
        return;
    put_str((uint8_t *)dst, src ? src : "", n);
}

/* ---- header ---- */

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
    /* A positive status is never sent (protocol.h). */
    if (h->status > 0)
        return -EINVAL;
    return 0;
}

/* ---- HELLO / WELCOME ---- */

uint8_t *memd_wire_hello_put(uint8_t *p, const memd_wire_hello *r)
{
    p = memd_wire_put_u16(p, r->min_version);
    p = memd_wire_put_u16(p, r->max_version);
    p = memd_wire_put_u32(p, r->flags);
    p = put_str(p, r->client_name, sizeof r->client_name);
    p = memd_wire_put_u32(p, r->reclaim_session);
    p = memd_wire_put_u32(p, 0);
    memcpy(p, r->reclaim_token, MEMD_TOKEN_SIZE);
    return p + MEMD_TOKEN_SIZE;
}

int memd_wire_hello_get(const uint8_t *p, size_t len, memd_wire_hello *r)
{
    if (len < MEMD_WIRE_HELLO_SIZE)
        return -EBADMSG;
    r->min_version = memd_wire_u16(p);
    r->max_version = memd_wire_u16(p + 2);
    /* flags are advisory: unknown bits are ignored so newer clients can still talk */
    r->flags = memd_wire_u32(p + 4);
    if (r->min_version > r->max_version)
        return -EINVAL;
    r->reclaim_session = memd_wire_u32(p + 40);
    r->pad = 0;
    memcpy(r->reclaim_token, p + 48, MEMD_TOKEN_SIZE);
    return memd_wire_get_str(p + 8, r->client_name, sizeof r->client_name);
}

uint8_t *memd_wire_welcome_put(uint8_t *p, const memd_wire_welcome *r)
{
    p = memd_wire_put_u16(p, r->version);
    p = memd_wire_put_u16(p, 0);
    p = memd_wire_put_u32(p, r->session_id);
    p = memd_wire_put_u32(p, r->max_frame);
    p = memd_wire_put_u32(p, r->ndevices);
    p = put_str(p, r->server_version, sizeof r->server_version);
    p = memd_wire_put_u32(p, r->flags);
    p = memd_wire_put_u32(p, r->reclaimed);
    memcpy(p, r->token, MEMD_TOKEN_SIZE);
    return p + MEMD_TOKEN_SIZE;
}

int memd_wire_welcome_get(const uint8_t *p, size_t len, memd_wire_welcome *r)
{
    if (len < MEMD_WIRE_WELCOME_SIZE)
        return -EBADMSG;
    r->version = memd_wire_u16(p);
    r->pad = 0;
    r->session_id = memd_wire_u32(p + 4);
    r->max_frame = memd_wire_u32(p + 8);
    r->ndevices = memd_wire_u32(p + 12);
    r->flags = memd_wire_u32(p + 48);
    r->reclaimed = memd_wire_u32(p + 52);
    memcpy(r->token, p + 56, MEMD_TOKEN_SIZE);
    if (r->version < 1 || r->version > MEMD_PROTO_VERSION)
        return -EINVAL;
    return memd_wire_get_str(p + 16, r->server_version, sizeof r->server_version);
}

/* A V1 record is the current one cut before its appended fields: decode it from a
 * zero-padded copy so those fields read as 0. */
int memd_wire_hello_get_any(const uint8_t *p, size_t len, memd_wire_hello *r)
{
    uint8_t b[MEMD_WIRE_HELLO_SIZE] = {0};
    if (len != MEMD_WIRE_HELLO_SIZE && len != MEMD_WIRE_HELLO_V1_SIZE)
        return -EBADMSG;
    memcpy(b, p, len);
    return memd_wire_hello_get(b, sizeof b, r);
}

int memd_wire_welcome_get_any(const uint8_t *p, size_t len, memd_wire_welcome *r)
{
    uint8_t b[MEMD_WIRE_WELCOME_SIZE] = {0};
    if (len != MEMD_WIRE_WELCOME_SIZE && len != MEMD_WIRE_WELCOME_V1_SIZE)
        return -EBADMSG;
    memcpy(b, p, len);
    return memd_wire_welcome_get(b, sizeof b, r);
}

/* ---- error ---- */

uint8_t *memd_wire_error_put(uint8_t *p, const memd_wire_error *r)
{
    p = memd_wire_put_u32(p, (uint32_t)r->status);
    p = memd_wire_put_u32(p, r->detail);
    p = put_str(p, r->message, sizeof r->message);
    p = memd_wire_put_u64(p, r->requested);
    p = memd_wire_put_u64(p, r->size_per_bank);
    p = memd_wire_put_u64(p, r->allocated);
    p = memd_wire_put_u64(p, r->free);
    p = memd_wire_put_u64(p, r->largest_free);
    p = memd_wire_put_u32(p, r->device);
    *p++ = r->cls;
    *p++ = r->kind;
    *p++ = r->region;
    *p++ = 0;
    return p;
}

int memd_wire_error_get(const uint8_t *p, size_t len, memd_wire_error *r)
{
    if (len < MEMD_WIRE_ERROR_SIZE)
        return -EBADMSG;
    r->status = (int32_t)memd_wire_u32(p);
    r->detail = memd_wire_u32(p + 4);
    int rc = memd_wire_get_str(p + 8, r->message, sizeof r->message);
    if (rc < 0)
        return rc;
    p += 8 + sizeof r->message;
    r->requested = memd_wire_u64(p);
    r->size_per_bank = memd_wire_u64(p + 8);
    r->allocated = memd_wire_u64(p + 16);
    r->free = memd_wire_u64(p + 24);
    r->largest_free = memd_wire_u64(p + 32);
    r->device = memd_wire_u32(p + 40);
    r->cls = p[44];
    r->kind = p[45];
    r->region = p[46];
    r->pad = 0;
    if (r->status >= 0 || r->detail > MEMD_ERR_DETAIL_QUOTA || r->cls >= MEMD_CLASS_COUNT ||
        r->kind >= MEMD_KIND_COUNT)
        return -EINVAL;
    return 0;
}

/* ---- ALLOC ---- */

#define MEMD_ALLOC_F_KNOWN (MEMD_ALLOC_F_SHARED)

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
    return put_str(p, r->name, sizeof r->name);
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
    memset(p, 0, 6);
    return p + 6;
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
    memset(r->pad, 0, sizeof r->pad);
    return r->kind < MEMD_KIND_COUNT ? 0 : -EINVAL;
}

/* ---- QUERY ---- */

uint8_t *memd_wire_alloc_info_put(uint8_t *p, const memd_wire_alloc_info *r)
{
    p = memd_wire_buffer_put(p, &r->buf);
    p = memd_wire_put_u32(p, r->device);
    *p++ = r->cls;
    *p++ = r->scope;
    p = memd_wire_put_u16(p, 0);
    p = memd_wire_put_u32(p, r->pid);
    p = memd_wire_put_u32(p, r->uid);
    p = memd_wire_put_u32(p, r->gid);
    p = memd_wire_put_u32(p, r->session_id);
    p = memd_wire_put_u64(p, r->created_ns);
    p = put_str(p, r->name, sizeof r->name);
    return put_str(p, r->comm, sizeof r->comm);
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
    r->pad = 0;
    r->pid = memd_wire_u32(p + 8);
    r->uid = memd_wire_u32(p + 12);
    r->gid = memd_wire_u32(p + 16);
    r->session_id = memd_wire_u32(p + 20);
    r->created_ns = memd_wire_u64(p + 24);
    if (r->cls >= MEMD_CLASS_COUNT || r->scope >= MEMD_SCOPE_COUNT)
        return -EINVAL;
    rc = memd_wire_get_str(p + 32, r->name, sizeof r->name);
    if (rc < 0)
        return rc;
    return memd_wire_get_str(p + 32 + sizeof r->name, r->comm, sizeof r->comm);
}

/* ---- DUMP ---- */

#define MEMD_DUMP_F_KNOWN (MEMD_DUMP_F_BLOCKS | MEMD_DUMP_F_MODELS)

uint8_t *memd_wire_dump_req_put(uint8_t *p, const memd_wire_dump_req *r)
{
    p = memd_wire_put_u32(p, r->device);
    return memd_wire_put_u32(p, r->flags);
}

int memd_wire_dump_req_get(const uint8_t *p, size_t len, memd_wire_dump_req *r)
{
    if (len < MEMD_WIRE_DUMP_REQ_SIZE)
        return -EBADMSG;
    r->device = memd_wire_u32(p);
    r->flags = memd_wire_u32(p + 4);
    return (r->flags & ~(uint32_t)MEMD_DUMP_F_KNOWN) ? -EINVAL : 0;
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
    p = put_str(p, r->version, sizeof r->version);
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
    p = put_str(p, r->name, sizeof r->name);
    return put_str(p, r->arch, sizeof r->arch);
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
    p = put_str(p, r->name, sizeof r->name);
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
    p = put_str(p, r->comm, sizeof r->comm);
    p = put_str(p, r->client_name, sizeof r->client_name);
    p = memd_wire_put_u32(p, r->flags);
    p = memd_wire_put_u32(p, 0);
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
    r->pad = 0;
    r->reclaim_deadline_ns = memd_wire_u64(p + 96);
    int rc = memd_wire_get_str(p + 40, r->comm, sizeof r->comm);
    if (rc < 0)
        return rc;
    return memd_wire_get_str(p + 40 + sizeof r->comm, r->client_name, sizeof r->client_name);
}

/* ---- batches, handles, tags ---- */

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
    *rec_size = n;
    return 0;
}

/* ---- plans and models ---- */

/* Reserved fields go out as 0 and are ignored on the way in (room to grow). */

uint8_t *memd_wire_upload_put(uint8_t *p, const memd_wire_upload *r)
{
    p = memd_wire_put_u64(p, r->upload_id);
    p = memd_wire_put_u64(p, r->total);
    return memd_wire_put_u64(p, r->offset);
}

int memd_wire_upload_get(const uint8_t *p, size_t len, memd_wire_upload *r)
{
    if (len < MEMD_WIRE_UPLOAD_SIZE)
        return -EBADMSG;
    r->upload_id = memd_wire_u64(p);
    r->total = memd_wire_u64(p + 8);
    r->offset = memd_wire_u64(p + 16);
    return r->upload_id == 0 ? -EINVAL : 0;
}

#define MEMD_PLAN_F_KNOWN (MEMD_PLAN_F_PRECOMPUTED)

uint8_t *memd_wire_plan_req_put(uint8_t *p, const memd_wire_plan_req *r)
{
    p = memd_wire_put_u32(p, r->count);
    p = memd_wire_put_u32(p, r->flags);
    p = memd_wire_put_u32(p, r->budget_ms);
    p = memd_wire_put_u32(p, 0);
    return memd_wire_put_u64(p, r->seed);
}

int memd_wire_plan_req_get(const uint8_t *p, size_t len, memd_wire_plan_req *r)
{
    if (len < MEMD_WIRE_PLAN_REQ_SIZE)
        return -EBADMSG;
    r->count = memd_wire_u32(p);
    r->flags = memd_wire_u32(p + 4);
    r->budget_ms = memd_wire_u32(p + 8);
    r->pad = 0;
    r->seed = memd_wire_u64(p + 16);
    return (r->flags & ~(uint32_t)MEMD_PLAN_F_KNOWN) ? -EINVAL : 0;
}

uint8_t *memd_wire_plan_buf_put(uint8_t *p, const memd_wire_plan_buf *r)
{
    p = memd_wire_put_u64(p, r->lower);
    p = memd_wire_put_u64(p, r->upper);
    p = memd_wire_put_u64(p, r->size);
    p = memd_wire_put_u64(p, r->align);
    p = memd_wire_put_u64(p, r->offset);
    p = memd_wire_put_u32(p, r->flags);
    return memd_wire_put_u32(p, 0);
}

int memd_wire_plan_buf_get(const uint8_t *p, size_t len, memd_wire_plan_buf *r)
{
    if (len < MEMD_WIRE_PLAN_BUF_SIZE)
        return -EBADMSG;
    r->lower = memd_wire_u64(p);
    r->upper = memd_wire_u64(p + 8);
    r->size = memd_wire_u64(p + 16);
    r->align = memd_wire_u64(p + 24);
    r->offset = memd_wire_u64(p + 32);
    r->flags = memd_wire_u32(p + 40);
    r->pad = 0;
    return (r->flags & ~(uint32_t)MEMD_PLAN_BUF_F_PINNED) ? -EINVAL : 0;
}

#define MEMD_PLAN_I_KNOWN (MEMD_PLAN_I_CACHED | MEMD_PLAN_I_OPTIMAL | MEMD_PLAN_I_PRECOMPUTED)

uint8_t *memd_wire_plan_info_put(uint8_t *p, const memd_wire_plan_info *r)
{
    p = memd_wire_put_u64(p, r->plan_id);
    p = memd_wire_put_u64(p, r->arena);
    p = memd_wire_put_u64(p, r->lower_bound);
    p = memd_wire_put_u64(p, r->iterations);
    p = memd_wire_put_u64(p, r->plan_us);
    p = memd_wire_put_u32(p, r->count);
    p = memd_wire_put_u32(p, r->flags);
    return put_str(p, r->strategy, sizeof r->strategy);
}

int memd_wire_plan_info_get(const uint8_t *p, size_t len, memd_wire_plan_info *r)
{
    if (len < MEMD_WIRE_PLAN_INFO_SIZE)
        return -EBADMSG;
    r->plan_id = memd_wire_u64(p);
    r->arena = memd_wire_u64(p + 8);
    r->lower_bound = memd_wire_u64(p + 16);
    r->iterations = memd_wire_u64(p + 24);
    r->plan_us = memd_wire_u64(p + 32);
    r->count = memd_wire_u32(p + 40);
    r->flags = memd_wire_u32(p + 44);
    if (r->flags & ~(uint32_t)MEMD_PLAN_I_KNOWN)
        return -EINVAL;
    return memd_wire_get_str(p + 48, r->strategy, sizeof r->strategy);
}

uint8_t *memd_wire_model_req_put(uint8_t *p, const memd_wire_model_req *r)
{
    p = memd_wire_put_u32(p, r->device);
    *p++ = r->scope;
    *p++ = 0;
    p = memd_wire_put_u16(p, 0);
    p = memd_wire_put_u32(p, r->ntensors);
    p = memd_wire_put_u32(p, r->flags);
    p = memd_wire_put_u64(p, r->plan_id);
    p = memd_wire_put_u64(p, r->code_bytes);
    return put_str(p, r->name, sizeof r->name);
}

int memd_wire_model_req_get(const uint8_t *p, size_t len, memd_wire_model_req *r)
{
    if (len < MEMD_WIRE_MODEL_REQ_SIZE)
        return -EBADMSG;
    r->device = memd_wire_u32(p);
    r->scope = p[4];
    r->pad0 = 0;
    r->pad1 = 0;
    r->ntensors = memd_wire_u32(p + 8);
    r->flags = memd_wire_u32(p + 12);
    r->plan_id = memd_wire_u64(p + 16);
    r->code_bytes = memd_wire_u64(p + 24);
    if (r->scope >= MEMD_SCOPE_COUNT || r->flags != 0)
        return -EINVAL;
    return memd_wire_get_str(p + 32, r->name, sizeof r->name);
}

uint8_t *memd_wire_tensor_put(uint8_t *p, const memd_wire_tensor *r)
{
    p = memd_wire_put_u64(p, r->size);
    p = memd_wire_put_u64(p, r->align);
    p = memd_wire_put_u64(p, r->lower);
    p = memd_wire_put_u64(p, r->upper);
    *p++ = r->role;
    *p++ = 0;
    p = memd_wire_put_u16(p, 0);
    return memd_wire_put_u32(p, r->alias_of);
}

int memd_wire_tensor_get(const uint8_t *p, size_t len, memd_wire_tensor *r)
{
    if (len < MEMD_WIRE_TENSOR_SIZE)
        return -EBADMSG;
    r->size = memd_wire_u64(p);
    r->align = memd_wire_u64(p + 8);
    r->lower = memd_wire_u64(p + 16);
    r->upper = memd_wire_u64(p + 24);
    r->role = p[32];
    r->pad0 = 0;
    r->pad1 = 0;
    r->alias_of = memd_wire_u32(p + 36);
    return r->role >= MEMD_TENSOR_ROLE_COUNT ? -EINVAL : 0;
}

#define MEMD_MODEL_I_KNOWN \
    (MEMD_MODEL_I_NEW | MEMD_MODEL_I_PLAN_OPTIMAL | MEMD_MODEL_I_PLAN_PRECOMPUTED)

uint8_t *memd_wire_model_info_put(uint8_t *p, const memd_wire_model_info *r)
{
    p = memd_wire_put_u64(p, r->model_id);
    p = memd_wire_put_u64(p, r->plan_id);
    p = memd_wire_put_u64(p, r->arena);
    p = memd_wire_put_u64(p, r->lower_bound);
    p = memd_wire_put_u64(p, r->code_handle);
    p = memd_wire_put_u64(p, r->code_address);
    p = memd_wire_put_u64(p, r->code_bytes);
    p = memd_wire_put_u64(p, r->const_handle);
    p = memd_wire_put_u64(p, r->const_address);
    p = memd_wire_put_u64(p, r->const_bytes);
    p = memd_wire_put_u64(p, r->created_ns);
    p = memd_wire_put_u32(p, r->device);
    p = memd_wire_put_u32(p, r->users);
    p = memd_wire_put_u32(p, r->ntensors);
    p = memd_wire_put_u32(p, r->instances);
    p = memd_wire_put_u32(p, r->flags);
    p = memd_wire_put_u32(p, 0);
    p = put_str(p, r->name, sizeof r->name);
    return put_str(p, r->strategy, sizeof r->strategy);
}

int memd_wire_model_info_get(const uint8_t *p, size_t len, memd_wire_model_info *r)
{
    if (len < MEMD_WIRE_MODEL_INFO_SIZE)
        return -EBADMSG;
    r->model_id = memd_wire_u64(p);
    r->plan_id = memd_wire_u64(p + 8);
    r->arena = memd_wire_u64(p + 16);
    r->lower_bound = memd_wire_u64(p + 24);
    r->code_handle = memd_wire_u64(p + 32);
    r->code_address = memd_wire_u64(p + 40);
    r->code_bytes = memd_wire_u64(p + 48);
    r->const_handle = memd_wire_u64(p + 56);
    r->const_address = memd_wire_u64(p + 64);
    r->const_bytes = memd_wire_u64(p + 72);
    r->created_ns = memd_wire_u64(p + 80);
    r->device = memd_wire_u32(p + 88);
    r->users = memd_wire_u32(p + 92);
    r->ntensors = memd_wire_u32(p + 96);
    r->instances = memd_wire_u32(p + 100);
    r->flags = memd_wire_u32(p + 104);
    r->pad = 0;
    if (r->flags & ~(uint32_t)MEMD_MODEL_I_KNOWN)
        return -EINVAL;
    int rc = memd_wire_get_str(p + 112, r->name, sizeof r->name);
    if (rc < 0)
        return rc;
    return memd_wire_get_str(p + 112 + sizeof r->name, r->strategy, sizeof r->strategy);
}

uint8_t *memd_wire_tensor_info_put(uint8_t *p, const memd_wire_tensor_info *r)
{
    p = memd_wire_put_u64(p, r->value);
    p = memd_wire_put_u64(p, r->size);
    *p++ = r->role;
    *p++ = 0;
    p = memd_wire_put_u16(p, 0);
    return memd_wire_put_u32(p, r->alias_of);
}

int memd_wire_tensor_info_get(const uint8_t *p, size_t len, memd_wire_tensor_info *r)
{
    if (len < MEMD_WIRE_TENSOR_INFO_SIZE)
        return -EBADMSG;
    r->value = memd_wire_u64(p);
    r->size = memd_wire_u64(p + 8);
    r->role = p[16];
    r->pad0 = 0;
    r->pad1 = 0;
    r->alias_of = memd_wire_u32(p + 20);
    return r->role >= MEMD_TENSOR_ROLE_COUNT ? -EINVAL : 0;
}

uint8_t *memd_wire_ref_put(uint8_t *p, const memd_wire_ref *r)
{
    p = memd_wire_put_u64(p, r->id);
    p = memd_wire_put_u32(p, r->flags);
    return memd_wire_put_u32(p, 0);
}

/* Flags are checked by the opcode's handler: each opcode knows its own. */
int memd_wire_ref_get(const uint8_t *p, size_t len, memd_wire_ref *r)
{
    if (len < MEMD_WIRE_REF_SIZE)
        return -EBADMSG;
    r->id = memd_wire_u64(p);
    r->flags = memd_wire_u32(p + 8);
    r->pad = 0;
    return 0;
}

uint8_t *memd_wire_instance_info_put(uint8_t *p, const memd_wire_instance_info *r)
{
    p = memd_wire_put_u64(p, r->instance_id);
    p = memd_wire_put_u64(p, r->model_id);
    p = memd_wire_put_u64(p, r->arena_handle);
    p = memd_wire_put_u64(p, r->arena_address);
    p = memd_wire_put_u64(p, r->arena_bytes);
    p = memd_wire_put_u32(p, r->ntensors);
    return memd_wire_put_u32(p, r->flags);
}

int memd_wire_instance_info_get(const uint8_t *p, size_t len, memd_wire_instance_info *r)
{
    if (len < MEMD_WIRE_INSTANCE_INFO_SIZE)
        return -EBADMSG;
    r->instance_id = memd_wire_u64(p);
    r->model_id = memd_wire_u64(p + 8);
    r->arena_handle = memd_wire_u64(p + 16);
    r->arena_address = memd_wire_u64(p + 24);
    r->arena_bytes = memd_wire_u64(p + 32);
    r->ntensors = memd_wire_u32(p + 40);
    r->flags = memd_wire_u32(p + 44);
    return (r->flags & ~(uint32_t)MEMD_INST_I_REUSED) ? -EINVAL : 0;
}

uint8_t *memd_wire_tensor_addr_put(uint8_t *p, const memd_wire_tensor_addr *r)
{
    p = memd_wire_put_u64(p, r->address);
    return memd_wire_put_u64(p, r->handle);
}

int memd_wire_tensor_addr_get(const uint8_t *p, size_t len, memd_wire_tensor_addr *r)
{
    if (len < MEMD_WIRE_TENSOR_ADDR_SIZE)
        return -EBADMSG;
    r->address = memd_wire_u64(p);
    r->handle = memd_wire_u64(p + 8);
    return 0;
}

uint8_t *memd_wire_plan_rec_put(uint8_t *p, const memd_wire_plan_rec *r)
{
    p = memd_wire_put_u64(p, r->plan_id);
    p = memd_wire_put_u64(p, r->arena);
    p = memd_wire_put_u64(p, r->lower_bound);
    p = memd_wire_put_u64(p, r->created_ns);
    p = memd_wire_put_u64(p, r->plan_us);
    p = memd_wire_put_u64(p, r->hits);
    p = memd_wire_put_u32(p, r->buffers);
    p = memd_wire_put_u32(p, r->flags);
    p = memd_wire_put_u32(p, r->models);
    p = memd_wire_put_u32(p, 0);
    return put_str(p, r->strategy, sizeof r->strategy);
}

int memd_wire_plan_rec_get(const uint8_t *p, size_t len, memd_wire_plan_rec *r)
{
    if (len < MEMD_WIRE_PLAN_REC_SIZE)
        return -EBADMSG;
    r->plan_id = memd_wire_u64(p);
    r->arena = memd_wire_u64(p + 8);
    r->lower_bound = memd_wire_u64(p + 16);
    r->created_ns = memd_wire_u64(p + 24);
    r->plan_us = memd_wire_u64(p + 32);
    r->hits = memd_wire_u64(p + 40);
    r->buffers = memd_wire_u32(p + 48);
    r->flags = memd_wire_u32(p + 52);
    r->models = memd_wire_u32(p + 56);
    r->pad = 0;
    if (r->flags & ~(uint32_t)MEMD_PLAN_I_KNOWN)
        return -EINVAL;
    return memd_wire_get_str(p + 64, r->strategy, sizeof r->strategy);
}

uint8_t *memd_wire_model_rec_put(uint8_t *p, const memd_wire_model_rec *r)
{
    p = memd_wire_put_u64(p, r->model_id);
    p = memd_wire_put_u64(p, r->plan_id);
    p = memd_wire_put_u64(p, r->code_handle);
    p = memd_wire_put_u64(p, r->const_handle);
    p = memd_wire_put_u64(p, r->code_bytes);
    p = memd_wire_put_u64(p, r->const_bytes);
    p = memd_wire_put_u64(p, r->arena);
    p = memd_wire_put_u64(p, r->created_ns);
    p = memd_wire_put_u32(p, r->device);
    p = memd_wire_put_u32(p, r->users);
    p = memd_wire_put_u32(p, r->ntensors);
    p = memd_wire_put_u32(p, r->instances);
    return put_str(p, r->name, sizeof r->name);
}

int memd_wire_model_rec_get(const uint8_t *p, size_t len, memd_wire_model_rec *r)
{
    if (len < MEMD_WIRE_MODEL_REC_SIZE)
        return -EBADMSG;
    r->model_id = memd_wire_u64(p);
    r->plan_id = memd_wire_u64(p + 8);
    r->code_handle = memd_wire_u64(p + 16);
    r->const_handle = memd_wire_u64(p + 24);
    r->code_bytes = memd_wire_u64(p + 32);
    r->const_bytes = memd_wire_u64(p + 40);
    r->arena = memd_wire_u64(p + 48);
    r->created_ns = memd_wire_u64(p + 56);
    r->device = memd_wire_u32(p + 64);
    r->users = memd_wire_u32(p + 68);
    r->ntensors = memd_wire_u32(p + 72);
    r->instances = memd_wire_u32(p + 76);
    return memd_wire_get_str(p + 80, r->name, sizeof r->name);
}

uint8_t *memd_wire_instance_rec_put(uint8_t *p, const memd_wire_instance_rec *r)
{
    p = memd_wire_put_u64(p, r->instance_id);
    p = memd_wire_put_u64(p, r->model_id);
    p = memd_wire_put_u64(p, r->arena_handle);
    p = memd_wire_put_u64(p, r->arena_address);
    p = memd_wire_put_u64(p, r->arena_bytes);
    p = memd_wire_put_u64(p, r->placeholder_bytes);
    p = memd_wire_put_u32(p, r->session_id);
    p = memd_wire_put_u32(p, r->pid);
    p = memd_wire_put_u32(p, r->placeholders);
    return memd_wire_put_u32(p, r->busy);
}

int memd_wire_instance_rec_get(const uint8_t *p, size_t len, memd_wire_instance_rec *r)
{
    if (len < MEMD_WIRE_INSTANCE_REC_SIZE)
        return -EBADMSG;
    r->instance_id = memd_wire_u64(p);
    r->model_id = memd_wire_u64(p + 8);
    r->arena_handle = memd_wire_u64(p + 16);
    r->arena_address = memd_wire_u64(p + 24);
    r->arena_bytes = memd_wire_u64(p + 32);
    r->placeholder_bytes = memd_wire_u64(p + 40);
    r->session_id = memd_wire_u32(p + 48);
    r->pid = memd_wire_u32(p + 52);
    r->placeholders = memd_wire_u32(p + 56);
    r->busy = memd_wire_u32(p + 60);
    return r->busy > 1 ? -EINVAL : 0;
}

/* memd wire codec: frame header, HELLO / welcome, error records (see wire.h). Field
 * order follows include/memd/protocol.h exactly. */
#include "wire.h"

#include <errno.h>
#include <string.h>

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

uint8_t *memd_wire_hello_put(uint8_t *p, const memd_wire_hello *r)
{
    p = memd_wire_put_u16(p, r->min_version);
    p = memd_wire_put_u16(p, r->max_version);
    p = memd_wire_put_u32(p, r->flags);
    p = memd_wire_put_str(p, r->client_name, sizeof r->client_name);
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
    p = memd_wire_put_str(p, r->server_version, sizeof r->server_version);
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

uint8_t *memd_wire_error_put(uint8_t *p, const memd_wire_error *r)
{
    p = memd_wire_put_u32(p, (uint32_t)r->status);
    p = memd_wire_put_u32(p, r->detail);
    p = memd_wire_put_str(p, r->message, sizeof r->message);
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

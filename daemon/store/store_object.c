/* memd daemon — the objects table's records (see store_object.h). */
#include "store_object.h"

#include <errno.h>
#include <string.h>

#include "store_codec.h"
#include "wire.h"

#define SUM_AT 16u

void memd_store_obj_key(uint8_t out[MEMD_STORE_OBJ_KEY], uint8_t kind, uint64_t id)
{
    out[0] = kind;
    memd_store_key_u64(out + 1, id);
}

size_t memd_store_obj_size(const memd_record *r)
{
    return MEMD_STORE_OBJ_HEAD + r->len;
}

void memd_store_obj_put(uint8_t *p, const memd_record *r)
{
    p[0] = MEMD_STORE_OBJ_FORMAT;
    p[1] = r->kind;
    p[2] = (uint8_t)r->version;
    p[3] = (uint8_t)(r->version >> 8);
    memd_wire_put_u32(p + 4, (uint32_t)r->len);
    memd_wire_put_u64(p + 8, r->id);
    memd_wire_put_u32(p + SUM_AT, 0);
    memd_wire_put_u32(p + 20, 0);
    if (r->len)
        memcpy(p + MEMD_STORE_OBJ_HEAD, r->data, r->len);
    memd_wire_put_u32(p + SUM_AT, memd_store_sum(p, MEMD_STORE_OBJ_HEAD + r->len, SUM_AT));
}

int memd_store_obj_get(const uint8_t *key, size_t key_len, const uint8_t *p, size_t len,
                       memd_record *r)
{
    memset(r, 0, sizeof *r);
    if (key_len != MEMD_STORE_OBJ_KEY)
        return -EBADMSG;
    /* The key's kind and id first, so that a damaged record can be named. */
    r->kind = key[0];
    r->id = memd_store_key_get_u64(key + 1);
    if (len < MEMD_STORE_OBJ_HEAD)
        return -EBADMSG;
    if (p[0] != MEMD_STORE_OBJ_FORMAT)
        return -EPROTONOSUPPORT;
    if (memd_wire_u32(p + 4) != len - MEMD_STORE_OBJ_HEAD ||
        memd_wire_u32(p + SUM_AT) != memd_store_sum(p, len, SUM_AT))
        return -EBADMSG;
    if (p[1] != r->kind || memd_wire_u64(p + 8) != r->id)
        return -EBADMSG;
    r->version = (uint16_t)(p[2] | p[3] << 8);
    r->len = len - MEMD_STORE_OBJ_HEAD;
    r->data = p + MEMD_STORE_OBJ_HEAD;
    if (r->kind == 0 || r->kind > MEMD_RECORD_KIND_MAX || memd_wire_u32(p + 20) != 0)
        return -EINVAL;
    return 0;
}

/* libmemclient: decoding of successful reply payloads into the caller's structs.
 * Lengths are checked exactly: a reply of the wrong size means client and daemon no
 * longer agree on the stream, and the connection is closed. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "memclient_internal.h"
#include "wire.h"

/* u32 count, u32 0, count x bank_addr filling at most cap of out (NULL: none); the count. */
static int bank_list(const uint8_t *p, size_t len, memclient_bank *out, size_t cap)
{
    uint32_t count;
    int r = memd_wire_count_get(p, len, MEMD_WIRE_BANK_ADDR_SIZE, UINT32_MAX, &count);
    if (r < 0)
        return r;
    if (count > INT_MAX)
        return -EBADMSG;
    p += MEMD_WIRE_COUNT_SIZE;
    for (uint32_t i = 0; out && i < count && i < cap; i++) {
        memd_wire_bank_addr w;
        memd_wire_bank_addr_get(p + (size_t)i * MEMD_WIRE_BANK_ADDR_SIZE,
                                MEMD_WIRE_BANK_ADDR_SIZE, &w);
        memclient_bank_from_wire(&out[i], &w);
    }
    return (int)count;
}

/* ALLOC_BATCH_BANKS: u32 count, u32 0, then per element a buffer and its bank list (u32
 * count, u32 0, count x bank_addr), each list into its request's bank_out. */
static int buffers_banks(memclient_slot *s, const uint8_t *p, size_t len)
{
    uint32_t count;
    if (len < MEMD_WIRE_COUNT_SIZE || (count = memd_wire_u32(p)) != s->n)
        return -EBADMSG;
    memclient_buffer *out = s->out;
    size_t off = MEMD_WIRE_COUNT_SIZE;
    for (uint32_t i = 0; i < count; i++) {
        memd_wire_buffer w;
        int r;
        if (len - off < MEMD_WIRE_BUFFER_SIZE + MEMD_WIRE_COUNT_SIZE ||
            (r = memd_wire_buffer_get(p + off, MEMD_WIRE_BUFFER_SIZE, &w)) < 0)
            return -EBADMSG;
        memclient_buffer_from_wire(&out[i], &w);
        off += MEMD_WIRE_BUFFER_SIZE;
        uint64_t nb = memd_wire_u32(p + off);
        uint64_t size = MEMD_WIRE_COUNT_SIZE + nb * MEMD_WIRE_BANK_ADDR_SIZE;
        if (len - off < size)
            return -EBADMSG;
        const memclient_alloc_req *q = s->reqs ? &s->reqs[i] : NULL;
        if ((r = bank_list(p + off, (size_t)size, q ? q->bank_out : NULL, q ? q->nbank_out : 0)) < 0)
            return r;
        off += (size_t)size;
    }
    return off == len ? 0 : -EBADMSG;
}

int memclient_decode(memclient *c, memclient_slot *s, const uint8_t *p, size_t len)
{
    (void)c;
    int r;
    switch ((memclient_out_kind)s->out_kind) {
    case MEMCLIENT_OUT_NONE:
        return len == 0 ? 0 : -EBADMSG;
    case MEMCLIENT_OUT_WELCOME:
        /* A memd from before session reclaim answers with the short welcome (no token). */
        if (len != MEMD_WIRE_WELCOME_SIZE && len != MEMD_WIRE_WELCOME_V1_SIZE)
            return -EBADMSG;
        /* The codec calls a version it does not know invalid; for the client that means
         * no version in common. */
        if (memd_wire_u16(p) < 1 || memd_wire_u16(p) > MEMD_PROTO_VERSION)
            return -EPROTONOSUPPORT;
        return memd_wire_welcome_get_any(p, len, s->out);
    case MEMCLIENT_OUT_BUFFER: {
        memd_wire_buffer w;
        if (len != MEMD_WIRE_BUFFER_SIZE)
            return -EBADMSG;
        if ((r = memd_wire_buffer_get(p, len, &w)) < 0)
            return r;
        memclient_buffer_from_wire(s->out, &w);
        return 0;
    }
    case MEMCLIENT_OUT_BUFFERS: {
        uint32_t count;
        if ((r = memd_wire_count_get(p, len, MEMD_WIRE_BUFFER_SIZE, UINT32_MAX, &count)) < 0)
            return r;
        if (count != s->n)
            return -EBADMSG;
        memclient_buffer *out = s->out;
        p += MEMD_WIRE_COUNT_SIZE;
        for (uint32_t i = 0; i < count; i++, p += MEMD_WIRE_BUFFER_SIZE) {
            memd_wire_buffer w;
            if ((r = memd_wire_buffer_get(p, MEMD_WIRE_BUFFER_SIZE, &w)) < 0)
                return r;
            memclient_buffer_from_wire(&out[i], &w);
        }
        return 0;
    }
    case MEMCLIENT_OUT_INFO: {
        memd_wire_alloc_info w;
        if (len != MEMD_WIRE_ALLOC_INFO_SIZE)
            return -EBADMSG;
        if ((r = memd_wire_alloc_info_get(p, len, &w)) < 0)
            return r;
        memclient_alloc_info_from_wire(s->out, &w);
        return 0;
    }
    case MEMCLIENT_OUT_BANKS: {
        uint32_t count;
        if ((r = memd_wire_count_get(p, len, 8, UINT32_MAX, &count)) < 0)
            return r;
        if (count > INT_MAX)
            return -EBADMSG;
        uint64_t *out = s->out;
        p += MEMD_WIRE_COUNT_SIZE;
        for (uint32_t i = 0; i < count && i < s->n; i++)
            out[i] = memd_wire_u64(p + 8 * (size_t)i);
        s->result = (int)count;
        return 0;
    }
    case MEMCLIENT_OUT_BUFFER_BANKS: {
        memd_wire_buffer w;
        const memclient_alloc_req *q = s->reqs;
        if (len < MEMD_WIRE_BUFFER_SIZE)
            return -EBADMSG;
        if ((r = memd_wire_buffer_get(p, len, &w)) < 0 ||
            (r = bank_list(p + MEMD_WIRE_BUFFER_SIZE, len - MEMD_WIRE_BUFFER_SIZE,
                           q ? q->bank_out : NULL, q ? q->nbank_out : 0)) < 0)
            return r;
        memclient_buffer_from_wire(s->out, &w);
        return 0;
    }
    case MEMCLIENT_OUT_BUFFERS_BANKS:
        return buffers_banks(s, p, len);
    case MEMCLIENT_OUT_BANK_INFO:
        if ((r = bank_list(p, len, s->out, s->n)) < 0)
            return r;
        s->result = r;
        return 0;
    case MEMCLIENT_OUT_SNAPSHOT:
        return memclient_snapshot_parse(p, len, s->out);
    case MEMCLIENT_OUT_RAW: {
        memclient_raw *raw = s->out;
        raw->data = malloc(len ? len : 1);
        if (!raw->data)
            return -ENOMEM;
        memcpy(raw->data, p, len);
        raw->len = len;
        return 0;
    }
    }
    return -EPROTO;
}

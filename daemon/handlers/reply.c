/* memd daemon — reply frames (see reply.h). */
#include "reply.h"

#include <errno.h>
#include <string.h>

#include <syslog.h>

#include "convert.h"
#include "event.h"
#include "state.h"
#include "wire.h"

static void put_hdr(uint8_t *p, uint16_t op, uint64_t id, uint32_t len, int32_t status)
{
    memd_wire_hdr h = {.magic = MEMD_PROTO_MAGIC, .version = MEMD_PROTO_VERSION,
                       .opcode = op, .id = id, .len = len, .status = status};
    memd_wire_hdr_put(p, &h);
}

uint8_t *memd_reply_begin(memd_buf *out, uint16_t op, uint64_t id, uint32_t len)
{
    uint8_t *p = memd_buf_append(out, MEMD_HDR_SIZE + (size_t)len);
    if (!p)
        return NULL;
    put_hdr(p, op, id, len, 0);
    return p + MEMD_HDR_SIZE;
}

int memd_reply_error(memd_buf *out, uint16_t op, uint64_t id, const memd_error *err,
                     bool appended)
{
    uint32_t len = appended ? MEMD_WIRE_ERROR_SIZE : MEMD_WIRE_ERROR_V1_SIZE;
    uint8_t *p = memd_buf_append(out, MEMD_HDR_SIZE + len);
    if (!p)
        return -ENOMEM;
    memd_wire_error w;
    memd_error_to_wire(err, &w);
    put_hdr(p, op, id, len, w.status);
    uint8_t full[MEMD_WIRE_ERROR_SIZE];
    memd_wire_error_put(full, &w);
    memcpy(p + MEMD_HDR_SIZE, full, len);
    return 0;
}

void memd_reply_patch_len(memd_buf *out, size_t hdr_off)
{
    memd_wire_put_u32(out->data + hdr_off + 16,
                      (uint32_t)(out->len - hdr_off - MEMD_HDR_SIZE));
}

int memd_reply_done(memd_state *st, const memd_wire_hdr *h, memd_buf *out,
                    const memd_error *err, int rc)
{
    if (rc < 0)
        return memd_reply_fail(st, h, out, err, false);
    return memd_reply_begin(out, h->opcode, h->id, 0) ? 0 : -ENOMEM;
}

int memd_reply_fail(memd_state *st, const memd_wire_hdr *h, memd_buf *out,
                    const memd_error *err, bool close_after)
{
    if (close_after) {
        st->ctr.protocol_errors++;
        memd_event(st, NULL, MEMD_EVENT_PROTOCOL_ERROR, LOG_WARNING, UINT32_MAX, 0,
                   "protocol error, closing the connection: %.*s",
                   MEMD_ERROR_REPLY_MSG - 1, err->msg);
    }
    if (memd_reply_error(out, h->opcode, h->id, err, st->cur && st->cur->pm_errors) < 0)
        return -ENOMEM;
    return close_after ? MEMD_CLOSE : 0;
}

int memd_reply_fail_said(memd_state *st, const memd_wire_hdr *h, memd_buf *out,
                         const memd_error *err, int rc)
{
    return err->code ? memd_reply_fail(st, h, out, err, false) : rc;
}

size_t memd_reply_backlog(const memd_state *st)
{
    return st->limits.max_reply_backlog ? (size_t)st->limits.max_reply_backlog : (4u << 20);
}

uint8_t *memd_dump_rec(memd_buf *out, uint32_t tag)
{
    uint8_t *p = memd_buf_append(out, MEMD_WIRE_TAG_SIZE + memd_wire_rec_size(tag));
    return p ? memd_wire_tag_put(p, tag) : NULL;
}

/* memd daemon — splitting a session's input into frames (see dispatch.h). */
#include <errno.h>
#include <stdint.h>

#include "dispatch.h"
#include "frames.h"
#include "errmsg.h"
#include "model.h"
#include "reply.h"
#include "store.h"
#include "wire.h"

/* A header that does not decode: nothing after it can be trusted, not even where the
 * next frame starts. Reply with request id 0 (protocol.h) and close. */
static int bad_header(memd_state *st, const memd_wire_hdr *h, int rc, uint32_t max_frame,
                      memd_buf *out)
{
    memd_wire_error err = {0};
    switch (rc) {
    case -EPROTO:
        memd_err_set(&err, rc, "bad frame magic 0x%08x (expected 0x%08x \"MEMD\")", h->magic,
                     MEMD_PROTO_MAGIC);
        break;
    case -EPROTONOSUPPORT:
        memd_err_set(&err, rc, "frame protocol version %u not supported (1..%u)", h->version,
                     MEMD_PROTO_VERSION);
        break;
    case -EMSGSIZE:
        memd_err_set(&err, rc, "frame payload of %u bytes over the limit of %u (max_frame)",
                     h->len, max_frame);
        break;
    default:
        memd_err_set(&err, rc, "malformed frame header (status %d in a request)", h->status);
        break;
    }
    memd_wire_hdr zero = {0};
    return memd_reply_fail(st, &zero, out, &err, true);
}

/* The state store could not record the round's changes (store.h): no reply from the
 * first frame that changed something on may claim success. Those replies are replaced by
 * -EIO errors and the connection is closed, which releases the session's memory: memd
 * never keeps a change it answered with an error (a pending planning job's frame gets
 * no reply: the session goes before it could). */
static int store_failed(const uint8_t *in, size_t len, bool last_pending,
                        memd_buf *out, size_t out_mark, const char *why)
{
    memd_wire_error err = {0};
    memd_err_set(&err, -EIO, "not recorded, session closed, its allocations released: %s",
                 why);
    out->len = out_mark;
    for (size_t off = 0; len - off >= MEMD_HDR_SIZE;) {
        memd_wire_hdr h;
        if (memd_wire_hdr_get(in + off, MEMD_HDR_SIZE, UINT32_MAX, &h) < 0 ||
            len - off - MEMD_HDR_SIZE < h.len)
            break;
        off += MEMD_HDR_SIZE + h.len;
        if (last_pending && off >= len)
            break;
        if (memd_reply_error(out, h.opcode, h.id, &err) < 0)
            return -ENOMEM;
    }
    return MEMD_CLOSE;
}

int memd_frames_process(memd_state *st, memd_session *s, const uint8_t *in, size_t len,
                        memd_buf *out, size_t out_high, size_t *consumed)
{
    size_t off = 0, first = SIZE_MAX, out_mark = 0;
    uint64_t mark = memd_store_round_begin(st);
    int rc = 0;
    /* A session waiting for a planning job's reply sends nothing more until it comes. */
    while (len - off >= MEMD_HDR_SIZE && memd_buf_pending(out) <= out_high &&
           !memd_models_busy(st, s)) {
        memd_wire_hdr h;
        rc = memd_wire_hdr_get(in + off, MEMD_HDR_SIZE, st->limits.max_frame, &h);
        if (rc < 0) {
            rc = bad_header(st, &h, rc, st->limits.max_frame, out);
            off = len; /* nothing after a bad header is read */
            break;
        }
        if (len - off - MEMD_HDR_SIZE < h.len)
            break; /* wait for the rest of the payload */
        size_t out_before = out->len;
        rc = memd_dispatch(st, s, &h, in + off + MEMD_HDR_SIZE, out);
        if (first == SIZE_MAX && memd_store_round_changed(st, mark)) {
            first = off;
            out_mark = out_before;
        }
        off += MEMD_HDR_SIZE + h.len;
        if (rc != 0)
            break;
    }
    /* Durable before any reply of the round can be sent (conn.c writes after this). */
    char why[256];
    if (memd_store_round_end(st, mark, why, sizeof why) < 0 && first != SIZE_MAX)
        rc = store_failed(in + first, off - first, rc == MEMD_PENDING, out, out_mark, why);
    *consumed = off;
    return rc;
}

void memd_frames_truncated(memd_state *st, const uint8_t *in, size_t len, memd_buf *out)
{
    memd_wire_hdr h = {0};
    memd_wire_error err = {0};
    if (len >= MEMD_HDR_SIZE) {
        (void)memd_wire_hdr_get(in, len, UINT32_MAX, &h); /* only for id and opcode */
        memd_err_set(&err, -EBADMSG,
                     "connection closed after %zu of %u payload bytes of a %s frame",
                     len - MEMD_HDR_SIZE, h.len, memd_wire_opcode_name(h.opcode));
    } else {
        memd_err_set(&err, -EBADMSG, "connection closed after %zu of %u header bytes", len,
                     MEMD_HDR_SIZE);
    }
    (void)memd_reply_fail(st, &h, out, &err, true);
}

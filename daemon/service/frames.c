/* memd daemon — splitting a session's input into frames (see frames.h). */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "dispatch.h"
#include "frames.h"
#include "error.h"
#include "model.h"
#include "reply.h"
#include "store.h"
#include "wire.h"

/* A header that does not decode: nothing after it can be trusted, not even where the
 * next frame starts. Reply with request id 0 (protocol.h) and close. */
static int bad_header(memd_state *st, const memd_wire_hdr *h, int rc, uint32_t max_frame,
                      memd_buf *out)
{
    memd_error err;
    memd_error_reset(&err);
    switch (rc) {
    case -EPROTO:
        memd_error_set(&err, rc, "bad frame magic 0x%08x (expected 0x%08x \"MEMD\")", h->magic,
                     MEMD_PROTO_MAGIC);
        break;
    case -EPROTONOSUPPORT:
        memd_error_set(&err, rc, "frame protocol version %u not supported (1..%u)", h->version,
                     MEMD_PROTO_VERSION);
        break;
    case -EMSGSIZE:
        memd_error_set(&err, rc, "frame payload of %u bytes over the limit of %u (max_frame)",
                     h->len, max_frame);
        break;
    default:
        memd_error_set(&err, rc, "malformed frame header (status %d in a request)", h->status);
        break;
    }
    memd_wire_hdr zero = {0};
    return memd_reply_fail(st, &zero, out, &err, true);
}

int memd_frames_dispatch(memd_state *st, memd_session *s, const uint8_t *in, size_t len,
                         memd_buf *out, size_t out_high, size_t *consumed,
                         size_t *changed_at)
{
    size_t off = 0;
    st->cur = s; /* the session events without one are about */
    uint64_t mark = memd_store_round_begin(st);
    int rc = 0;
    /* A session waiting for a planning job's reply, or for an event (EVENTS with
     * MEMD_EVENTS_F_WAIT), sends nothing more until it comes. */
    while (len - off >= MEMD_HDR_SIZE && memd_buf_pending(out) <= out_high &&
           !memd_models_busy(st, s) && !s->ewait.parked) {
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
        /* With unsent replies (out_high is less than the backlog when some are being
         * written), the next one may take only what is left of the backlog; with none,
         * the whole of it, so a deferred frame always gets its turn. */
        size_t pending = memd_buf_pending(out), backlog = memd_reply_backlog(st);
        st->reply_room = out_high == SIZE_MAX                   ? SIZE_MAX
                         : pending == 0 && out_high >= backlog ? backlog
                         : out_high > pending                  ? out_high - pending
                                                               : 0;
        if (s->nnotes)
            (void)memd_reply_notices(s, out); /* what it lost since its last request */
        rc = memd_dispatch(st, s, &h, in + off + MEMD_HDR_SIZE, out);
        if (rc == MEMD_DEFER) {
            st->ctr.requests--; /* counted when it is answered */
            s->requests--;
            break;
        }
        if (*changed_at == SIZE_MAX && memd_store_round_changed(st, mark))
            *changed_at = out_before;
        off += MEMD_HDR_SIZE + h.len;
        if (rc != 0)
            break;
    }
    memd_store_round_end(st);
    st->cur = NULL;
    st->reply_room = SIZE_MAX;
    *consumed = off;
    return rc;
}

/* No reply from the first one that claimed a change on may stand: memd never keeps a
 * change it answered with an error, and the session goes. The error replies are built
 * after the old ones (their headers say which requests they were for), then moved in
 * their place. A planning job's frame still pending has no reply yet and gets none: the
 * session goes before it could. */
int memd_frames_store_failed(memd_buf *out, size_t from, const char *why)
{
    memd_error err;
    memd_error_reset(&err);
    memd_error_set(&err, -EIO, "not recorded, session closed, its allocations released: %s",
                 why);
    size_t end = out->len;
    for (size_t off = from; end - off >= MEMD_HDR_SIZE;) {
        memd_wire_hdr h;
        if (memd_wire_hdr_get(out->data + off, MEMD_HDR_SIZE, UINT32_MAX, &h) < 0 ||
            end - off - MEMD_HDR_SIZE < h.len)
            break;
        off += MEMD_HDR_SIZE + h.len;
        if (h.opcode == MEMD_OP_REVOKED && h.id == 0)
            continue; /* a notice, no reply: the session goes anyway */
        if (memd_reply_error(out, h.opcode, h.id, &err, false) < 0)
            return -ENOMEM;
    }
    size_t n = out->len - end;
    memmove(out->data + from, out->data + end, n);
    out->len = from + n;
    return MEMD_CLOSE;
}

int memd_frames_process(memd_state *st, memd_session *s, const uint8_t *in, size_t len,
                        memd_buf *out, size_t out_high, size_t *consumed)
{
    size_t changed_at = SIZE_MAX;
    int rc = memd_frames_dispatch(st, s, in, len, out, out_high, consumed, &changed_at);
    memd_error why;
    if (memd_store_commit(st, &why) < 0 && changed_at != SIZE_MAX && rc >= 0)
        rc = memd_frames_store_failed(out, changed_at, why.msg);
    return rc;
}

void memd_frames_truncated(memd_state *st, const memd_session *s, const uint8_t *in,
                           size_t len, memd_buf *out)
{
    memd_wire_hdr h = {0};
    memd_error err;
    memd_error_reset(&err);
    if (len >= MEMD_HDR_SIZE) {
        (void)memd_wire_hdr_get(in, len, UINT32_MAX, &h); /* only for id and opcode */
        memd_error_set(&err, -EBADMSG,
                     "connection closed after %zu of %u payload bytes of a %s frame",
                     len - MEMD_HDR_SIZE, h.len, memd_wire_opcode_name(h.opcode));
    } else {
        memd_error_set(&err, -EBADMSG, "connection closed after %zu of %u header bytes", len,
                     MEMD_HDR_SIZE);
    }
    st->cur = s;
    (void)memd_reply_fail(st, &h, out, &err, true);
    st->cur = NULL;
}

/* memd daemon — EVENTS: a page of the event log (core/event.h) for memctl events. */
#include <errno.h>

#include "clock.h"
#include "dispatch.h"
#include "event.h"
#include "malformed.h"
#include "reply.h"
#include "wire.h"

/* The most events one reply carries: well under the client's reply limit. */
#define EVENTS_PAGE 1024u

typedef struct page {
    memd_buf *out;
    uint32_t count;
} page;

static int put_event(void *ctx, const memd_event_rec *ev)
{
    page *pg = ctx;
    uint8_t *p = memd_buf_append(pg->out, MEMD_WIRE_EVENT_SIZE);
    if (!p)
        return -ENOMEM;
    memd_wire_event w;
    memd_event_to_wire(ev, &w);
    memd_wire_event_put(p, &w);
    pg->count++;
    return 0;
}

/* One page of events >= since for s as a reply to request id; the next sequence number
 * to ask for in *next. The reply is taken back (nothing written) when it would carry no
 * event and nothing lost and keep_empty is false. */
static int answer(memd_state *st, memd_session *s, uint16_t opcode, uint64_t id,
                  uint64_t since, uint32_t max, bool keep_empty, memd_buf *out, uint64_t *next,
                  bool *written)
{
    size_t hdr_off = out->len;
    uint8_t *info = memd_reply_begin(out, opcode, id, MEMD_WIRE_EVENTS_INFO_SIZE);
    if (!info)
        return -ENOMEM;
    size_t info_off = (size_t)(info - out->data);
    page pg = {.out = out};
    memd_wire_events_info ei = {0};
    ei.next_seq = memd_events_read(st, s, since, max, &ei.lost, put_event, &pg);
    ei.count = pg.count;
    *next = ei.next_seq;
    *written = keep_empty || ei.count || ei.lost;
    if (!*written) {
        out->len = hdr_off;
        return 0;
    }
    memd_wire_events_info_put(out->data + info_off, &ei); /* out->data may have moved */
    memd_reply_patch_len(out, hdr_off);
    return 0;
}

int memd_op_events(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                   memd_buf *out)
{
    memd_wire_events_req req;
    int rc = memd_wire_events_req_get(p, h->len, &req);
    if (rc < 0)
        return memd_malformed(st, h, out, rc);
    uint32_t max = req.max == 0 || req.max > EVENTS_PAGE ? EVENTS_PAGE : req.max;
    bool wait = req.flags & MEMD_EVENTS_F_WAIT, written;
    uint64_t next;
    rc = answer(st, s, h->opcode, h->id, req.since, max, !wait, out, &next, &written);
    if (rc < 0 || written)
        return rc;
    /* Nothing yet: the service answers when an event comes or the wait runs out. */
    s->ewait.parked = true;
    s->ewait.id = h->id;
    s->ewait.since = next;
    s->ewait.max = max;
    s->ewait.until_ms = memd_mono_ms() + MEMD_EVENTS_WAIT_MS;
    st->events_parked++;
    return 0;
}

bool memd_events_answer_parked(memd_state *st, memd_session *s, uint64_t now_ms, memd_buf *out)
{
    if (!s->ewait.parked)
        return false;
    bool written;
    uint64_t next;
    bool late = now_ms >= s->ewait.until_ms;
    if (answer(st, s, MEMD_OP_EVENTS, s->ewait.id, s->ewait.since, s->ewait.max, late, out,
               &next, &written) < 0)
        return false; /* out of memory: the next try or the deadline answers */
    if (!written) {
        s->ewait.since = next; /* the events since were not this session's */
        return false;
    }
    s->ewait.parked = false;
    st->events_parked--;
    return true;
}

/* memd daemon — EVENTS: a page of the event log (core/event.h) for memctl events. */
#include <errno.h>

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

static int put_event(void *ctx, const memd_wire_event *ev)
{
    page *pg = ctx;
    uint8_t *p = memd_buf_append(pg->out, MEMD_WIRE_EVENT_SIZE);
    if (!p)
        return -ENOMEM;
    memd_wire_event_put(p, ev);
    pg->count++;
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
    size_t hdr_off = out->len;
    uint8_t *info = memd_reply_begin(out, h->opcode, h->id, MEMD_WIRE_EVENTS_INFO_SIZE);
    if (!info)
        return -ENOMEM;
    size_t info_off = (size_t)(info - out->data);
    page pg = {.out = out};
    memd_wire_events_info ei = {0};
    ei.next_seq = memd_events_read(st, s, req.since, max, &ei.lost, put_event, &pg);
    ei.count = pg.count;
    memd_wire_events_info_put(out->data + info_off, &ei); /* out->data may have moved */
    memd_reply_patch_len(out, hdr_off);
    return 0;
}

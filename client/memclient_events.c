/* libmemclient: the daemon's event log (EVENTS). */
#include <errno.h>
#include <stdlib.h>

#include "memclient_internal.h"
#include "wire.h"

static int bad_reply(memclient_raw *raw)
{
    free(raw->data);
    return memclient_fail(-EBADMSG, "malformed EVENTS reply");
}

static int events(memclient *c, uint64_t since, uint32_t max, uint32_t flags,
                  memclient_events_page *out)
{
    if (!out)
        return memclient_fail(-EINVAL, "memclient_events: out is NULL");
    *out = (memclient_events_page){0};
    int r, err = 0;
    uint64_t seq;
    memclient_raw raw = {0};
    if ((r = memclient_lock(c)) < 0)
        return r;
    uint8_t *p = memclient_begin(c, MEMD_OP_EVENTS, MEMD_WIRE_EVENTS_REQ_SIZE, MEMCLIENT_OUT_RAW,
                                 &raw, 1, true, &seq, &err);
    if (!p) {
        memclient_unlock(c);
        return memclient_fail(err, "EVENTS request: %s", memclient_strerror(err));
    }
    memd_wire_events_req q = {.since = since, .max = max, .flags = flags};
    memd_wire_events_req_put(p, &q);
    if (flags & MEMD_EVENTS_F_WAIT)
        memclient_slot_at(c, seq)->hold_ms = MEMD_EVENTS_WAIT_MS;
    r = memclient_wait(c, seq);
    memclient_slot *s = memclient_slot_at(c, seq);
    if (r < 0)
        memclient_fail_with(&s->err);
    memclient_consume(c, seq);
    memclient_unlock(c);
    if (r < 0)
        return r;
    memd_wire_events_info info;
    if (memd_wire_events_info_get(raw.data, raw.len, &info) < 0 ||
        raw.len - MEMD_WIRE_EVENTS_INFO_SIZE != (size_t)info.count * MEMD_WIRE_EVENT_SIZE)
        return bad_reply(&raw);
    out->events = calloc(info.count ? info.count : 1, sizeof *out->events);
    if (!out->events) {
        free(raw.data);
        return memclient_fail(-ENOMEM, "out of memory");
    }
    const uint8_t *e = raw.data + MEMD_WIRE_EVENTS_INFO_SIZE;
    for (uint32_t i = 0; i < info.count; i++, e += MEMD_WIRE_EVENT_SIZE) {
        memd_wire_event w;
        if (memd_wire_event_get(e, MEMD_WIRE_EVENT_SIZE, &w) < 0) {
            memclient_events_page_free(out);
            return bad_reply(&raw);
        }
        memclient_event_from_wire(&out->events[i], &w);
    }
    free(raw.data);
    memclient_events_page_from_wire(out, &info);
    return 0;
}

int memclient_events(memclient *c, uint64_t since, uint32_t max, memclient_events_page *out)
{
    return events(c, since, max, 0, out);
}

int memclient_events_wait(memclient *c, uint64_t since, uint32_t max, memclient_events_page *out)
{
    return events(c, since, max, MEMD_EVENTS_F_WAIT, out);
}

void memclient_events_page_free(memclient_events_page *p)
{
    if (!p)
        return;
    free(p->events);
    *p = (memclient_events_page){0};
}

const char *memclient_event_type_name(memd_event_type t)
{
    static const char *const names[MEMD_EVENT_TYPE_COUNT] = {
        [MEMD_EVENT_DAEMON] = "daemon",
        [MEMD_EVENT_SESSION_OPEN] = "session_open",
        [MEMD_EVENT_SESSION_CLOSE] = "session_close",
        [MEMD_EVENT_ALLOC_FAIL] = "alloc_fail",
        [MEMD_EVENT_QUOTA] = "quota",
        [MEMD_EVENT_RECLAIM] = "reclaim",
        [MEMD_EVENT_ORPHAN_RELEASE] = "orphan_release",
        [MEMD_EVENT_MODEL_LOAD] = "model_load",
        [MEMD_EVENT_PROTOCOL_ERROR] = "protocol_error",
    };
    return (unsigned)t < MEMD_EVENT_TYPE_COUNT && names[t] ? names[t] : "?";
}

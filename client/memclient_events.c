/* libmemclient: the daemon's event log (EVENTS) and flight recorder (HISTORY). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "memclient_internal.h"
#include "wire.h"

int memclient_bad_reply(memclient_raw *raw, const char *op)
{
    free(raw->data);
    return memclient_fail(-EBADMSG, "malformed %s reply", op);
}

uint8_t *memclient_begin_raw(memclient *c, uint16_t op, uint32_t len, const char *what,
                             memclient_raw *raw, uint64_t *seq, int *r)
{
    int err = 0;
    *raw = (memclient_raw){0};
    if ((*r = memclient_lock(c)) < 0)
        return NULL;
    uint8_t *q = memclient_begin(c, op, len, MEMCLIENT_OUT_RAW, raw, 1, true, seq, &err);
    if (!q) {
        memclient_unlock(c);
        *r = memclient_fail(err, "%s request: %s", what, memclient_strerror(err));
    }
    return q;
}

int memclient_raw_call(memclient *c, uint16_t op, const uint8_t *p, uint32_t len,
                       const char *what, uint32_t hold_ms, memclient_raw *raw)
{
    int r;
    uint64_t seq;
    uint8_t *q = memclient_begin_raw(c, op, len, what, raw, &seq, &r);
    if (!q)
        return r;
    memcpy(q, p, len);
    memclient_slot_at(c, seq)->hold_ms = hold_ms;
    r = memclient_wait(c, seq);
    memclient_slot *s = memclient_slot_at(c, seq);
    if (r < 0)
        memclient_fail_with(&s->err);
    memclient_consume(c, seq);
    memclient_unlock(c);
    return r;
}

static int events(memclient *c, uint64_t since, uint32_t max, uint32_t flags,
                  memclient_events_page *out)
{
    if (!out)
        return memclient_fail(-EINVAL, "memclient_events: out is NULL");
    *out = (memclient_events_page){0};
    uint8_t p[MEMD_WIRE_EVENTS_REQ_SIZE];
    memd_wire_events_req q = {.since = since, .max = max, .flags = flags};
    memd_wire_events_req_put(p, &q);
    memclient_raw raw;
    int r = memclient_raw_call(c, MEMD_OP_EVENTS, p, sizeof p, "EVENTS",
                     flags & MEMD_EVENTS_F_WAIT ? MEMD_EVENTS_WAIT_MS : 0, &raw);
    if (r < 0)
        return r;
    memd_wire_events_info info;
    if (memd_wire_events_info_get(raw.data, raw.len, &info) < 0 ||
        raw.len - MEMD_WIRE_EVENTS_INFO_SIZE != (size_t)info.count * MEMD_WIRE_EVENT_SIZE)
        return memclient_bad_reply(&raw, "EVENTS");
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
            return memclient_bad_reply(&raw, "EVENTS");
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

int memclient_history(memclient *c, uint64_t since, uint32_t max,
                      const memclient_history_filter *f, memclient_history_page *out)
{
    if (!out)
        return memclient_fail(-EINVAL, "memclient_history: out is NULL");
    *out = (memclient_history_page){0};
    memd_wire_history_req q = {.since = since, .max = max, .device = UINT32_MAX};
    if (f) {
        q.since_ns = f->since_ns;
        q.device = f->device;
        q.pid = f->pid;
        if (f->client && strlen(f->client) >= sizeof q.client)
            return memclient_fail(-EINVAL, "a client name has at most %zu bytes",
                                  sizeof q.client - 1);
        if (f->client)
            memcpy(q.client, f->client, strlen(f->client));
    }
    /* Every record type from a daemon that has them; a daemon from before takes only the
     * 64-byte request and sends the shorter records. */
    bool all = c && (c->welcome_flags & MEMD_WELCOME_F_HISTORY_2);
    q.flags = all ? MEMD_HISTORY_F_ALL : 0;
    size_t rec = all ? MEMD_WIRE_HIST_EVENT_SIZE : MEMD_WIRE_HIST_EVENT_V1_SIZE;
    uint8_t p[MEMD_WIRE_HISTORY_REQ_SIZE];
    memd_wire_history_req_put(p, &q);
    memclient_raw raw;
    int r = memclient_raw_call(c, MEMD_OP_HISTORY, p,
                               all ? sizeof p : MEMD_WIRE_HISTORY_REQ_V1_SIZE, "HISTORY", 0, &raw);
    if (r < 0)
        return r;
    memd_wire_history_info info;
    if (memd_wire_history_info_get(raw.data, raw.len, &info) < 0 ||
        raw.len - MEMD_WIRE_HISTORY_INFO_SIZE != (size_t)info.count * rec)
        return memclient_bad_reply(&raw, "HISTORY");
    out->events = calloc(info.count ? info.count : 1, sizeof *out->events);
    if (!out->events) {
        free(raw.data);
        return memclient_fail(-ENOMEM, "out of memory");
    }
    const uint8_t *e = raw.data + MEMD_WIRE_HISTORY_INFO_SIZE;
    for (uint32_t i = 0; i < info.count; i++, e += rec) {
        memd_wire_hist_event w;
        if (memd_wire_hist_event_get(e, rec, &w) < 0) {
            memclient_history_page_free(out);
            return memclient_bad_reply(&raw, "HISTORY");
        }
        memclient_hist_event_from_wire(&out->events[i], &w);
    }
    free(raw.data);
    memclient_history_page_from_wire(out, &info);
    return 0;
}

void memclient_history_page_free(memclient_history_page *p)
{
    if (!p)
        return;
    free(p->events);
    *p = (memclient_history_page){0};
}

const char *memclient_hist_type_name(unsigned type)
{
    static const char *const names[MEMD_HIST_TYPE_COUNT] = {
        [MEMD_HIST_ALLOC] = "alloc",
        [MEMD_HIST_FREE] = "free",
        [MEMD_HIST_FAIL] = "fail",
        [MEMD_HIST_RELEASE] = "release",
        [MEMD_HIST_REVOKE] = "revoke",
        [MEMD_HIST_POOL_REPORT] = "pool_report",
        [MEMD_HIST_MODEL_LOAD] = "model_load",
        [MEMD_HIST_MODEL_UNLOAD] = "model_unload",
        [MEMD_HIST_INSTANCE_CREATE] = "instance_create",
        [MEMD_HIST_INSTANCE_RELEASE] = "instance_release",
        [MEMD_HIST_SUBDEV_DEFINE] = "subdev_define",
        [MEMD_HIST_SUBDEV_BIND] = "subdev_bind",
    };
    return type < MEMD_HIST_TYPE_COUNT && names[type] ? names[type] : "?";
}

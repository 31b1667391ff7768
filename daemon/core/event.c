/* memd daemon — the event log (see event.h). */
#include "event.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "log.h"

struct memd_events {
    memd_event_rec *ring;     /* MEMD_EVENT_RING slots; seq n lives at (n - 1) % size */
    uint64_t next_seq;         /* the next event's number; the first is 1 */
    uint64_t echo_second;      /* rate limit of the log echo: the current second, */
    uint32_t echo_count;       /* lines written in it, */
    uint64_t echo_dropped;     /* and lines left out since the last one written */
};

uint64_t memd_alloc_device_bytes(const memd_state *st, const memd_alloc *a)
{
    /* A bank-set buffer reserves its set's banks only; lockstep, every bank of the group. */
    uint32_t banks = a->pl.mode != MEMD_BANKS_ALL ? memd_alloc_nset(a)
                                                  : st->devs[a->dev].spec->groups[a->pl.kind].banks;
    return a->pl.size_per_bank * banks;
}

static memd_events *ring_of(memd_state *st)
{
    if (st->events)
        return st->events;
    memd_events *e = calloc(1, sizeof *e);
    if (e && !(e->ring = calloc(MEMD_EVENT_RING, sizeof *e->ring))) {
        free(e);
        e = NULL;
    }
    if (e)
        e->next_seq = 1;
    return st->events = e;
}

/* One second's worth of lines, then silence, then one line saying how many were left
 * out; the ring has them all. */
static void echo(memd_events *e, int prio, const char *msg)
{
    if (!memd_log_enabled(prio))
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    uint64_t sec = (uint64_t)ts.tv_sec;
    if (sec != e->echo_second) {
        e->echo_second = sec;
        e->echo_count = 0;
        if (e->echo_dropped) {
            memd_log(LOG_WARNING, "%llu events not logged (over %u lines a second); "
                                  "memctl events lists them",
                     (unsigned long long)e->echo_dropped, MEMD_EVENT_ECHO_MAX);
            e->echo_dropped = 0;
        }
    }
    if (e->echo_count >= MEMD_EVENT_ECHO_MAX) {
        e->echo_dropped++;
        return;
    }
    e->echo_count++;
    memd_log(prio, "%s", msg);
}

void memd_event(memd_state *st, const memd_session *s, memd_event_type type, int prio,
                uint32_t device, uint64_t bytes, const char *fmt, ...)
{
    memd_events *e = ring_of(st);
    memd_event_rec tmp, *ev = e ? &e->ring[(e->next_seq - 1) % MEMD_EVENT_RING] : &tmp;
    if (!s)
        s = st->cur;
    memset(ev, 0, sizeof *ev);
    ev->seq = e ? e->next_seq++ : 0;
    ev->time_ns = memd_now_ns(); /* not the request's cached time: many events come between requests */
    ev->type = (uint32_t)type;
    ev->priority = (uint32_t)prio;
    ev->device = device;
    ev->bytes = bytes;
    if (s) {
        ev->pid = s->pid;
        ev->uid = s->uid;
        ev->session_id = s->id;
        memcpy(ev->comm, s->comm, sizeof ev->comm);
        ev->comm[sizeof ev->comm - 1] = '\0';
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ev->message, sizeof ev->message, fmt, ap);
    va_end(ap);
    if (e)
        echo(e, prio, ev->message);
    else
        memd_log(prio, "%s", ev->message); /* no memory for the ring: the log still has it */
}

uint64_t memd_events_read(const memd_state *st, const memd_session *s, uint64_t since,
                          uint32_t max, uint64_t *lost,
                          int (*fn)(void *ctx, const memd_event_rec *ev), void *ctx)
{
    const memd_events *e = st->events;
    *lost = 0;
    if (!e)
        return since > 1 ? since : 1;
    uint64_t oldest = e->next_seq > MEMD_EVENT_RING ? e->next_seq - MEMD_EVENT_RING : 1;
    if (since < 1)
        since = 1;
    if (since > e->next_seq)
        since = oldest; /* a number from a previous daemon: all of this one's */
    if (since < oldest) {
        *lost = oldest - since;
        since = oldest;
    }
    uint64_t seq = since;
    for (uint32_t n = 0; seq < e->next_seq && (max == 0 || n < max); seq++) {
        const memd_event_rec *ev = &e->ring[(seq - 1) % MEMD_EVENT_RING];
        if (!s->admin && (ev->session_id == 0 || ev->uid != s->uid))
            continue;
        if (fn(ctx, ev) < 0)
            break;
        n++;
    }
    return seq;
}

uint64_t memd_events_next_seq(const memd_state *st)
{
    return st->events ? st->events->next_seq : 1;
}

void memd_events_free(memd_state *st)
{
    if (!st->events)
        return;
    free(st->events->ring);
    free(st->events);
    st->events = NULL;
}

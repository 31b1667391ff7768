/* memd daemon — the event log (see event.h). */
#include "event.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "log.h"

#define UID_SLOTS 64u /* uids with a budget of their own this second; more share one */

/* Events in seq order; the k-th ever put is at slot[k % size]. */
typedef struct ring {
    memd_event_rec *slot;
    uint32_t size;
    uint64_t count;
} ring;

/* A rate budget: n things in the current second, dropped ones since it was said. */
typedef struct budget {
    uint64_t second;
    uint32_t n;
    uint64_t dropped;
} budget;

/* One uid's budgets; uid UINT32_MAX: the uids without a slot of their own. */
typedef struct uid_budget {
    uint32_t uid;
    uint32_t last_type;     /* of the last event left out */
    budget events, lines;
} uid_budget;

struct memd_events {
    ring clients, ops;
    uint64_t next_seq;      /* the next event's number; the first is 1 */
    budget echo, ops_echo;  /* log lines of client events, of the daemon's own */
    uid_budget uids[UID_SLOTS + 1];
    uint32_t nuids;
};

static uint64_t now_second(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec;
}

/* Takes one from b if it has any left this second; counts a drop if not. */
static bool take(budget *b, uint64_t sec, uint32_t max)
{
    if (b->second != sec) {
        b->second = sec;
        b->n = 0;
    }
    if (b->n >= max) {
        b->dropped++;
        return false;
    }
    b->n++;
    return true;
}

uint64_t memd_alloc_sized_bytes(const memd_alloc *a)
{
    memd_placement p;
    memd_alloc_placement(a, &p);
    return memd_placement_bytes(&p);
}

static memd_events *ring_of(memd_state *st)
{
    if (st->events)
        return st->events;
    memd_events *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->clients = (ring){.slot = calloc(MEMD_EVENT_RING, sizeof(memd_event_rec)),
                        .size = MEMD_EVENT_RING};
    e->ops = (ring){.slot = calloc(MEMD_EVENT_OPS_RING, sizeof(memd_event_rec)),
                    .size = MEMD_EVENT_OPS_RING};
    if (!e->clients.slot || !e->ops.slot) {
        free(e->clients.slot);
        free(e->ops.slot);
        free(e);
        return NULL;
    }
    e->next_seq = 1;
    return st->events = e;
}

/* The next slot of r, cleared, numbered. */
static memd_event_rec *put(memd_events *e, ring *r)
{
    memd_event_rec *ev = &r->slot[r->count++ % r->size];
    memset(ev, 0, sizeof *ev);
    ev->seq = e->next_seq++;
    ev->time_ns = memd_now_ns(); /* not the request's cached time: many events come between requests */
    return ev;
}

/* One line, if the log level and its budget let it; the first line of a second says
 * how many the last ones left out. */
static void echo(budget *b, uint32_t max, int prio, const char *msg)
{
    if (!memd_log_enabled(prio))
        return;
    uint64_t sec = now_second(), dropped = b->dropped;
    if (!take(b, sec, max))
        return;
    if (dropped && b->n == 1) {
        memd_log(LOG_WARNING, "%llu events not logged (over %u lines a second); "
                              "memctl events lists them",
                 (unsigned long long)dropped, max);
        b->dropped = 0;
    }
    memd_log(prio, "%s", msg);
}

/* uid's budgets for this second. One whose last second left events out says so first,
 * in an event of its own (outside the budget: one a second at most). */
static uid_budget *uid_of(memd_events *e, uint32_t uid, uint64_t sec)
{
    uid_budget *u = NULL, *stale = NULL;
    for (uint32_t i = 0; i < e->nuids && !u; i++) {
        if (e->uids[i].uid == uid)
            u = &e->uids[i];
        else if (!stale && e->uids[i].events.second != sec && !e->uids[i].events.dropped)
            stale = &e->uids[i];
    }
    if (!u && e->nuids < UID_SLOTS)
        u = &e->uids[e->nuids++];
    else if (!u)
        u = stale ? stale : &e->uids[UID_SLOTS]; /* the rest share the last */
    if (u->uid != uid && u != &e->uids[UID_SLOTS])
        *u = (uid_budget){.uid = uid};
    else if (u == &e->uids[UID_SLOTS])
        u->uid = UINT32_MAX;
    if (u->events.second != sec && u->events.dropped) {
        memd_event_rec *ev = put(e, &e->clients);
        ev->type = u->last_type;
        ev->priority = LOG_WARNING;
        ev->uid = u->uid;
        ev->device = UINT32_MAX;
        snprintf(ev->message, sizeof ev->message,
                 "%llu events of uid %u left out of the event log (over events_per_uid a "
                 "second)", (unsigned long long)u->events.dropped, u->uid);
        u->events.dropped = 0;
        echo(&e->echo, MEMD_EVENT_ECHO_MAX, LOG_WARNING, ev->message);
    }
    return u;
}

void memd_event(memd_state *st, const memd_session *s, memd_event_type type, int prio,
                uint32_t device, uint64_t bytes, const char *fmt, ...)
{
    memd_events *e = ring_of(st);
    if (!s)
        s = st->cur;
    bool ops = type == MEMD_EVENT_DAEMON;
    uid_budget *u = NULL;
    if (e && !ops) {
        uint64_t sec = now_second();
        u = uid_of(e, s ? s->uid : UINT32_MAX, sec);
        if (!take(&u->events, sec, st->limits.events_per_uid ? st->limits.events_per_uid
                                                             : UINT32_MAX)) {
            u->last_type = (uint32_t)type;
            return;
        }
    }
    memd_event_rec tmp, *ev = e ? put(e, ops ? &e->ops : &e->clients) : &tmp;
    if (!e)
        memset(ev, 0, sizeof *ev);
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
    if (!e)
        memd_log(prio, "%s", ev->message); /* no memory for the ring: the log still has it */
    else if (ops)
        echo(&e->ops_echo, MEMD_EVENT_OPS_LINES, prio, ev->message);
    else if (!memd_log_enabled(prio))
        return;
    else if (take(&u->lines, now_second(), MEMD_EVENT_UID_LINES))
        echo(&e->echo, MEMD_EVENT_ECHO_MAX, prio, ev->message);
    else
        e->echo.dropped++; /* said with the next line written */
}

/* The first of r's kept events with seq >= since (r->count: none). */
static uint64_t first_from(const ring *r, uint64_t since)
{
    uint64_t lo = r->count > r->size ? r->count - r->size : 0, hi = r->count;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (r->slot[mid % r->size].seq < since)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static uint64_t oldest_seq(const ring *r, uint64_t none)
{
    uint64_t k = r->count > r->size ? r->count - r->size : 0;
    return k < r->count ? r->slot[k % r->size].seq : none;
}

uint64_t memd_events_read(const memd_state *st, const memd_session *s, uint64_t since,
                          uint32_t max, uint64_t *lost,
                          int (*fn)(void *ctx, const memd_event_rec *ev), void *ctx)
{
    const memd_events *e = st->events;
    *lost = 0;
    if (!e)
        return since > 1 ? since : 1;
    if (since < 1)
        since = 1;
    if (since > e->next_seq) { /* a number from a previous daemon: all of this one's */
        uint64_t a = oldest_seq(&e->clients, e->next_seq), b = oldest_seq(&e->ops, e->next_seq);
        since = a < b ? a : b;
    }
    /* Both rings in seq order, merged; every number not in either was overwritten. */
    const ring *r[2] = {&e->clients, &e->ops};
    uint64_t k[2] = {first_from(r[0], since), first_from(r[1], since)};
    *lost = (e->next_seq - since) - (r[0]->count - k[0]) - (r[1]->count - k[1]);
    uint32_t n = 0;
    while (k[0] < r[0]->count || k[1] < r[1]->count) {
        const memd_event_rec *a = k[0] < r[0]->count ? &r[0]->slot[k[0] % r[0]->size] : NULL;
        const memd_event_rec *b = k[1] < r[1]->count ? &r[1]->slot[k[1] % r[1]->size] : NULL;
        int w = !a || (b && b->seq < a->seq);
        const memd_event_rec *ev = w ? b : a;
        if (max && n >= max)
            return ev->seq;
        if (s->admin || (ev->session_id != 0 && ev->uid == s->uid)) {
            if (fn(ctx, ev) < 0)
                return ev->seq;
            n++;
        }
        k[w]++;
    }
    return e->next_seq;
}

uint64_t memd_events_next_seq(const memd_state *st)
{
    return st->events ? st->events->next_seq : 1;
}

void memd_events_free(memd_state *st)
{
    if (!st->events)
        return;
    free(st->events->clients.slot);
    free(st->events->ops.slot);
    free(st->events);
    st->events = NULL;
}

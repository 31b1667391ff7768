/* memd daemon — the event log: what an operator asks "what happened?" about (sessions,
 * allocation failures, quota hits, reclaims, model loads, protocol errors, reloads).
 *
 * Each event goes to a bounded in-memory ring that EVENTS reads (memctl events), and to
 * the daemon's log (stderr, with journald's <N> prefixes under systemd) when its priority
 * passes the log level. Emitting is one vsnprintf into a preallocated slot: the rings
 * are allocated once, with the first event, and old events are overwritten.
 *
 * No client can drown the rest: the daemon's own events (MEMD_EVENT_DAEMON: start,
 * stop, reloads) have a ring and a log budget of their own; every other event counts
 * against its uid, which may add events_per_uid (config limits) to the ring and
 * MEMD_EVENT_UID_LINES lines to the log each second; what passes that is counted and
 * said in one event when the uid's next second starts. All client events together
 * write at most MEMD_EVENT_ECHO_MAX lines a second. */
#ifndef MEMD_DAEMON_EVENT_H
#define MEMD_DAEMON_EVENT_H

#include <stdint.h>
#include <syslog.h> /* the priorities */

#include "state.h"

#define MEMD_EVENT_RING 4096u     /* client events kept */
#define MEMD_EVENT_OPS_RING 256u  /* the daemon's own events kept */
#define MEMD_EVENT_ECHO_MAX 200u  /* log lines a second of client events */
#define MEMD_EVENT_UID_LINES 20u  /* of which one uid's */
#define MEMD_EVENT_OPS_LINES 50u  /* log lines a second of the daemon's own events */

/* One event as the ring keeps it. */
typedef struct memd_event_rec {
    uint64_t seq;
    uint64_t time_ns;              /* CLOCK_REALTIME */
    uint32_t type;                 /* memd_event_type */
    uint32_t priority;             /* syslog priority */
    uint32_t pid, uid, session_id; /* the session's; 0 when not a session's */
    uint32_t device;               /* UINT32_MAX: none */
    uint64_t bytes;
    char comm[16];
    char message[256];             /* the line written to the daemon's log */
} memd_event_rec;

/* Records an event. s: the session it is about (NULL: the daemon's own, or st->cur, the
 * session whose frames are being processed, when there is one); device: a device id or
 * UINT32_MAX. */
void memd_event(memd_state *st, const memd_session *s, memd_event_type type, int prio,
                uint32_t device, uint64_t bytes, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* The events with seq >= since that s may see (admin: all; others: their uid's), at most
 * max, oldest first, handed to fn. Returns the next sequence number to ask for and sets
 * *lost to how many events >= since the ring has overwritten. */
uint64_t memd_events_read(const memd_state *st, const memd_session *s, uint64_t since,
                          uint32_t max, uint64_t *lost,
                          int (*fn)(void *ctx, const memd_event_rec *ev), void *ctx);

/* The sequence number the next event will get (1 before the first). */
uint64_t memd_events_next_seq(const memd_state *st);

void memd_events_free(memd_state *st);

#endif

/* memd daemon — the flight recorder: every allocation, free, refused allocation and
 * release, with who, where and in what context, in a bounded ring (issue 25).
 *
 * Cheap enough to leave on: a record is 64 bytes written into a ring allocated once (at
 * the first record) and overwritten oldest first; the request's cached time; no string
 * copies. Who made it (pid, uid, process and client names) is one entry per session
 * that recorded something, kept while the session lives or a record in the ring names
 * it (so many short sessions reuse a bounded table); names, contexts and stacks are
 * interned once each, and records carry their indices. */
#ifndef MEMD_DAEMON_HISTORY_H
#define MEMD_DAEMON_HISTORY_H

#include <stdint.h>

#include "memd/protocol.h" /* memd_hist_type */

#include "alloc.h"
#include "state.h"

/* One record as the ring keeps it (its size is what history_info.record_size reports).
 * The types after REVOKE, about no single buffer, reuse the fields (memd_hist_obj). */
typedef struct memd_hist_rec {
    uint64_t time_ns;              /* CLOCK_REALTIME */
    uint64_t handle;               /* FAIL: the bytes asked for (a refusal has no handle) */
    uint64_t address;
    uint64_t size_per_bank;
    uint32_t who;                  /* whose: an index into the recorder's sessions */
    uint32_t actor;                /* REVOKE: the admin's who + 1; else 0 */
    uint32_t name, context;        /* interned strings; 0: "" */
    uint32_t banks;
    uint32_t device;               /* device id */
    uint8_t type;                  /* memd_hist_type */
    uint8_t cls, kind, region;
    int32_t status;                /* FAIL: the negative errno */
} memd_hist_rec;

/* Who a record is about, kept once per session. */
typedef struct memd_hist_who {
    uint32_t session_id, pid, uid;
    uint32_t refs;                 /* records in the ring naming it, + 1 while its session
                                      lives; at 0 it is free (next_free links it) */
    uint32_t next_free;            /* free: the next free entry + 1, 0: none */
    char comm[16];
    char client_name[32];
} memd_hist_who;

/* A record with its indices resolved, for a reader. */
typedef struct memd_hist_view {
    uint64_t seq;
    const memd_hist_rec *rec;
    const memd_hist_who *who;
    const memd_hist_who *actor;    /* NULL: none */
    const char *name;
    const char *context;           /* "context\x1fstack" as CONTEXT set them: the context */
    size_t context_len;            /* is its first context_len bytes, the stack after the
                                      separator (when there is one) */
} memd_hist_view;

/* What a reader wants (history_req without the wire). */
typedef struct memd_hist_filter {
    uint64_t since_ns;             /* 0: any time */
    uint32_t device;               /* UINT32_MAX: any */
    uint32_t pid;                  /* 0: any */
    const char *client;            /* client or process name; "": any */
    bool all;                      /* the types after REVOKE too (MEMD_HISTORY_F_ALL) */
} memd_hist_filter;

/* A record about something other than one buffer's hold (types after REVOKE), as the
 * ring keeps it: id -> handle, ref -> address, bytes -> size_per_bank, count -> banks,
 * added -> actor, removed -> status. */
typedef struct memd_hist_obj {
    uint8_t type;                  /* MEMD_HIST_POOL_REPORT .. MEMD_HIST_SUBDEV_BIND */
    uint8_t cls, kind, region;
    uint32_t device;               /* device id */
    uint64_t id;                   /* POOL_REPORT: the pool's handle; MODEL_*: the model's
                                      id; INSTANCE_*: the instance's */
    uint64_t ref;                  /* POOL_REPORT: the pool's address; INSTANCE_*: its
                                      model's id */
    uint64_t bytes;
    uint32_t count, added, removed;
    const char *name;              /* NULL or "": none */
} memd_hist_obj;

/* Maps and touches the ring now (the daemon, before it says it is ready), not at the
 * first allocation: populating 64 MiB held that first request ~0.6-1.5 s on a loaded VM,
 * and every other session with it. -ENOMEM: it is tried again then. */
int memd_history_prepare(memd_state *st);

/* Is the recorder on (limits.history_events)? The allocation path asks first: with it
 * off, no call per allocation and free. */
static inline bool memd_history_on(const memd_state *st)
{
    return st->limits.history_events != 0;
}

/* s made a (or attached to a shared one). */
void memd_history_alloc(memd_state *st, memd_session *s, const memd_alloc *a);
/* s's hold on a goes: memd_hold_release records why from st->hist_cause (0: s freed it;
 * RELEASE: s ended; REVOKE: st->hist_actor, an admin, took it). */
void memd_history_release(memd_state *st, memd_session *s, const memd_alloc *a);
/* s was refused req with rc (err: what it was told). */
void memd_history_fail(memd_state *st, memd_session *s, const memd_alloc_request *req,
                       int rc, const memd_error *err);

/* s did what o says. */
void memd_history_object(memd_state *st, memd_session *s, const memd_hist_obj *o);
/* s has ended: its who-entry lives on only while records name it. */
void memd_history_session_end(memd_state *st, memd_session *s);
/* Who-entries in use (sessions alive that recorded, or named by a record in the ring). */
uint32_t memd_history_whos(const memd_state *st);

/* s's context and stack from now on ("" both: none). 0, or -ENOMEM. */
int memd_history_set_context(memd_state *st, memd_session *s, const char *context,
                             const char *stack);

/* Records with seq >= since that s may see (admin: all; others: their uid's) and that
 * pass f, at most max, oldest first, handed to fn. Returns the next sequence number to
 * ask for and sets *lost to how many records >= since the ring has overwritten. */
uint64_t memd_history_read(const memd_state *st, const memd_session *s, uint64_t since,
                           uint32_t max, const memd_hist_filter *f, uint64_t *lost,
                           int (*fn)(void *ctx, const memd_hist_view *v), void *ctx);

/* The sequence number the next record will get (1 when nothing was recorded). */
uint64_t memd_history_next_seq(const memd_state *st);

/* Records the ring keeps (0: off). */
uint64_t memd_history_capacity(const memd_state *st);

void memd_history_free(memd_state *st);

#endif

/* memd daemon — change hooks: how the layers beside and above core hear of its changes.
 *
 * Core keeps the books and calls nobody above it. The state store and the model layer
 * register listeners when they open (the way PipeWire's spa_hook lists work): core emits
 * each event to every listener in registration order (those with an allocation-path
 * callback, prepare, alloc_created or alloc_changed, before the others), through
 * function pointers, so no object file of core refers to theirs. A listener leaves any
 * callback it does not need NULL. */
#ifndef MEMD_DAEMON_HOOKS_H
#define MEMD_DAEMON_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef struct memd_state memd_state;
typedef struct memd_session memd_session;
typedef struct memd_alloc memd_alloc;

/* A record another layer keeps in the state store (the model layer's plans, models and
 * instances): core carries it between its owner and the store without reading it. The
 * owner encodes and decodes the bytes (and says their version); the store keeps them
 * under (kind, id), checksummed, and hands them back at the next start. */
typedef struct memd_record {
    uint8_t kind;                  /* MEMD_RECORD_*: who owns it; restored in kind order */
    uint16_t version;              /* of the owner's encoding */
    uint64_t id;
    const uint8_t *data;           /* NULL: the record is gone */
    size_t len;
} memd_record;

/* The kinds (the store restores them in this order, so a record can refer to any of a
 * lower kind). */
enum {
    MEMD_RECORD_MODELS_META = 1,   /* the model layer's counters */
    MEMD_RECORD_PLAN = 2,          /* a cached plan, by plan id */
    MEMD_RECORD_MODEL = 3,         /* a loaded model and the sessions using it */
    MEMD_RECORD_INSTANCE = 4,      /* an instance and its owner */
    MEMD_RECORD_SUBDEV = 5,        /* a sub-device an admin defined (core: subdev_record.c) */
    MEMD_RECORD_SUBDEV_BIND = 6,   /* a session bound by SUBDEV_BIND, by session id */
    MEMD_RECORD_CGROUP_LIMIT = 7,  /* a cgroup limit set by LIMIT_SET (core: cglimit_record.c) */
    MEMD_RECORD_RANGE = 8,         /* a region's range given up (core: region_range.c) */
    MEMD_RECORD_KIND_MAX = 8
};

typedef struct memd_state_events {
    /* Before s creates or acquires an allocation. 0, or a negative errno with err filled:
     * the request is refused and nothing changes (a full state store). */
    int (*prepare)(void *data, memd_session *s, memd_error *err);
    /* a was just created (it has its handle, placement and first holder). */
    void (*alloc_created)(void *data, memd_alloc *a);
    /* a is about to gain or lose a holder (losing its last one destroys it). */
    void (*alloc_changed)(void *data, const memd_alloc *a);
    /* s goes away: first session_closing, while it still holds everything, then its
     * holds are dropped, then session_closed. */
    void (*session_closing)(void *data, memd_session *s);
    void (*session_closed)(void *data, memd_session *s);
    /* A layer's record changed (memd_hooks_record_put): the store keeps its bytes. */
    void (*record_put)(void *data, const memd_record *r);
    /* At start, after the store restored allocations and sessions (orphans) and before it
     * releases any orphan: one stored record. 1 if the listener took it, 0 if it is not
     * its kind, or a negative errno with err filled (the start is refused). */
    int (*record_restore)(void *data, const memd_record *r, memd_error *err);
    /* s reclaimed orphan o (after a restart): s has o's id and holds now, and o is closed
     * next, holding nothing. Whatever else o owned moves to s here. */
    void (*session_reclaimed)(void *data, memd_session *o, memd_session *s);
    /* memd_state_fini: every session is closed, the devices are still there. The
     * listener releases what it owns and must not be called again. */
    void (*destroy)(void *data);
} memd_state_events;

/* One registration; owned by the listener, which keeps it alive while registered. */
typedef struct memd_hook {
    const memd_state_events *ev;
    void *data;
    struct memd_hook *next;
} memd_hook;

/* Registers h after st's listeners (after those of the allocation path, when it is
 * one: those alone are walked per allocation and free). */
void memd_hook_add(memd_state *st, memd_hook *h, const memd_state_events *ev, void *data);
/* Unregisters h (a no-op when it is not registered). */
void memd_hook_remove(memd_state *st, memd_hook *h);

/* Emitters, for core itself. */
int memd_hooks_prepare(memd_state *st, memd_session *s, memd_error *err);
void memd_hooks_alloc_created(memd_state *st, memd_alloc *a);
void memd_hooks_alloc_changed(memd_state *st, const memd_alloc *a);
void memd_hooks_session_closing(memd_state *st, memd_session *s);
void memd_hooks_session_closed(memd_state *st, memd_session *s);
void memd_hooks_destroy(memd_state *st);
/* For the layers with records (and the store, which restores them). */
void memd_hooks_record_put(memd_state *st, const memd_record *r);
/* 1 if a listener took r, 0 if none did, or its negative errno (err filled). */
int memd_hooks_record_restore(memd_state *st, const memd_record *r, memd_error *err);
void memd_hooks_session_reclaimed(memd_state *st, memd_session *o, memd_session *s);

#endif

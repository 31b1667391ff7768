/* memd daemon — change hooks: how the layers beside and above core hear of its changes.
 *
 * Core keeps the books and calls nobody above it. The state store and the model layer
 * register listeners when they open (the way PipeWire's spa_hook lists work): core emits
 * each event to every listener in registration order, through function pointers, so no
 * object file of core refers to theirs. A listener leaves any callback it does not need
 * NULL. */
#ifndef MEMD_DAEMON_HOOKS_H
#define MEMD_DAEMON_HOOKS_H

#include <stddef.h>

#include "config.h"
#include "memd/protocol.h"

typedef struct memd_state memd_state;
typedef struct memd_session memd_session;
typedef struct memd_alloc memd_alloc;

typedef struct memd_state_events {
    /* Before s creates or acquires an allocation. 0, or a negative errno with err filled:
     * the request is refused and nothing changes (a full state store). */
    int (*prepare)(void *data, memd_session *s, memd_wire_error *err);
    /* a was just created (it has its handle, placement and first holder). */
    void (*alloc_created)(void *data, memd_alloc *a);
    /* a is about to gain or lose a holder (losing its last one destroys it). */
    void (*alloc_changed)(void *data, const memd_alloc *a);
    /* s goes away: first session_closing, while it still holds everything, then its
     * holds are dropped, then session_closed. */
    void (*session_closing)(void *data, memd_session *s);
    void (*session_closed)(void *data, memd_session *s);
    /* An admin defined sub-device sd (SUBDEV_DEFINE), not yet in use: 0, or a negative
     * errno with msg filled, and the definition is undone (the store could not keep it:
     * what the daemon's restart would forget is refused, as allocations are). */
    int (*subdev_defined)(void *data, const memd_subdev_spec *sd, char *msg, size_t cap);
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

/* Registers h at the end of st's listeners. */
void memd_hook_add(memd_state *st, memd_hook *h, const memd_state_events *ev, void *data);
/* Unregisters h (a no-op when it is not registered). */
void memd_hook_remove(memd_state *st, memd_hook *h);

/* Emitters, for core itself. */
int memd_hooks_prepare(memd_state *st, memd_session *s, memd_wire_error *err);
int memd_hooks_subdev_defined(memd_state *st, const memd_subdev_spec *sd, char *msg, size_t cap);
void memd_hooks_alloc_created(memd_state *st, memd_alloc *a);
void memd_hooks_alloc_changed(memd_state *st, const memd_alloc *a);
void memd_hooks_session_closing(memd_state *st, memd_session *s);
void memd_hooks_session_closed(memd_state *st, memd_session *s);
void memd_hooks_destroy(memd_state *st);

#endif

/* memd daemon — change hooks (see hooks.h). */
#include "hooks.h"

#include <stdbool.h>
#include <stddef.h>

#include "state.h"

/* Does h listen on the allocation path (prepare, alloc_created, alloc_changed)? */
static bool on_alloc_path(const memd_hook *h)
{
    return h->ev->prepare || h->ev->alloc_created || h->ev->alloc_changed;
}

void memd_hook_add(memd_state *st, memd_hook *h, const memd_state_events *ev, void *data)
{
    h->ev = ev;
    h->data = data;
    /* The allocation path's listeners go before the others, so each allocation and free
     * stops at the first of those (the ones keeping records alone: sub-devices, cgroup
     * limits, ranges) instead of walking them all. */
    bool alloc_path = on_alloc_path(h);
    memd_hook **pp = &st->hooks;
    while (*pp && (!alloc_path || on_alloc_path(*pp)))
        pp = &(*pp)->next;
    h->next = *pp;
    *pp = h;
}

void memd_hook_remove(memd_state *st, memd_hook *h)
{
    for (memd_hook **pp = &st->hooks; *pp; pp = &(*pp)->next) {
        if (*pp == h) {
            *pp = h->next;
            h->next = NULL;
            return;
        }
    }
}

int memd_hooks_prepare(memd_state *st, memd_session *s, memd_error *err)
{
    for (memd_hook *h = st->hooks; h && on_alloc_path(h); h = h->next) {
        if (h->ev->prepare) {
            int rc = h->ev->prepare(h->data, s, err);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

/* One emitter per event with no result: every listener that has the callback, in order.
 * A callback may remove its own hook (destroy does), so the next one is read first. */
#define EMIT_WHILE(st, more, cb, ...)                                                     \
    for (memd_hook *h_ = (st)->hooks, *n_; h_ && (more); h_ = n_) {                        \
        n_ = h_->next;                                                                    \
        if (h_->ev->cb)                                                                   \
            h_->ev->cb(h_->data, ##__VA_ARGS__);                                          \
    }
#define EMIT(st, cb, ...) EMIT_WHILE(st, true, cb, ##__VA_ARGS__)
/* The allocation path's events: its listeners are the list's first (memd_hook_add). */
#define EMIT_ALLOC(st, cb, ...) EMIT_WHILE(st, on_alloc_path(h_), cb, ##__VA_ARGS__)

void memd_hooks_alloc_created(memd_state *st, memd_alloc *a) { EMIT_ALLOC(st, alloc_created, a) }
void memd_hooks_alloc_changed(memd_state *st, const memd_alloc *a)
{
    EMIT_ALLOC(st, alloc_changed, a)
}
void memd_hooks_session_closing(memd_state *st, memd_session *s) { EMIT(st, session_closing, s) }
void memd_hooks_session_closed(memd_state *st, memd_session *s) { EMIT(st, session_closed, s) }
void memd_hooks_destroy(memd_state *st) { EMIT(st, destroy) }

void memd_hooks_record_put(memd_state *st, const memd_record *r) { EMIT(st, record_put, r) }

void memd_hooks_session_reclaimed(memd_state *st, memd_session *o, memd_session *s)
{
    EMIT(st, session_reclaimed, o, s)
}

int memd_hooks_record_restore(memd_state *st, const memd_record *r, memd_error *err)
{
    for (memd_hook *h = st->hooks; h; h = h->next) {
        if (h->ev->record_restore) {
            int rc = h->ev->record_restore(h->data, r, err);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

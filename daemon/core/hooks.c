/* memd daemon — change hooks (see hooks.h). */
#include "hooks.h"

#include <stddef.h>

#include "state.h"

void memd_hook_add(memd_state *st, memd_hook *h, const memd_state_events *ev, void *data)
{
    h->ev = ev;
    h->data = data;
    h->next = NULL;
    memd_hook **pp = &st->hooks;
    while (*pp)
        pp = &(*pp)->next;
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
    for (memd_hook *h = st->hooks; h; h = h->next) {
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
#define EMIT(st, cb, ...)                                                                 \
    for (memd_hook *h_ = (st)->hooks, *n_; h_; h_ = n_) {                                  \
        n_ = h_->next;                                                                    \
        if (h_->ev->cb)                                                                   \
            h_->ev->cb(h_->data, ##__VA_ARGS__);                                          \
    }

void memd_hooks_alloc_created(memd_state *st, memd_alloc *a) { EMIT(st, alloc_created, a) }
void memd_hooks_alloc_changed(memd_state *st, const memd_alloc *a) { EMIT(st, alloc_changed, a) }
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

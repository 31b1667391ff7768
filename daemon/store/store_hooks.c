/* memd daemon — what the state store hears from core (hooks.h): every allocation
 * created or changed marks its record dirty, and before a session takes memory its
 * record is made and the file's room checked (see store.h). */
#include "store_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "log.h"

/* Hook: an allocation's record changed (held once more or once less, destroyed). */
static void on_alloc_changed(void *data, const memd_alloc *a)
{
    memd_store *S = ((memd_state *)data)->store;
    /* While stopping, only request rounds count: the holds that the shutdown drops stay
     * in the store for the next memd. */
    if (S->stopping && !S->in_round)
        return;
    memd_store_mark(S, a->store_key);
}

/* Hook: a was just created; chooses the record it is stored in (a->store_key). */
static void on_alloc_created(void *data, memd_alloc *a)
{
    memd_store *S = ((memd_state *)data)->store;
    a->store_key = a->handle;
    /* Handles of one batch are consecutive: each joins the chunk its batch opened last
     * while its handle is within that chunk's range. */
    if (S->batching) {
        if (S->group && a->handle - S->group < MEMD_STORE_CHUNK)
            a->store_key = S->group;
        else
            S->group = a->handle;
    }
    on_alloc_changed(data, a);
}

void memd_store_batch(memd_state *st, bool on)
{
    if (!st->store)
        return;
    st->store->batching = on;
    st->store->group = 0;
}

/* Hook: before a session creates or acquires an allocation, records the session if it
 * is not yet and checks that the store has room for what is pending (growing the file
 * when it must). 0, or -EIO with err filled (store full or unwritable). */
static int on_prepare(void *data, memd_session *s, memd_error *err)
{
    memd_state *st = data;
    memd_store *S = st->store;
    if ((S->last != s || S->last_id != s->id) && memd_store_sess_add(st, s) < 0)
        return memd_error_set(err, -EIO, "state store: no memory to record session %u", s->id);
    if (S->ndirty + 2 <= S->dirty_limit)
        return 0; /* the common case: one comparison */
    uint64_t want = S->used_bytes + (S->ndirty + 2) * MEMD_STORE_REC_COST +
                    MEMD_STORE_TXN_COST + MEMD_STORE_RESERVE;
    memd_error e;
    if (memd_store_grow(S, want, &e) == 0)
        return 0;
    if (!S->full_logged) /* once per episode: a client may keep trying */
        memd_log(LOG_WARNING, "state store full, allocations refused: %s", e.msg);
    S->full_logged = true;
    return memd_error_set(err, -EIO, "memd's state store is full (%.120s): allocation refused",
                        e.msg);
}

/* Hook: another layer's record changed (hooks.h): its bytes are copied, enveloped, and
 * written by the next flush, in order with everything else of that flush. */
static void on_record_put(void *data, const memd_record *r)
{
    memd_store *S = ((memd_state *)data)->store;
    if (S->stopping && !S->in_round)
        return; /* as on_alloc_changed: what the shutdown drops stays stored */
    memd_store_obj o = {.rec = NULL, .len = 0};
    memd_store_obj_key(o.key, r->kind, r->id);
    bool ok = true;
    if (r->data) {
        o.len = memd_store_obj_size(r);
        ok = r->len <= MEMD_STORE_OBJ_MAX && (o.rec = malloc(o.len)) != NULL;
        if (ok)
            memd_store_obj_put(o.rec, r);
    }
    if (ok && S->nobjs == S->objs_cap) {
        size_t cap = S->objs_cap ? S->objs_cap * 2 : 16;
        memd_store_obj *n = realloc(S->objs, cap * sizeof *n);
        if (n) {
            S->objs = n;
            S->objs_cap = cap;
        }
        ok = n != NULL;
    }
    if (!ok) {
        /* The allocations are still stored as they are: after a restart the object comes
         * back stale or not at all (its buffers as plain allocations). */
        free(o.rec);
        if (!S->objs_lost)
            memd_log(LOG_ERR, "state store: no memory to record a %s record (kind %u, id "
                              "%llu); it may not survive a restart",
                     r->data ? "changed" : "removed", r->kind, (unsigned long long)r->id);
        S->objs_lost = true;
        return;
    }
    S->objs[S->nobjs++] = o;
    S->touches++;
}

const memd_state_events memd_store_events = {
    .record_put = on_record_put,
    .prepare = on_prepare,
    .alloc_created = on_alloc_created,
    .alloc_changed = on_alloc_changed,
    .session_closed = memd_store_session_closed,
};

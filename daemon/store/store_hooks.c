/* memd daemon — what the state store hears from core (hooks.h): every allocation
 * created or changed marks its record dirty, and before a session takes memory its
 * record is made and the file's room checked (see store.h). */
#include "store_internal.h"

#include <errno.h>

#include "errmsg.h"
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
static int on_prepare(void *data, memd_session *s, memd_wire_error *err)
{
    memd_state *st = data;
    memd_store *S = st->store;
    if ((S->last != s || S->last_id != s->id) && memd_store_sess_add(st, s) < 0)
        return memd_err_set(err, -EIO, "state store: no memory to record session %u", s->id);
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
    return memd_err_set(err, -EIO, "memd's state store is full (%.120s): allocation refused",
                        e.msg);
}

const memd_state_events memd_store_events = {
    .prepare = on_prepare,
    .alloc_created = on_alloc_created,
    .alloc_changed = on_alloc_changed,
    .session_closed = memd_store_session_closed,
    .subdev_defined = memd_store_subdev_defined,
};

/* memd daemon — session bookkeeping (see session.h). */
#include "session.h"

#include "memd/protocol.h" /* MEMD_PROTO_VERSION: a session speaks it until HELLO */

#include <stdlib.h>

#include "alloc.h"
#include "event.h"
#include "history.h"
#include "hooks.h"
#include "revoke.h"
#include "subdev.h"

#include <syslog.h>

void memd_session_open(memd_state *st, memd_session *s)
{
    uint32_t id = st->next_session_id++;
    if (st->next_session_id == 0)
        st->next_session_id = 1;
    memd_session_adopt(st, s, id);
    memd_event(st, s, MEMD_EVENT_SESSION_OPEN, LOG_INFO, UINT32_MAX, 0,
               "session %u opened: pid %u (%s), uid %u", s->id, s->pid,
               s->comm[0] ? s->comm : "?", s->uid);
}

void memd_session_adopt(memd_state *st, memd_session *s, uint32_t id)
{
    s->id = id;
    s->version = MEMD_PROTO_VERSION;
    s->holds = NULL;
    s->nholds = 0;
    s->prev = NULL;
    s->subdev_by_config = false;
    memd_subdev_bind_creds(st, s);
    s->next = st->sessions;
    if (st->sessions)
        st->sessions->prev = s;
    st->sessions = s;
    st->nsessions++;
    st->ctr.sessions_total++;
}

void memd_session_close(memd_state *st, memd_session *s)
{
    /* What it held before its model layer lets go of instances and loads. */
    uint64_t bytes = 0;
    uint32_t holds = s->nholds;
    for (const memd_hold *h = s->holds; h; h = h->next)
        bytes += memd_alloc_device_bytes(st, memd_hold_alloc(h));
    st->now_ns = 0;         /* the recorder's time: now, not the last request's */
    st->hist_cause = MEMD_HIST_RELEASE;
    memd_hooks_session_closing(st, s); /* e.g. its instances and model loads first */
    while (s->holds)
        memd_hold_release(st, s->holds);
    st->hist_cause = 0;
    free(s->group_holds);
    s->group_holds = NULL;
    memd_session_creator_put(s);
    if (s->ewait.parked) { /* its connection went: nobody to answer */
        s->ewait.parked = false;
        st->events_parked--;
    }
    if (s->prev)
        s->prev->next = s->next;
    else
        st->sessions = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->prev = s->next = NULL;
    st->nsessions--;
    if (st->cur == s)
        st->cur = NULL;
    memd_event(st, s, MEMD_EVENT_SESSION_CLOSE, LOG_INFO, UINT32_MAX, bytes,
               "session %u closed: pid %u (%s), uid %u, released %u allocation holds, "
               "%llu bytes", s->id, s->pid, s->comm[0] ? s->comm : "?", s->uid, holds,
               (unsigned long long)bytes);
    memd_subdev_unbind(st, s);
    memd_hooks_session_closed(st, s);
    memd_history_session_end(st, s);
    memd_revoke_notes_free(s);
}

bool memd_session_is_admin(const memd_state *st, uint32_t uid, uint32_t gid,
                           const gid_t *groups, size_t ngroups)
{
    if (uid == 0)
        return true;
    if (!st->have_admin_gid)
        return false;
    if (gid == st->admin_gid)
        return true;
    for (size_t i = 0; i < ngroups; i++)
        if (groups[i] == st->admin_gid)
            return true;
    return false;
}

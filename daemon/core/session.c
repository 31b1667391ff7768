/* memd daemon — session bookkeeping (see session.h). */
#include "session.h"

#include "alloc.h"
#include "hooks.h"
#include "subdev.h"

void memd_session_open(memd_state *st, memd_session *s)
{
    uint32_t id = st->next_session_id++;
    if (st->next_session_id == 0)
        st->next_session_id = 1;
    memd_session_adopt(st, s, id);
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
    memd_hooks_session_closing(st, s); /* e.g. its instances and model loads first */
    while (s->holds)
        memd_hold_release(st, s->holds);
    if (s->prev)
        s->prev->next = s->next;
    else
        st->sessions = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->prev = s->next = NULL;
    st->nsessions--;
    memd_subdev_unbind(st, s);
    memd_hooks_session_closed(st, s);
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

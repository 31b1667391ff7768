/* memd daemon — access checks (see access.h). */
#include "access.h"

#include <errno.h>

#include "alloc.h"
#include "error.h"
#include "subdev.h"

bool memd_may_access(const memd_session *s, const memd_alloc *a)
{
    return s->admin || memd_alloc_hold_of(a, s) != NULL;
}

int memd_access_error(const memd_session *s, uint64_t handle, const memd_alloc *a,
                      memd_error *err)
{
    if (!a)
        return memd_error_set(err, -ENOENT, "no allocation with handle %llu",
                            (unsigned long long)handle);
    /* Another uid's pid and session are not this client's business. */
    if (a->uid != s->uid)
        return memd_error_set(err, -EPERM,
                            "handle %llu belongs to another user, not to this session %u "
                            "(uid %u)",
                            (unsigned long long)handle, s->id, s->uid);
    return memd_error_set(err, -EPERM,
                        "handle %llu belongs to session %u (pid %u), not to this session %u",
                        (unsigned long long)handle, memd_alloc_creator(a)->session_id,
                        memd_alloc_creator(a)->pid, s->id);
}

bool memd_may_reclaim(const memd_session *s, const memd_alloc *a)
{
    return s->admin && (s->subdev == 0 || memd_alloc_subdev(a) == s->subdev);
}

int memd_reclaim_error(const memd_state *st, const memd_session *s, uint64_t handle,
                       const memd_alloc *a, memd_error *err)
{
    uint32_t other = memd_alloc_subdev(a);
    return memd_error_set(err, -EACCES,
                        "handle %llu is %s%s%s, and session %u is bound to sub-device '%s': "
                        "a bound session frees only its own buffers and its sub-device's",
                        (unsigned long long)handle,
                        other ? "in sub-device '" : "in no sub-device",
                        other ? st->subdevs[other - 1].spec.name : "", other ? "'" : "", s->id,
                        st->subdevs[s->subdev - 1].spec.name);
}

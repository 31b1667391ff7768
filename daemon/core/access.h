/* memd daemon — who may use an allocation: its holders, and admins (an admin bound to
 * a sub-device frees only what is charged to that sub-device). */
#ifndef MEMD_DAEMON_ACCESS_H
#define MEMD_DAEMON_ACCESS_H

#include <stdbool.h>
#include <stdint.h>

#include "state.h"

/* Whether s may see or free a (it holds it, or is admin). */
bool memd_may_access(const memd_session *s, const memd_alloc *a);

/* Whether s may free a although it holds no hold on it: an admin, but one bound to a
 * sub-device only a buffer charged to that sub-device, so a bound session cannot touch
 * another partition's banks (or the unbound space around them). */
bool memd_may_reclaim(const memd_session *s, const memd_alloc *a);

/* The error for an admin bound to a sub-device freeing a buffer that sub-device was not
 * charged for: -EACCES naming both. Fills err and returns its status. */
int memd_reclaim_error(const memd_state *st, const memd_session *s, uint64_t handle,
                       const memd_alloc *a, memd_error *err);

/* The error for a handle that s asked for and may not use: -ENOENT when there is no
 * such allocation (a NULL), -EPERM when it is another session's. Fills err and returns
 * its status. */
int memd_access_error(const memd_session *s, uint64_t handle, const memd_alloc *a,
                      memd_error *err);

#endif

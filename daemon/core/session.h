/* memd daemon — sessions: one per connection, owning what it allocates. */
#ifndef MEMD_DAEMON_SESSION_H
#define MEMD_DAEMON_SESSION_H

#include "state.h"

/* Registers s (credentials already filled) and gives it an id. */
void memd_session_open(memd_state *st, memd_session *s);
/* Registers s under a known id (a session restored from the state store). */
void memd_session_adopt(memd_state *st, memd_session *s, uint32_t id);
/* Releases everything s holds at once and unregisters it. */
void memd_session_close(memd_state *st, memd_session *s);

/* Whether a credential set is admin: root, or admin_gid as primary or supplementary
 * group. */
bool memd_session_is_admin(const memd_state *st, uint32_t uid, uint32_t gid,
                           const gid_t *groups, size_t ngroups);

#endif

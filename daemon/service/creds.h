/* memd daemon — who is on the other end of a connection. */
#ifndef MEMD_DAEMON_CREDS_H
#define MEMD_DAEMON_CREDS_H

#include "state.h"

/* Peer credentials of a connected Unix socket: SO_PEERCRED (pid, uid, gid),
 * SO_PEERGROUPS for the admin check, /proc/PID/comm for the process name. */
int memd_session_creds(const memd_state *st, int fd, memd_session *s);

#endif

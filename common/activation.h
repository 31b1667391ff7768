/* memd — systemd socket activation, sd_listen_fds(3)'s protocol without libsystemd:
 * the sockets a socket unit passed are fds 3 .. 3 + n - 1, announced by LISTEN_FDS and
 * meant for the process whose pid is LISTEN_PID. memd takes its Unix socket this way,
 * memctl metrics --listen systemd its TCP one. */
#ifndef MEMD_COMMON_ACTIVATION_H
#define MEMD_COMMON_ACTIVATION_H

#define MEMD_LISTEN_FDS_START 3

/* How many sockets were passed to this process: 0 when none were (no variables, or
 * LISTEN_PID names another process, e.g. a parent), -EINVAL when LISTEN_FDS is not a
 * count. Unsets the variables either way (children must not take the sockets for
 * theirs) and marks the passed fds close-on-exec. */
int memd_listen_fds(void);

#endif

/* memd daemon — the sd_notify protocol, written in-tree (no libsystemd): one datagram
 * of "KEY=VALUE\n..." lines to $NOTIFY_SOCKET, a path or "@abstract" name. */
#ifndef MEMD_DAEMON_NOTIFY_H
#define MEMD_DAEMON_NOTIFY_H

#include <stdint.h>

/* Sends state. Returns 1 if sent, 0 if $NOTIFY_SOCKET is unset (not under a service
 * manager), or a negative errno (-EINVAL for an unusable address). */
int memd_notify(const char *state);
/* printf-style wrapper. */
int memd_notifyf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The watchdog interval in microseconds from $WATCHDOG_USEC when $WATCHDOG_PID is unset
 * or names this process; 0 if no watchdog is wanted. */
uint64_t memd_notify_watchdog_usec(void);

#endif

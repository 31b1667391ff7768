/* memd daemon — logging: stderr (with <N> priority prefixes when journald reads it),
 * or syslog once daemonized. */
#ifndef MEMD_DAEMON_LOG_H
#define MEMD_DAEMON_LOG_H

#include <stdbool.h>
#include <syslog.h>

void memd_log_to_syslog(bool on);
void memd_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

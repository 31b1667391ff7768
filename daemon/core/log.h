/* memd daemon — logging: stderr (with <N> priority prefixes when journald reads it),
 * or syslog once daemonized. Lines above the log level (config log_level, reloaded on
 * SIGHUP) are left out. */
#ifndef MEMD_DAEMON_LOG_H
#define MEMD_DAEMON_LOG_H

#include <stdbool.h>
#include <syslog.h>

void memd_log_to_syslog(bool on);
void memd_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The highest priority value written: LOG_ERR .. LOG_DEBUG (default LOG_INFO). */
void memd_log_set_level(int prio);
bool memd_log_enabled(int prio);

#endif

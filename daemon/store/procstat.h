/* memd daemon — what /proc says about a client process after a restart: whether the
 * process that owned a session still exists, and which boot the state belongs to. */
#ifndef MEMD_DAEMON_PROCSTAT_H
#define MEMD_DAEMON_PROCSTAT_H

#include <stddef.h>
#include <stdint.h>

/* Start time of process pid in clock ticks after boot (/proc/PID/stat field 22). A pid
 * that was reused by another process has another start time. 0 with *start set;
 * -ENOENT if no such process or it is a zombie (it will never reconnect); another
 * negative errno if /proc cannot tell (e.g. hidepid). */
int memd_proc_starttime(uint32_t pid, uint64_t *start);

/* Parses the text of a /proc/PID/stat file (len bytes): 0, -ENOENT for a zombie, or
 * -EINVAL if it does not parse. Separate for tests: comm may hold spaces and ')'. */
int memd_proc_parse_stat(const char *text, size_t len, uint64_t *start);

/* The kernel's boot id (/proc/sys/kernel/random/boot_id, 36 characters) into out. */
int memd_proc_boot_id(char *out, size_t len);

#endif

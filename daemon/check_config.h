/* memd daemon — `memd --check-config FILE [--json]`. */
#ifndef MEMD_DAEMON_CHECK_CONFIG_H
#define MEMD_DAEMON_CHECK_CONFIG_H

#include <stdbool.h>
#include <stdio.h>

/* Loads FILE, prints the resulting map (or the first error with file:line:col) on
 * out/errout, returns the process exit code (0 or 1). */
int memd_check_config(const char *path, bool json, FILE *out, FILE *errout);

#endif

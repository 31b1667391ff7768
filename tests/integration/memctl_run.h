/* memd tests — running the built memctl against a fixture's daemon (memctl suites).
 * memctl is $MEMCTL_BIN, else $MEMD_BUILD_ROOT/tools/memctl/memctl. */
#ifndef MEMD_TESTS_MEMCTL_RUN_H
#define MEMD_TESTS_MEMCTL_RUN_H

#include <sys/types.h>

#include "daemon_fixture.h"

const char *memctl_path(void);
/* A whole file, NUL-terminated and malloc'd (fails the test if it cannot be read). */
char *memctl_slurp(const char *path);
/* Forks memctl --socket f's-socket args... as uid (0: as is) with stdout and stderr on
 * out_fd and err_fd; returns its pid. */
pid_t memctl_spawn(const memd_fixture *f, const char *const *args, uid_t uid, int out_fd,
                   int err_fd);

/* Runs memctl like memctl_spawn with stdout and stderr written to out_path and err_path
 * and waits; their text in *out and *err (the previous texts freed). Returns memctl's
 * exit code (128 + signal when killed). */
int memctl_run(const memd_fixture *f, const char *const *args, uid_t uid, const char *out_path,
               const char *err_path, char **out, char **err);

#endif

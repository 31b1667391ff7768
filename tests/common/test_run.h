/* memd tests — running a program to completion and keeping what it printed; reading
 * what a program wrote to a file. */
#ifndef MEMD_TESTS_TEST_RUN_H
#define MEMD_TESTS_TEST_RUN_H

#include <stddef.h>

/* Forks and execs argv (argv[0] a path, NULL-terminated) with stdout and stderr on one
 * pipe, reads up to outlen - 1 bytes of it into out (NUL-terminated) and waits. Returns
 * the exit status (128 + signal when killed, 127 when it could not exec), or -errno
 * when it could not start. */
int memd_test_run(const char *const argv[], char *out, size_t outlen);

/* A whole file, NUL-terminated and malloc'd, its length in *len (len may be NULL); NULL
 * with errno set when it cannot be read. */
char *memd_test_slurp(const char *path, size_t *len);

#endif

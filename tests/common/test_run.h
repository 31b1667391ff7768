/* memd tests — running a program to completion and keeping what it printed. */
#ifndef MEMD_TESTS_TEST_RUN_H
#define MEMD_TESTS_TEST_RUN_H

#include <stddef.h>

/* Forks and execs argv (argv[0] a path, NULL-terminated) with stdout and stderr on one
 * pipe, reads up to outlen - 1 bytes of it into out (NUL-terminated) and waits. Returns
 * the exit status (128 + signal when killed, 127 when it could not exec), or -errno
 * when it could not start. */
int memd_test_run(const char *const argv[], char *out, size_t outlen);

#endif

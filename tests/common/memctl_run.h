/* memd tests — running the built memctl against a fixture's daemon (memctl suites).
 * memctl is $MEMCTL_BIN, else $MEMD_BUILD_ROOT/tools/memctl/memctl. */
#ifndef MEMD_TESTS_MEMCTL_RUN_H
#define MEMD_TESTS_MEMCTL_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "daemon_fixture.h"
#include "memd/client.h"

/* A NULL-terminated argument list for the calls below: MEMCTL_ARGS("dump", "--json"). */
#define MEMCTL_ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

const char *memctl_path(void);
/* A whole file, NUL-terminated and malloc'd (fails the test if it cannot be read). */
char *memctl_slurp(const char *path);
/* Forks memctl --socket f's-socket args... (f NULL: memctl args..., for tests that name
 * the socket themselves) as uid (0: as is) with stdout and stderr on out_fd and err_fd;
 * returns its pid. */
pid_t memctl_spawn(const memd_fixture *f, const char *const *args, uid_t uid, int out_fd,
                   int err_fd);

/* The output files of a suite's memctl runs: DIR/memctl.out and DIR/memctl.err of f's
 * directory (each buffer MEMCTL_PATH_MAX bytes). */
#define MEMCTL_PATH_MAX 160
void memctl_output_paths(const memd_fixture *f, char *out_path, char *err_path);
/* Teardown: frees the last run's texts (NULL after) and removes the output files. */
void memctl_output_clear(const char *out_path, const char *err_path, char **out, char **err);

/* The statics of a suite that runs memctl against a daemon of its own config: the
 * fixture f, the output files and the last run's texts; MEMCTL_RUN(args...) runs memctl
 * --socket f's-socket args... and returns its exit code, its texts in out and err. */
#define MEMCTL_SUITE_STATICS                                                               \
    static memd_fixture f;                                                                 \
    static char out_path[MEMCTL_PATH_MAX], err_path[MEMCTL_PATH_MAX];                      \
    static char *out, *err;
#define MEMCTL_RUN(...) memctl_run(&f, MEMCTL_ARGS(__VA_ARGS__), 0, out_path, err_path, &out, &err)
/* Such a suite's start once its config is written (capture_stderr: memd's stderr kept
 * for the test; fails the test if memd does not start) and its teardown. */
void memctl_yaml_start(memd_fixture *f, const char *yaml, bool capture_stderr, char *out_path,
                       char *err_path);
void memctl_yaml_stop(memd_fixture *f, const char *out_path, const char *err_path, char **out,
                      char **err);

/* Fails the test unless text holds every string of the NULL-terminated list want. */
void memctl_expect_all(const char *text, const char *const *want);

/* The fixture of the memctl suites (they compile client_util.c): starts f's daemon,
 * connects *c and names the output files; the teardown undoes it all, stopping the
 * daemon cleanly (a failure fails the test). */
void memctl_suite_start(memd_fixture *f, memclient **c, char *out_path, char *err_path);
void memctl_suite_stop(memd_fixture *f, memclient *c, const char *out_path,
                       const char *err_path, char **out, char **err);

/* Runs memctl like memctl_spawn with stdout and stderr written to out_path and err_path
 * and waits; their text in *out and *err (the previous texts freed). Returns memctl's
 * exit code (128 + signal when killed). */
int memctl_run(const memd_fixture *f, const char *const *args, uid_t uid, const char *out_path,
               const char *err_path, char **out, char **err);

/* Runs memctl --socket f's-socket args... with stdout and stderr both in out (up to
 * outlen - 1 bytes, NUL-terminated); returns its exit code as memd_test_run does. */
int memctl_capture(const memd_fixture *f, const char *const *args, char *out, size_t outlen);

#endif

/* memd tests — a fixture that runs the real, built memd on a private socket.
 *
 *   memd_fixture f;
 *   ck_assert_int_eq(memd_fixture_start(&f, NULL), 0);   // default config, waits READY=1
 *   int fd = memd_fixture_connect(&f);                  // or memclient_connect(f.socket_path)
 *   ...
 *   ck_assert_int_eq(memd_fixture_stop(&f), 0);          // SIGTERM, waitpid: exit status
 *
 * Every fixture gets its own mkdtemp directory holding the socket, the notify socket,
 * any config written for it and (optionally) memd's stderr. Readiness is the daemon's
 * own sd_notify READY=1 on a datagram socket the fixture listens on, so every test that
 * starts a daemon also checks the notify protocol. memd gets PR_SET_PDEATHSIG, so a
 * test that dies half way does not leave a daemon behind.
 *
 * Paths: the binary is $MEMD_BIN if set, else MEMD_FIXTURE_MEMD (a define meson passes),
 * else $MEMD_BUILD_ROOT/daemon/memd. The default config is
 * $MEMD_SOURCE_ROOT/config/memd.yaml. */
#ifndef MEMD_TESTS_DAEMON_FIXTURE_H
#define MEMD_TESTS_DAEMON_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct memd_fixture_opts {
    const char *config;            /* config file; NULL: the source tree's default */
    const char *config_yaml;       /* or: this text is written to DIR/memd.yaml and used */
    const char *const *args;       /* extra memd arguments, NULL-terminated (may be NULL) */
    const char *const *env;        /* extra environment "K=V", NULL-terminated */
    bool capture_stderr;           /* memd's stderr goes to DIR/memd.log (memd_fixture_log) */
    bool no_socket_arg;            /* do not pass --socket DIR/memd.sock */
    bool test_build;               /* run memd-test: memd with the test failpoints */
    uint64_t address_space;        /* RLIMIT_AS for memd in bytes (memd short of memory);
                                      0: none */
    int ready_timeout_ms;          /* default 15000 */
} memd_fixture_opts;

typedef struct memd_fixture {
    pid_t pid;                     /* memd, or 0 once reaped */
    char dir[64];
    char socket_path[108];
    char config_path[512];
    char notify_path[108];
    char status[256];              /* STATUS= sent with READY=1 */
    int notify_fd;
    int exit_status;               /* after stop/wait: exit code, or 128 + signal */
} memd_fixture;

/* Starts memd and waits for READY=1. 0, or a negative errno after printing why on
 * stderr (memd exited early: -ECHILD; no READY in time: -ETIMEDOUT). On failure
 * nothing is left running and the directory is removed. */
int memd_fixture_start(memd_fixture *f, const memd_fixture_opts *o);

/* Only the directory and notify socket (no daemon): for tests that run memd themselves
 * (e.g. under systemd-socket-activate) but want the same paths and READY handling. */
int memd_fixture_prepare(memd_fixture *f, const memd_fixture_opts *o);
/* Forks and execs argv (argv[0] a path) with f's NOTIFY_SOCKET and opts' env, then
 * waits for READY=1 as memd_fixture_start does. */
int memd_fixture_spawn(memd_fixture *f, const memd_fixture_opts *o, char *const argv[]);
/* memd again on f's directory, config, socket and o's options after it stopped (a
 * restart: same state directory), without $MEMD_TEST_DAEMON_WRAPPER; as
 * memd_fixture_spawn. */
int memd_fixture_respawn(memd_fixture *f, const memd_fixture_opts *o);
/* sig to memd (SIGKILL: a crash, exit status 128 + SIGKILL; else a clean stop, 0), then
 * memd_fixture_respawn. 0; -ECHILD when memd ended otherwise (printed). */
int memd_fixture_restart(memd_fixture *f, const memd_fixture_opts *o, int sig);

/* SIGTERM, then waits (10 s, then SIGKILL) and removes the directory. Returns the exit
 * status (0..255, or 128 + signal when killed); a test asserts 0. */
int memd_fixture_stop(memd_fixture *f);

/* Waits up to timeout_ms for memd to exit by itself. Returns the exit status as above,
 * or -ETIMEDOUT (memd still running). */
int memd_fixture_wait(memd_fixture *f, int timeout_ms);

/* Kills memd with SIGKILL (if running) and removes the directory: teardown after a
 * test that already checked what it wanted. */
void memd_fixture_destroy(memd_fixture *f);

/* A connected, blocking Unix stream socket to f's memd, or a negative errno. */
int memd_fixture_connect(const memd_fixture *f);

/* The next sd_notify datagram memd sends (NUL-terminated in buf), or -ETIMEDOUT. */
int memd_fixture_next_notify(memd_fixture *f, char *buf, size_t len, int timeout_ms);

/* memd's stderr so far (capture_stderr); "" if none. Returns a static buffer. */
const char *memd_fixture_log(const memd_fixture *f);

/* Paths a test may need. memd-test is $MEMD_TEST_BIN if set, else MEMD_FIXTURE_MEMD_TEST,
 * else $MEMD_BUILD_ROOT/daemon/memd-test. */
const char *memd_fixture_memd_path(void);
const char *memd_fixture_memd_test_path(void);
const char *memd_fixture_source_root(void);

/* Writes text to DIR/name and returns the full path in out. 0 or -errno. */
int memd_fixture_write_file(const memd_fixture *f, const char *name, const char *text,
                            char *out, size_t outlen);

#endif

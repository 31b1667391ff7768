/* The real daemon's life: readiness and the notify protocol (path and abstract
 * addresses, watchdog, STOPPING), SIGTERM with clients connected, a SIGKILLed client's
 * memory coming back, the socket file (mode, stale, live, not a socket, too long),
 * and the command line. (Socket activation: test_daemon_activation.c.) */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "daemon_fixture.h"
#include "raw_client.h"
#include "test_clock.h"
#include "test_run.h"

#define BIG (900ull << 20) /* most of a wormhole_b0 DRAM bank's data region */

static bool alloc_ok(int fd, uint64_t bytes, uint64_t *handle)
{
    memd_wire_alloc_req r = raw_req(0, MEMD_CLASS_CONSTANT, MEMD_SCOPE_DRAM, bytes);
    memd_wire_buffer b;
    int rc = raw_alloc(fd, &r, &b, NULL);
    if (rc == 0 && handle)
        *handle = b.handle;
    return rc == 0;
}

START_TEST(ready_status_and_socket_mode)
{
    memd_fixture f;
    ck_assert_int_eq(memd_fixture_start(&f, NULL), 0);
    ck_assert_ptr_nonnull(strstr(f.status, "serving 4 devices on"));
    ck_assert_ptr_nonnull(strstr(f.status, f.socket_path));
    struct stat st;
    ck_assert_int_eq(lstat(f.socket_path, &st), 0);
    ck_assert(S_ISSOCK(st.st_mode));
    ck_assert_uint_eq(st.st_mode & 0777, 0660);
    int fd = memd_fixture_connect(&f);
    memd_wire_welcome w;
    ck_assert_int_eq(raw_hello(fd, "lifecycle", &w), 0);
    ck_assert_uint_eq(w.version, 1);
    ck_assert_uint_eq(w.ndevices, 4);
    ck_assert_uint_eq(w.max_frame, 1u << 20);
    close(fd);
    char path[sizeof f.socket_path];
    strcpy(path, f.socket_path);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
    ck_assert_int_ne(access(path, F_OK), 0); /* removed at exit (and the dir with it) */
}
END_TEST

START_TEST(sigterm_with_clients_connected)
{
    memd_fixture f;
    ck_assert_int_eq(memd_fixture_start(&f, NULL), 0);
    int fds[4];
    for (int i = 0; i < 4; i++) {
        fds[i] = memd_fixture_connect(&f);
        ck_assert_int_ge(fds[i], 0);
        ck_assert(alloc_ok(fds[i], 1 << 20, NULL));
    }
    /* One client has requests in flight when the signal comes. */
    uint8_t p[MEMD_WIRE_ALLOC_REQ_SIZE];
    memd_wire_alloc_req r = raw_req(0, MEMD_CLASS_INTERNAL, MEMD_SCOPE_DRAM, 4096);
    memd_wire_alloc_req_put(p, &r);
    for (uint64_t id = 1; id <= 50; id++)
        ck_assert_int_eq(raw_send(fds[0], MEMD_OP_ALLOC, 1000 + id, p, sizeof p), 0);
    memd_wire_hdr h;
    uint8_t buf[512];
    ck_assert_int_eq(raw_recv(fds[0], &h, buf, sizeof buf, 5000), 0);
    ck_assert_uint_eq(h.id, 1001);
    kill(f.pid, SIGTERM);
    char msg[256];
    ck_assert_int_eq(memd_fixture_next_notify(&f, msg, sizeof msg, 5000), 0);
    ck_assert_ptr_nonnull(strstr(msg, "STOPPING=1"));
    ck_assert_int_eq(memd_fixture_wait(&f, 10000), 0);
    /* Whatever replies came are whole and in order, then EOF. */
    uint64_t last = 1001;
    int rc;
    while ((rc = raw_recv(fds[0], &h, buf, sizeof buf, 2000)) == 0) {
        ck_assert_uint_eq(h.id, last + 1);
        last = h.id;
    }
    ck_assert_int_eq(rc, -EPIPE);
    for (int i = 1; i < 4; i++)
        ck_assert(raw_closed(fds[i], 2000));
    for (int i = 0; i < 4; i++)
        close(fds[i]);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

START_TEST(sigint_stops_too)
{
    memd_fixture f;
    ck_assert_int_eq(memd_fixture_start(&f, NULL), 0);
    kill(f.pid, SIGINT);
    ck_assert_int_eq(memd_fixture_wait(&f, 10000), 0);
    memd_fixture_destroy(&f);
}
END_TEST

START_TEST(killed_client_memory_released)
{
    memd_fixture f;
    ck_assert_int_eq(memd_fixture_start(&f, NULL), 0);
    int sync[2];
    ck_assert_int_eq(pipe(sync), 0);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        int fd = memd_fixture_connect(&f);
        char ok = fd >= 0 && alloc_ok(fd, BIG, NULL) ? 1 : 0;
        (void)!write(sync[1], &ok, 1);
        pause(); /* holds the memory until killed */
        _exit(0);
    }
    char ok = 0;
    ck_assert_int_eq(read(sync[0], &ok, 1), 1);
    ck_assert_int_eq(ok, 1);
    int fd = memd_fixture_connect(&f);
    ck_assert(!alloc_ok(fd, BIG, NULL)); /* the child holds it */
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    bool got = false;
    for (int i = 0; i < 250 && !got; i++) {
        got = alloc_ok(fd, BIG, NULL);
        if (!got)
            memd_test_sleep_ms(20);
    }
    ck_assert_msg(got, "memory of a SIGKILLed client was not released");
    close(fd);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

START_TEST(watchdog_pings)
{
    const char *env[] = {"WATCHDOG_USEC=200000", NULL};
    memd_fixture_opts o = {.env = env};
    memd_fixture f;
    ck_assert_int_eq(memd_fixture_start(&f, &o), 0);
    char msg[256];
    int pings = 0;
    for (int i = 0; i < 10 && pings < 3; i++)
        if (memd_fixture_next_notify(&f, msg, sizeof msg, 1000) == 0 &&
            strcmp(msg, "WATCHDOG=1") == 0)
            pings++;
    ck_assert_int_ge(pings, 3);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);

    /* WATCHDOG_PID naming another process: no pings. */
    const char *env2[] = {"WATCHDOG_USEC=100000", "WATCHDOG_PID=1", NULL};
    o.env = env2;
    ck_assert_int_eq(memd_fixture_start(&f, &o), 0);
    ck_assert_int_eq(memd_fixture_next_notify(&f, msg, sizeof msg, 400), -ETIMEDOUT);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

START_TEST(abstract_notify_socket)
{
    char name[64];
    snprintf(name, sizeof name, "memd-test-notify-%d", (int)getpid());
    int ns = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path + 1, name, strlen(name));
    socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
    ck_assert_int_eq(bind(ns, (struct sockaddr *)&sa, salen), 0);

    memd_fixture f;
    ck_assert_int_eq(memd_fixture_prepare(&f, NULL), 0);
    char env[128];
    snprintf(env, sizeof env, "NOTIFY_SOCKET=@%s", name);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        putenv(env);
        execl(memd_fixture_memd_path(), "memd", "--foreground", "--config", f.config_path,
              "--socket", f.socket_path, (char *)NULL);
        _exit(127);
    }
    struct timeval tv = {.tv_sec = 10};
    setsockopt(ns, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char msg[512] = "";
    ssize_t n = recv(ns, msg, sizeof msg - 1, 0);
    ck_assert_int_gt(n, 0);
    msg[n] = '\0';
    ck_assert_ptr_nonnull(strstr(msg, "READY=1"));
    ck_assert_ptr_nonnull(strstr(msg, "STATUS=serving"));
    kill(pid, SIGTERM);
    n = recv(ns, msg, sizeof msg - 1, 0);
    ck_assert_int_gt(n, 0);
    msg[n] = '\0';
    ck_assert_ptr_nonnull(strstr(msg, "STOPPING=1"));
    int ws;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    close(ns);
    memd_fixture_destroy(&f);
}
END_TEST

/* The argv of memd in the foreground with f's config, listening on sock. */
#define FOREGROUND(f, sock)                                                                \
    {memd_fixture_memd_path(), "--foreground", "--config", (f).config_path, "--socket",      \
     (sock), NULL}

/* The daemon serves fd (a 4 KiB allocation succeeds), then stops cleanly. */
static void serves_then_stops(memd_fixture *f, int fd)
{
    ck_assert(alloc_ok(fd, 4096, NULL));
    close(fd);
    ck_assert_int_eq(memd_fixture_stop(f), 0);
}

START_TEST(stale_socket_removed)
{
    memd_fixture f;
    ck_assert_int_eq(memd_fixture_prepare(&f, NULL), 0);
    /* A socket file nobody listens on, as a crashed memd leaves it. */
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    strcpy(sa.sun_path, f.socket_path);
    ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof sa), 0);
    close(s);
    ck_assert_int_eq(access(f.socket_path, F_OK), 0);
    const char *argv[] = FOREGROUND(f, f.socket_path);
    ck_assert_int_eq(memd_fixture_spawn(&f, NULL, (char *const *)argv), 0);
    int fd = memd_fixture_connect(&f);
    ck_assert_int_ge(fd, 0);
    serves_then_stops(&f, fd);
}
END_TEST

START_TEST(live_socket_refused)
{
    memd_fixture f;
    ck_assert_int_eq(memd_fixture_start(&f, NULL), 0);
    char out[2048];
    const char *argv[] = FOREGROUND(f, f.socket_path);
    ck_assert_int_eq(memd_test_run(argv, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "another memd is already listening"), "said: %s", out);
    /* the first one still serves */
    serves_then_stops(&f, memd_fixture_connect(&f));
}
END_TEST

START_TEST(not_a_socket_refused)
{
    memd_fixture f;
    ck_assert_int_eq(memd_fixture_prepare(&f, NULL), 0);
    char path[256];
    ck_assert_int_eq(memd_fixture_write_file(&f, "memd.sock", "precious\n", path, sizeof path),
                     0);
    char out[2048];
    const char *argv[] = FOREGROUND(f, path);
    ck_assert_int_eq(memd_test_run(argv, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "is not a socket"), "said: %s", out);
    FILE *fp = fopen(path, "r");
    char line[32] = "";
    ck_assert_ptr_nonnull(fgets(line, sizeof line, fp));
    fclose(fp);
    ck_assert_str_eq(line, "precious\n");
    memd_fixture_destroy(&f);
}
END_TEST

START_TEST(socket_path_too_long)
{
    char path[200];
    memset(path, 'x', sizeof path - 1);
    path[0] = '/';
    path[sizeof path - 1] = '\0';
    char cfg[512], out[2048];
    snprintf(cfg, sizeof cfg, "%s/config/memd.yaml", memd_fixture_source_root());
    const char *argv[] = {memd_fixture_memd_path(), "--foreground", "--config", cfg,
                          "--socket", path, NULL};
    ck_assert_int_eq(memd_test_run(argv, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "it must be 1..107"), "said: %s", out);
}
END_TEST

START_TEST(command_line)
{
    char out[8192], cfg[512];
    snprintf(cfg, sizeof cfg, "%s/config/memd.yaml", memd_fixture_source_root());
    const char *version[] = {memd_fixture_memd_path(), "--version", NULL};
    ck_assert_int_eq(memd_test_run(version, out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "memd 0."));
    const char *check[] = {memd_fixture_memd_path(), "--check-config", cfg, NULL};
    ck_assert_int_eq(memd_test_run(check, out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "wormhole_b0"));
    const char *json[] = {memd_fixture_memd_path(), "--check-config", cfg, "--json", NULL};
    ck_assert_int_eq(memd_test_run(json, out, sizeof out), 0);
    ck_assert_ptr_nonnull(strchr(out, '{'));
    const char *missing[] = {memd_fixture_memd_path(), "--check-config", "/nonexistent.yaml",
                             NULL};
    ck_assert_int_eq(memd_test_run(missing, out, sizeof out), 1);
    const char *bad[] = {memd_fixture_memd_path(), "--bogus", NULL};
    ck_assert_int_eq(memd_test_run(bad, out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "--bogus"));
    const char *json_alone[] = {memd_fixture_memd_path(), "--json", NULL};
    ck_assert_int_eq(memd_test_run(json_alone, out, sizeof out), 2);
    const char *extra[] = {memd_fixture_memd_path(), "stray", NULL};
    ck_assert_int_eq(memd_test_run(extra, out, sizeof out), 2);
    const char *badcfg[] = {memd_fixture_memd_path(), "--foreground", "--config",
                            "/nonexistent.yaml", "--socket", "/tmp/never.sock", NULL};
    ck_assert_int_eq(memd_test_run(badcfg, out, sizeof out), 1);
    ck_assert_ptr_nonnull(strstr(out, "/nonexistent.yaml"));
}
END_TEST

START_TEST(detaches_without_foreground)
{
    /* Without --foreground memd forks; the parent exits 0 once the child serves. */
    memd_fixture f;
    ck_assert_int_eq(memd_fixture_prepare(&f, NULL), 0);
    char out[2048];
    const char *argv[] = {memd_fixture_memd_path(), "--config", f.config_path, "--socket",
                          f.socket_path, NULL};
    setenv("NOTIFY_SOCKET", f.notify_path, 1);
    int rc = memd_test_run(argv, out, sizeof out);
    unsetenv("NOTIFY_SOCKET");
    ck_assert_msg(rc == 0, "memd exited %d: %s", rc, out);
    char msg[512];
    ck_assert_int_eq(memd_fixture_next_notify(&f, msg, sizeof msg, 5000), 0);
    ck_assert_ptr_nonnull(strstr(msg, "READY=1"));
    char *mainpid = strstr(msg, "MAINPID=");
    ck_assert_ptr_nonnull(mainpid);
    pid_t pid = (pid_t)atol(mainpid + 8);
    ck_assert_int_gt(pid, 1);
    int fd = memd_fixture_connect(&f);
    ck_assert(alloc_ok(fd, 4096, NULL));
    close(fd);
    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    for (int i = 0; i < 500 && kill(pid, 0) == 0; i++)
        memd_test_sleep_ms(10);
    ck_assert_int_ne(kill(pid, 0), 0);
    memd_fixture_destroy(&f);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("daemon-lifecycle");
    TCase *tc = tcase_create("lifecycle");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, ready_status_and_socket_mode);
    tcase_add_test(tc, sigterm_with_clients_connected);
    tcase_add_test(tc, sigint_stops_too);
    tcase_add_test(tc, killed_client_memory_released);
    tcase_add_test(tc, watchdog_pings);
    tcase_add_test(tc, abstract_notify_socket);
    tcase_add_test(tc, stale_socket_removed);
    tcase_add_test(tc, live_socket_refused);
    tcase_add_test(tc, not_a_socket_refused);
    tcase_add_test(tc, socket_path_too_long);
    tcase_add_test(tc, command_line);
    tcase_add_test(tc, detaches_without_foreground);
    suite_add_tcase(s, tc);
    return s;
}

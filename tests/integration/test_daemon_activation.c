/* memd under systemd-socket-activate: the socket is created and passed by the tool
 * (LISTEN_FDS/LISTEN_PID), memd adopts it instead of binding, reports READY=1 naming
 * it, serves on it and exits 0 on SIGTERM. Skipped without the tool. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "daemon_fixture.h"
#include "raw_client.h"
#include "test_clock.h"

static const char *activate_tool(void)
{
    return "/usr/bin/systemd-socket-activate";
}

static bool alloc_ok(int fd, uint64_t bytes)
{
    memd_wire_alloc_req r = raw_req(0, MEMD_CLASS_CONSTANT, MEMD_SCOPE_DRAM, bytes);
    memd_wire_buffer b;
    return raw_alloc(fd, &r, &b, NULL) == 0;
}

START_TEST(socket_activation)
{
    const char *tool = activate_tool();
    memd_fixture f;
    ck_assert_int_eq(memd_fixture_prepare(&f, NULL), 0);
    char listen_arg[160];
    snprintf(listen_arg, sizeof listen_arg, "--listen=%s", f.socket_path);
    /* No --socket: the passed socket is the one served. */
    char *argv[] = {(char *)tool, listen_arg, "-E", "NOTIFY_SOCKET",
                    (char *)memd_fixture_memd_path(), "--foreground", "--config",
                    f.config_path, NULL};
    /* systemd-socket-activate starts memd on the first connection: connect first, then
     * wait for READY=1. */
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        char env[160];
        snprintf(env, sizeof env, "NOTIFY_SOCKET=%s", f.notify_path);
        putenv(env);
        execv(tool, argv);
        _exit(127);
    }
    f.pid = pid;
    int fd = -1;
    for (int i = 0; i < 500 && fd < 0; i++) {
        fd = memd_fixture_connect(&f);
        if (fd < 0)
            memd_test_sleep_ms(10);
    }
    ck_assert_int_ge(fd, 0);
    char msg[512] = "";
    bool ready = false;
    for (int i = 0; i < 20 && !ready; i++)
        ready = memd_fixture_next_notify(&f, msg, sizeof msg, 500) == 0 &&
                strstr(msg, "READY=1");
    ck_assert_msg(ready, "no READY=1 under systemd-socket-activate");
    ck_assert_ptr_nonnull(strstr(msg, f.socket_path));
    memd_wire_welcome w;
    ck_assert_int_eq(raw_hello(fd, "activated", &w), 0);
    ck_assert(alloc_ok(fd, 4096));
    close(fd);
    char path[sizeof f.socket_path];
    strcpy(path, f.socket_path);
    kill(f.pid, SIGTERM);
    ck_assert_int_eq(memd_fixture_wait(&f, 10000), 0);
    /* memd did not create the socket, so it leaves it to its owner */
    struct stat st;
    ck_assert_int_eq(lstat(path, &st), 0);
    memd_fixture_destroy(&f);
}
END_TEST

Suite *memd_test_suite(void)
{
    if (access(activate_tool(), X_OK) != 0) {
        /* meson's TAP reader takes an empty plan with SKIP as a skipped test (exit 77
         * only means "skip" to its exitcode protocol) */
        printf("1..0 # SKIP %s not installed\n", activate_tool());
        exit(0);
    }
    Suite *s = suite_create("daemon-activation");
    TCase *tc = tcase_create("activation");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, socket_activation);
    suite_add_tcase(s, tc);
    return s;
}

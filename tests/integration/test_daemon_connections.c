/* Connection limits of the real daemon (issue 14: one uid took every slot): a per-uid
 * session limit, slots kept for the admin group, a deadline for a connection's first
 * request, and connections beyond the descriptor limit answered -EMFILE. As root the
 * clients that must not be admin run as uid 65534; otherwise the test's own uid is
 * not admin anyway. */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "client_util.h"
#include "daemon_fixture.h"
#include "raw_client.h"
#include "test_clock.h"

static void start_with_limits(memd_fixture *f, const char *limits)
{
    cu_start_limits(f, limits);
    if (getuid() == 0) { /* uid 65534 reaches the socket through its group */
        ck_assert_int_eq(chmod(f->dir, 0711), 0);
        ck_assert_int_eq(chown(f->socket_path, 0, 65534), 0);
    }
}

/* An allocation's status, or the status of the unsolicited error (id 0) a refused
 * connection is answered with instead. */
static int alloc_4k(int fd, memd_wire_error *err)
{
    uint8_t p[MEMD_WIRE_ERROR_SIZE];
    memd_wire_alloc_req r = raw_req(0, MEMD_CLASS_INTERNAL, MEMD_SCOPE_DRAM, 4096);
    memd_wire_alloc_req_put(p, &r);
    memd_wire_hdr h;
    memd_wire_error e = {0};
    int rc = raw_send(fd, MEMD_OP_ALLOC, 7, p, MEMD_WIRE_ALLOC_REQ_SIZE);
    /* A refused connection may be closed before the request goes out (-EPIPE): its
     * answer is waiting to be read all the same. */
    if (rc == 0 || rc == -EPIPE || rc == -ECONNRESET)
        rc = raw_recv_err(fd, &h, p, sizeof p, &e, 10000);
    if (rc < 0)
        return rc;
    if (err)
        *err = e;
    if (h.status < 0)
        return h.status;
    return h.id == 7 && h.opcode == MEMD_OP_ALLOC ? 0 : -EPROTO;
}

/* The status memd answers a connection with right away (a refusal), or 0 if it serves
 * it (an allocation succeeds). The message goes to msg. */
static int session_status(int fd, char *msg, size_t len)
{
    memd_wire_error err = {0};
    int rc = fd < 0 ? fd : alloc_4k(fd, &err);
    snprintf(msg, len, "%s", rc < 0 ? err.message : "");
    return rc;
}

/* A non-admin client process: opens `n` connections and reports, one byte per
 * connection over `out`, 0 for served or the refusal's errno; the refusal's message
 * follows the last byte. It holds the connections until `hold` is readable. */
static pid_t non_admin(memd_fixture *f, int n, int out, int hold, int unused1, int unused2)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    close(unused1); /* the parent's ends: hold must see EOF when the parent lets go */
    close(unused2);
    if (getuid() == 0 && (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0))
        _exit(100);
    char msg[256] = "";
    for (int i = 0; i < n; i++) {
        int fd = memd_fixture_connect(f);
        char m[256];
        int rc = session_status(fd, m, sizeof m);
        if (rc < 0)
            snprintf(msg, sizeof msg, "%s", m);
        uint8_t b = (uint8_t)-rc;
        if (write(out, &b, 1) != 1)
            _exit(101);
    }
    if (write(out, msg, strlen(msg) + 1) < 0)
        _exit(102);
    char c;
    (void)read(hold, &c, 1);
    _exit(0);
}

/* Runs non_admin and returns its per-connection statuses in st[] and the message; the
 * child keeps its connections until release(). */
typedef struct child {
    pid_t pid;
    int hold_w;
} child;

static child run_non_admin(memd_fixture *f, int n, int *st, char *msg, size_t len)
{
    int res[2], hold[2];
    ck_assert_int_eq(pipe(res), 0);
    ck_assert_int_eq(pipe(hold), 0);
    child c = {.pid = non_admin(f, n, res[1], hold[0], res[0], hold[1]), .hold_w = hold[1]};
    close(res[1]);
    close(hold[0]);
    for (int i = 0; i < n; i++) {
        uint8_t b;
        ck_assert_int_eq(read(res[0], &b, 1), 1);
        st[i] = -(int)b;
    }
    size_t got = 0;
    ssize_t r;
    while (got + 1 < len && (r = read(res[0], msg + got, 1)) == 1 && msg[got] != '\0')
        got++;
    msg[got] = '\0';
    close(res[0]);
    return c;
}

static void release(child c)
{
    close(c.hold_w);
    int ws;
    ck_assert_int_eq(waitpid(c.pid, &ws, 0), c.pid);
    ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
}

/* The daemon's log says word; then it stops cleanly. */
static void logged_then_stops(memd_fixture *f, const char *word)
{
    ck_assert_ptr_nonnull(strstr(memd_fixture_log(f), word));
    ck_assert_int_eq(memd_fixture_stop(f), 0);
}

/* Starts f with limits, under which three non-admin sessions get two in and the third
 * refused with -EUSERS, its message (in msg) naming word. Returns the children holding
 * the sessions. */
static child third_refused(memd_fixture *f, const char *limits, char *msg, size_t cap,
                           const char *word)
{
    start_with_limits(f, limits);
    int st[3];
    child c = run_non_admin(f, 3, st, msg, cap);
    ck_assert_int_eq(st[0], 0);
    ck_assert_int_eq(st[1], 0);
    ck_assert_int_eq(st[2], -EUSERS);
    ck_assert_msg(strstr(msg, word), "message: %s", msg);
    return c;
}

START_TEST(sessions_per_uid)
{
    memd_fixture f;
    char msg[256];
    child c = third_refused(&f, "max_sessions: 16, max_sessions_per_uid: 2", msg, sizeof msg, "max_sessions_per_uid");
    if (getuid() == 0) { /* another uid (root, admin) is not affected */
        int fd = memd_fixture_connect(&f);
        ck_assert_int_eq(session_status(fd, msg, sizeof msg), 0);
        close(fd);
    }
    release(c);
    logged_then_stops(&f, "max_sessions_per_uid");
}
END_TEST

START_TEST(slots_kept_for_admins)
{
    if (getuid() != 0)
        return; /* an admin session needs root */
    memd_fixture f;
    char msg[256];
    child c = third_refused(&f, "max_sessions: 3, admin_sessions: 1, max_sessions_per_uid: 8", msg, sizeof msg, "admin_sessions");
    int fd = memd_fixture_connect(&f); /* root takes the kept slot */
    ck_assert_int_eq(session_status(fd, msg, sizeof msg), 0);
    int full = memd_fixture_connect(&f); /* and then every slot is taken */
    ck_assert_int_eq(session_status(full, msg, sizeof msg), -EUSERS);
    ck_assert_msg(strstr(msg, "max_sessions"), "message: %s", msg);
    close(full);
    close(fd);
    release(c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

START_TEST(first_request_deadline)
{
    memd_fixture f;
    start_with_limits(&f, "hello_timeout_ms: 300");
    int silent = memd_fixture_connect(&f), busy = memd_fixture_connect(&f);
    ck_assert_int_ge(silent, 0);
    ck_assert_int_eq(alloc_4k(busy, NULL), 0);
    /* a partial frame is no request either (a client sending a byte a second) */
    int slow = memd_fixture_connect(&f);
    ck_assert_int_eq(raw_write(slow, "M", 1), 0);
    memd_wire_hdr h;
    uint8_t buf[MEMD_WIRE_ERROR_SIZE];
    memd_wire_error err;
    for (int i = 0; i < 2; i++) {
        int fd = i ? slow : silent;
        ck_assert_int_eq(raw_recv_err(fd, &h, buf, sizeof buf, &err, 5000), 0);
        ck_assert_int_eq(h.status, -ETIMEDOUT);
        ck_assert_msg(strstr(err.message, "hello_timeout_ms"), "message: %s", err.message);
        ck_assert(raw_closed(fd, 5000));
    }
    /* a session that made its request stays, however long it is quiet afterwards */
    memd_test_sleep_ms(600);
    ck_assert_int_eq(alloc_4k(busy, NULL), 0);
    close(silent);
    close(slow);
    close(busy);
    logged_then_stops(&f, "hello_timeout_ms");
}
END_TEST

/* memd under a descriptor limit of 64 keeps 32 for itself: connection 33 is answered
 * -EMFILE (and logged) instead of being closed unanswered by libuv at EMFILE. */
START_TEST(out_of_descriptors_answered)
{
    if (access("/usr/bin/prlimit", X_OK) != 0)
        ck_abort_msg("/usr/bin/prlimit (util-linux) is needed");
    const char *old = getenv("MEMD_TEST_DAEMON_WRAPPER");
    char *saved = old ? strdup(old) : NULL;
    setenv("MEMD_TEST_DAEMON_WRAPPER", "/usr/bin/prlimit --nofile=64:64", 1);
    memd_fixture f;
    start_with_limits(&f, "max_sessions: 1024");
    if (saved)
        setenv("MEMD_TEST_DAEMON_WRAPPER", saved, 1);
    else
        unsetenv("MEMD_TEST_DAEMON_WRAPPER");
    free(saved);
    ck_assert_ptr_nonnull(strstr(memd_fixture_log(&f), "raise LimitNOFILE"));
    int fds[33];
    for (int i = 0; i < 32; i++) {
        fds[i] = memd_fixture_connect(&f);
        ck_assert_int_ge(fds[i], 0);
        ck_assert_int_eq(alloc_4k(fds[i], NULL), 0);
    }
    fds[32] = memd_fixture_connect(&f);
    memd_wire_error err;
    ck_assert_int_eq(alloc_4k(fds[32], &err), -EMFILE);
    ck_assert_msg(strstr(err.message, "file descriptors"), "message: %s", err.message);
    ck_assert_ptr_nonnull(strstr(memd_fixture_log(&f), "out of file descriptors"));
    close(fds[32]);
    close(fds[0]); /* room again once one goes */
    int ok = -1;
    for (int i = 0; i < 100 && ok != 0; i++) {
        int fd = memd_fixture_connect(&f);
        ok = alloc_4k(fd, NULL);
        close(fd);
        if (ok != 0)
            memd_test_sleep_ms(20);
    }
    ck_assert_int_eq(ok, 0);
    for (int i = 1; i < 32; i++)
        close(fds[i]);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("daemon-connections");
    TCase *tc = tcase_create("limits");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, sessions_per_uid);
    tcase_add_test(tc, slots_kept_for_admins);
    tcase_add_test(tc, first_request_deadline);
    tcase_add_test(tc, out_of_descriptors_answered);
    suite_add_tcase(s, tc);
    return s;
}

/* The real memd restarted under living clients: the allocation map survives SIGKILL and
 * SIGTERM (same handles, same addresses, new allocations never overlap the old ones,
 * handles continue), a living client reclaims its session with memclient_reconnect and
 * frees what it held, a dead client's memory is released at restart, an unclaimed
 * session after its grace period. And the refusals: a damaged store, a store in use by
 * another memd, a changed device map; a full store, a store that cannot commit. */
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "client_util.h"
#include "daemon_fixture.h"
#include "memctl_run.h"
#include "raw_client.h"
#include "test_clock.h"
#include "test_run.h"

#define MIB (1024ull * 1024ull)

static memd_fixture f;
static memd_fixture_opts fo;
static const char *extra_args[8];
static const char *extra_env[4];
static char env_failpoint[256];
static char failpoint[160];
static bool test_build; /* memd-test, with the failpoint */

static void spawn(void)
{
    int rc = memd_fixture_respawn(&f, &fo);
    ck_assert_msg(rc == 0, "memd did not start again (%d)", rc);
}

/* Starts memd with a config (NULL: the default) and optional extra arguments. */
static void start(const char *yaml)
{
    memset(&fo, 0, sizeof fo);
    fo.capture_stderr = true;
    fo.config_yaml = yaml;
    fo.args = extra_args;
    fo.env = extra_env;
    fo.test_build = test_build;
    int rc = memd_fixture_start(&f, &fo);
    ck_assert_msg(rc == 0, "memd did not start (%d)", rc);
}

/* Stops memd with sig (SIGKILL: a crash) and starts it again on the same socket and
 * state directory. */
static void restart(int sig)
{
    ck_assert_int_eq(memd_fixture_restart(&f, &fo, sig), 0);
}

static void teardown(void)
{
    memd_fixture_destroy(&f);
    if (failpoint[0])
        unlink(failpoint);
    memset(extra_args, 0, sizeof extra_args);
    memset(extra_env, 0, sizeof extra_env);
    test_build = false;
}

/* The next start's environment names failpoint[] (no file there yet). */
static void set_failpoint(void)
{
    snprintf(failpoint, sizeof failpoint, "/tmp/memd-restart-fail-%d", (int)getpid());
    unlink(failpoint);
    snprintf(env_failpoint, sizeof env_failpoint, "MEMD_TEST_STORE_FAILPOINT=%s", failpoint);
    extra_env[0] = env_failpoint;
}

/* Starts memd-test, whose commits fail while the file at failpoint[] exists. */
static void start_with_failpoint(void)
{
    set_failpoint();
    test_build = true;
    start(NULL);
}

static void create_failpoint(void)
{
    int fd = open(failpoint, O_WRONLY | O_CREAT, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
}

/* Runs memd to completion with the fixture's paths and extra arguments; returns the exit
 * status and what it printed. */
static int run_memd(const char *const *args, char *out, size_t outlen)
{
    const char *argv[16] = {memd_fixture_memd_path(), "--foreground", "--config",
                            f.config_path};
    size_t n = 4;
    for (; args && *args && n < 15; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    return memd_test_run(argv, out, outlen);
}

static uint64_t must_alloc(memclient *c, memd_class cls, uint64_t bytes, const char *shared,
                           memclient_buffer *b)
{
    memclient_alloc_req r = cu_req(cls, bytes);
    if (shared) {
        r.name = shared;
        r.flags = MEMCLIENT_ALLOC_SHARED;
    }
    memclient_buffer tmp;
    if (!b)
        b = &tmp;
    int rc = memclient_alloc(c, &r, b);
    if (rc < 0) {
        memclient_error e;
        memclient_last_error(&e);
        ck_abort_msg("alloc: %s", e.message);
    }
    return b->handle;
}

static const memclient_session_rec *find_session(const memclient_snapshot *s, uint32_t id)
{
    for (size_t i = 0; i < s->nsessions; i++)
        if (s->sessions[i].id == id)
            return &s->sessions[i];
    return NULL;
}

static uint32_t session_id(memclient *c)
{
    memclient_session_info info;
    ck_assert_int_eq(memclient_session(c, &info), 0);
    return info.session_id;
}

/* A config with one device (the shipped wormhole_b0 descriptor, or `other`) and a grace
 * period. */
static const char *config(uint32_t grace_ms, const char *descriptor)
{
    static char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "limits:\n  reclaim_grace_ms: %u\ndevices:\n  - id: 0\n    descriptor: "
             "%s/config/devices/%s\n",
             grace_ms, memd_fixture_source_root(), descriptor ? descriptor : "wormhole_b0.yaml");
    return yaml;
}

/* ---- the map survives ---- */

static void restart_keeps_map(int sig)
{
    start(NULL);
    memclient *c = cu_connect(&f);
    memclient_session_info info;
    ck_assert_int_eq(memclient_session(c, &info), 0);
    ck_assert_int_eq(info.reclaimable, 1);
    uint32_t sid = info.session_id;
    memclient_buffer b[3];
    must_alloc(c, MEMD_CLASS_PLACEHOLDER, 1 * MIB, NULL, &b[0]);
    must_alloc(c, MEMD_CLASS_CONSTANT, 64 * 1024, "weights", &b[1]);
    must_alloc(c, MEMD_CLASS_INTERNAL, 4096, NULL, &b[2]);
    uint64_t max_handle = b[0].handle;
    for (int i = 1; i < 3; i++)
        if (b[i].handle > max_handle)
            max_handle = b[i].handle;

    restart(sig);

    memclient *d = cu_connect(&f);
    memclient_snapshot *s = cu_dump(d, 0);
    for (int i = 0; i < 3; i++) {
        const memclient_alloc_info *a = cu_find(s, b[i].handle);
        ck_assert_msg(a, "handle %llu lost in the restart", (unsigned long long)b[i].handle);
        ck_assert_uint_eq(a->buf.address, b[i].address);
        ck_assert_uint_eq(a->buf.size_per_bank, b[i].size_per_bank);
        ck_assert_uint_eq(a->buf.banks, b[i].banks);
        ck_assert_uint_eq(a->session_id, sid);
    }
    ck_assert_str_eq(cu_find(s, b[1].handle)->name, "weights");
    const memclient_session_rec *o = find_session(s, sid);
    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(o->orphaned, 1);
    ck_assert_uint_eq(o->allocations, 3);
    ck_assert_uint_gt(o->reclaim_deadline_ns, s->server.now_ns);
    ck_assert_uint_gt(session_id(d), sid);
    memclient_snapshot_free(s);

    /* New allocations continue the handles and never land on the old ones. */
    for (int i = 0; i < 16; i++)
        ck_assert_uint_gt(must_alloc(d, i % 2 ? MEMD_CLASS_PLACEHOLDER : MEMD_CLASS_CONSTANT,
                                     (uint64_t)(i + 1) * 256 * 1024, NULL, NULL),
                          max_handle);
    s = cu_dump(d, 0);
    ck_assert_int_eq(cu_check_map(s), 0);
    memclient_snapshot_free(s);

    /* The living client: its connection is gone, its session is not. */
    memclient_alloc_info qi;
    ck_assert_int_lt(memclient_query(c, b[0].handle, &qi), 0);
    ck_assert_int_eq(memclient_reconnect(c, 5000), 0);
    ck_assert_int_eq(memclient_session(c, &info), 0);
    ck_assert_uint_eq(info.session_id, sid);
    ck_assert_uint_eq(info.reclaimed, 3);
    ck_assert_int_eq(memclient_query(c, b[2].handle, &qi), 0);
    ck_assert_uint_eq(qi.buf.address, b[2].address);
    ck_assert_int_eq(memclient_free(c, b[0].handle), 0);
    ck_assert_int_eq(memclient_reconnect(c, 0), -EISCONN); /* alive: nothing to do */
    s = cu_dump(d, 0);
    ck_assert_ptr_null(cu_find(s, b[0].handle));
    ck_assert_int_eq(find_session(s, sid)->orphaned, 0);
    memclient_snapshot_free(s);

    /* And again: a second restart keeps what is left. */
    restart(SIGKILL);
    ck_assert_int_eq(memclient_reconnect(c, 5000), 0);
    ck_assert_int_eq(memclient_query(c, b[1].handle, &qi), 0);
    ck_assert_int_lt(memclient_query(c, b[0].handle, &qi), 0);
    memclient_disconnect(c);
    memclient_disconnect(d);
}

/* A client pool across a daemon crash: the pool allocation is in the store (with its pool
 * flag), its sub-allocation books are not; reclaiming the session makes libmemclient
 * report every live sub-allocation again, so the books are whole and later frees are
 * accepted. */
START_TEST(pool_books_come_back_after_reclaim)
{
    start(NULL);
    memclient *c = cu_connect(&f);
    memclient_alloc_req r = {.device = 0, .cls = MEMD_CLASS_INTERNAL, .scope = MEMD_SCOPE_DRAM,
                             .bytes = MIB, .name = "rt.pool"};
    memclient_pool *p;
    ck_assert_int_eq(memclient_pool_create(c, &r, &p), 0);
    memclient_pool_buffer a, b;
    ck_assert_int_eq(memclient_pool_alloc(p, 4096, 0, "kept", &a), 0);
    ck_assert_int_eq(memclient_pool_alloc(p, 512, 0, "freed", &b), 0);
    ck_assert_int_eq(memclient_pool_flush(p), 0);

    restart(SIGKILL);

    memclient *d = cu_connect(&f);
    memclient_snapshot *s = cu_dump(d, MEMCLIENT_DUMP_SUBALLOCS);
    const memclient_alloc_info *pa = cu_find(s, a.lease);
    ck_assert_ptr_nonnull(pa);
    ck_assert_int_eq(pa->pool, 1); /* the flag is stored */
    ck_assert_uint_eq(s->npools, 1);
    ck_assert_uint_eq(s->nsuballocs, 0); /* the books are not */
    memclient_snapshot_free(s);

    ck_assert_int_eq(memclient_reconnect(c, 5000), 0);
    ck_assert_int_eq(memclient_pool_free(p, b.handle), 0);
    ck_assert_int_eq(memclient_pool_flush(p), 0); /* the free of 'freed' is not sent: resent whole */
    s = cu_dump(d, MEMCLIENT_DUMP_SUBALLOCS);
    ck_assert_uint_eq(s->nsuballocs, 1);
    ck_assert_str_eq(s->suballocs[0].name, "kept");
    ck_assert_uint_eq(s->suballocs[0].offset, a.offset);
    memclient_snapshot_free(s);
    ck_assert_int_eq(memclient_pool_free(p, a.handle), 0);
    ck_assert_int_eq(memclient_pool_flush(p), 0);
    s = cu_dump(d, MEMCLIENT_DUMP_SUBALLOCS);
    ck_assert_uint_eq(s->nsuballocs, 0);
    ck_assert_uint_eq(s->pools[0].pooled_bytes, 0);
    memclient_snapshot_free(s);
    ck_assert_int_eq(memclient_pool_destroy(p), 0);
    memclient_disconnect(c);
    memclient_disconnect(d);
}
END_TEST

START_TEST(sigkill_keeps_map)
{
    restart_keeps_map(SIGKILL);
}
END_TEST

START_TEST(sigterm_keeps_map)
{
    restart_keeps_map(SIGTERM);
}
END_TEST

/* A listening socket at path, as a daemon has it. */
static int listen_at(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    unlink(path);
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(l, 0);
    ck_assert_int_eq(bind(l, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(listen(l, 16), 0);
    return l;
}

/* A daemon going away: for ms it accepts on l and hangs up at once. Connections taken. */
static int hang_up_for(int l, int ms)
{
    long deadline = memd_test_now_ms() + ms;
    int n = 0;
    for (long left = ms; left > 0; left = deadline - memd_test_now_ms()) {
        struct pollfd pfd = {.fd = l, .events = POLLIN};
        if (poll(&pfd, 1, (int)left) == 1) {
            int fd = accept(l, NULL, NULL);
            if (fd >= 0) {
                close(fd);
                n++;
            }
        }
    }
    return n;
}

/* memclient_reconnect keeps trying while the old daemon's socket still accepts and then
 * hangs up, and takes the session back from the new daemon. The client runs in a child
 * so this process can play the dying daemon and then start the new one. */
START_TEST(reconnect_outlasts_a_daemon_hanging_up)
{
    start(NULL);
    memclient *c = cu_connect(&f);
    uint32_t sid = session_id(c);
    must_alloc(c, MEMD_CLASS_CONSTANT, 4096, NULL, NULL);
    ck_assert_int_eq(kill(f.pid, SIGKILL), 0);
    ck_assert_int_eq(memd_fixture_wait(&f, 10000), 128 + SIGKILL);
    int l = listen_at(f.socket_path);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) { /* exit 0: the session is back, with its allocation */
        close(l);
        memclient_session_info info = {0};
        int rc = memclient_reconnect(c, 60000);
        bool ok = rc == 0 && memclient_session(c, &info) == 0 && info.session_id == sid &&
                  info.reclaimed == 1;
        if (!ok)
            fprintf(stderr, "reconnect: %d (%s), session %u, reclaimed %u\n", rc,
                    memclient_strerror(rc), info.session_id, info.reclaimed);
        memclient_disconnect(c);
        _exit(ok ? 0 : 1);
    }
    int hung_up = hang_up_for(l, 500);
    close(l);
    unlink(f.socket_path);
    spawn();
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_int_gt(hung_up, 0);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the client gave up (status %d)", st);
    memclient_disconnect(c);
}
END_TEST

START_TEST(dead_client_released)
{
    start(NULL);
    memclient *alive = cu_connect(&f);
    uint64_t kept = must_alloc(alive, MEMD_CLASS_CONSTANT, 1 * MIB, NULL, NULL);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        memclient *c = NULL;
        uint64_t h[2] = {0, 0};
        memclient_alloc_req r = cu_req(MEMD_CLASS_PLACEHOLDER, 2 * MIB);
        memclient_buffer b;
        if (memclient_connect(f.socket_path, &c) == 0 && memclient_alloc(c, &r, &b) == 0) {
            h[0] = b.handle;
            if (memclient_alloc(c, &r, &b) == 0)
                h[1] = b.handle;
        }
        (void)!write(p[1], h, sizeof h);
        pause();
        _exit(0);
    }
    uint64_t h[2];
    close(p[1]);
    ck_assert_int_eq(read(p[0], h, sizeof h), (ssize_t)sizeof h);
    close(p[0]);
    ck_assert(h[0] && h[1]);

    ck_assert_int_eq(kill(f.pid, SIGKILL), 0);
    ck_assert_int_eq(memd_fixture_wait(&f, 10000), 128 + SIGKILL);
    kill(child, SIGKILL); /* the client dies while memd is down */
    waitpid(child, NULL, 0);
    spawn();

    memclient *d = cu_connect(&f);
    memclient_snapshot *s = cu_dump(d, 0);
    ck_assert_ptr_null(cu_find(s, h[0]));
    ck_assert_ptr_null(cu_find(s, h[1]));
    ck_assert_ptr_nonnull(cu_find(s, kept));
    for (size_t i = 0; i < s->nsessions; i++)
        ck_assert_uint_ne(s->sessions[i].pid, (uint32_t)child);
    memclient_snapshot_free(s);
    ck_assert_msg(strstr(memd_fixture_log(&f), "has no process any more"), "%s",
                  memd_fixture_log(&f));
    memclient_disconnect(alive);
    memclient_disconnect(d);
}
END_TEST

START_TEST(grace_period_expires)
{
    start(config(1500, NULL));
    memclient *c = cu_connect(&f);
    uint32_t sid = session_id(c);
    uint64_t h = must_alloc(c, MEMD_CLASS_CONSTANT, 1 * MIB, NULL, NULL);
    restart(SIGKILL);

    /* memctl marks the orphan. */
    char out[4096] = "";
    ck_assert_int_eq(memctl_capture(&f, MEMCTL_ARGS("sessions"), out, sizeof out), 0);
    ck_assert_msg(strstr(out, "ORPHANED"), "%s", out);

    memclient *d = cu_connect(&f);
    memclient_snapshot *s = cu_dump(d, 0);
    ck_assert_ptr_nonnull(cu_find(s, h)); /* still there within the grace period */
    memclient_snapshot_free(s);
    ck_assert(cu_wait_gone(d, &h, 1, 6000));
    ck_assert_msg(strstr(memd_fixture_log(&f), "was not reclaimed within 1500 ms"), "%s",
                  memd_fixture_log(&f));

    /* Too late: the session is gone; the connection comes back with a new one. */
    ck_assert_int_eq(memclient_reconnect(c, 5000), -ESTALE);
    memclient_error e;
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "every old handle is void"), "%s", e.message);
    ck_assert_uint_ne(session_id(c), sid);
    must_alloc(c, MEMD_CLASS_CONSTANT, 4096, NULL, NULL);
    memclient_disconnect(c);
    memclient_disconnect(d);
}
END_TEST

/* A connection over max_sessions is refused: memd answers -EUSERS and closes, so the
 * client sees that reply, or the closed socket if it was still sending its HELLO. */
static bool refused(const memd_fixture *fx)
{
    memclient *c = NULL;
    int rc = memclient_connect(fx->socket_path, &c);
    if (rc == 0)
        memclient_disconnect(c);
    return rc == -EUSERS || rc == -EPIPE || rc == -ECONNRESET;
}

START_TEST(orphans_do_not_fill_max_sessions)
{
    /* memd was full when it crashed: every client must still be able to come back. */
    char yaml[1024];
    snprintf(yaml, sizeof yaml, "limits:\n  max_sessions: 2\ndevices:\n  - id: 0\n    "
             "descriptor: %s/config/devices/wormhole_b0.yaml\n", memd_fixture_source_root());
    start(yaml);
    memclient *a = cu_connect(&f), *b = cu_connect(&f);
    uint64_t ha = must_alloc(a, MEMD_CLASS_CONSTANT, 4096, NULL, NULL);
    uint64_t hb = must_alloc(b, MEMD_CLASS_CONSTANT, 4096, NULL, NULL);
    ck_assert(refused(&f));
    restart(SIGKILL);
    ck_assert_int_eq(memclient_reconnect(a, 5000), 0);
    ck_assert_int_eq(memclient_reconnect(b, 5000), 0);
    ck_assert_int_eq(memclient_free(a, ha), 0);
    ck_assert_int_eq(memclient_free(b, hb), 0);
    ck_assert(refused(&f)); /* the limit still holds */
    memclient_disconnect(a);
    memclient_disconnect(b);
}
END_TEST

/* ---- refusals ---- */

START_TEST(damaged_store_refused)
{
    start(NULL);
    memclient *c = cu_connect(&f);
    must_alloc(c, MEMD_CLASS_CONSTANT, 4096, NULL, NULL);
    memclient_disconnect(c);
    ck_assert_int_eq(kill(f.pid, SIGKILL), 0);
    memd_fixture_wait(&f, 10000);
    char path[256], out[4096];
    snprintf(path, sizeof path, "%s/memd-state.mdb", f.dir);
    int fd = open(path, O_WRONLY | O_TRUNC);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "this is no database, it is a broken file", 40), 40);
    close(fd);
    const char *args[] = {"--socket", f.socket_path, NULL};
    ck_assert_int_eq(run_memd(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, path) && strstr(out, "--discard-state"), "%s", out);
    /* The documented way out. */
    extra_args[0] = "--discard-state";
    spawn();
    c = cu_connect(&f);
    must_alloc(c, MEMD_CLASS_CONSTANT, 4096, NULL, NULL);
    memclient_disconnect(c);
}
END_TEST

START_TEST(second_memd_on_the_same_state_refused)
{
    start(NULL);
    char other[160], out[4096];
    snprintf(other, sizeof other, "%s/other.sock", f.dir);
    const char *args[] = {"--socket", other, NULL};
    ck_assert_int_eq(run_memd(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "in use by another memd"), "%s", out);
    memclient *c = cu_connect(&f); /* the first one still serves */
    must_alloc(c, MEMD_CLASS_CONSTANT, 4096, NULL, NULL);
    memclient_disconnect(c);
}
END_TEST

START_TEST(changed_device_map_refused)
{
    start(config(30000, NULL));
    memclient *c = cu_connect(&f);
    uint64_t h = must_alloc(c, MEMD_CLASS_CONSTANT, 1 * MIB, NULL, NULL);
    ck_assert_int_eq(kill(f.pid, SIGTERM), 0);
    ck_assert_int_eq(memd_fixture_wait(&f, 10000), 0);
    /* Device 0 is now another chip: its memory map differs. */
    ck_assert_int_eq(memd_fixture_write_file(&f, "memd.yaml",
                                             config(30000, "esperanto_etsoc1.yaml"), NULL, 0),
                     0);
    char out[4096];
    const char *args[] = {"--socket", f.socket_path, NULL};
    ck_assert_int_eq(run_memd(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "device 0") && strstr(out, "another memory map"), "%s", out);
    /* Back to the config the store was written with: applied. */
    ck_assert_int_eq(memd_fixture_write_file(&f, "memd.yaml", config(30000, NULL), NULL, 0), 0);
    spawn();
    ck_assert_int_eq(memclient_reconnect(c, 5000), 0);
    memclient_alloc_info qi;
    ck_assert_int_eq(memclient_query(c, h, &qi), 0);
    memclient_disconnect(c);
}
END_TEST

/* ---- store errors on the request path ---- */

START_TEST(full_store_refuses_allocations)
{
    extra_args[0] = "--state-max-bytes";
    extra_args[1] = "1MiB";
    start(NULL);
    memclient *c = cu_connect(&f);
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 4096);
    static uint64_t handles[60000];
    size_t n = cu_fill_store(c, &r, handles, 60000);
    ck_assert_uint_gt(n, 100);
    memclient_buffer b;
    /* The session goes on: releases are recorded and make room again. */
    ck_assert_int_eq(memclient_free_batch(c, handles, n / 2), 0);
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    memclient_disconnect(c);
}
END_TEST

START_TEST(failing_commit_fails_the_request)
{
    /* The fixture's directory does not exist before start: a path of our own. */
    start_with_failpoint();
    memclient *c = cu_connect(&f);
    uint64_t first = must_alloc(c, MEMD_CLASS_CONSTANT, 4096, NULL, NULL);
    create_failpoint();
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 4096);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -EIO);
    memclient_error e;
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "not recorded"), "%s", e.message);
    memclient_alloc_info qi;
    ck_assert_int_lt(memclient_query(c, first, &qi), 0); /* the session was closed */
    unlink(failpoint);
    /* memd carries on; the closed session's memory is gone. */
    memclient *d = cu_connect(&f);
    uint64_t h = must_alloc(d, MEMD_CLASS_CONSTANT, 4096, NULL, NULL);
    memclient_snapshot *s = cu_dump(d, 0);
    ck_assert_ptr_null(cu_find(s, first));
    memclient_snapshot_free(s);
    /* And the store agrees: after a crash only d's allocation comes back. */
    restart(SIGKILL);
    memclient *x = cu_connect(&f);
    s = cu_dump(x, 0);
    ck_assert_uint_eq(s->nallocs, 1);
    ck_assert_uint_eq(s->allocs[0].buf.handle, h);
    memclient_snapshot_free(s);
    memclient_disconnect(x);
    memclient_disconnect(d);
    memclient_disconnect(c);
}
END_TEST

/* The installed memd has no failpoint: the variable and the file change nothing. */
START_TEST(memd_ignores_the_test_failpoint)
{
    set_failpoint();
    start(NULL);
    create_failpoint();
    memclient *c = cu_connect(&f);
    uint64_t h = must_alloc(c, MEMD_CLASS_CONSTANT, 4096, NULL, NULL);
    restart(SIGKILL);
    memclient *x = cu_connect(&f);
    memclient_snapshot *s = cu_dump(x, 0);
    ck_assert_ptr_nonnull(cu_find(s, h));
    memclient_snapshot_free(s);
    memclient_disconnect(x);
    memclient_disconnect(c);
}
END_TEST

/* ---- one commit per loop pass ---- */

/* Holds memd still (SIGSTOP, waited for): what the test sends meanwhile is all there
 * when it runs on, so a single loop pass reads it. */
static void pause_memd(void)
{
    int ws;
    ck_assert_int_eq(kill(f.pid, SIGSTOP), 0);
    ck_assert_int_eq(waitpid(f.pid, &ws, WUNTRACED), f.pid);
    ck_assert(WIFSTOPPED(ws));
}

static void resume_memd(void)
{
    ck_assert_int_eq(kill(f.pid, SIGCONT), 0);
}

/* Write transactions the store has committed so far (LMDB's transaction id). */
static uint64_t store_txnid(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/memd-state.mdb", f.dir);
    MDB_env *env;
    ck_assert_int_eq(mdb_env_create(&env), 0);
    ck_assert_int_eq(mdb_env_open(env, path, MDB_NOSUBDIR | MDB_RDONLY | MDB_NOLOCK, 0600), 0);
    MDB_envinfo info;
    ck_assert_int_eq(mdb_env_info(env, &info), 0);
    mdb_env_close(env);
    return info.me_last_txnid;
}

enum { NCONN = 8 };

static void connect_all(int *fds, memd_wire_buffer *b)
{
    memd_wire_alloc_req r = raw_req(0, MEMD_CLASS_CONSTANT, MEMD_SCOPE_DRAM, 4096);
    for (int i = 0; i < NCONN; i++) {
        fds[i] = memd_fixture_connect(&f);
        ck_assert_int_ge(fds[i], 0);
        ck_assert_int_eq(raw_alloc(fds[i], &r, &b[i], NULL), 0);
    }
}

static void send_alloc(int fd, uint64_t id)
{
    memd_wire_alloc_req r = raw_req(0, MEMD_CLASS_CONSTANT, MEMD_SCOPE_DRAM, 4096);
    uint8_t p[MEMD_WIRE_ALLOC_REQ_SIZE];
    memd_wire_alloc_req_put(p, &r);
    ck_assert_int_eq(raw_send(fd, MEMD_OP_ALLOC, id, p, sizeof p), 0);
}

static void send_query(int fd, uint64_t id, uint64_t handle)
{
    uint8_t p[8];
    memd_wire_put_u64(p, handle);
    ck_assert_int_eq(raw_send(fd, MEMD_OP_QUERY, id, p, sizeof p), 0);
}

static int recv_status(int fd, uint64_t id, memd_wire_error *err)
{
    memd_wire_hdr h;
    uint8_t buf[512];
    ck_assert_int_eq(raw_recv_err(fd, &h, buf, sizeof buf, err, 10000), 0);
    ck_assert_uint_eq(h.id, id);
    return h.status;
}

START_TEST(one_commit_per_loop_pass)
{
    start(NULL);
    int fds[NCONN];
    memd_wire_buffer b[NCONN];
    connect_all(fds, b);
    uint64_t before = store_txnid();
    /* Frames on every connection, read in one pass: their changes are one commit (a
     * commit per connection read would be NCONN). */
    pause_memd();
    for (int i = 0; i < NCONN; i++)
        send_alloc(fds[i], 7);
    resume_memd();
    for (int i = 0; i < NCONN; i++)
        ck_assert_int_eq(recv_status(fds[i], 7, NULL), 0);
    ck_assert_uint_eq(store_txnid() - before, 1);
    /* Read-only frames commit nothing. */
    for (int i = 0; i < NCONN; i++)
        send_query(fds[i], 8, b[i].handle);
    for (int i = 0; i < NCONN; i++)
        ck_assert_int_eq(recv_status(fds[i], 8, NULL), 0);
    ck_assert_uint_eq(store_txnid() - before, 1);
    for (int i = 0; i < NCONN; i++)
        close(fds[i]);
}
END_TEST

/* The pass's commit fails: the connections whose frames changed something get -EIO from
 * their first change on and are closed, their memory released; read-only replies, even
 * earlier ones on those connections, and the other connections are unaffected. */
START_TEST(failing_pass_commit_closes_only_who_changed)
{
    start_with_failpoint();
    int fds[NCONN];
    memd_wire_buffer b[NCONN];
    connect_all(fds, b);
    create_failpoint();
    /* Even connections: a query, then an allocation. Odd ones: a query only. */
    pause_memd();
    for (int i = 0; i < NCONN; i++) {
        send_query(fds[i], 1, b[i].handle);
        if (i % 2 == 0)
            send_alloc(fds[i], 2);
    }
    resume_memd();
    for (int i = 0; i < NCONN; i++) {
        memd_wire_error e;
        ck_assert_int_eq(recv_status(fds[i], 1, &e), 0);
        if (i % 2)
            continue;
        ck_assert_int_eq(recv_status(fds[i], 2, &e), -EIO);
        ck_assert_msg(strstr(e.message, "not recorded"), "%s", e.message);
        ck_assert(raw_closed(fds[i], 10000));
    }
    unlink(failpoint);
    /* The others carry on, and their next change commits the releases too. */
    memd_wire_buffer nb;
    memd_wire_alloc_req r = raw_req(0, MEMD_CLASS_CONSTANT, MEMD_SCOPE_DRAM, 4096);
    ck_assert_int_eq(raw_alloc(fds[1], &r, &nb, NULL), 0);
    restart(SIGKILL);
    memclient *x = cu_connect(&f);
    memclient_snapshot *s = cu_dump(x, 0);
    ck_assert_uint_eq(s->nallocs, NCONN / 2 + 1);
    for (int i = 0; i < NCONN; i++)
        ck_assert_int_eq(cu_find(s, b[i].handle) != NULL, i % 2);
    ck_assert_ptr_nonnull(cu_find(s, nb.handle));
    memclient_snapshot_free(s);
    memclient_disconnect(x);
    for (int i = 0; i < NCONN; i++)
        close(fds[i]);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("daemon-restart");
    TCase *tc = tcase_create("restart");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, sigkill_keeps_map);
    tcase_add_test(tc, sigterm_keeps_map);
    tcase_add_test(tc, pool_books_come_back_after_reclaim);
    tcase_add_test(tc, reconnect_outlasts_a_daemon_hanging_up);
    tcase_add_test(tc, dead_client_released);
    tcase_add_test(tc, grace_period_expires);
    tcase_add_test(tc, orphans_do_not_fill_max_sessions);
    tcase_add_test(tc, damaged_store_refused);
    tcase_add_test(tc, second_memd_on_the_same_state_refused);
    tcase_add_test(tc, changed_device_map_refused);
    tcase_add_test(tc, full_store_refuses_allocations);
    tcase_add_test(tc, failing_commit_fails_the_request);
    tcase_add_test(tc, memd_ignores_the_test_failpoint);
    tcase_add_test(tc, one_commit_per_loop_pass);
    tcase_add_test(tc, failing_pass_commit_closes_only_who_changed);
    suite_add_tcase(s, tc);
    return s;
}

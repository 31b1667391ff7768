/* The real daemon under its limits and with several clients: session limit,
 * per-session allocation limit, per-uid quota, backpressure from a client that does not
 * read, permissions between sessions (and uids, when run as root), and many concurrent
 * processes whose live allocations never overlap. */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "daemon_fixture.h"
#include "raw_client.h"
#include "wire_frame.h"
#include "test_clock.h"

/* A config with one device (id 0) of the given descriptor and limits block. */
static void config_text(char *yaml, size_t len, const char *limits, const char *descriptor)
{
    snprintf(yaml, len,
             "limits: {%s}\n"
             "devices:\n"
             "  - id: 0\n"
             "    descriptor: %s/config/devices/%s.yaml\n",
             limits, memd_fixture_source_root(), descriptor);
}

static void start_with_limits(memd_fixture *f, const char *limits)
{
    char yaml[2048];
    config_text(yaml, sizeof yaml, limits, "wormhole_b0");
    memd_fixture_opts o = {.config_yaml = yaml, .capture_stderr = true};
    ck_assert_int_eq(memd_fixture_start(f, &o), 0);
}

static int alloc_bytes(int fd, uint8_t cls, uint64_t bytes, uint64_t *handle,
                       memd_wire_error *err)
{
    memd_wire_alloc_req r = raw_req(0, cls, MEMD_SCOPE_DRAM, bytes);
    memd_wire_buffer b;
    int rc = raw_alloc(fd, &r, &b, err);
    if (rc == 0 && handle)
        *handle = b.handle;
    return rc;
}

START_TEST(session_limit)
{
    memd_fixture f;
    start_with_limits(&f, "max_sessions: 2");
    int a = memd_fixture_connect(&f), b = memd_fixture_connect(&f);
    ck_assert_int_eq(alloc_bytes(a, MEMD_CLASS_INTERNAL, 4096, NULL, NULL), 0);
    ck_assert_int_eq(alloc_bytes(b, MEMD_CLASS_INTERNAL, 4096, NULL, NULL), 0);
    int c = memd_fixture_connect(&f);
    ck_assert_int_ge(c, 0); /* the kernel accepts; memd answers and closes */
    memd_wire_hdr h;
    uint8_t buf[MEMD_WIRE_ERROR_SIZE];
    memd_wire_error err;
    ck_assert_int_eq(raw_recv_err(c, &h, buf, sizeof buf, &err, 5000), 0);
    ck_assert_int_eq(h.status, -EUSERS);
    ck_assert_ptr_nonnull(strstr(err.message, "max_sessions"));
    ck_assert(raw_closed(c, 5000));
    close(c);
    /* the two sessions are unaffected; once one leaves there is room again */
    ck_assert_int_eq(alloc_bytes(a, MEMD_CLASS_INTERNAL, 4096, NULL, NULL), 0);
    close(b);
    int ok = -1;
    for (int i = 0; i < 100 && ok != 0; i++) {
        int d = memd_fixture_connect(&f);
        ok = alloc_bytes(d, MEMD_CLASS_INTERNAL, 4096, NULL, NULL);
        close(d);
        if (ok != 0)
            memd_test_sleep_ms(20);
    }
    ck_assert_int_eq(ok, 0);
    close(a);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

START_TEST(session_alloc_limit)
{
    memd_fixture f;
    start_with_limits(&f, "max_allocs_per_session: 4");
    int a = memd_fixture_connect(&f);
    uint64_t h[4];
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(alloc_bytes(a, MEMD_CLASS_INTERNAL, 4096, &h[i], NULL), 0);
    memd_wire_error err;
    ck_assert_int_eq(alloc_bytes(a, MEMD_CLASS_INTERNAL, 4096, NULL, &err), -EMFILE);
    ck_assert_ptr_nonnull(strstr(err.message, "max_allocs_per_session"));
    /* not fatal: after a free the session may allocate again */
    ck_assert_int_eq(raw_free(a, h[0], NULL), 0);
    ck_assert_int_eq(alloc_bytes(a, MEMD_CLASS_INTERNAL, 4096, NULL, NULL), 0);
    /* the limit is per session */
    int b = memd_fixture_connect(&f);
    ck_assert_int_eq(alloc_bytes(b, MEMD_CLASS_INTERNAL, 4096, NULL, NULL), 0);
    close(a);
    close(b);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

/* Rewrites f's config and sends SIGHUP; waits until memd's log says `expect`. */
static void reload(memd_fixture *f, const char *limits, const char *descriptor,
                   const char *expect)
{
    char yaml[2048], path[512];
    config_text(yaml, sizeof yaml, limits, descriptor);
    ck_assert_int_eq(memd_fixture_write_file(f, "memd.yaml", yaml, path, sizeof path), 0);
    ck_assert_int_eq(kill(f->pid, SIGHUP), 0);
    for (int i = 0; i < 500 && !strstr(memd_fixture_log(f), expect); i++)
        memd_test_sleep_ms(10);
    ck_assert_msg(strstr(memd_fixture_log(f), expect), "no '%s' in:\n%s", expect,
                  memd_fixture_log(f));
}

static int alloc_shared(int fd, const char *name, uint64_t bytes, uint64_t *handle)
{
    memd_wire_alloc_req r = raw_req(0, MEMD_CLASS_CONSTANT, MEMD_SCOPE_DRAM, bytes);
    r.flags = MEMD_ALLOC_F_SHARED;
    memd_wire_strset(r.name, sizeof r.name, name);
    memd_wire_buffer b;
    int rc = raw_alloc(fd, &r, &b, NULL);
    if (rc == 0)
        *handle = b.handle;
    return rc;
}

/* Quotas charge every uid holding a shared buffer (issue 14), across real uids: root
 * creates a shared buffer, uid 65534 attaches to it (shared_names: global allows it) and
 * is charged for it, root lets go and is no longer charged. */
START_TEST(shared_quota_across_users)
{
    if (getuid() != 0)
        return; /* a second uid needs root */
    char yaml[2048];
    snprintf(yaml, sizeof yaml,
             "shared_names: global\n"
             "limits: {quota_per_uid: 16KiB}\n"
             "devices:\n"
             "  - id: 0\n"
             "    descriptor: %s/config/devices/wormhole_b0.yaml\n",
             memd_fixture_source_root());
    memd_fixture f;
    memd_fixture_opts o = {.config_yaml = yaml, .capture_stderr = true};
    ck_assert_int_eq(memd_fixture_start(&f, &o), 0);
    ck_assert_int_eq(chmod(f.dir, 0711), 0);
    ck_assert_int_eq(chown(f.socket_path, 0, 65534), 0);
    int root = memd_fixture_connect(&f);
    uint64_t h = 0, hc = 0;
    ck_assert_int_eq(alloc_shared(root, "w", 8 << 10, &h), 0);
    int res[2], hold[2];
    ck_assert_int_eq(pipe(res), 0);
    ck_assert_int_eq(pipe(hold), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(res[0]);
        close(hold[1]);
        if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
            _exit(100);
        int fd = memd_fixture_connect(&f);
        int8_t st[2] = {(int8_t)alloc_shared(fd, "w", 8 << 10, &hc), 0};
        st[1] = (int8_t)alloc_bytes(fd, MEMD_CLASS_INTERNAL, 12 << 10, NULL, NULL);
        if (write(res[1], st, 2) != 2 || write(res[1], &hc, 8) != 8)
            _exit(101);
        char c;
        (void)read(hold[0], &c, 1); /* keeps its hold until the parent is done */
        _exit(0);
    }
    close(res[1]);
    close(hold[0]);
    int8_t st[2];
    ck_assert_int_eq(read(res[0], st, 2), 2);
    ck_assert_int_eq(read(res[0], &hc, 8), 8);
    ck_assert_int_eq(st[0], 0);
    ck_assert_uint_eq(hc, h);          /* the same buffer */
    ck_assert_int_eq(st[1], -EDQUOT); /* 8 KiB held + 12 KiB > 16 KiB */
    /* root lets go while 65534 holds it: root is charged no more */
    ck_assert_int_eq(raw_free(root, h, NULL), 0);
    uint64_t big;
    ck_assert_int_eq(alloc_bytes(root, MEMD_CLASS_INTERNAL, 16 << 10, &big, NULL), 0);
    close(hold[1]);
    int ws;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    close(res[0]);
    close(root);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

START_TEST(reload_on_sighup)
{
    memd_fixture f;
    start_with_limits(&f, "max_allocs_per_session: 2");
    int a = memd_fixture_connect(&f);
    memd_wire_error err;
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(alloc_bytes(a, MEMD_CLASS_INTERNAL, 4096, NULL, NULL), 0);
    ck_assert_int_eq(alloc_bytes(a, MEMD_CLASS_INTERNAL, 4096, NULL, &err), -EMFILE);

    /* a raised limit applies to the session already connected */
    reload(&f, "max_allocs_per_session: 3", "wormhole_b0", "reloaded");
    char note[256]; /* systemd's reload protocol (ExecReload in memd.service) */
    ck_assert_int_ge(memd_fixture_next_notify(&f, note, sizeof note, 5000), 0);
    ck_assert_msg(strstr(note, "RELOADING=1\nMONOTONIC_USEC="), "%s", note);
    ck_assert_int_ge(memd_fixture_next_notify(&f, note, sizeof note, 5000), 0);
    ck_assert_str_eq(note, "READY=1");
    ck_assert_int_eq(alloc_bytes(a, MEMD_CLASS_INTERNAL, 4096, NULL, NULL), 0);
    ck_assert_int_eq(alloc_bytes(a, MEMD_CLASS_INTERNAL, 4096, NULL, &err), -EMFILE);

    /* another device map is refused, naming what changed, and nothing of that
     * config is taken: the limit stays 3, the device stays wormhole_b0 */
    reload(&f, "max_allocs_per_session: 8", "gmem_tpu", "reload refused");
    ck_assert_ptr_nonnull(strstr(memd_fixture_log(&f),
                                 "device map changed: device 0 (wormhole_b0): name"));
    ck_assert_int_eq(alloc_bytes(a, MEMD_CLASS_INTERNAL, 4096, NULL, &err), -EMFILE);
    int b = memd_fixture_connect(&f);
    ck_assert_int_eq(alloc_bytes(b, MEMD_CLASS_INTERNAL, 4096, NULL, NULL), 0);
    close(a);
    close(b);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

/* A quota set by a reload counts what is already held. */
START_TEST(reload_sets_quota)
{
    memd_fixture f;
    start_with_limits(&f, "max_sessions: 8");
    int a = memd_fixture_connect(&f);
    ck_assert_int_eq(alloc_bytes(a, MEMD_CLASS_INTERNAL, 48 << 10, NULL, NULL), 0);
    reload(&f, "quota_per_uid: 64KiB", "wormhole_b0", "reloaded");
    memd_wire_error err;
    ck_assert_int_eq(alloc_bytes(a, MEMD_CLASS_INTERNAL, 32 << 10, NULL, &err), -EDQUOT);
    ck_assert_int_eq(alloc_bytes(a, MEMD_CLASS_INTERNAL, 16 << 10, NULL, NULL), 0);
    close(a);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

START_TEST(uid_quota)
{
    memd_fixture f;
    start_with_limits(&f, "quota_per_uid: 64KiB");
    int a = memd_fixture_connect(&f), b = memd_fixture_connect(&f);
    ck_assert_int_eq(alloc_bytes(a, MEMD_CLASS_INTERNAL, 48 << 10, NULL, NULL), 0);
    memd_wire_error err;
    /* same uid, another session: shares the quota */
    ck_assert_int_eq(alloc_bytes(b, MEMD_CLASS_INTERNAL, 32 << 10, NULL, &err), -EDQUOT);
    ck_assert_uint_eq(err.detail, MEMD_ERR_DETAIL_QUOTA);
    ck_assert_uint_eq(err.size_per_bank, 32 << 10);
    ck_assert_int_eq(alloc_bytes(b, MEMD_CLASS_INTERNAL, 16 << 10, NULL, NULL), 0);
    close(a);
    close(b);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

START_TEST(backpressure_slow_reader)
{
    memd_fixture f;
    start_with_limits(&f, "max_reply_backlog: 64KiB");
    int slow = memd_fixture_connect(&f);
    int rcv = 4096;
    setsockopt(slow, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    /* 400 DUMPs with blocks, never read while sending: several MB of replies. */
    uint8_t p[MEMD_WIRE_DUMP_REQ_SIZE]; /* sent as the 8-byte request of older clients */
    memd_wire_dump_req d = {.device = UINT32_MAX, .flags = MEMD_DUMP_F_BLOCKS};
    memd_wire_dump_req_put(p, &d);
    uint8_t frames[400 * (MEMD_HDR_SIZE + 8)];
    size_t n = 0;
    for (uint64_t id = 1; id <= 400; id++)
        n += frame(frames + n, MEMD_OP_DUMP, id, p, 8);
    ck_assert_int_eq(raw_write(slow, frames, n), 0);
    /* meanwhile another client is served normally */
    int other = memd_fixture_connect(&f);
    for (int i = 0; i < 50; i++) {
        uint64_t h;
        ck_assert_int_eq(alloc_bytes(other, MEMD_CLASS_INTERNAL, 4096, &h, NULL), 0);
        ck_assert_int_eq(raw_free(other, h, NULL), 0);
    }
    /* the slow reader gets every reply, whole and in order */
    static uint8_t buf[1 << 20];
    for (uint64_t id = 1; id <= 400; id++) {
        memd_wire_hdr h;
        ck_assert_int_eq(raw_recv(slow, &h, buf, sizeof buf, 10000), 0);
        ck_assert_uint_eq(h.id, id);
        ck_assert_int_eq(h.status, 0);
        ck_assert_int_eq(raw_dump_count(buf, h.len, MEMD_REC_SERVER), 1);
    }
    close(slow);
    close(other);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

/* In a child: connect, optionally drop to uid/gid 65534, then try the handle. */
static int foreign_status(memd_fixture *f, uint64_t handle, uint16_t op, bool drop)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (drop && (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0))
            _exit(100);
        int fd = memd_fixture_connect(f);
        if (fd < 0)
            _exit(101);
        uint8_t p[8], buf[MEMD_WIRE_ERROR_SIZE];
        memd_wire_handle_put(p, handle);
        memd_wire_hdr h;
        if (raw_send(fd, op, 1, p, 8) < 0 || raw_recv(fd, &h, buf, sizeof buf, 5000) < 0)
            _exit(102);
        _exit(h.status == 0 ? 0 : h.status == -EPERM ? 1 : h.status == -ENOENT ? 2 : 103);
    }
    int ws;
    waitpid(pid, &ws, 0);
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 200;
}

START_TEST(permissions_between_sessions)
{
    memd_fixture f;
    ck_assert_int_eq(memd_fixture_start(&f, NULL), 0);
    int owner = memd_fixture_connect(&f);
    uint64_t h;
    ck_assert_int_eq(alloc_bytes(owner, MEMD_CLASS_CONSTANT, 4096, &h, NULL), 0);
    bool root = getuid() == 0;
    if (root) {
        /* let the dropped child reach the socket the way group memd would: through the
         * socket's group (0660), not through world permissions */
        ck_assert_int_eq(chmod(f.dir, 0711), 0);
        ck_assert_int_eq(chown(f.socket_path, 0, 65534), 0);
    }
    /* Another session of a non-admin uid may neither query nor free it. As root the
     * child drops to nobody; otherwise this uid is not admin anyway. */
    ck_assert_int_eq(foreign_status(&f, h, MEMD_OP_QUERY, root), 1);
    ck_assert_int_eq(foreign_status(&f, h, MEMD_OP_BANKS, root), 1);
    ck_assert_int_eq(foreign_status(&f, h, MEMD_OP_FREE, root), 1);
    ck_assert_int_eq(foreign_status(&f, h + 1000, MEMD_OP_FREE, root), 2);
    if (root) {
        /* root is admin: inspects and reclaims another session's memory */
        ck_assert_int_eq(foreign_status(&f, h, MEMD_OP_QUERY, false), 0);
        ck_assert_int_eq(foreign_status(&f, h, MEMD_OP_FREE, false), 0);
        ck_assert_int_eq(raw_free(owner, h, NULL), -ENOENT);
    } else {
        ck_assert_int_eq(raw_free(owner, h, NULL), 0);
    }
    close(owner);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

typedef struct span {
    uint32_t device;
    uint8_t kind, region;
    uint64_t lo, hi;
} span;

static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }

/* By device, kind, then start. */
static int cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    int c = cmp_u64(x->device, y->device);
    if (!c)
        c = cmp_u64(x->kind, y->kind);
    return c ? c : cmp_u64(x->lo, y->lo);
}

START_TEST(concurrent_clients_never_overlap)
{
    memd_fixture f;
    ck_assert_int_eq(memd_fixture_start(&f, NULL), 0);
    enum { CHILDREN = 6, ROUNDS = 300, HOLD = 40 };
    int sync[2];
    ck_assert_int_eq(pipe(sync), 0);
    int go[2];
    ck_assert_int_eq(pipe(go), 0);
    pid_t kids[CHILDREN];
    for (int k = 0; k < CHILDREN; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            close(go[1]);
            int fd = memd_fixture_connect(&f);
            uint64_t held[HOLD] = {0};
            srand((unsigned)k + 1); /* reproducible: the same churn every run */
            /* churn: random sizes, classes, devices (0..3) and scopes */
            for (int i = 0; i < ROUNDS; i++) {
                int slot = rand() % HOLD;
                if (held[slot] && raw_free(fd, held[slot], NULL) != 0)
                    _exit(1);
                held[slot] = 0;
                memd_wire_alloc_req r =
                    raw_req((uint32_t)(rand() % 4), (uint8_t)(1 + rand() % 3),
                            (uint8_t)(rand() % 2), 32 + (uint64_t)(rand() % 200000));
                memd_wire_buffer b;
                int rc = raw_alloc(fd, &r, &b, NULL);
                if (rc == 0)
                    held[slot] = b.handle;
                else if (rc != -ENOMEM && rc != -EOPNOTSUPP && rc != -E2BIG)
                    _exit(2);
            }
            char c = 0; /* how many it holds, for the parent's count */
            for (int i = 0; i < HOLD; i++)
                c += held[i] != 0;
            (void)!write(sync[1], &c, 1);
            (void)!read(go[0], &c, 1); /* hold until the parent has checked */
            _exit(0);
        }
    }
    close(go[0]);
    size_t held_total = 0;
    for (int k = 0; k < CHILDREN; k++) {
        char c;
        ck_assert_int_eq(read(sync[0], &c, 1), 1);
        held_total += (size_t)c;
    }
    /* every child holds its allocations now: no two may overlap */
    int fd = memd_fixture_connect(&f);
    uint8_t *p;
    size_t len;
    ck_assert_int_eq(raw_dump(fd, UINT32_MAX, 0, &p, &len), 0);
    span *spans = malloc(sizeof(span) * CHILDREN * HOLD);
    size_t n = 0, off = 0;
    while (off < len) {
        uint32_t tag;
        size_t sz;
        ck_assert_int_eq(memd_wire_tag_get(p + off, len - off, &tag, &sz), 0);
        if (tag == MEMD_REC_ALLOC) {
            memd_wire_alloc_info a;
            ck_assert_int_eq(memd_wire_alloc_info_get(p + off + 4, sz, &a), 0);
            ck_assert_uint_lt(n, (size_t)CHILDREN * HOLD);
            spans[n++] = (span){a.device, a.buf.kind, a.buf.region, a.buf.address,
                                a.buf.address + a.buf.size_per_bank};
        }
        off += 4 + sz;
    }
    /* Only an admin sees every session's allocations; tests normally run as root. */
    if (getuid() == 0) {
        /* The dump shows exactly what the children hold, and that is enough to matter
         * (which requests fail depends on how the children interleave). */
        ck_assert_uint_eq(n, held_total);
        ck_assert_uint_gt(n, CHILDREN * HOLD / 3);
        qsort(spans, n, sizeof *spans, cmp_span);
        for (size_t i = 1; i < n; i++)
            if (spans[i].device == spans[i - 1].device && spans[i].kind == spans[i - 1].kind)
                ck_assert_msg(spans[i - 1].hi <= spans[i].lo,
                              "overlap on device %u: [%llx,%llx) and [%llx,%llx)",
                              spans[i].device, (unsigned long long)spans[i - 1].lo,
                              (unsigned long long)spans[i - 1].hi,
                              (unsigned long long)spans[i].lo, (unsigned long long)spans[i].hi);
    }
    free(spans);
    free(p);
    close(go[1]); /* children exit; their sessions release everything */
    for (int k = 0; k < CHILDREN; k++) {
        int ws;
        waitpid(kids[k], &ws, 0);
        ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "child %d failed (%d)", k,
                      WEXITSTATUS(ws));
    }
    int allocs = 1;
    for (int i = 0; i < 250 && allocs != 0; i++) {
        ck_assert_int_eq(raw_dump(fd, UINT32_MAX, 0, &p, &len), 0);
        allocs = raw_dump_count(p, len, MEMD_REC_ALLOC);
        free(p);
        if (allocs)
            memd_test_sleep_ms(20);
    }
    ck_assert_int_eq(allocs, 0);
    close(fd);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("daemon-limits");
    TCase *tc = tcase_create("limits");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, session_limit);
    tcase_add_test(tc, session_alloc_limit);
    tcase_add_test(tc, uid_quota);
    tcase_add_test(tc, shared_quota_across_users);
    tcase_add_test(tc, reload_on_sighup);
    tcase_add_test(tc, reload_sets_quota);
    tcase_add_test(tc, backpressure_slow_reader);
    tcase_add_test(tc, permissions_between_sessions);
    tcase_add_test(tc, concurrent_clients_never_overlap);
    suite_add_tcase(s, tc);
    return s;
}

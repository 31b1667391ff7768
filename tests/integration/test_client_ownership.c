/* libmemclient + the real daemon: who owns what. A client killed with SIGKILL gets its
 * memory back; an unprivileged session may not free, query or see another session's
 * buffers while root (admin) may; named shared buffers are reference counted across
 * connections and released with the last holder. */
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "client_util.h"

/* The child of killed_client_memory_comes_back: three buffers, one shared by name. */
static void three_buffers(const char *socket_path, const void *arg, uint64_t *h, size_t n)
{
    (void)arg;
    (void)n;
    memclient *cc;
    if (memclient_connect(socket_path, &cc) < 0)
        return;
    memclient_buffer b;
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 1 << 20);
    if (memclient_alloc(cc, &r, &b) == 0)
        h[0] = b.handle;
    r = cu_req(MEMD_CLASS_PLACEHOLDER, 3 << 20);
    if (memclient_alloc(cc, &r, &b) == 0)
        h[1] = b.handle;
    r = cu_req(MEMD_CLASS_CONSTANT, 64 << 10);
    r.name = "child-weights";
    r.flags = MEMCLIENT_ALLOC_SHARED;
    if (memclient_alloc(cc, &r, &b) == 0)
        h[2] = b.handle;
}

START_TEST(killed_client_memory_comes_back)
{
    memd_fixture f;
    cu_start(&f);
    memclient *c = cu_connect(&f);
    uint64_t base_alloc = cu_data_allocated(c);

    uint64_t h[3];
    pid_t pid = cu_fork_holder(&f, three_buffers, NULL, h, 3);
    ck_assert_msg(h[0] && h[1] && h[2], "the child could not allocate");

    memclient_snapshot *s = cu_dump(c, 0);
    for (int i = 0; i < 3; i++) {
        const memclient_alloc_info *a = cu_find(s, h[i]);
        ck_assert_ptr_nonnull(a);
        ck_assert_uint_eq(a->pid, (uint32_t)pid);
    }
    ck_assert_uint_gt(cu_region(s, MEMD_KIND_DRAM, "data")->stats.allocated, base_alloc);
    memclient_snapshot_free(s);

    cu_kill_holder(pid);
    ck_assert_msg(cu_wait_gone(c, h, 3, 5000), "the killed client's buffers are still held");
    s = cu_dump(c, 0);
    ck_assert_uint_eq(cu_region(s, MEMD_KIND_DRAM, "data")->stats.allocated, base_alloc);
    ck_assert_int_eq(cu_check_map(s), 0);
    memclient_snapshot_free(s);

    /* The shared name is free again: a new holder gets a fresh buffer. */
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 64 << 10);
    r.name = "child-weights";
    r.flags = MEMCLIENT_ALLOC_SHARED;
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    ck_assert_uint_ne(b.handle, h[2]);
    ck_assert_uint_eq(b.refcount, 1);
    memclient_disconnect(c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

/* ---- permissions ---- */

typedef struct perm_arg {
    const char *socket;
    uint64_t root_handle;
} perm_arg;

/* Runs as nobody. Exit codes name the first check that failed. */
static int nobody_client(void *p)
{
    const perm_arg *a = p;
    memclient *c;
    if (memclient_connect(a->socket, &c) != 0)
        return 10;
    memclient_alloc_info info;
    uint64_t addrs[64];
    if (memclient_free(c, a->root_handle) != -EPERM)
        return 12;
    memclient_error e;
    if (memclient_last_error(&e) != -EPERM || e.message[0] == '\0')
        return 13;
    if (memclient_query(c, a->root_handle, &info) != -EPERM)
        return 14;
    if (memclient_bank_addresses(c, a->root_handle, addrs, 64) != -EPERM)
        return 15;
    uint64_t batch[1] = {a->root_handle};
    if (memclient_free_batch(c, batch, 1) != -EPERM)
        return 16;
    /* It sees the devices but not root's buffers or session. */
    memclient_snapshot *s;
    if (memclient_dump(c, MEMCLIENT_ALL_DEVICES, 0, &s) != 0)
        return 17;
    int bad = s->ndevices == 0 || s->nallocs != 0 || s->nsessions != 1 ||
              s->sessions[0].uid != CU_NOBODY;
    memclient_snapshot_free(s);
    if (bad)
        return 18;
    /* Its own buffers work as usual. */
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 4096);
    memclient_buffer b;
    if (memclient_alloc(c, &r, &b) != 0 || memclient_query(c, b.handle, &info) != 0 ||
        info.uid != CU_NOBODY || memclient_free(c, b.handle) != 0)
        return 19;
    memclient_disconnect(c);
    return 0;
}

START_TEST(unprivileged_session_cannot_touch_others)
{
    memd_fixture f;
    cu_start(&f);
    cu_open_socket_to_all(&f);
    memclient *c = cu_connect(&f);
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 8192);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    perm_arg a = {.socket = f.socket_path, .root_handle = b.handle};
    ck_assert_int_eq(cu_run_as(CU_NOBODY, nobody_client, &a), 0);
    /* Root's buffer survived every attempt. */
    memclient_alloc_info info;
    ck_assert_int_eq(memclient_query(c, b.handle, &info), 0);
    ck_assert_uint_eq(info.buf.address, b.address);
    ck_assert_int_eq(memclient_free(c, b.handle), 0);
    ck_assert_int_eq(memclient_free(c, b.handle), -ENOENT);
    memclient_disconnect(c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

/* Root is admin: it may inspect and free a buffer an unprivileged session holds. */
typedef struct holder_arg {
    const char *socket;
    int to_parent, from_parent;
} holder_arg;

static int nobody_holder(const holder_arg *a)
{
    memclient *c;
    if (memclient_connect(a->socket, &c) != 0)
        return 10;
    memclient_alloc_req r = cu_req(MEMD_CLASS_PLACEHOLDER, 12288);
    memclient_buffer b;
    if (memclient_alloc(c, &r, &b) != 0)
        return 11;
    /* Tell the parent the handle, then wait until it has reclaimed it. */
    if (write(a->to_parent, &b.handle, sizeof b.handle) != (ssize_t)sizeof b.handle)
        return 12;
    char go;
    if (read(a->from_parent, &go, 1) != 1)
        return 13;
    int rc = memclient_free(c, b.handle) == -ENOENT ? 0 : 14;
    memclient_disconnect(c);
    return rc;
}

START_TEST(admin_reclaims_others)
{
    memd_fixture f;
    cu_start(&f);
    cu_open_socket_to_all(&f);
    int up[2], down[2];
    ck_assert_int_eq(pipe(up), 0);
    ck_assert_int_eq(pipe(down), 0);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        holder_arg a = {.socket = f.socket_path, .to_parent = up[1], .from_parent = down[0]};
        if (setgroups(0, NULL) != 0 || setgid(CU_NOBODY) != 0 || setuid(CU_NOBODY) != 0)
            _exit(100);
        _exit(nobody_holder(&a));
    }
    close(up[1]);
    close(down[0]);
    uint64_t h;
    ck_assert_int_eq(read(up[0], &h, sizeof h), (ssize_t)sizeof h);
    memclient *c = cu_connect(&f);
    memclient_alloc_info info;
    ck_assert_int_eq(memclient_query(c, h, &info), 0);
    ck_assert_uint_eq(info.uid, CU_NOBODY);
    memclient_snapshot *s = cu_dump(c, 0);
    ck_assert_ptr_nonnull(cu_find(s, h));
    ck_assert_uint_ge(s->nsessions, 2);
    memclient_snapshot_free(s);
    ck_assert_int_eq(memclient_free(c, h), 0);
    ck_assert_int_eq(write(down[1], "g", 1), 1);
    int ws;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "child status %d", ws);
    close(up[0]);
    close(down[1]);
    memclient_disconnect(c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

/* ---- named shared buffers ---- */

START_TEST(shared_names_are_refcounted)
{
    memd_fixture f;
    cu_start(&f);
    memclient *a = cu_connect(&f), *b = cu_connect(&f), *admin = cu_connect(&f);
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 1 << 20);
    r.name = "bert-weights";
    r.flags = MEMCLIENT_ALLOC_SHARED;
    memclient_buffer ba, bb;
    ck_assert_int_eq(memclient_alloc(a, &r, &ba), 0);
    ck_assert_uint_eq(ba.refcount, 1);
    ck_assert_int_eq(memclient_alloc(b, &r, &bb), 0);
    ck_assert_uint_eq(bb.handle, ba.handle);
    ck_assert_uint_eq(bb.address, ba.address);
    ck_assert_uint_eq(bb.refcount, 2);

    /* Another size under the same name is refused, not silently shared. */
    memclient_alloc_req other = r;
    other.bytes = 2 << 20;
    memclient_buffer bo;
    ck_assert_int_eq(memclient_alloc(b, &other, &bo), -EEXIST);
    /* Without the shared flag the same name is just a label: a new buffer. */
    memclient_alloc_req plain = r;
    plain.flags = 0;
    ck_assert_int_eq(memclient_alloc(b, &plain, &bo), 0);
    ck_assert_uint_ne(bo.handle, ba.handle);

    memclient_snapshot *s = cu_dump(admin, 0);
    const memclient_alloc_info *x = cu_find(s, ba.handle);
    ck_assert_ptr_nonnull(x);
    ck_assert_uint_eq(x->buf.refcount, 2);
    ck_assert_str_eq(x->name, "bert-weights");
    ck_assert_int_eq(cu_check_map(s), 0);
    memclient_snapshot_free(s);

    /* The first holder frees: the buffer stays for the second. */
    ck_assert_int_eq(memclient_free(a, ba.handle), 0);
    s = cu_dump(admin, 0);
    x = cu_find(s, ba.handle);
    ck_assert_ptr_nonnull(x);
    ck_assert_uint_eq(x->buf.refcount, 1);
    memclient_snapshot_free(s);
    /* a no longer holds it, b still does. */
    memclient_alloc_info info;
    ck_assert_int_eq(memclient_query(b, ba.handle, &info), 0);

    /* The last holder goes away: released. */
    memclient_disconnect(b);
    ck_assert(cu_wait_gone(admin, &ba.handle, 1, 5000));
    ck_assert(cu_wait_gone(admin, &bo.handle, 1, 5000));
    memclient_disconnect(a);
    memclient_disconnect(admin);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("client-ownership");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, killed_client_memory_comes_back);
    tcase_add_test(tc, unprivileged_session_cannot_touch_others);
    tcase_add_test(tc, admin_reclaims_others);
    tcase_add_test(tc, shared_names_are_refcounted);
    suite_add_tcase(s, tc);
    return s;
}

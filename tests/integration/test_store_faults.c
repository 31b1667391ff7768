/* The state store under faults, against the real memd-test: a daemon killed between a
 * request's commit and its reply (the store's "kill" failpoint) with a client connected
 * with MEMCLIENT_CONNECT_RECONNECT, which reconnects, reclaims and sends the request
 * again, and must get the buffers of the first sending, never second ones (ALLOC, shared
 * ALLOC, ALLOC_BATCH, FREE, FREE_BATCH); and a full state file system: allocations
 * refused with a clear error, nothing acknowledged that is not stored, recovery once
 * space frees. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "client_util.h"
#include "daemon_fixture.h"
#include "test_clock.h"
#include "memctl_run.h"

static memd_fixture f;
static memd_fixture_opts fo;
static char fp[160], fp_env[200], state_dir[160], cfg_yaml[2048];
static const char *env[2];

static void touch(const char *suffix)
{
    char p[200];
    snprintf(p, sizeof p, "%s%s", fp, suffix);
    int fd = open(p, O_WRONLY | O_CREAT, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
}

static void untouch(const char *suffix)
{
    char p[200];
    snprintf(p, sizeof p, "%s%s", fp, suffix);
    unlink(p);
}

/* memd-test with the store failpoints at fp (.kill, .grow, ...). */
static void start(const char *yaml)
{
    snprintf(fp, sizeof fp, "/tmp/memd-faults-%d", (int)getpid());
    snprintf(fp_env, sizeof fp_env, "MEMD_TEST_STORE_FAILPOINT=%s", fp);
    env[0] = fp_env;
    memset(&fo, 0, sizeof fo);
    fo.capture_stderr = true;
    fo.test_build = true;
    fo.env = env;
    fo.config_yaml = yaml;
    ck_assert_int_eq(memd_fixture_start(&f, &fo), 0);
}

static void respawn(void)
{
    ck_assert_int_eq(memd_fixture_respawn(&f, &fo), 0);
}

static void teardown(void)
{
    memd_fixture_destroy(&f);
    untouch(".kill");
    untouch(".grow");
    if (state_dir[0]) {
        umount(state_dir);
        rmdir(state_dir);
        state_dir[0] = '\0';
    }
}

/* ---- a reply lost with the daemon ---- */

typedef struct call {
    memclient *c;
    int op; /* 0 alloc, 1 alloc batch, 2 free, 3 free batch */
    memclient_alloc_req req[3];
    size_t n;
    uint64_t handles[3];
    memclient_buffer out[3];
    int rc;
} call;

static void *run_call(void *arg)
{
    call *k = arg;
    switch (k->op) {
    case 0: k->rc = memclient_alloc(k->c, &k->req[0], &k->out[0]); break;
    case 1: k->rc = memclient_alloc_batch(k->c, k->req, k->n, k->out); break;
    case 2: k->rc = memclient_free(k->c, k->handles[0]); break;
    default: k->rc = memclient_free_batch(k->c, k->handles, k->n); break;
    }
    return NULL;
}

/* Runs k while memd dies right after committing it (before its reply), starts memd
 * again, and returns when the call has come back. */
static void call_across_a_crash(call *k)
{
    touch(".kill");
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, run_call, k), 0);
    ck_assert_int_eq(memd_fixture_wait(&f, 10000), 128 + SIGKILL);
    respawn();
    pthread_join(t, NULL);
    ck_assert_msg(k->rc == 0, "call %d across a crash: %d", k->op, k->rc);
}

/* The allocations session sid holds, per the daemon. */
static size_t held_by(memclient *admin, uint32_t sid, uint64_t *handles, size_t cap)
{
    memclient_snapshot *s = cu_dump(admin, 0);
    size_t n = 0;
    for (size_t i = 0; i < s->nsessions; i++)
        if (s->sessions[i].id == sid)
            n = s->sessions[i].allocations;
    size_t k = 0;
    for (size_t i = 0; i < s->nallocs && handles; i++)
        if (s->allocs[i].session_id == sid && k < cap)
            handles[k++] = s->allocs[i].buf.handle;
    memclient_snapshot_free(s);
    return n;
}

/* A client that reconnects and resends by itself (MEMCLIENT_CONNECT_RECONNECT); its
 * session in *info. */
static memclient *retrying_client(memclient_session_info *info)
{
    memclient *c;
    ck_assert_int_eq(memclient_connect_flags(f.socket_path, "retry", MEMCLIENT_CONNECT_RECONNECT,
                                             &c), 0);
    ck_assert_int_eq(memclient_session(c, info), 0);
    return c;
}

START_TEST(lost_replies_are_answered_once)
{
    start(NULL);
    memclient_session_info info;
    memclient *c = retrying_client(&info);
    uint32_t sid = info.session_id;
    memclient_buffer b0;
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 4096);
    ck_assert_int_eq(memclient_alloc(c, &r, &b0), 0);

    /* ALLOC: the retry gets the first sending's buffer. */
    call k = {.c = c, .op = 0, .req = {cu_req(MEMD_CLASS_CONSTANT, 8192)}};
    call_across_a_crash(&k);
    memclient *admin = cu_connect(&f);
    ck_assert_uint_eq(held_by(admin, sid, NULL, 0), 2);
    memclient_alloc_info qi;
    ck_assert_int_eq(memclient_query(admin, k.out[0].handle, &qi), 0);
    ck_assert_uint_eq(qi.buf.address, k.out[0].address);
    ck_assert_int_eq(memclient_session(c, &info), 0);
    ck_assert_uint_eq(info.session_id, sid);

    /* A shared ALLOC: one hold, not two. */
    call ks = {.c = c, .op = 0, .req = {cu_req(MEMD_CLASS_CONSTANT, 4096)}};
    ks.req[0].name = "weights";
    ks.req[0].flags = MEMCLIENT_ALLOC_SHARED;
    call_across_a_crash(&ks);
    memclient_disconnect(admin);
    admin = cu_connect(&f);
    ck_assert_int_eq(memclient_query(admin, ks.out[0].handle, &qi), 0);
    ck_assert_uint_eq(qi.buf.refcount, 1);
    ck_assert_uint_eq(held_by(admin, sid, NULL, 0), 3);

    /* ALLOC_BATCH with a shared record between two new ones: the same three, in order. */
    call kb = {.c = c, .op = 1, .n = 3,
               .req = {cu_req(MEMD_CLASS_INTERNAL, 1024), ks.req[0], cu_req(MEMD_CLASS_INTERNAL, 2048)}};
    call_across_a_crash(&kb);
    memclient_disconnect(admin);
    admin = cu_connect(&f);
    ck_assert_uint_eq(held_by(admin, sid, NULL, 0), 6);
    ck_assert_uint_eq(kb.out[1].handle, ks.out[0].handle);
    ck_assert_uint_lt(kb.out[0].handle, kb.out[2].handle);
    ck_assert_uint_eq(kb.out[0].size_per_bank < kb.out[2].size_per_bank, 1);
    ck_assert_int_eq(memclient_query(admin, ks.out[0].handle, &qi), 0);
    ck_assert_uint_eq(qi.buf.refcount, 2); /* the single ALLOC's hold and the batch's */

    /* FREE and FREE_BATCH whose replies were lost: success, and gone. */
    call kf = {.c = c, .op = 2, .handles = {k.out[0].handle}};
    call_across_a_crash(&kf);
    call kfb = {.c = c, .op = 3, .n = 2, .handles = {kb.out[0].handle, kb.out[2].handle}};
    call_across_a_crash(&kfb);
    memclient_disconnect(admin);
    admin = cu_connect(&f);
    uint64_t left[8];
    ck_assert_uint_eq(held_by(admin, sid, left, 8), 3); /* b0, and weights twice */
    ck_assert_int_eq(memclient_query(admin, k.out[0].handle, &qi), -ENOENT);
    ck_assert_int_eq(memclient_query(admin, kb.out[2].handle, &qi), -ENOENT);

    /* ALLOC_BANKS, and ALLOC_BATCH_BANKS with a plain record between two bank sets: the
     * retries get the first sendings' buffers, with their banks (bank_out) again. */
    static uint32_t set[] = {3, 1, 2}, one = 5;
    static memclient_bank banks[2][3];
    call kk = {.c = c, .op = 0, .req = {cu_req(MEMD_CLASS_CONSTANT, 4096)}};
    kk.req[0].bank_set = set;
    kk.req[0].nbank_set = 3;
    kk.req[0].per_bank = 1;
    call_across_a_crash(&kk);
    call kbb = {.c = c, .op = 1, .n = 3,
                .req = {cu_req(MEMD_CLASS_INTERNAL, 1024), cu_req(MEMD_CLASS_INTERNAL, 2048),
                        cu_req(MEMD_CLASS_INTERNAL, 512)}};
    kbb.req[0].bank_set = set;
    kbb.req[0].nbank_set = 3;
    kbb.req[0].bank_out = banks[0];
    kbb.req[0].nbank_out = 3;
    kbb.req[2].bank_set = &one;
    kbb.req[2].nbank_set = 1;
    kbb.req[2].per_bank = 1;
    kbb.req[2].bank_out = banks[1];
    kbb.req[2].nbank_out = 3;
    call_across_a_crash(&kbb);
    memclient_disconnect(admin);
    admin = cu_connect(&f);
    ck_assert_uint_eq(held_by(admin, sid, NULL, 0), 3 + 1 + 3);
    ck_assert_int_eq(kk.out[0].bank_mode, MEMD_BANKS_PER_BANK);
    ck_assert_int_eq(kbb.out[0].bank_mode, MEMD_BANKS_RANGE);
    ck_assert_int_eq(kbb.out[1].bank_mode, MEMD_BANKS_ALL);
    ck_assert_uint_lt(kbb.out[0].handle, kbb.out[2].handle);
    ck_assert_uint_eq(banks[0][0].bank, 1);
    ck_assert_uint_eq(banks[0][2].address, kbb.out[0].address);
    ck_assert_uint_eq(banks[1][0].bank, 5);
    ck_assert_uint_eq(banks[1][0].address, kbb.out[2].address);
    memclient_bank bi[3];
    ck_assert_int_eq(memclient_bank_info(admin, kbb.out[2].handle, bi, 3), 1);
    ck_assert_uint_eq(bi[0].address, banks[1][0].address);
    /* And the connection goes on as usual. */
    ck_assert_int_eq(memclient_free(c, b0.handle), 0);
    memclient_disconnect(admin);
    memclient_disconnect(c);
}
END_TEST

/* Submitted (pipelined) requests whose replies died with the daemon are sent again by
 * memclient_complete after the restart, in order, with their tickets: memd answers those
 * it had done with what it did, so nothing is created twice or lost. */
START_TEST(lost_pipelined_replies_are_answered_once)
{
    start(NULL);
    memclient_session_info info;
    memclient *c = retrying_client(&info);
    uint32_t sid = info.session_id;
    memclient_buffer b0, out[4], batch[2];
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 4096);
    ck_assert_int_eq(memclient_alloc(c, &r, &b0), 0);

    touch(".kill"); /* memd dies right after committing, before any reply */
    uint64_t tickets[6];
    for (int i = 0; i < 4; i++) {
        memclient_alloc_req q = cu_req(MEMD_CLASS_INTERNAL, 1024u << i);
        ck_assert_int_eq(memclient_submit_alloc(c, &q, &out[i], &tickets[i]), 0);
    }
    memclient_alloc_req qb[2] = {cu_req(MEMD_CLASS_INTERNAL, 512), cu_req(MEMD_CLASS_CONSTANT, 768)};
    ck_assert_int_eq(memclient_submit_alloc_batch(c, qb, 2, batch, &tickets[4]), 0);
    ck_assert_int_eq(memclient_submit_free(c, b0.handle, &tickets[5]), 0);
    (void)memclient_flush(c); /* the daemon may die while it reads them */
    ck_assert_int_eq(memd_fixture_wait(&f, 10000), 128 + SIGKILL);
    respawn();
    for (int i = 0; i < 6; i++) {
        memclient_completion done;
        ck_assert_int_eq(memclient_complete(c, &done), 0);
        ck_assert_uint_eq(done.ticket, tickets[i]);
        ck_assert_msg(done.status == 0, "request %d: %d", i, done.status);
    }
    ck_assert_uint_eq(memclient_pending(c), 0);
    ck_assert_int_eq(memclient_session(c, &info), 0);
    ck_assert_uint_eq(info.session_id, sid); /* reclaimed, not a new session */
    /* Exactly the six buffers, where the replies said, and b0 gone. */
    memclient *admin = cu_connect(&f);
    uint64_t held[16];
    ck_assert_uint_eq(held_by(admin, sid, held, 16), 6);
    memclient_alloc_info qi;
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(memclient_query(admin, out[i].handle, &qi), 0);
        ck_assert_uint_eq(qi.buf.address, out[i].address);
        ck_assert_uint_eq(qi.buf.size_per_bank, out[i].size_per_bank);
    }
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(memclient_query(admin, batch[i].handle, &qi), 0);
    ck_assert_int_eq(memclient_query(admin, b0.handle, &qi), -ENOENT);
    memclient_snapshot *snap = cu_dump(admin, 0);
    ck_assert_int_eq(cu_check_map(snap), 0);
    memclient_snapshot_free(snap);
    memclient_disconnect(admin);
    /* The connection goes on as usual. */
    ck_assert_int_eq(memclient_free(c, out[0].handle), 0);
    memclient_disconnect(c);
}
END_TEST

/* Without the flag nothing changes: the call fails, and stays failed. */
START_TEST(no_reconnect_without_the_flag)
{
    start(NULL);
    memclient *c = cu_connect(&f);
    memclient_buffer b;
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 4096);
    touch(".kill");
    int rc = memclient_alloc(c, &r, &b);
    ck_assert_msg(rc == -ECONNRESET || rc == -EPIPE, "%d", rc);
    ck_assert_int_eq(memd_fixture_wait(&f, 10000), 128 + SIGKILL);
    respawn();
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -ENOTCONN);
    ck_assert_int_eq(memclient_reconnect(c, 5000), 0); /* reclaimed explicitly */
    memclient_session_info info;
    ck_assert_int_eq(memclient_session(c, &info), 0);
    ck_assert_uint_eq(info.reclaimed, 1); /* the lost reply's buffer is the session's */
    memclient_disconnect(c);
}
END_TEST

/* memctl alloc --hold keeps its buffer across a daemon crash: it reclaims its session
 * by itself within the grace period, and frees the buffer at SIGTERM. */
START_TEST(memctl_hold_survives_a_restart)
{
    start(NULL);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t pid = memctl_spawn(&f,
                             MEMCTL_ARGS("alloc", "--device", "0", "--class", "constant", "--size",
                                         "64KiB", "--hold"),
                             0, p[1], STDERR_FILENO);
    close(p[1]);
    char line[512] = "";
    FILE *in = fdopen(p[0], "r");
    ck_assert_ptr_nonnull(fgets(line, sizeof line, in));
    unsigned long long handle = 0, addr = 0;
    ck_assert_msg(sscanf(line, "handle=%llu", &handle) == 1, "%s", line);
    char *a = strstr(line, "address=0x");
    ck_assert_ptr_nonnull(a);
    addr = strtoull(a + 10, NULL, 16);
    ck_assert_int_eq(memd_fixture_restart(&f, &fo, SIGKILL), 0);
    /* Within a second memctl has its session back: the orphan is gone, the buffer held. */
    memclient *admin = cu_connect(&f);
    bool back = false;
    for (int i = 0; i < 100 && !back; i++) {
        memclient_snapshot *s = cu_dump(admin, 0);
        const memclient_alloc_info *ai = cu_find(s, handle);
        ck_assert_ptr_nonnull(ai);
        ck_assert_uint_eq(ai->buf.address, addr);
        back = true;
        for (size_t k = 0; k < s->nsessions; k++)
            if (s->sessions[k].id == ai->session_id && s->sessions[k].orphaned)
                back = false;
        memclient_snapshot_free(s);
        if (!back)
            memd_test_sleep_ms(20);
    }
    ck_assert_msg(back, "memctl did not reclaim its session");
    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    int ws;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    fclose(in);
    uint64_t h64 = handle;
    ck_assert(cu_wait_gone(admin, &h64, 1, 5000));
    memclient_disconnect(admin);
}
END_TEST

/* ---- a full state file system ---- */

/* A config whose state_dir is dir (the shipped device descriptors, by absolute path). */
static void config_in(const char *dir)
{
    snprintf(cfg_yaml, sizeof cfg_yaml,
             "state_dir: %s\n"
             "limits:\n  reclaim_grace_ms: 30000\n"
             "devices:\n  - id: 0\n    descriptor: %s/config/devices/wormhole_b0.yaml\n",
             dir, memd_fixture_source_root());
}

START_TEST(full_state_filesystem)
{
    /* A 2 MiB tmpfs (root can mount one): the store starts at 1 MiB and cannot double
     * while a filler takes the rest. Elsewhere the "grow" failpoint plays the full disk. */
    snprintf(state_dir, sizeof state_dir, "/tmp/memd-fullfs-%d", (int)getpid());
    ck_assert_int_eq(mkdir(state_dir, 0700), 0);
    bool tmpfs = mount("tmpfs", state_dir, "tmpfs", 0, "size=2m") == 0;
    char filler[256];
    snprintf(filler, sizeof filler, "%s/filler", state_dir);
    if (tmpfs) {
        int fd = open(filler, O_WRONLY | O_CREAT, 0600);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(posix_fallocate(fd, 0, 900 * 1024), 0);
        close(fd);
    }
    config_in(state_dir);
    start(cfg_yaml);
    if (!tmpfs)
        touch(".grow");
    memclient *c = cu_connect(&f);
    size_t cap = 100000;
    uint64_t *acked = calloc(cap, sizeof *acked);
    ck_assert_ptr_nonnull(acked);
    memclient_alloc_req r = cu_req(MEMD_CLASS_INTERNAL, 64);
    size_t n = cu_fill_store(c, &r, acked, cap);
    ck_assert_uint_gt(n, 1000);
    memclient_buffer b;
    /* Still refused, still connected; and batches too. */
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -EIO);
    memclient_alloc_req rb[4] = {r, r, r, r};
    memclient_buffer ob[4];
    ck_assert_int_eq(memclient_alloc_batch(c, rb, 4, ob), -EIO);
    /* Nothing acknowledged is missing from the store: a crash keeps exactly these. */
    ck_assert_int_eq(memd_fixture_restart(&f, &fo, SIGKILL), 0);
    ck_assert_int_eq(memclient_reconnect(c, 5000), 0);
    memclient_session_info info;
    ck_assert_int_eq(memclient_session(c, &info), 0);
    ck_assert_uint_eq(info.reclaimed, n);
    memclient_alloc_info qi;
    ck_assert_int_eq(memclient_query(c, acked[0], &qi), 0);
    ck_assert_int_eq(memclient_query(c, acked[n - 1], &qi), 0);
    /* Space frees: allocations go in again. */
    if (tmpfs)
        ck_assert_int_eq(unlink(filler), 0);
    else
        untouch(".grow");
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    ck_assert_int_eq(memclient_alloc_batch(c, rb, 4, ob), 0);
    memclient_disconnect(c);
    memd_fixture_destroy(&f);
    free(acked);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("store-faults");
    TCase *tc = tcase_create("store-faults");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, lost_replies_are_answered_once);
    tcase_add_test(tc, lost_pipelined_replies_are_answered_once);
    tcase_add_test(tc, no_reconnect_without_the_flag);
    tcase_add_test(tc, memctl_hold_survives_a_restart);
    tcase_add_test(tc, full_state_filesystem);
    suite_add_tcase(s, tc);
    return s;
}

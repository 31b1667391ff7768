/* libmemclient + the real daemon: client pools. Sub-allocation matches the reference
 * allocator exactly (seeded), memd's books match the process after a flush and within
 * the staleness bound without one, a report that lies is refused whole, threads share a
 * pool, growth stops at its limit, and a SIGKILLed client's pools go back whole. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "client_util.h"
#include "raw_client.h"
#include "ref_range.h"
#include "test_clock.h"
#include "test_rand.h"

#define DEFAULT_SEED UINT64_C(0x706f6f6c73)

static memclient_pool *make_pool(memclient *c, uint64_t bytes, uint32_t flags)
{
    memclient_alloc_req r = cu_req(MEMD_CLASS_INTERNAL, bytes);
    r.name = "test-pool";
    r.flags = flags;
    memclient_pool *p = NULL;
    int rc = memclient_pool_create(c, &r, &p);
    if (rc < 0) {
        memclient_error e;
        memclient_last_error(&e);
        ck_abort_msg("pool_create: %s", e.message);
    }
    return p;
}

static const memclient_pool_rec *find_pool(const memclient_snapshot *s, uint64_t handle)
{
    for (size_t i = 0; i < s->npools; i++)
        if (s->pools[i].handle == handle)
            return &s->pools[i];
    return NULL;
}

static const memclient_suballoc_rec *find_sub(const memclient_snapshot *s, uint64_t pool,
                                              uint64_t offset)
{
    for (size_t i = 0; i < s->nsuballocs; i++)
        if (s->suballocs[i].pool == pool && s->suballocs[i].offset == offset)
            return &s->suballocs[i];
    return NULL;
}

typedef struct live {
    memclient_pool_buffer b;
    char name[32];
} live;

/* Random sub-allocations against tests/common/ref_range.c over the same range: every
 * address must be the reference's, and after a flush memd's books must list exactly the
 * live set (offset, size, name). */
START_TEST(pool_matches_reference_allocator)
{
    uint64_t seed = memd_test_seed(DEFAULT_SEED), rng = seed;
    printf("# seed 0x%016" PRIx64 " (MEMD_TEST_SEED)\n", seed);
    memd_fixture f;
    cu_start(&f);
    memclient *c = cu_connect(&f);
    memclient_pool *p = make_pool(c, 4u << 20, 0);
    memclient_pool_info pi;
    ck_assert_int_eq(memclient_pool_query(p, &pi), 0);
    ck_assert_uint_eq(pi.leases, 1);
    ref_range *ref;
    ck_assert_int_eq(ref_range_create(pi.address, pi.leased, MEMCLIENT_POOL_MIN_ALIGN, &ref), 0);

    enum { STEPS = 20000, CAP = 512 };
    live *lv = calloc(CAP, sizeof *lv);
    size_t n = 0;
    for (int step = 0; step < STEPS; step++) {
        bool do_alloc = n == 0 || (n < CAP && memd_test_rand(&rng) % 100 < 55);
        if (do_alloc) {
            uint64_t bytes = 1 + memd_test_rand(&rng) % (memd_test_rand(&rng) % 8 == 0 ? 256u << 10 : 8u << 10);
            uint64_t align = memd_test_rand(&rng) % 4 == 0 ? (uint64_t)1 << (memd_test_rand(&rng) % 13) : 0;
            char name[32];
            snprintf(name, sizeof name, "t%d", step);
            uint64_t want;
            int er = ref_range_alloc(ref, bytes, align, MEMD_DIR_BOTTOM_UP, MEMD_FIT_FIRST, &want);
            memclient_pool_buffer b;
            int rc = memclient_pool_alloc(p, bytes, align, name, &b);
            ck_assert_msg(rc == er, "seed 0x%" PRIx64 " step %d: pool %d, reference %d", seed,
                          step, rc, er);
            if (rc < 0)
                continue;
            ck_assert_msg(b.address == want, "seed 0x%" PRIx64 " step %d: %zu bytes at 0x%" PRIx64
                          ", reference 0x%" PRIx64, seed, step, (size_t)bytes, b.address, want);
            ck_assert_uint_ge(b.size, bytes);
            ck_assert_uint_eq(b.offset, b.address - pi.address);
            ck_assert_uint_eq(b.lease, pi.handle);
            lv[n].b = b;
            memcpy(lv[n].name, name, sizeof name);
            n++;
        } else {
            size_t i = memd_test_rand(&rng) % n;
            ck_assert_int_eq(memclient_pool_free(p, lv[i].b.handle), 0);
            ck_assert_int_eq(ref_range_free(ref, lv[i].b.address, NULL), 0);
            /* A handle is refused once freed. */
            ck_assert_int_eq(memclient_pool_free(p, lv[i].b.handle), -ENOENT);
            lv[i] = lv[--n];
        }
        if (step % 5000 == 4999 || step == STEPS - 1) {
            ck_assert_int_eq(memclient_pool_flush(p), 0);
            memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_SUBALLOCS);
            const memclient_alloc_info *a = cu_find(s, pi.handle);
            ck_assert_ptr_nonnull(a);
            ck_assert_int_eq(a->pool, 1);
            ck_assert_str_eq(a->name, "test-pool");
            const memclient_pool_rec *pr = find_pool(s, pi.handle);
            ck_assert_ptr_nonnull(pr);
            ck_assert_uint_eq(pr->suballocs, n);
            uint64_t pooled = 0;
            for (size_t i = 0; i < n; i++) {
                const memclient_suballoc_rec *sr = find_sub(s, pi.handle, lv[i].b.offset);
                ck_assert_msg(sr != NULL, "step %d: %s not in memd's books", step, lv[i].name);
                ck_assert_uint_eq(sr->size, lv[i].b.size);
                ck_assert_str_eq(sr->name, lv[i].name);
                ck_assert_uint_eq(sr->as_of_ns, pr->as_of_ns);
                pooled += lv[i].b.size;
            }
            ck_assert_uint_eq(pr->pooled_bytes, pooled);
            ck_assert_int_eq(cu_check_map(s), 0);
            memclient_snapshot_free(s);
        }
    }
    /* Pools without their sub-allocations (what metrics ask for). */
    memclient_snapshot *only = cu_dump(c, MEMCLIENT_DUMP_POOLS);
    ck_assert_uint_eq(only->npools, 1);
    ck_assert_uint_eq(only->nsuballocs, 0);
    ck_assert_uint_eq(only->pools[0].suballocs, n);
    memclient_snapshot_free(only);
    memclient_pool_info end;
    ck_assert_int_eq(memclient_pool_query(p, &end), 0);
    ck_assert_uint_eq(end.allocations, n);
    ck_assert_uint_eq(end.unreported, 0);
    free(lv);
    ref_range_destroy(ref);
    ck_assert_int_eq(memclient_pool_destroy(p), 0);
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_SUBALLOCS);
    ck_assert_ptr_null(cu_find(s, pi.handle));
    ck_assert_uint_eq(s->npools, 0);
    memclient_snapshot_free(s);
    memclient_disconnect(c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

/* ---- reports that lie, sent raw ---- */

static int report(int fd, const memd_wire_pool_op *ops, uint32_t n, memd_wire_error *err)
{
    uint8_t buf[MEMD_WIRE_COUNT_SIZE + 8 * MEMD_WIRE_POOL_OP_SIZE];
    uint8_t *p = memd_wire_count_put(buf, n);
    for (uint32_t i = 0; i < n; i++)
        p = memd_wire_pool_op_put(p, &ops[i]);
    if (raw_send(fd, MEMD_OP_POOL_REPORT, 77, buf, (uint32_t)(p - buf)) < 0)
        return -EPIPE;
    memd_wire_hdr h;
    uint8_t rep[512];
    int rc = raw_recv_err(fd, &h, rep, sizeof rep, err, 5000);
    return rc < 0 ? rc : h.status;
}

static memd_wire_pool_op op_alloc(uint64_t pool, uint64_t off, uint64_t size, const char *name)
{
    memd_wire_pool_op o = {.pool = pool, .offset = off, .size = size, .op = MEMD_POOL_OP_ALLOC};
    snprintf(o.name, sizeof o.name, "%s", name);
    return o;
}

static memd_wire_pool_op op_free(uint64_t pool, uint64_t off, uint64_t size)
{
    return (memd_wire_pool_op){.pool = pool, .offset = off, .size = size,
                               .op = MEMD_POOL_OP_FREE};
}

static int suballocs_of(int fd, uint64_t *pooled)
{
    uint8_t *d;
    size_t len;
    ck_assert_int_eq(raw_dump(fd, UINT32_MAX, MEMD_DUMP_F_POOLS | MEMD_DUMP_F_SUBALLOCS, &d, &len), 0);
    int n = raw_dump_count(d, len, MEMD_REC_SUBALLOC);
    *pooled = 0;
    for (size_t off = 0; off < len;) {
        uint32_t tag;
        size_t rec;
        ck_assert_int_eq(memd_wire_tag_get(d + off, len - off, &tag, &rec), 0);
        if (tag == MEMD_REC_POOL) {
            memd_wire_pool_rec pr;
            ck_assert_int_eq(memd_wire_pool_rec_get(d + off + 4, rec, &pr), 0);
            *pooled += pr.pooled_bytes;
        }
        off += 4 + rec;
    }
    free(d);
    return n;
}

START_TEST(lying_reports_are_refused)
{
    memd_fixture f;
    cu_start(&f);
    int fd = memd_fixture_connect(&f);
    ck_assert_int_ge(fd, 0);
    memd_wire_welcome w;
    ck_assert_int_eq(raw_hello(fd, "liar", &w), 0);
    memd_wire_alloc_req r = raw_req(0, MEMD_CLASS_INTERNAL, MEMD_SCOPE_DRAM, 64 << 10);
    r.flags = MEMD_ALLOC_F_POOL;
    memd_wire_buffer pool, plain;
    ck_assert_int_eq(raw_alloc(fd, &r, &pool, NULL), 0);
    uint64_t size = pool.size_per_bank;
    r.flags = 0;
    ck_assert_int_eq(raw_alloc(fd, &r, &plain, NULL), 0);
    memd_wire_error err;

    /* The truth is accepted. */
    memd_wire_pool_op ok[2] = {op_alloc(pool.handle, 0, 4096, "a"),
                               op_alloc(pool.handle, 8192, 4096, "b")};
    ck_assert_int_eq(report(fd, ok, 2, &err), 0);
    uint64_t pooled;
    ck_assert_int_eq(suballocs_of(fd, &pooled), 2);
    ck_assert_uint_eq(pooled, 8192);

    /* Outside the pool: past its end, and wrapping around. */
    memd_wire_pool_op o = op_alloc(pool.handle, size - 4096, 8192, "out");
    ck_assert_int_eq(report(fd, &o, 1, &err), -ERANGE);
    ck_assert_msg(strstr(err.message, "leaves pool"), "%s", err.message);
    o = op_alloc(pool.handle, UINT64_MAX - 31, 64, "wrap");
    ck_assert_int_eq(report(fd, &o, 1, &err), -ERANGE);
    /* Overlapping a live sub-allocation. */
    o = op_alloc(pool.handle, 4064, 64, "over");
    ck_assert_int_eq(report(fd, &o, 1, &err), -EEXIST);
    ck_assert_msg(strstr(err.message, "overlaps"), "%s", err.message);
    /* Off the pool's granule (issue 27: offset 3 and size 5 were accepted). */
    o = op_alloc(pool.handle, 3, 32, "odd");
    ck_assert_int_eq(report(fd, &o, 1, &err), -EINVAL);
    ck_assert_msg(strstr(err.message, "multiples of 32"), "%s", err.message);
    o = op_alloc(pool.handle, 32768, 5, "odd");
    ck_assert_int_eq(report(fd, &o, 1, &err), -EINVAL);
    o = op_free(pool.handle, 0, 4095);
    ck_assert_int_eq(report(fd, &o, 1, &err), -EINVAL);
    ck_assert_msg(strstr(err.message, "multiples of 32"), "%s", err.message);
    /* A free of nothing, and of the wrong size. */
    o = op_free(pool.handle, 4096, 4096);
    ck_assert_int_eq(report(fd, &o, 1, &err), -ENOENT);
    o = op_free(pool.handle, 0, 64);
    ck_assert_int_eq(report(fd, &o, 1, &err), -EINVAL);
    /* Not a pool. */
    o = op_alloc(plain.handle, 0, 64, "x");
    ck_assert_int_eq(report(fd, &o, 1, &err), -EINVAL);
    ck_assert_msg(strstr(err.message, "not a pool"), "%s", err.message);
    /* All or nothing: a true free and a true alloc, then a lie: none of it is applied. */
    memd_wire_pool_op mixed[3] = {op_free(pool.handle, 0, 4096),
                                  op_alloc(pool.handle, 16384, 1024, "c"),
                                  op_alloc(pool.handle, 8192 + 96, 32, "lie")};
    ck_assert_int_eq(report(fd, mixed, 3, &err), -EEXIST);
    ck_assert_msg(strstr(err.message, "op 2"), "%s", err.message);
    ck_assert_int_eq(suballocs_of(fd, &pooled), 2);
    ck_assert_uint_eq(pooled, 8192);
    /* A reset: only with offset and size 0; with a lie after it, nothing changes. */
    o = (memd_wire_pool_op){.pool = pool.handle, .offset = 4096, .op = MEMD_POOL_OP_RESET};
    ck_assert_int_eq(report(fd, &o, 1, &err), -EINVAL);
    ck_assert_msg(strstr(err.message, "reset"), "%s", err.message);
    memd_wire_pool_op reset_lie[3] = {{.pool = pool.handle, .op = MEMD_POOL_OP_RESET},
                                      op_alloc(pool.handle, 0, 1024, "new"),
                                      op_alloc(pool.handle, 512, 32, "lie")};
    ck_assert_int_eq(report(fd, reset_lie, 3, &err), -EEXIST);
    ck_assert_int_eq(suballocs_of(fd, &pooled), 2);
    ck_assert_uint_eq(pooled, 8192);
    /* A reset and the whole truth again replace the books. */
    memd_wire_pool_op again[3] = {{.pool = pool.handle, .op = MEMD_POOL_OP_RESET},
                                  op_alloc(pool.handle, 0, 4096, "a"),
                                  op_alloc(pool.handle, 8192, 4096, "b")};
    ck_assert_int_eq(report(fd, again, 3, &err), 0);
    ck_assert_int_eq(suballocs_of(fd, &pooled), 2);
    ck_assert_uint_eq(pooled, 8192);
    /* Freeing twice in one report. */
    memd_wire_pool_op twice[2] = {op_free(pool.handle, 0, 4096), op_free(pool.handle, 0, 4096)};
    ck_assert_int_eq(report(fd, twice, 2, &err), -ENOENT);
    ck_assert_int_eq(suballocs_of(fd, &pooled), 2);

    /* Another session's pool. */
    int fd2 = memd_fixture_connect(&f);
    ck_assert_int_ge(fd2, 0);
    ck_assert_int_eq(raw_hello(fd2, "other", &w), 0);
    o = op_alloc(pool.handle, 32768, 64, "theirs");
    ck_assert_int_lt(report(fd2, &o, 1, &err), 0);
    ck_assert_msg(err.status == -EPERM || err.status == -ENOENT, "%d", err.status);
    close(fd2);

    /* After the pool is freed, reports about it are refused. */
    ck_assert_int_eq(raw_free(fd, pool.handle, NULL), 0);
    o = op_free(pool.handle, 8192, 4096);
    ck_assert_int_eq(report(fd, &o, 1, &err), -ENOENT);
    ck_assert_int_eq(suballocs_of(fd, &pooled), 0);
    /* The connection is fine after every refusal. */
    ck_assert_int_eq(raw_free(fd, plain.handle, NULL), 0);
    close(fd);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

/* memd's books of one pool as a sorted list of (offset, size). */
static size_t books_of(memclient *c, uint64_t pool, uint64_t (*out)[2], size_t cap)
{
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_SUBALLOCS);
    size_t n = 0;
    for (size_t i = 0; i < s->nsuballocs; i++)
        if (s->suballocs[i].pool == pool) {
            ck_assert_uint_lt(n, cap);
            out[n][0] = s->suballocs[i].offset;
            out[n][1] = s->suballocs[i].size;
            n++;
        }
    memclient_snapshot_free(s);
    return n;
}

/* A flush that puts memd's books right: 0, or once more the -EMFILE of a refusal the
 * report timer met since the last flush (under valgrind the 50 ms timer fires anywhere). */
static void flush_settles(memclient_pool *p)
{
    int rc = memclient_pool_flush(p);
    if (rc == -EMFILE)
        rc = memclient_pool_flush(p);
    ck_assert_int_eq(rc, 0);
}

/* A report memd refuses (here: past max_suballocs_per_pool) must not leave its books
 * out of step with the process: the library resets them and reports the pool whole
 * again, at the next flush or within the timer's bound, and deltas work after that. */
START_TEST(refused_report_is_followed_by_a_resync)
{
    memd_fixture f;
    cu_start_limits(&f, "max_suballocs_per_pool: 8");
    memclient *c = cu_connect(&f);
    memclient_pool *p = make_pool(c, 1 << 20, 0);
    memclient_pool_info pi;
    ck_assert_int_eq(memclient_pool_query(p, &pi), 0);
    memclient_pool_buffer b[12];
    for (int i = 0; i < 12; i++)
        ck_assert_int_eq(memclient_pool_alloc(p, 4096, 0, "sub", &b[i]), 0);
    /* Twelve live, eight allowed: refused (the resync flush does too), books empty. */
    ck_assert_int_eq(memclient_pool_flush(p), -EMFILE);
    memclient_error e;
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "max_suballocs_per_pool"), "%s", e.message);
    uint64_t books[16][2];
    ck_assert_uint_eq(books_of(c, pi.handle, books, 16), 0);
    /* Free five (four of them memd never accepted) and flush: the pool's whole state. */
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(memclient_pool_free(p, b[i * 2].handle), 0);
    flush_settles(p);
    size_t n = books_of(c, pi.handle, books, 16);
    ck_assert_uint_eq(n, 7);
    for (size_t k = 0, i = 0; i < 12; i++) {
        if (i % 2 == 0 && i < 10)
            continue;
        ck_assert_uint_eq(books[k][0], b[i].offset);
        ck_assert_uint_eq(books[k][1], b[i].size);
        k++;
    }
    /* Deltas again, and a refusal healed by the timer alone this time. */
    memclient_pool_buffer x, y;
    ck_assert_int_eq(memclient_pool_alloc(p, 64, 0, "x", &x), 0);
    flush_settles(p);
    ck_assert_uint_eq(books_of(c, pi.handle, books, 16), 8);
    ck_assert_int_eq(memclient_pool_alloc(p, 64, 0, "y", &y), 0);
    ck_assert_int_eq(memclient_pool_flush(p), -EMFILE); /* nine: refused, resync too */
    ck_assert_int_eq(memclient_pool_free(p, b[1].handle), 0); /* eight: the timer's turn */
    long t0 = memd_test_now_ms();
    for (;;) { /* the timer resyncs within its bound: 8 live, b[1] gone, x and y there */
        n = books_of(c, pi.handle, books, 16);
        bool has_y = false;
        for (size_t i = 0; i < n; i++)
            has_y |= books[i][0] == y.offset;
        if (n == 8 && has_y)
            break;
        ck_assert_msg(memd_test_now_ms() - t0 < 5000, "books not resynced: %zu sub-allocations", n);
        memd_test_sleep_ms(10);
    }
    flush_settles(p);
    ck_assert_int_eq(memclient_pool_destroy(p), 0);
    memclient_disconnect(c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

/* A refusal that the same state would meet again ends the loop (issue 27: an idle client
 * whose pool was over max_suballocs_per_pool resent a RESET and its whole state every
 * 50 ms, 422 requests in 5 s): the library backs off, memd serves a handful of requests
 * while the client idles, and the pool says what memd has not heard of and why. */
START_TEST(refused_pool_backs_off)
{
    memd_fixture f;
    cu_start_limits(&f, "max_suballocs_per_pool: 8");
    memclient *c = cu_connect(&f), *watch = cu_connect(&f);
    memclient_pool *p = make_pool(c, 1 << 20, 0);
    memclient_pool_buffer b[12];
    for (int i = 0; i < 12; i++)
        ck_assert_int_eq(memclient_pool_alloc(p, 4096, 0, "sub", &b[i]), 0);
    ck_assert_int_eq(memclient_pool_flush(p), -EMFILE);
    memclient_pool_info pi;
    ck_assert_int_eq(memclient_pool_query(p, &pi), 0);
    ck_assert_uint_eq(pi.unreported, 12);
    ck_assert_uint_eq(pi.refused_errno, EMFILE);
    memclient_snapshot *s = cu_dump(watch, 0);
    uint64_t before = s->server.requests;
    memclient_snapshot_free(s);
    memd_test_sleep_ms(3000); /* the client idles */
    s = cu_dump(watch, 0);
    uint64_t served = s->server.requests - before - 1; /* less the second dump */
    memclient_snapshot_free(s);
    printf("# requests served in 3 s of an idle refused pool: %" PRIu64 "\n", served);
    /* Back-off 100, 200, 400, 800, 1600 ms: at most 5 resyncs (60 every 50 ms). */
    ck_assert_uint_le(served, 6);
    ck_assert_int_eq(memclient_pool_query(p, &pi), 0);
    ck_assert_uint_eq(pi.unreported, 12);
    ck_assert_uint_eq(pi.refused_errno, EMFILE);
    /* Back under the limit, a flush heals it at once. */
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(memclient_pool_free(p, b[i].handle), 0);
    /* (that flush also tells of the timer's refusals while idle; the next has none) */
    ck_assert_int_eq(memclient_pool_flush(p), -EMFILE);
    ck_assert_int_eq(memclient_pool_flush(p), 0);
    ck_assert_int_eq(memclient_pool_query(p, &pi), 0);
    ck_assert_uint_eq(pi.unreported, 0);
    ck_assert_uint_eq(pi.refused_errno, 0);
    ck_assert_int_eq(memclient_pool_destroy(p), 0);
    memclient_disconnect(watch);
    memclient_disconnect(c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

/* The child of killed_client_pools_come_back: two pools, the first grown twice; the
 * handles of their four ranges. */
static void two_pools(const char *socket_path, const void *arg, uint64_t *h, size_t n)
{
    (void)arg;
    (void)n;
    memclient *cc;
    memclient_alloc_req r = cu_req(MEMD_CLASS_INTERNAL, 1 << 20);
    r.flags = MEMCLIENT_POOL_GROW;
    memclient_pool *p1, *p2;
    memclient_pool_buffer b;
    if (memclient_connect(socket_path, &cc) < 0 || memclient_pool_create(cc, &r, &p1) < 0)
        return;
    r.flags = 0;
    r.bytes = 256 << 10;
    if (memclient_pool_create(cc, &r, &p2) < 0)
        return;
    for (int i = 0; i < 3; i++)
        (void)memclient_pool_alloc(p1, 700 << 10, 0, "act", &b); /* grows */
    (void)memclient_pool_alloc(p2, 1000, 0, "small", &b);
    memclient_buffer lb;
    for (uint32_t i = 0; i < 3 && memclient_pool_lease(p1, i, &lb) == 0; i++)
        h[i] = lb.handle;
    if (memclient_pool_lease(p2, 0, &lb) == 0)
        h[3] = lb.handle;
    (void)memclient_pool_flush(p1);
}

/* A client with two pools (one grown) is SIGKILLed: every range goes back. */
START_TEST(killed_client_pools_come_back)
{
    memd_fixture f;
    cu_start(&f);
    memclient *c = cu_connect(&f);
    uint64_t base = cu_data_allocated(c);
    uint64_t h[4];
    pid_t pid = cu_fork_holder(&f, two_pools, NULL, h, 4);
    for (int i = 0; i < 4; i++)
        ck_assert_msg(h[i] != 0, "the child could not make its pools (%d)", i);
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_SUBALLOCS);
    ck_assert_uint_eq(s->npools, 4);
    ck_assert_uint_eq(s->nsuballocs, 4);
    for (int i = 0; i < 4; i++) {
        const memclient_alloc_info *a = cu_find(s, h[i]);
        ck_assert_ptr_nonnull(a);
        ck_assert_int_eq(a->pool, 1);
        ck_assert_uint_eq(a->pid, (uint32_t)pid);
    }
    memclient_snapshot_free(s);
    cu_kill_holder(pid);
    ck_assert_msg(cu_wait_gone(c, h, 4, 5000), "the killed client's pools are still held");
    s = cu_dump(c, MEMCLIENT_DUMP_SUBALLOCS);
    ck_assert_uint_eq(cu_region(s, MEMD_KIND_DRAM, "data")->stats.allocated, base);
    ck_assert_uint_eq(s->npools, 0);
    ck_assert_uint_eq(s->nsuballocs, 0);
    ck_assert_int_eq(cu_check_map(s), 0);
    memclient_snapshot_free(s);
    memclient_disconnect(c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

/* ---- threads sharing one pool ---- */

typedef struct thread_arg {
    memclient_pool *p;
    uint64_t seed;
    int failures;
    size_t n;
    memclient_pool_buffer live[64];
} thread_arg;

static void *worker(void *v)
{
    thread_arg *t = v;
    uint64_t rng = t->seed;
    for (int i = 0; i < 20000; i++) {
        if (t->n < 64 && (t->n == 0 || memd_test_rand(&rng) % 2)) {
            memclient_pool_buffer b;
            if (memclient_pool_alloc(t->p, 1 + memd_test_rand(&rng) % 2048, 0, "thr", &b) == 0)
                t->live[t->n++] = b;
            else
                t->failures++;
        } else {
            size_t k = memd_test_rand(&rng) % t->n;
            if (memclient_pool_free(t->p, t->live[k].handle) < 0)
                t->failures++;
            t->live[k] = t->live[--t->n];
        }
    }
    return NULL;
}

static int cmp_addr(const void *a, const void *b)
{
    uint64_t x = ((const memclient_pool_buffer *)a)->address;
    uint64_t y = ((const memclient_pool_buffer *)b)->address;
    return x < y ? -1 : x > y;
}

START_TEST(threads_share_one_pool)
{
    memd_fixture f;
    cu_start(&f);
    memclient *c = cu_connect(&f);
    memclient_pool *p = make_pool(c, 1u << 20, 0);
    enum { T = 4 };
    thread_arg args[T];
    pthread_t th[T];
    for (int i = 0; i < T; i++) {
        args[i] = (thread_arg){.p = p, .seed = memd_test_seed(DEFAULT_SEED) + (uint64_t)i};
        ck_assert_int_eq(pthread_create(&th[i], NULL, worker, &args[i]), 0);
    }
    /* Meanwhile the connection serves other requests, which carry the reports. */
    for (int i = 0; i < 20; i++) {
        memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_SUBALLOCS);
        memclient_snapshot_free(s);
    }
    memclient_pool_buffer all[T * 64];
    size_t n = 0;
    for (int i = 0; i < T; i++) {
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
        ck_assert_int_eq(args[i].failures, 0);
        memcpy(all + n, args[i].live, args[i].n * sizeof *all);
        n += args[i].n;
    }
    qsort(all, n, sizeof *all, cmp_addr);
    for (size_t i = 1; i < n; i++)
        ck_assert_msg(all[i - 1].address + all[i - 1].size <= all[i].address,
                      "two threads' buffers overlap");
    ck_assert_int_eq(memclient_pool_flush(p), 0); /* memd accepted every report */
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_SUBALLOCS);
    ck_assert_uint_eq(s->nsuballocs, n);
    uint64_t pooled = 0;
    for (size_t i = 0; i < n; i++)
        pooled += all[i].size;
    ck_assert_uint_eq(s->pools[0].pooled_bytes, pooled);
    memclient_snapshot_free(s);
    memclient_pool_info pi;
    ck_assert_int_eq(memclient_pool_query(p, &pi), 0);
    ck_assert_uint_eq(pi.used, pooled);
    ck_assert_int_eq(memclient_pool_destroy(p), 0);
    memclient_disconnect(c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

START_TEST(growth_stops_at_its_limit)
{
    memd_fixture f;
    cu_start(&f);
    memclient *c = cu_connect(&f);
    memclient_pool_buffer b;
    /* Without growth a full pool says so. */
    memclient_pool *fixed = make_pool(c, 64 << 10, 0);
    ck_assert_int_eq(memclient_pool_alloc(fixed, 48 << 10, 0, "a", &b), 0);
    ck_assert_int_eq(memclient_pool_alloc(fixed, 48 << 10, 0, "b", &b), -ENOMEM);
    memclient_error e;
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "pool full"), "%s", e.message);
    ck_assert_int_eq(memclient_pool_destroy(fixed), 0);

    memclient_pool *p = make_pool(c, 64 << 10, MEMCLIENT_POOL_GROW);
    ck_assert_int_eq(memclient_pool_set_limit(p, 192 << 10), 0);
    uint64_t h[3];
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(memclient_pool_alloc(p, 48 << 10, 0, "g", &b), 0);
        h[i] = b.lease;
    }
    ck_assert_uint_ne(h[0], h[1]);
    ck_assert_uint_ne(h[1], h[2]);
    memclient_pool_info pi;
    ck_assert_int_eq(memclient_pool_query(p, &pi), 0);
    ck_assert_uint_eq(pi.leases, 3);
    ck_assert_uint_eq(pi.leased, 192 << 10);
    ck_assert_int_eq(memclient_pool_alloc(p, 48 << 10, 0, "over", &b), -ENOMEM);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "limit"), "%s", e.message);
    /* What fits in the ranges it has still goes there. */
    ck_assert_int_eq(memclient_pool_alloc(p, 8 << 10, 0, "fits", &b), 0);
    ck_assert_uint_eq(b.lease, h[0]);
    /* A one-page pool grows by what a large request needs. */
    ck_assert_int_eq(memclient_pool_set_limit(p, 0), 0);
    ck_assert_int_eq(memclient_pool_alloc(p, 256 << 10, 0, "big", &b), 0);
    ck_assert_int_eq(memclient_pool_query(p, &pi), 0);
    ck_assert_uint_eq(pi.leases, 4);
    ck_assert_int_eq(memclient_pool_flush(p), 0);
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_SUBALLOCS);
    ck_assert_uint_eq(s->npools, 4);
    ck_assert_uint_eq(s->nsuballocs, 5);
    memclient_snapshot_free(s);
    ck_assert_int_eq(memclient_pool_destroy(p), 0);
    memclient_disconnect(c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

/* Another connection (an operator's memctl) sees a sub-allocation within the staleness
 * bound, with no flush and no other request on the pool's connection: the timer sends
 * it. The bound is MEMCLIENT_POOL_STALENESS_MS plus a round trip; 100 ms is the
 * documented limit. Three tries, so one scheduling hiccup on a loaded machine is not a
 * failure; under valgrind everything is 10x slower. */
START_TEST(dump_shows_pooled_buffers_within_the_bound)
{
    memd_fixture f;
    cu_start(&f);
    memclient *c = cu_connect(&f);
    memclient *op = cu_connect(&f);
    memclient_pool *p = make_pool(c, 1 << 20, 0);
    uint64_t bound = getenv("MEMD_TEST_DAEMON_WRAPPER") ? 1000 : 100;
    uint64_t best = UINT64_MAX;
    for (int t = 0; t < 3 && best > bound; t++) {
        memclient_pool_buffer b;
        char name[16];
        snprintf(name, sizeof name, "seen%d", t);
        long t0 = memd_test_now_ms();
        ck_assert_int_eq(memclient_pool_alloc(p, 4096, 0, name, &b), 0);
        for (;;) {
            memclient_snapshot *s = cu_dump(op, MEMCLIENT_DUMP_SUBALLOCS);
            const memclient_suballoc_rec *sr = find_sub(s, b.lease, b.offset);
            bool seen = sr && strcmp(sr->name, name) == 0;
            memclient_snapshot_free(s);
            uint64_t dt = (uint64_t)(memd_test_now_ms() - t0);
            if (seen) {
                printf("# seen after %" PRIu64 " ms\n", dt);
                best = dt < best ? dt : best;
                break;
            }
            ck_assert_msg(dt < 5000, "the sub-allocation never reached memd");
            memd_test_sleep_ms(2);
        }
    }
    ck_assert_msg(best <= bound, "best of 3: %" PRIu64 " ms > %" PRIu64 " ms", best, bound);
    /* On the pool's own connection, any request carries the report: at once. */
    memclient_pool_buffer b;
    ck_assert_int_eq(memclient_pool_alloc(p, 64, 0, "piggy", &b), 0);
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_SUBALLOCS);
    ck_assert_ptr_nonnull(find_sub(s, b.lease, b.offset));
    memclient_snapshot_free(s);
    ck_assert_int_eq(memclient_pool_destroy(p), 0);
    memclient_disconnect(op);
    memclient_disconnect(c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

/* One page of a paged DUMP with pools and sub-allocations, on a raw connection: the
 * SUBALLOC records of pool are checked to come in address order after *last (each
 * once) and counted into *subs; returns the next cursor. */
static uint64_t pool_page(int fd, uint64_t cursor, uint64_t pool, uint64_t *last,
                          size_t *subs, uint8_t *buf, size_t cap)
{
    uint8_t q[MEMD_WIRE_DUMP_REQ_SIZE];
    memd_wire_dump_req d = {.device = UINT32_MAX,
                            .flags = MEMD_DUMP_F_PAGED | MEMD_DUMP_F_POOLS |
                                     MEMD_DUMP_F_SUBALLOCS,
                            .cursor = cursor};
    memd_wire_dump_req_put(q, &d);
    ck_assert_int_eq(raw_send(fd, MEMD_OP_DUMP, cursor + 1, q, sizeof q), 0);
    memd_wire_hdr h;
    ck_assert_int_eq(raw_recv(fd, &h, buf, cap, 20000), 0);
    ck_assert_int_eq(h.status, 0);
    /* A page: about 1 MiB of allocation records (daemon/handlers/dump.c), whatever one
     * pool holds. */
    ck_assert_msg(h.len <= (1u << 20) + (64u << 10), "a page of %u bytes", h.len);
    uint64_t next = UINT64_MAX;
    for (size_t off = 0; off < h.len;) {
        uint32_t tag;
        size_t sz;
        ck_assert_int_eq(memd_wire_tag_get(buf + off, h.len - off, &tag, &sz), 0);
        if (tag == MEMD_REC_SUBALLOC) {
            memd_wire_suballoc_rec r;
            ck_assert_int_eq(memd_wire_suballoc_rec_get(buf + off + 4, sz, &r), 0);
            if (r.pool == pool) {
                ck_assert(*last == UINT64_MAX || r.offset > *last);
                *last = r.offset;
                (*subs)++;
            }
        } else if (tag == MEMD_REC_PAGE) {
            memd_wire_page_rec pr;
            ck_assert_int_eq(memd_wire_page_rec_get(buf + off + 4, sz, &pr), 0);
            next = pr.next;
        }
        off += 4 + sz;
    }
    ck_assert_uint_ne(next, UINT64_MAX);
    ck_assert(next == 0 || next > cursor);
    return next;
}

/* Issue 27: a pool's sub-allocations all went in one page, so one holder's pool of 800k
 * made everyone's dump fail ("dump larger than 67108864 bytes"). Now they go on over
 * as many pages as they need: each page stays bounded and every one comes once. */
START_TEST(pool_suballocs_page_over_several_dumps)
{
    enum { N = 40000 };
    memd_fixture f;
    cu_start(&f);
    memclient *c = cu_connect(&f);
    memclient_pool *p = make_pool(c, (uint64_t)N * 64, 0);
    memclient_pool_buffer b = {0};
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(memclient_pool_alloc(p, 64, 0, NULL, &b), 0);
    ck_assert_int_eq(memclient_pool_flush(p), 0);
    int fd = memd_fixture_connect(&f);
    size_t cap = 2u << 20, subs = 0;
    uint8_t *buf = malloc(cap);
    uint64_t last = UINT64_MAX, cursor = 0;
    int pages = 0;
    do {
        cursor = pool_page(fd, cursor, b.lease, &last, &subs, buf, cap);
        /* between pages, the last one (not shown yet) goes: it is not shown */
        if (++pages == 1) {
            ck_assert_int_eq(memclient_pool_free(p, b.handle), 0);
            ck_assert_int_eq(memclient_pool_flush(p), 0);
        }
    } while (cursor);
    ck_assert_uint_eq(subs, N - 1);
    ck_assert_int_ge(pages, 3);
    /* libmemclient (memctl, Python) pages the same way */
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_SUBALLOCS);
    ck_assert_uint_eq(s->nsuballocs, N - 1);
    memclient_snapshot_free(s);
    free(buf);
    close(fd);
    ck_assert_int_eq(memclient_pool_destroy(p), 0);
    memclient_disconnect(c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

START_TEST(bad_pool_arguments)
{
    memd_fixture f;
    cu_start(&f);
    memclient *c = cu_connect(&f);
    memclient_pool *p;
    memclient_alloc_req r = cu_req(MEMD_CLASS_INTERNAL, 4096);
    r.flags = MEMCLIENT_ALLOC_SHARED;
    r.name = "x";
    ck_assert_int_eq(memclient_pool_create(c, &r, &p), -EINVAL);
    r = cu_req(MEMD_CLASS_INTERNAL, 1ull << 60);
    ck_assert_int_lt(memclient_pool_create(c, &r, &p), 0);
    p = make_pool(c, 4096, 0);
    memclient_pool_buffer b;
    ck_assert_int_eq(memclient_pool_alloc(p, 0, 0, NULL, &b), -EINVAL);
    ck_assert_int_eq(memclient_pool_alloc(p, 64, 3, NULL, &b), -EINVAL);
    char longname[80];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    ck_assert_int_eq(memclient_pool_alloc(p, 64, 0, longname, &b), -ENAMETOOLONG);
    ck_assert_int_eq(memclient_pool_free(p, 12345), -ENOENT);
    ck_assert_int_eq(memclient_pool_free(p, 0), -ENOENT);
    ck_assert_int_eq(memclient_pool_alloc(p, 64, 0, NULL, &b), 0);
    ck_assert_int_eq(memclient_pool_free(p, b.handle ^ (1ull << 32)), -ENOENT);
    ck_assert_int_eq(memclient_pool_free(p, b.handle), 0);
    /* A pool left on the connection is released with it. */
    memclient_disconnect(c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("client-pools");
    TCase *tc = tcase_create("pools");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, pool_matches_reference_allocator);
    tcase_add_test(tc, lying_reports_are_refused);
    tcase_add_test(tc, refused_report_is_followed_by_a_resync);
    tcase_add_test(tc, refused_pool_backs_off);
    tcase_add_test(tc, killed_client_pools_come_back);
    tcase_add_test(tc, threads_share_one_pool);
    tcase_add_test(tc, growth_stops_at_its_limit);
    tcase_add_test(tc, dump_shows_pooled_buffers_within_the_bound);
    tcase_add_test(tc, bad_pool_arguments);
    tcase_add_test(tc, pool_suballocs_page_over_several_dumps);
    suite_add_tcase(s, tc);
    return s;
}

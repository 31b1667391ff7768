/* memd short of memory and memd after its clients go (issue 27): frees never fail and
 * leave nothing behind when memd itself is out of memory, memd's own shortage is told
 * apart from a full device, and memory comes back once clients are gone. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "client_util.h"
#include "daemon_fixture.h"
#include "test_rand.h"

#define MiB (1024ull * 1024)

static memd_fixture f;

static void teardown(void)
{
    memd_fixture_destroy(&f);
}

/* The daemon runs on glibc's malloc, unwrapped: not under valgrind or AddressSanitizer,
 * whose allocators keep freed memory in quarantine and need gigabytes of address space
 * of their own. Address-space limits and RSS figures mean something only then. */
static bool plain_daemon(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return false;
#endif
#endif
    return getenv("MEMD_TEST_DAEMON_WRAPPER") == NULL;
}

/* Frees live[0..n) in a random order, in batches of up to 256, each of which must
 * succeed. Small frames: the request itself must fit in the connection's read buffer,
 * which a memd without memory cannot grow. */
static void free_shuffled(memclient *c, uint64_t *live, size_t n)
{
    uint64_t rng = memd_test_seed(27);
    for (size_t i = n; i > 1; i--) {
        size_t j = memd_test_below(&rng, i);
        uint64_t t = live[i - 1];
        live[i - 1] = live[j];
        live[j] = t;
    }
    size_t batch = memclient_max_free_batch(c) < 256 ? memclient_max_free_batch(c) : 256;
    for (size_t i = 0; i < n; i += batch) {
        size_t k = n - i < batch ? n - i : batch;
        int rc = memclient_free_batch(c, live + i, k);
        memclient_error e = {0};
        memclient_last_error(&e);
        ck_assert_msg(rc == 0, "freeing %zu of %zu: %d %s", i, n, rc, e.message);
    }
}

/* Single allocations until the state store is full (its smallest limit, 1 MiB), then
 * every one freed in a random order. A batch of frees deletes records spread over the
 * whole table and copies each page it touches: more than the room kept back for
 * releases, so a batch failed with -EIO once the store was close enough to its limit
 * (found when a change of memd's memory layout let 1,200 more buffers in). */
START_TEST(frees_fit_a_full_store)
{
    const char *args[] = {"--state-max-bytes", "1MiB", NULL};
    memd_fixture_opts o = {.args = args};
    ck_assert_int_eq(memd_fixture_start(&f, &o), 0);
    memclient *c = cu_connect(&f);
    enum { MAX = 100000 };
    uint64_t *live = malloc(MAX * sizeof *live);
    ck_assert_ptr_nonnull(live);
    size_t n = 0;
    memclient_error e = {0};
    for (; n < MAX; n++) {
        memclient_alloc_req r = cu_req(MEMD_CLASS_INTERNAL, 64);
        memclient_buffer b;
        int rc = memclient_alloc(c, &r, &b);
        if (rc) {
            memclient_last_error(&e);
            ck_assert_msg(rc == -EIO && strstr(e.message, "state store is full"), "%d %s", rc,
                          e.message);
            break;
        }
        live[n] = b.handle;
    }
    printf("# %zu allocations filled the store: %s\n", n, e.message);
    ck_assert_uint_lt(n, MAX);
    free_shuffled(c, live, n);
    free(live);
    memclient_snapshot *s = cu_dump(c, 0);
    ck_assert_uint_eq(s->nallocs, 0);
    memclient_snapshot_free(s);
    memclient_disconnect(c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

/* Bank-set buffers (per-bank and range, 16 banks each, small SRAM pieces) until memd
 * runs out of its own memory under a 64 MiB address-space limit; then every one is freed
 * in a random order. Every free succeeds, every bank is empty again (issue 27: 63 banks
 * kept pieces after successful frees) and a whole-bank buffer fits; the refusal said
 * memd itself was out of memory, not that the device was full, and memd logged it. */
START_TEST(frees_need_no_memory)
{
    if (!plain_daemon()) {
        printf("# skipped: no address-space limit under a sanitizer or a daemon wrapper\n");
        return;
    }
    const char *args[] = {"--state-max-bytes", "8MiB", NULL};
    memd_fixture_opts o = {.capture_stderr = true, .address_space = 64 * MiB, .args = args};
    ck_assert_int_eq(memd_fixture_start(&f, &o), 0);
    memclient *c = cu_connect(&f);
    uint64_t region = cu_region_size(c, 0, MEMD_KIND_SRAM, "buffers");
    enum { MAX = 400000 };
    uint64_t *live = malloc(MAX * sizeof *live);
    ck_assert_ptr_nonnull(live);
    size_t n = 0;
    memclient_error e = {0};
    for (; n < MAX; n++) {
        uint32_t set[16], first = (uint32_t)(n * 7 % 48);
        for (uint32_t i = 0; i < 16; i++)
            set[i] = first + i;
        memclient_alloc_req r = cu_sram(32 * (1 + n % 4));
        r.bank_set = set;
        r.nbank_set = 16;
        r.per_bank = n % 3 != 0;
        memclient_buffer b;
        int rc = memclient_alloc(c, &r, &b);
        if (rc) {
            ck_assert_int_eq(rc, -ENOMEM);
            memclient_last_error(&e);
            break;
        }
        live[n] = b.handle;
    }
    printf("# %zu bank-set buffers before: %s\n", n, e.message);
    ck_assert_msg(n < MAX, "memd never ran short of memory");
    ck_assert_msg(strstr(e.message, "memd itself is out of memory"), "%s", e.message);
    ck_assert_uint_ne(e.detail, MEMCLIENT_DETAIL_NOMEM); /* no device figures */
    /* Frees in a random order: every bank's free blocks multiply before they merge. */
    free_shuffled(c, live, n);
    free(live);
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_BANKS);
    ck_assert_uint_eq(s->nallocs, 0);
    size_t banks = 0;
    for (size_t i = 0; i < s->nbank_use; i++) {
        const memclient_bank_use *u = &s->bank_use[i];
        ck_assert_msg(u->stats.allocations == 0 && u->stats.allocated == 0,
                      "device %u bank %u still holds %" PRIu64 " pieces (%" PRIu64 " bytes)",
                      u->device, u->bank, u->stats.allocations, u->stats.allocated);
        banks++;
    }
    ck_assert_uint_gt(banks, 0);
    memclient_snapshot_free(s);
    memclient_alloc_req whole = cu_sram(region);
    memclient_buffer w;
    ck_assert_int_eq(memclient_alloc(c, &whole, &w), 0);
    ck_assert_int_eq(memclient_free(c, w.handle), 0);
    memclient_disconnect(c);
    ck_assert_ptr_nonnull(strstr(memd_fixture_log(&f), "memd itself is out of memory"));
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

/* One memory figure of memd's /proc/PID/status ("VmRSS:", "RssAnon:"), in bytes. */
static uint64_t status_bytes(const char *key)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)f.pid);
    FILE *fp = fopen(path, "r");
    ck_assert_ptr_nonnull(fp);
    uint64_t kb = 0;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, fp))
        if (!strncmp(line, key, n) && sscanf(line + n, "%" SCNu64, &kb) == 1)
            break;
    fclose(fp);
    ck_assert_uint_gt(kb, 0);
    return kb * 1024;
}

static uint64_t rss_of(void)
{
    return status_bytes("VmRSS:");
}

enum { SUBS = 100000,   /* sub-allocations per pool client */
       RANGES = 200000 }; /* plain allocations of one client */

/* A pool-heavy client: one pool, SUBS named sub-allocations reported to memd; handle 0
 * is the pool's range. */
static void pool_client(const char *socket_path, const void *arg, uint64_t *h, size_t n)
{
    (void)arg;
    (void)n;
    memclient *cc;
    memclient_pool *p;
    memclient_pool_buffer b;
    memclient_alloc_req r = cu_req(MEMD_CLASS_INTERNAL, 32 << 20);
    if (memclient_connect(socket_path, &cc) < 0 || memclient_pool_create(cc, &r, &p) < 0)
        return;
    for (int i = 0; i < SUBS; i++)
        if (memclient_pool_alloc(p, 64 + 32 * (i % 8), 0, "activation", &b) < 0)
            return;
    memclient_buffer lb;
    if (memclient_pool_flush(p) == 0 && memclient_pool_lease(p, 0, &lb) == 0)
        h[0] = lb.handle;
}

/* Waits out the daemon's trim tick (server.c: every 2 s). */
static void settle(void)
{
    struct timespec ts = {3, 0};
    nanosleep(&ts, NULL);
}

/* Memory comes back once clients go (issue 27: five killed pool clients took memd from
 * 0.4 MB to ~200 MB for good, and 200k range allocations freed left +36 MB): within
 * 32 MiB of where it started. After the pool clients, all of VmRSS; after the range
 * allocations, memd's own memory (RssAnon): the rest of VmRSS is the state store's file
 * in the runtime directory, mapped, whose pages LMDB keeps for reuse (printed). */
START_TEST(memory_returns)
{
    if (!plain_daemon()) {
        printf("# skipped: RSS under a sanitizer or a daemon wrapper is its allocator's\n");
        return;
    }
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             /* The flight recorder keeps what it recorded (its ring is bounded by
              * history_events): a small ring, so what is measured is the rest. */
             "limits: {max_allocs_per_session: %u, history_events: 4096}\n"
             "devices:\n  - id: 0\n    descriptor: %s/config/devices/wormhole_b0.yaml\n",
             (unsigned)RANGES, memd_fixture_source_root());
    memd_fixture_opts o = {.config_yaml = yaml};
    ck_assert_int_eq(memd_fixture_start(&f, &o), 0);
    memclient *c = cu_connect(&f);
    settle();
    uint64_t before = rss_of(), anon = status_bytes("RssAnon:");
    enum { CLIENTS = 5 };
    pid_t pids[CLIENTS];
    uint64_t h[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
        pids[i] = cu_fork_holder(&f, pool_client, NULL, &h[i], 1);
        ck_assert_msg(h[i] != 0, "pool client %d could not make its pool", i);
    }
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_POOLS);
    uint64_t subs = 0;
    for (size_t i = 0; i < s->npools; i++)
        subs += s->pools[i].suballocs;
    memclient_snapshot_free(s);
    ck_assert_uint_eq(subs, (uint64_t)CLIENTS * SUBS);
    uint64_t during = rss_of();
    for (int i = 0; i < CLIENTS; i++)
        cu_kill_holder(pids[i]);
    ck_assert(cu_wait_gone(c, h, CLIENTS, 10000));
    settle();
    uint64_t after_pools = rss_of();
    printf("# RSS before %" PRIu64 " KiB, with %d pool clients %" PRIu64 " KiB, after they were "
           "killed %" PRIu64 " KiB\n", before >> 10, CLIENTS, during >> 10, after_pools >> 10);
    ck_assert_uint_gt(during, before + 32 * MiB); /* the clients did cost memory */
    ck_assert_uint_le(after_pools, before + 32 * MiB);

    /* 200k range allocations, in batches, then every one freed. */
    uint64_t *live = malloc(RANGES * sizeof *live);
    size_t batch = memclient_max_alloc_batch(c) < 1024 ? memclient_max_alloc_batch(c) : 1024;
    memclient_alloc_req *reqs = malloc(batch * sizeof *reqs);
    memclient_buffer *out = malloc(batch * sizeof *out);
    ck_assert(live && reqs && out);
    for (size_t i = 0; i < batch; i++)
        reqs[i] = cu_req(MEMD_CLASS_INTERNAL, 64 + 32 * (i % 4));
    for (size_t i = 0; i < RANGES; i += batch) {
        size_t k = RANGES - i < batch ? RANGES - i : batch;
        ck_assert_int_eq(memclient_alloc_batch(c, reqs, k, out), 0);
        for (size_t j = 0; j < k; j++)
            live[i + j] = out[j].handle;
    }
    uint64_t with_ranges = rss_of();
    size_t fb = memclient_max_free_batch(c) < 1024 ? memclient_max_free_batch(c) : 1024;
    for (size_t i = 0; i < RANGES; i += fb)
        ck_assert_int_eq(memclient_free_batch(c, live + i, RANGES - i < fb ? RANGES - i : fb), 0);
    settle();
    uint64_t after_ranges = rss_of(), anon_after = status_bytes("RssAnon:");
    printf("# RSS with %d range allocations %" PRIu64 " KiB, after they were freed %" PRIu64
           " KiB (RssAnon %" PRIu64 " KiB, before %" PRIu64 " KiB; RssFile %" PRIu64 " KiB)\n",
           RANGES, with_ranges >> 10, after_ranges >> 10, anon_after >> 10, anon >> 10,
           status_bytes("RssFile:") >> 10);
    ck_assert_uint_le(anon_after, anon + 32 * MiB);
    free(live);
    free(reqs);
    free(out);
    memclient_disconnect(c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("daemon-pressure");
    TCase *t = tcase_create("pressure");
    tcase_add_checked_fixture(t, NULL, teardown);
    tcase_set_timeout(t, 240);
    tcase_add_test(t, frees_need_no_memory);
    tcase_add_test(t, frees_fit_a_full_store);
    tcase_add_test(t, memory_returns);
    suite_add_tcase(s, t);
    return s;
}

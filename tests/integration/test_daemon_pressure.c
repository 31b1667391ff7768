/* memd short of memory and memd after its clients go (issue 27): frees never fail and
 * leave nothing behind when memd itself is out of memory, memd's own shortage is told
 * apart from a full device, and memory comes back once clients are gone. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* An address-space limit cannot be put on a daemon under valgrind (its own tool needs
 * gigabytes) or AddressSanitizer (its shadow memory): those passes run without it. */
static bool limit_possible(void)
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

/* Bank-set buffers (per-bank and range, 16 banks each, small SRAM pieces) until memd
 * runs out of its own memory under a 64 MiB address-space limit; then every one is freed
 * in a random order. Every free succeeds, every bank is empty again (issue 27: 63 banks
 * kept pieces after successful frees) and a whole-bank buffer fits; the refusal said
 * memd itself was out of memory, not that the device was full, and memd logged it. */
START_TEST(frees_need_no_memory)
{
    if (!limit_possible()) {
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
    uint64_t rng = memd_test_seed(27);
    for (size_t i = n; i > 1; i--) {
        size_t j = memd_test_below(&rng, i);
        uint64_t t = live[i - 1];
        live[i - 1] = live[j];
        live[j] = t;
    }
    /* Small frames: the request itself must fit in the connection's read buffer, which
     * a memd without memory cannot grow. */
    size_t batch = memclient_max_free_batch(c) < 256 ? memclient_max_free_batch(c) : 256;
    for (size_t i = 0; i < n; i += batch) {
        size_t k = n - i < batch ? n - i : batch;
        ck_assert_int_eq(memclient_free_batch(c, live + i, k), 0);
    }
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

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("daemon-pressure");
    TCase *t = tcase_create("pressure");
    tcase_add_checked_fixture(t, NULL, teardown);
    tcase_set_timeout(t, 240);
    tcase_add_test(t, frees_need_no_memory);
    suite_add_tcase(s, t);
    return s;
}

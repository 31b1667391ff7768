/* Bank subsets through the real daemon and libmemclient: range lockstep and per-bank
 * buffers beside lockstep ones, their banks and addresses (memclient_bank_info, the
 * dump's per-bank records), errors that name the bank that ran out, refusals, a seeded
 * random workload checked after every step against the dump's per-bank view, and the
 * map across a daemon restart. Device 0 of the default config: 64 SRAM banks. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "client_util.h"
#include "daemon_fixture.h"
#include "test_rand.h"

static memd_fixture f;

static void teardown(void)
{
    memd_fixture_destroy(&f);
}

static void check_views(memclient *c)
{
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_BANKS);
    ck_assert_int_eq(cu_check_map(s), 0);
    ck_assert_int_eq(cu_check_banks(s), 0);
    ck_assert_uint_gt(s->nbank_use, 0);
    memclient_snapshot_free(s);
}

/* Frees the two buffers a test made, checks the views once more and disconnects. */
static void free_both_and_leave(memclient *c, uint64_t a, uint64_t b)
{
    ck_assert_int_eq(memclient_free(c, a), 0);
    ck_assert_int_eq(memclient_free(c, b), 0);
    check_views(c);
    memclient_disconnect(c);
}

START_TEST(modes_and_views)
{
    cu_start(&f);
    memclient *c = cu_connect(&f);
    uint32_t set[] = {8, 0, 1, 2, 3}; /* any order: the library sorts */
    memclient_alloc_req r = cu_sram(4096);
    r.bank_set = set;
    r.nbank_set = 5;
    memclient_buffer a, b, l;
    ck_assert_int_eq(memclient_alloc(c, &r, &a), 0);
    ck_assert_int_eq(a.bank_mode, MEMD_BANKS_RANGE);
    ck_assert_uint_eq(a.banks, 5);
    uint32_t pb[] = {2, 3, 4, 5};
    memclient_alloc_req q = cu_sram(4096);
    q.bank_set = pb;
    q.nbank_set = 4;
    q.per_bank = 1;
    ck_assert_int_eq(memclient_alloc(c, &q, &b), 0);
    ck_assert_int_eq(b.bank_mode, MEMD_BANKS_PER_BANK);
    memclient_alloc_req lr = cu_sram(8192);
    ck_assert_int_eq(memclient_alloc(c, &lr, &l), 0);
    ck_assert_int_eq(l.bank_mode, MEMD_BANKS_ALL);

    memclient_bank banks[64];
    ck_assert_int_eq(memclient_bank_info(c, a.handle, banks, 64), 5);
    uint32_t want[] = {0, 1, 2, 3, 8};
    for (int i = 0; i < 5; i++) {
        ck_assert_uint_eq(banks[i].bank, want[i]);
        ck_assert_uint_eq(banks[i].address, a.address);
    }
    /* Per bank: banks 2 and 3 already hold the range buffer, 4 and 5 do not (top-down). */
    ck_assert_int_eq(memclient_bank_info(c, b.handle, banks, 64), 4);
    ck_assert_uint_eq(banks[0].address, a.address - 4096);
    ck_assert_uint_eq(banks[1].address, a.address - 4096);
    ck_assert_uint_eq(banks[2].address, a.address);
    ck_assert_uint_eq(banks[3].address, a.address);
    ck_assert_uint_eq(banks[0].address, b.address);
    /* Lockstep: every bank, under everything else. */
    ck_assert_int_eq(memclient_bank_info(c, l.handle, banks, 64), 64);
    ck_assert_uint_eq(banks[63].address, l.address);
    ck_assert_uint_le(l.address + 8192, a.address - 4096);
    /* BANKS of a bank-set buffer: the set's absolute addresses, in id order. */
    uint64_t abs[8];
    ck_assert_int_eq(memclient_bank_addresses(c, b.handle, abs, 8), 4);
    memclient_alloc_info qi;
    ck_assert_int_eq(memclient_query(c, b.handle, &qi), 0);
    ck_assert_int_eq(qi.buf.bank_mode, MEMD_BANKS_PER_BANK);

    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_BANKS);
    ck_assert_int_eq(cu_check_map(s), 0);
    ck_assert_int_eq(cu_check_banks(s), 0);
    ck_assert_uint_eq(s->nalloc_banks, 9); /* 5 + 4: lockstep buffers list no banks */
    /* Without the flag: no per-bank records. */
    memclient_snapshot *t = cu_dump(c, 0);
    ck_assert_uint_eq(t->nbank_use, 0);
    ck_assert_uint_eq(t->nalloc_banks, 0);
    memclient_snapshot_free(t);
    memclient_snapshot_free(s);
    free_both_and_leave(c, a.handle, b.handle);
}
END_TEST

START_TEST(oom_names_the_bank)
{
    cu_start(&f);
    memclient *c = cu_connect(&f);
    uint64_t region = cu_region_size(c, 0, MEMD_KIND_SRAM, "buffers");
    /* Bank 5 full. */
    uint32_t five = 5;
    memclient_alloc_req r = cu_sram(region);
    r.bank_set = &five;
    r.nbank_set = 1;
    memclient_buffer a, b;
    ck_assert_int_eq(memclient_alloc(c, &r, &a), 0);
    uint32_t set[] = {4, 5, 6};
    memclient_alloc_req q = cu_sram(4096);
    q.bank_set = set;
    q.nbank_set = 3;
    q.per_bank = 1;
    memclient_error e;
    ck_assert_int_eq(memclient_alloc(c, &q, &b), -ENOMEM);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "bank 5") != NULL, "%s", e.message);
    q.per_bank = 0;
    ck_assert_int_eq(memclient_alloc(c, &q, &b), -ENOMEM);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "bank 5") != NULL, "%s", e.message);
    memclient_alloc_req l = cu_sram(4096);
    ck_assert_int_eq(memclient_alloc(c, &l, &b), -ENOMEM);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "bank 5") != NULL, "%s", e.message);
    /* Other banks keep the whole range. */
    uint32_t six = 6;
    r.bank_set = &six;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    ck_assert_uint_eq(b.address, a.address);
    check_views(c);
    memclient_disconnect(c);
}
END_TEST

/* Every bank of a set has room, but not at one address: bank 10 is free only in the top
 * half of the region, bank 11 only in the bottom half. A range over both (or lockstep over
 * every bank) says their free blocks do not line up, not that a bank ran out; per bank
 * fits. A bank that really is full is still named as having run out. */
START_TEST(oom_when_banks_disagree)
{
    cu_start(&f);
    memclient *c = cu_connect(&f);
    memclient_snapshot *s = cu_dump(c, 0);
    uint64_t region = cu_region(s, MEMD_KIND_SRAM, "buffers")->size, half = region / 2;
    memclient_snapshot_free(s);
    uint32_t ten = 10, eleven = 11, both[] = {10, 11};
    memclient_alloc_req r = cu_sram(half);
    r.bank_set = &ten;
    r.nbank_set = 1;
    memclient_buffer top, low, b;
    ck_assert_int_eq(memclient_alloc(c, &r, &top), 0);
    r.bytes = region - half;
    ck_assert_int_eq(memclient_alloc(c, &r, &low), 0);
    ck_assert_int_eq(memclient_free(c, top.handle), 0);
    r.bytes = half;
    r.bank_set = &eleven;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);

    memclient_alloc_req q = cu_sram(4096);
    q.bank_set = both;
    q.nbank_set = 2;
    memclient_error e;
    ck_assert_int_eq(memclient_alloc(c, &q, &b), -ENOMEM);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "no address free in all 2 banks for 4.0 KiB per bank") &&
                      strstr(e.message, "do not line up") && !strstr(e.message, "ran out"),
                  "%s", e.message);
    memclient_alloc_req l = cu_sram(4096);
    ck_assert_int_eq(memclient_alloc(c, &l, &b), -ENOMEM);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "in all 64 banks") && !strstr(e.message, "ran out"), "%s",
                  e.message);
    q.per_bank = 1;
    ck_assert_int_eq(memclient_alloc(c, &q, &b), 0);
    /* Bank 10 full now: it ran out. */
    r.bank_set = &ten;
    r.bytes = half - 4096;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    q.per_bank = 0;
    ck_assert_int_eq(memclient_alloc(c, &q, &b), -ENOMEM);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "bank 10 ran out"), "%s", e.message);
    check_views(c);
    memclient_disconnect(c);
}
END_TEST

START_TEST(refusals)
{
    cu_start(&f);
    memclient *c = cu_connect(&f);
    memclient_buffer b;
    memclient_error e;
    uint32_t dup[] = {3, 1, 3};
    memclient_alloc_req r = cu_sram(64);
    r.bank_set = dup;
    r.nbank_set = 3;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -EINVAL);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "twice") != NULL, "%s", e.message);
    uint32_t out[] = {1, 64};
    r.bank_set = out;
    r.nbank_set = 2;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -EINVAL);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "bank set: no bank 64 (banks 0-63)") != NULL, "%s",
                  e.message);
    /* Not shared (batches: test_client_bank_batch.c). */
    uint32_t ok[] = {1, 2};
    r.bank_set = ok;
    r.flags = MEMCLIENT_ALLOC_SHARED;
    r.name = "w";
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -EINVAL);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "shared") != NULL, "%s", e.message);
    /* A pool is one address map: no bank set, not per bank (the library refuses, and so
     * does memd for a raw ALLOC_BANKS asking for a per-bank pool). */
    r.flags = 0;
    r.name = NULL;
    memclient_pool *pool;
    ck_assert_int_eq(memclient_pool_create(c, &r, &pool), -EINVAL);
    r.nbank_set = 0;
    r.bank_set = NULL;
    r.per_bank = 1;
    ck_assert_int_eq(memclient_pool_create(c, &r, &pool), -EINVAL);
    /* The connection is still fine. */
    memclient_alloc_req l = cu_sram(64);
    ck_assert_int_eq(memclient_alloc(c, &l, &b), 0);
    memclient_disconnect(c);
}
END_TEST

/* Mixed modes, random shard grids (a row of 8 cores, a 2 x 4 block, one core): after
 * every step the dump's per-bank view must be consistent. Seed: MEMD_TEST_SEED. */
START_TEST(random_mixed_over_the_wire)
{
    uint64_t seed = memd_test_seed(0x62616e6b77697265ull), st = seed;
    printf("# seed %#" PRIx64 "\n", seed);
    cu_start(&f);
    memclient *c = cu_connect(&f);
    uint64_t live[256];
    size_t n = 0;
    for (int step = 0; step < 300; step++) {
        if (n > 0 && (n == 256 || memd_test_rand(&st) % 3 == 0)) {
            size_t k = memd_test_rand(&st) % n;
            ck_assert_int_eq(memclient_free(c, live[k]), 0);
            live[k] = live[--n];
        } else {
            uint32_t set[8], ns = 0, kind = (uint32_t)(memd_test_rand(&st) % 4);
            uint32_t row = (uint32_t)(memd_test_rand(&st) % 8), col = (uint32_t)(memd_test_rand(&st) % 4);
            if (kind == 1)
                for (uint32_t x = 0; x < 8; x++)
                    set[ns++] = row * 8 + x;
            else if (kind == 2)
                for (uint32_t y = 0; y < 2 && row + y < 8; y++)
                    for (uint32_t x = 0; x < 4; x++)
                        set[ns++] = (row + y) * 8 + col + x;
            else if (kind == 3)
                set[ns++] = (uint32_t)(memd_test_rand(&st) % 64);
            memclient_alloc_req r = cu_sram(32 + memd_test_rand(&st) % 65536);
            r.cls = memd_test_rand(&st) % 2 ? MEMD_CLASS_CONSTANT : MEMD_CLASS_PLACEHOLDER;
            r.bank_set = ns ? set : NULL;
            r.nbank_set = ns;
            r.per_bank = ns && memd_test_rand(&st) % 2;
            memclient_buffer b;
            int rc = memclient_alloc(c, &r, &b);
            ck_assert_msg(rc == 0 || rc == -ENOMEM, "seed %#" PRIx64 " step %d: %d", seed, step,
                          rc);
            if (rc == 0)
                live[n++] = b.handle;
        }
        memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_BANKS);
        ck_assert_msg(cu_check_map(s) == 0 && cu_check_banks(s) == 0,
                      "seed %#" PRIx64 " step %d", seed, step);
        memclient_snapshot_free(s);
    }
    memclient_disconnect(c);
}
END_TEST

/* The state store keeps bank sets and per-bank addresses across a crash. */
START_TEST(restart_keeps_bank_sets)
{
    cu_start(&f);
    memclient *c = cu_connect(&f);
    uint32_t set[] = {10, 11, 12};
    memclient_alloc_req r = cu_sram(4096);
    r.bank_set = set;
    r.nbank_set = 3;
    memclient_buffer a, b;
    ck_assert_int_eq(memclient_alloc(c, &r, &a), 0);
    r.per_bank = 1;
    r.bank_set = &set[1];
    r.nbank_set = 2;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    memclient_bank before[4], after[4];
    ck_assert_int_eq(memclient_bank_info(c, b.handle, before, 4), 2);

    ck_assert_int_eq(memd_fixture_restart(&f, NULL, SIGKILL), 0);
    ck_assert_int_eq(memclient_reconnect(c, 5000), 0);

    ck_assert_int_eq(memclient_bank_info(c, b.handle, after, 4), 2);
    for (int i = 0; i < 2; i++) {
        ck_assert_uint_eq(before[i].bank, after[i].bank);
        ck_assert_uint_eq(before[i].address, after[i].address);
        ck_assert_uint_eq(before[i].absolute, after[i].absolute);
    }
    memclient_alloc_info qi;
    ck_assert_int_eq(memclient_query(c, a.handle, &qi), 0);
    ck_assert_int_eq(qi.buf.bank_mode, MEMD_BANKS_RANGE);
    ck_assert_uint_eq(qi.buf.address, a.address);
    /* The restored map is the engine's again: new pieces go around the old ones. */
    memclient_buffer x;
    ck_assert_int_eq(memclient_alloc(c, &r, &x), 0);
    ck_assert_uint_eq(x.address, b.address - 4096);
    check_views(c);
    free_both_and_leave(c, a.handle, b.handle);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("client-banks");
    TCase *tc = tcase_create("banks");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, modes_and_views);
    tcase_add_test(tc, oom_names_the_bank);
    tcase_add_test(tc, oom_when_banks_disagree);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, random_mixed_over_the_wire);
    tcase_add_test(tc, restart_keeps_bank_sets);
    suite_add_tcase(s, tc);
    return s;
}

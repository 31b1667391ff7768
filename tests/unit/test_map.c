/* Engine hash map (handle table, range allocations) and the daemon's object pool: randomized against a plain array,
 * including the backward-shift deletion that keeps probe runs intact. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "map.h"
#include "pool.h"

START_TEST(basic)
{
    memd_map m = {0};
    ck_assert_ptr_null(memd_map_get(&m, 1));
    ck_assert_int_eq(memd_map_put(&m, 0, 5), -EINVAL);
    ck_assert_int_eq(memd_map_put(&m, 7, 70), 0);
    ck_assert_int_eq(memd_map_put(&m, 7, 71), 0); /* replace */
    ck_assert_uint_eq(m.len, 1);
    ck_assert_uint_eq(*memd_map_get(&m, 7), 71);
    ck_assert(!memd_map_remove(&m, 8));
    ck_assert(memd_map_remove(&m, 7));
    ck_assert(!memd_map_remove(&m, 7));
    ck_assert_uint_eq(m.len, 0);
    ck_assert_ptr_null(memd_map_get(&m, 7));
    memd_map_free(&m);
}
END_TEST

/* Keys drawn from a small range collide and form long probe runs; every operation is
 * checked against a reference array. Loop 0: the default map (runs of 8, load 1/4),
 * loop 1: a spread one (whole keys, load 1/2). */
START_TEST(random_against_reference)
{
    enum { RANGE = 3000, OPS = 200000 };
    uint64_t *ref = calloc(RANGE, sizeof *ref); /* 0 = absent, else value */
    memd_map m = {.spread = _i == 1};
    srand(12345);
    size_t live = 0;
    for (int op = 0; op < OPS; op++) {
        /* sequential-ish keys like handles, plus far ones */
        uint64_t k = (uint64_t)(rand() % RANGE);
        uint64_t key = k % 3 == 0 ? (k << 40) | 1 : k + 1;
        size_t idx = (size_t)k;
        if (rand() % 3) {
            uint64_t v = (uint64_t)rand() + 1;
            ck_assert_int_eq(memd_map_put(&m, key, v), 0);
            live += ref[idx] == 0;
            ref[idx] = v;
        } else {
            ck_assert_int_eq(memd_map_remove(&m, key), ref[idx] != 0);
            live -= ref[idx] != 0;
            ref[idx] = 0;
        }
        ck_assert_uint_eq(m.len, live);
        if (op % 1000 == 0) {
            for (size_t i = 0; i < RANGE; i++) {
                uint64_t kk = i % 3 == 0 ? ((uint64_t)i << 40) | 1 : i + 1;
                uint64_t *v = memd_map_get(&m, kk);
                if (ref[i])
                    ck_assert(v && *v == ref[i]);
                else
                    ck_assert_ptr_null(v);
            }
        }
    }
    ck_assert_uint_le(m.len * (m.spread ? 2 : 4), m.cap); /* the load bound holds */
    memd_map_free(&m);
    ck_assert_uint_eq(m.cap, 0);
    ck_assert(m.spread == (_i == 1)); /* free keeps the mode */
    free(ref);
}
END_TEST

/* After reserve(n), n inserts of new keys never move the table (the range allocator
 * relies on it: it reserves before it changes anything); clear keeps the table. */
START_TEST(reserve_and_clear)
{
    memd_map m = {0};
    ck_assert_int_eq(memd_map_reserve(&m, SIZE_MAX), -ENOMEM);
    ck_assert_int_eq(memd_map_reserve(&m, 1000), 0);
    memd_map_slot *slots = m.slots;
    size_t cap = m.cap, fit = cap / 4; /* at least the 1000 reserved */
    ck_assert_uint_ge(fit, 1000);
    for (uint64_t k = 1; k <= fit; k++)
        ck_assert_int_eq(memd_map_put(&m, k * 977, k), 0);
    ck_assert_ptr_eq(m.slots, slots);
    ck_assert_uint_eq(m.len, fit);
    ck_assert_int_eq(memd_map_put(&m, (fit + 1) * 977, 1), 0); /* one more: grows */
    ck_assert_uint_gt(m.cap, cap);
    slots = m.slots;
    cap = m.cap;
    memd_map_clear(&m);
    ck_assert_uint_eq(m.len, 0);
    ck_assert_ptr_eq(m.slots, slots);
    ck_assert_uint_eq(m.cap, cap);
    for (uint64_t k = 1; k <= fit + 1; k++)
        ck_assert_ptr_null(memd_map_get(&m, k * 977));
    ck_assert_int_eq(memd_map_put(&m, 977, 5), 0);
    ck_assert_uint_eq(*memd_map_get(&m, 977), 5);
    ck_assert_ptr_eq(m.slots, slots);
    memd_map_free(&m);
    memd_map_clear(&m); /* an empty map clears too */
    ck_assert_uint_eq(m.len, 0);
}
END_TEST

START_TEST(pool_reuses)
{
    memd_pool p;
    memd_pool_init(&p, 40, 4);
    void *a[10];
    for (int i = 0; i < 10; i++) {
        a[i] = memd_pool_get(&p);
        ck_assert_ptr_nonnull(a[i]);
        for (int j = 0; j < 40; j++)
            ck_assert_int_eq(((unsigned char *)a[i])[j], 0);
        memset(a[i], 0xab, 40);
        ck_assert_uint_eq((uintptr_t)a[i] % _Alignof(max_align_t), 0);
    }
    ck_assert_uint_eq(p.live, 10);
    memd_pool_put(&p, a[3]);
    void *b = memd_pool_get(&p);
    ck_assert_ptr_eq(b, a[3]); /* the freed object comes back, zeroed */
    ck_assert_int_eq(((unsigned char *)b)[39], 0);
    memd_pool_free(&p);
}
END_TEST

/* A table a million removes emptied shrinks (issue 14), keys and values intact, in both
 * modes; a small one never does (steady traffic must not call malloc). */
START_TEST(map_trims_when_mostly_empty)
{
    for (int spread = 0; spread < 2; spread++) {
        memd_map m = {.spread = spread};
        enum { N = 200000 };
        for (uint64_t k = 1; k <= N; k++)
            ck_assert_int_eq(memd_map_put(&m, k * 7, k), 0);
        size_t big = m.cap;
        for (uint64_t k = 1; k <= N; k++) {
            if (k % 1000 == 0)
                continue; /* 200 stay */
            ck_assert(memd_map_remove(&m, k * 7));
            memd_map_trim(&m);
        }
        ck_assert_uint_lt(m.cap, big / 8);
        ck_assert_uint_ge(m.cap, MEMD_MAP_TRIM_MIN);
        ck_assert_uint_eq(m.len, N / 1000);
        for (uint64_t k = 1000; k <= N; k += 1000) {
            uint64_t *v = memd_map_get(&m, k * 7);
            ck_assert_ptr_nonnull(v);
            ck_assert_uint_eq(*v, k);
        }
        ck_assert_ptr_null(memd_map_get(&m, 7));
        memd_map_free(&m);
        /* small tables keep their slots */
        for (uint64_t k = 1; k <= 1000; k++)
            ck_assert_int_eq(memd_map_put(&m, k, k), 0);
        memd_map_slot *slots = m.slots;
        for (uint64_t k = 1; k <= 1000; k++) {
            memd_map_remove(&m, k);
            memd_map_trim(&m);
        }
        ck_assert_ptr_eq(m.slots, slots);
        memd_map_free(&m);
    }
}
END_TEST

/* Freed records give their memory back (issue 14: 353 MB stayed resident after a million
 * frees): a slab whose objects all came back is freed, but for one kept empty. */
START_TEST(pool_gives_slabs_back)
{
    memd_pool p;
    memd_pool_init(&p, 256, 1024);
    size_t n = 5 * p.per_chunk + 7;
    void **a = malloc(n * sizeof *a);
    for (size_t i = 0; i < n; i++)
        ck_assert_ptr_nonnull(a[i] = memd_pool_get(&p));
    ck_assert_uint_eq(p.nchunks, 6);
    /* every other object back: no slab empties, none is freed */
    for (size_t i = 0; i < n; i += 2)
        memd_pool_put(&p, a[i]);
    ck_assert_uint_eq(p.nchunks, 6);
    /* new objects fill the holes before any new slab */
    for (size_t i = 0; i < n; i += 2)
        ck_assert_ptr_nonnull(a[i] = memd_pool_get(&p));
    ck_assert_uint_eq(p.nchunks, 6);
    for (size_t i = 0; i < n; i++)
        memd_pool_put(&p, a[i]);
    ck_assert_uint_eq(p.live, 0);
    ck_assert_uint_eq(p.nchunks, 1); /* the spare */
    /* and it serves the next one without a malloc */
    void *x = memd_pool_get(&p);
    ck_assert_uint_eq(p.nchunks, 1);
    memd_pool_put(&p, x);
    ck_assert_uint_eq(p.nchunks, 1);
    free(a);
    memd_pool_free(&p);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("map");
    TCase *tc = tcase_create("map");
    tcase_add_test(tc, basic);
    tcase_add_loop_test(tc, random_against_reference, 0, 2);
    tcase_add_test(tc, reserve_and_clear);
    tcase_add_test(tc, pool_reuses);
    tcase_add_test(tc, pool_gives_slabs_back);
    tcase_add_test(tc, map_trims_when_mostly_empty);
    suite_add_tcase(s, tc);
    return s;
}

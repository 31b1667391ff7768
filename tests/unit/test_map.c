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
    ck_assert_uint_eq(p.nchunks, 3);
    memd_pool_put(&p, a[3]);
    void *b = memd_pool_get(&p);
    ck_assert_ptr_eq(b, a[3]); /* the freed object comes back, zeroed */
    ck_assert_int_eq(((unsigned char *)b)[39], 0);
    ck_assert_uint_eq(p.nchunks, 3);
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
    suite_add_tcase(s, tc);
    return s;
}

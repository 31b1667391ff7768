/* The handle table (daemon/core/handles.c) against a plain hash map as the reference:
 * seeded random runs of sequential inserts (as allocations come), inserts of old handles
 * in any order (as a restore brings them), removes of live and absent handles, lookups of
 * anything; after every step the table answers as the reference does, and every so
 * often its walk yields exactly the live handles and its chunks stay within the bound
 * that keeps memory per live handle small (a chunk behind the newest holds at least
 * MEMD_HANDLES_CHUNK / 16 live handles, or is gone).
 *
 * Seed: MEMD_TEST_SEED (decimal or 0x-hex) or a fixed default, printed as a TAP comment. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_main.h"
#include "handles.h"
#include "test_rand.h"

static uint64_t rng;

/* Records are never read through: any distinct non-NULL pointer stands for one. */
static memd_alloc *rec_of(uint64_t handle)
{
    return (memd_alloc *)(uintptr_t)(handle * 16);
}

typedef struct walk {
    memd_map *ref;
    size_t seen;
    int bad;
} walk;

static int visit(void *ctx, memd_alloc *a)
{
    walk *w = ctx;
    uint64_t h = (uint64_t)(uintptr_t)a / 16;
    uint64_t *v = memd_map_get(w->ref, h);
    if (!v || *v != 1)
        w->bad++;
    else
        *v = 2; /* seen once */
    w->seen++;
    return 0;
}

static void check_all(memd_handles *t, memd_map *ref, uint64_t seed, int step)
{
    ck_assert_msg(t->len == ref->len, "seed 0x%" PRIx64 " step %d: %zu handles, reference %zu",
                  seed, step, t->len, ref->len);
    walk w = {.ref = ref};
    ck_assert_int_eq(memd_handles_each(t, visit, &w), 0);
    ck_assert_msg(w.bad == 0 && w.seen == ref->len,
                  "seed 0x%" PRIx64 " step %d: walk saw %zu (%d wrong) of %zu", seed, step,
                  w.seen, w.bad, ref->len);
    for (size_t i = 0; i < ref->cap; i++)
        if (ref->slots[i].key)
            ref->slots[i].val = 1;
    /* Memory: every chunk but the newest keeps at least 1/16 of its handles. */
    for (size_t i = 0; i < t->chunks.cap; i++) {
        if (!t->chunks.slots[i].key)
            continue;
        const memd_handles_chunk *ch = (const memd_handles_chunk *)(uintptr_t)t->chunks.slots[i].val;
        ck_assert_msg(ch == t->front_chunk || ch->live >= MEMD_HANDLES_CHUNK / 16,
                      "seed 0x%" PRIx64 " step %d: chunk %" PRIu64 " keeps %u live handles",
                      seed, step, t->chunks.slots[i].key - 1, ch->live);
    }
}

START_TEST(handles_match_reference)
{
    uint64_t seed = memd_test_seed(0x4a4d1e5u) + (uint64_t)_i;
    rng = seed;
    printf("# handles: MEMD_TEST_SEED=0x%" PRIx64 "\n", seed);
    memd_handles t = {0};
    memd_map ref = {0};
    uint64_t next = 1;
    /* Phases: dense churn (a steady state), a restore of scattered old handles, a long
     * mostly-freeing stretch with a few long-lived handles left behind. */
    for (int step = 0; step < 300000; step++) {
        unsigned op = (unsigned)(memd_test_rand(&rng) % 100);
        int phase = step / 100000;
        if (op < (phase == 2 ? 30u : 50u)) { /* the next handle(s), as allocations come */
            uint64_t h = next;
            next += phase == 1 ? 1 + memd_test_rand(&rng) % 2000 : 1;
            ck_assert_int_eq(memd_handles_put(&t, h, rec_of(h)), 0);
            ck_assert_int_eq(memd_map_put(&ref, h, 1), 0);
        } else if (op < 55 && next > 1) { /* an old handle, as a restore brings them */
            uint64_t h = 1 + memd_test_rand(&rng) % (next - 1);
            bool had = memd_map_get(&ref, h) != NULL;
            ck_assert_int_eq(memd_handles_put(&t, h, rec_of(h)), had ? -EINVAL : 0);
            if (!had)
                ck_assert_int_eq(memd_map_put(&ref, h, 1), 0);
        } else if (op < 97 && ref.len) { /* a live one goes */
            size_t i = memd_test_rand(&rng) & (ref.cap - 1);
            while (!ref.slots[i].key)
                i = (i + 1) & (ref.cap - 1);
            uint64_t h = ref.slots[i].key;
            memd_handles_remove(&t, h);
            memd_map_remove(&ref, h);
        } else { /* one that is not there */
            uint64_t h = 1 + memd_test_rand(&rng) % (next + 5000);
            if (!memd_map_get(&ref, h))
                memd_handles_remove(&t, h);
        }
        for (int k = 0; k < 4; k++) {
            uint64_t h = 1 + memd_test_rand(&rng) % (next + 600);
            memd_alloc *want = memd_map_get(&ref, h) ? rec_of(h) : NULL;
            memd_alloc *got = memd_handles_get(&t, h);
            if (got != want)
                ck_abort_msg("seed 0x%" PRIx64 " step %d: handle %" PRIu64 " gives %p, "
                             "reference %p", seed, step, h, (void *)got, (void *)want);
        }
        if (step % 10007 == 0)
            check_all(&t, &ref, seed, step);
    }
    check_all(&t, &ref, seed, -1);
    ck_assert_int_eq(memd_handles_put(&t, 0, rec_of(1)), -EINVAL);
    memd_handles_free(&t);
    memd_map_free(&ref);
}
END_TEST

/* A million sequential handles cost about 8 bytes each; freeing all but every 1000th
 * leaves the stragglers in the loose map, not in chunks. */
START_TEST(handles_dense_then_sparse)
{
    enum { N = 1000000 };
    memd_handles t = {0};
    for (uint64_t h = 1; h <= N; h++)
        ck_assert_int_eq(memd_handles_put(&t, h, rec_of(h)), 0);
    ck_assert_uint_eq(t.len, N);
    ck_assert_uint_le(t.chunks.len, N / MEMD_HANDLES_CHUNK + 2);
    ck_assert_uint_eq(t.loose.len, 0);
    for (uint64_t h = 1; h <= N; h++)
        if (h % 1000 != 0)
            memd_handles_remove(&t, h);
    ck_assert_uint_eq(t.len, N / 1000);
    ck_assert_uint_le(t.chunks.len, 1); /* the newest only */
    for (uint64_t h = 1000; h <= N; h += 1000)
        ck_assert_ptr_eq(memd_handles_get(&t, h), rec_of(h));
    ck_assert_ptr_null(memd_handles_get(&t, 999));
    memd_handles_free(&t);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("handles");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, handles_match_reference, 0, 2);
    tcase_add_test(tc, handles_dense_then_sparse);
    suite_add_tcase(s, tc);
    return s;
}

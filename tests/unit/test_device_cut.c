/* A region's allocatable range shrunk from either end and restored
 * (memd_device_region_shrink / memd_device_region_reset, tt-metal's shrink_size and
 * reset_size): directed cases, then a seeded stream of lockstep, bank-set and per-bank
 * buffers, frees, shrinks and resets against a reference that keeps every bank's
 * occupied units and the two cuts. After EVERY step: every placement lies in what is
 * left and on free units of the reference; a shrink succeeds exactly when the reference
 * says the part is free in every bank and fits, and a refusal names the reference's
 * lowest occupied address (bottom) or highest occupied end (top); the region's total,
 * allocated bytes and every bank's lowest occupied address are the reference's. Every
 * CHECK_EVERY steps memd_device_check. Seed: MEMD_TEST_SEED or a fixed default. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "device.h"
#include "test_rand.h"
#include "unit_device.h"

#define KiB 1024ull
#define DEFAULT_SEED UINT64_C(0x6375747261676573)
#define STEPS 4000
#define MAX_LIVE 32 /* few enough that many shrinks find their part free */
#define CHECK_EVERY 500
#define REGION 1 /* the unit device's SRAM "buffers": [16 KiB, 256 KiB), 8 banks, align 16 */
#define LO (16 * KiB)
#define HI (256 * KiB)
#define UNIT 16ull
#define NBANKS 8
#define NUNITS ((HI - LO) / UNIT)

static memd_alloc_req sram(memd_class c, uint64_t bytes)
{
    return (memd_alloc_req){.cls = c, .scope = MEMD_SCOPE_SRAM, .bytes = bytes};
}

static uint64_t lowest(const memd_device *d, uint32_t bank)
{
    uint64_t a = 0;
    return memd_device_bank_lowest(d, MEMD_KIND_SRAM, bank, &a) == 0 ? a : UINT64_MAX;
}

START_TEST(shrink_and_reset)
{
    memd_device *d = unit_device_bottom_up();
    memd_error err = {0};
    memd_range_stats st;
    memd_placement a, b;
    memd_alloc_req up = sram(MEMD_CLASS_CONSTANT, 1 * KiB), down = sram(MEMD_CLASS_PLACEHOLDER, 1 * KiB);
    ck_assert_int_eq(memd_device_alloc(d, &up, &a), 0);
    ck_assert_uint_eq(a.address, LO);
    ck_assert_int_eq(memd_device_region_shrink(d, MEMD_KIND_SRAM, REGION, MEMD_END_BOTTOM, 4 * KiB, &err), -EBUSY);
    ck_assert_msg(strstr(err.msg, "starts at 0x4000"), "%s", err.msg);
    ck_assert_int_eq(memd_device_release(d, &a), 0);
    memd_placement_fini(&a);
    ck_assert_int_eq(memd_device_region_shrink(d, MEMD_KIND_SRAM, REGION, MEMD_END_BOTTOM, 4 * KiB, &err), 0);
    ck_assert_int_eq(memd_device_region_shrink(d, MEMD_KIND_SRAM, REGION, MEMD_END_TOP, 8 * KiB, &err), 0);
    memd_region_cut cut;
    ck_assert_int_eq(memd_device_region_cut(d, MEMD_KIND_SRAM, REGION, &cut), 0);
    ck_assert_uint_eq(cut.bottom, 4 * KiB);
    ck_assert_uint_eq(cut.top, 8 * KiB);
    ck_assert_uint_eq(cut.start, LO + 4 * KiB);
    ck_assert_uint_eq(cut.end, HI - 8 * KiB);
    ck_assert_int_eq(memd_device_region_cut(d, MEMD_KIND_SRAM, 0, &cut), -ENOENT);
    /* Nothing held yet: the parts given up are neither allocations nor occupied. */
    ck_assert_int_eq(memd_device_region_stats(d, MEMD_KIND_SRAM, REGION, &st), 0);
    ck_assert_uint_eq(st.total, HI - LO - 12 * KiB);
    ck_assert_uint_eq(st.allocated, 0);
    ck_assert_uint_eq(st.allocations, 0);
    ck_assert_uint_eq(lowest(d, 0), UINT64_MAX);
    ck_assert_int_eq(memd_device_alloc(d, &up, &a), 0);
    ck_assert_uint_eq(a.address, LO + 4 * KiB);
    ck_assert_int_eq(memd_device_alloc(d, &down, &b), 0);
    ck_assert_uint_eq(b.address, HI - 9 * KiB);
    ck_assert_uint_eq(lowest(d, 3), LO + 4 * KiB);
    ck_assert_int_eq(memd_device_group_stats(d, MEMD_KIND_SRAM, &st), 0);
    ck_assert_uint_eq(st.allocated, 2 * KiB);
    ck_assert_uint_eq(st.allocations, 2);
    /* More from the top: the buffer there is named by its end. */
    ck_assert_int_eq(memd_device_region_shrink(d, MEMD_KIND_SRAM, REGION, MEMD_END_TOP, 2 * KiB, &err), -EBUSY);
    ck_assert_msg(strstr(err.msg, "ends at 0x3e000"), "%s", err.msg);
    /* Not a multiple of the alignment; more than is left; a region that is not allocatable. */
    ck_assert_int_eq(memd_device_region_shrink(d, MEMD_KIND_SRAM, REGION, MEMD_END_TOP, 24, &err), -EINVAL);
    ck_assert_msg(strstr(err.msg, "alignment 16"), "%s", err.msg);
    ck_assert_int_eq(memd_device_region_shrink(d, MEMD_KIND_SRAM, REGION, MEMD_END_BOTTOM, HI, &err), -ERANGE);
    ck_assert_int_eq(memd_device_region_shrink(d, MEMD_KIND_SRAM, 0, MEMD_END_BOTTOM, 16, &err), -ENOENT);
    ck_assert_int_eq(memd_device_region_reset(d, MEMD_KIND_SRAM, 0, 3), -ENOENT);
    /* Reset the bottom only: a constant goes to the bottom again. */
    ck_assert_int_eq(memd_device_region_reset(d, MEMD_KIND_SRAM, REGION, 1u << MEMD_END_BOTTOM), 0);
    memd_placement c;
    ck_assert_int_eq(memd_device_alloc(d, &up, &c), 0);
    ck_assert_uint_eq(c.address, LO);
    ck_assert_int_eq(memd_device_region_cut(d, MEMD_KIND_SRAM, REGION, &cut), 0);
    ck_assert_uint_eq(cut.bottom, 0);
    ck_assert_uint_eq(cut.top, 8 * KiB);
    ck_assert_int_eq(memd_device_check(d), 0);
    memd_placement_fini(&a);
    memd_placement_fini(&b);
    memd_placement_fini(&c);
    memd_device_destroy(d);
}
END_TEST

/* The whole range may be given up; then nothing fits, and a reset gives it all back. */
START_TEST(shrink_everything)
{
    memd_device *d = unit_device_bottom_up();
    memd_error err = {0};
    memd_placement a;
    memd_alloc_req up = sram(MEMD_CLASS_CONSTANT, 16);
    ck_assert_int_eq(memd_device_region_shrink(d, MEMD_KIND_SRAM, REGION, MEMD_END_TOP, 100 * KiB, &err), 0);
    ck_assert_int_eq(memd_device_region_shrink(d, MEMD_KIND_SRAM, REGION, MEMD_END_BOTTOM, 140 * KiB, &err), 0);
    ck_assert_int_eq(memd_device_region_shrink(d, MEMD_KIND_SRAM, REGION, MEMD_END_BOTTOM, 16, &err), -ERANGE);
    ck_assert_int_eq(memd_device_alloc(d, &up, &a), -ENOMEM);
    ck_assert_int_eq(memd_device_region_reset(d, MEMD_KIND_SRAM, REGION, 3), 0);
    ck_assert_int_eq(memd_device_alloc(d, &up, &a), 0);
    ck_assert_uint_eq(a.address, LO);
    memd_placement_fini(&a);
    memd_device_destroy(d);
}
END_TEST

/* ------------------------------------------------------------- randomized */

typedef struct ref {
    uint8_t used[NBANKS][NUNITS];
    uint64_t cut[2];
    uint64_t lockstep_bytes;
} ref;

typedef struct live {
    memd_placement p;
} live;

static uint64_t unit_of(uint64_t addr)
{
    return (addr - LO) / UNIT;
}

/* Marks (or clears) the placement's units in its banks; when marking, each must be free
 * and inside what is left. */
static void ref_mark(ref *m, const memd_placement *p, uint8_t v, uint64_t seed, int step)
{
    for (uint32_t b = 0; b < NBANKS; b++) {
        uint64_t at;
        if (memd_placement_bank_addr(p, b, &at) < 0)
            continue;
        ck_assert_msg(at >= LO + m->cut[0] && at + p->size_per_bank <= HI - m->cut[1],
                      "seed %" PRIu64 " step %d: bank %u buffer [0x%" PRIx64 ", +%" PRIu64
                      ") outside what is left", seed, step, b, at, p->size_per_bank);
        for (uint64_t u = unit_of(at); u < unit_of(at + p->size_per_bank); u++) {
            ck_assert_msg(m->used[b][u] != v, "seed %" PRIu64 " step %d: bank %u unit %" PRIu64,
                          seed, step, b, u);
            m->used[b][u] = v;
        }
    }
}

/* The lowest occupied unit's address in [a, e) over every bank (or UINT64_MAX), and the
 * end of the highest (0). */
static void ref_occupied(const ref *m, uint64_t a, uint64_t e, uint64_t *low, uint64_t *high)
{
    *low = UINT64_MAX;
    *high = 0;
    for (uint32_t b = 0; b < NBANKS; b++)
        for (uint64_t u = unit_of(a); u < unit_of(e); u++)
            if (m->used[b][u]) {
                uint64_t x = LO + u * UNIT;
                if (x < *low)
                    *low = x;
                if (x + UNIT > *high)
                    *high = x + UNIT;
            }
}

static void random_req(uint64_t *rng, memd_alloc_req *r, uint32_t *set)
{
    static const memd_class cls[] = {MEMD_CLASS_CONSTANT, MEMD_CLASS_PLACEHOLDER};
    *r = sram(cls[memd_test_below(rng, 2)], UNIT * (1 + memd_test_below(rng, 256)));
    uint64_t kind = memd_test_below(rng, 4); /* lockstep twice as often */
    if (kind < 2)
        return;
    uint32_t n = 0;
    for (uint32_t b = 0; b < NBANKS; b++)
        if (memd_test_below(rng, 2))
            set[n++] = b;
    if (n == 0)
        set[n++] = (uint32_t)memd_test_below(rng, NBANKS);
    r->bank_set = set;
    r->nbank_set = n;
    r->per_bank = kind == 3;
}

START_TEST(random_against_reference)
{
    uint64_t seed = memd_test_seed(DEFAULT_SEED), rng = seed;
    printf("# seed %" PRIu64 "\n", seed);
    memd_device *d = unit_device_bottom_up();
    ref *m = calloc(1, sizeof *m);
    live *l = calloc(MAX_LIVE, sizeof *l);
    size_t nlive = 0;
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(l);
    uint64_t shrinks = 0, refusals = 0;
    for (int step = 0; step < STEPS; step++) {
        uint64_t op = memd_test_below(&rng, 100);
        if (op < 35 && nlive < MAX_LIVE) {
            memd_alloc_req r;
            uint32_t set[NBANKS];
            random_req(&rng, &r, set);
            memd_placement p;
            int rc = memd_device_alloc(d, &r, &p);
            ck_assert_msg(rc == 0 || rc == -ENOMEM, "seed %" PRIu64 " step %d: %d", seed, step, rc);
            if (rc == 0) {
                ref_mark(m, &p, 1, seed, step);
                if (p.mode == MEMD_BANKS_ALL)
                    m->lockstep_bytes += p.size_per_bank;
                l[nlive++].p = p;
            }
        } else if (op < 65 && nlive) {
            size_t i = memd_test_below(&rng, nlive);
            ck_assert_int_eq(memd_device_release(d, &l[i].p), 0);
            ref_mark(m, &l[i].p, 0, seed, step);
            if (l[i].p.mode == MEMD_BANKS_ALL)
                m->lockstep_bytes -= l[i].p.size_per_bank;
            memd_placement_fini(&l[i].p);
            l[i] = l[--nlive];
        } else if (op < 94) {
            memd_end end = memd_test_below(&rng, 2) ? MEMD_END_TOP : MEMD_END_BOTTOM;
            uint64_t bytes = UNIT * (1 + memd_test_below(&rng, 512));
            uint64_t from = LO + m->cut[0], to = HI - m->cut[1];
            uint64_t a = end == MEMD_END_BOTTOM ? from : to - bytes;
            uint64_t low, high;
            int want = 0;
            if (bytes > to - from) {
                want = -ERANGE;
            } else {
                ref_occupied(m, a, a + bytes, &low, &high);
                want = high ? -EBUSY : 0;
            }
            memd_error err = {0};
            int rc = memd_device_region_shrink(d, MEMD_KIND_SRAM, REGION, end, bytes, &err);
            ck_assert_msg(rc == want, "seed %" PRIu64 " step %d: shrink %s by %" PRIu64
                          ": %d, not %d (%s)", seed, step, end ? "top" : "bottom", bytes, rc,
                          want, err.msg);
            if (rc == -EBUSY) {
                char what[64];
                snprintf(what, sizeof what, "%s 0x%" PRIx64,
                         end == MEMD_END_BOTTOM ? "starts at" : "ends at",
                         end == MEMD_END_BOTTOM ? low : high);
                ck_assert_msg(strstr(err.msg, what), "seed %" PRIu64 " step %d: %s, not %s",
                              seed, step, err.msg, what);
                refusals++;
            }
            if (rc == 0) {
                m->cut[end] += bytes;
                shrinks++;
            }
        } else {
            unsigned ends = 1 + (unsigned)memd_test_below(&rng, 3);
            ck_assert_int_eq(memd_device_region_reset(d, MEMD_KIND_SRAM, REGION, ends), 0);
            for (int e = 0; e < 2; e++)
                if (ends & (1u << e))
                    m->cut[e] = 0;
        }
        memd_range_stats st;
        ck_assert_int_eq(memd_device_region_stats(d, MEMD_KIND_SRAM, REGION, &st), 0);
        ck_assert_msg(st.total == HI - LO - m->cut[0] - m->cut[1] &&
                      st.allocated == m->lockstep_bytes && st.allocations == nlive,
                      "seed %" PRIu64 " step %d: total %" PRIu64 " allocated %" PRIu64
                      " allocations %" PRIu64, seed, step, st.total, st.allocated, st.allocations);
        uint32_t b = (uint32_t)memd_test_below(&rng, NBANKS);
        uint64_t want_low = UINT64_MAX;
        for (uint64_t u = 0; u < NUNITS && want_low == UINT64_MAX; u++)
            if (m->used[b][u])
                want_low = LO + u * UNIT;
        ck_assert_msg(lowest(d, b) == want_low, "seed %" PRIu64 " step %d: bank %u lowest",
                      seed, step, b);
        memd_region_cut cut;
        ck_assert_int_eq(memd_device_region_cut(d, MEMD_KIND_SRAM, REGION, &cut), 0);
        ck_assert(cut.bottom == m->cut[0] && cut.top == m->cut[1]);
        if (step % CHECK_EVERY == 0)
            ck_assert_msg(memd_device_check(d) == 0, "seed %" PRIu64 " step %d", seed, step);
    }
    printf("# %" PRIu64 " shrinks, %" PRIu64 " refused\n", shrinks, refusals);
    /* The stream did both things it is about. */
    ck_assert_uint_gt(shrinks, 10);
    ck_assert_uint_gt(refusals, 100);
    for (size_t i = 0; i < nlive; i++)
        memd_placement_fini(&l[i].p);
    free(l);
    free(m);
    memd_device_destroy(d);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("device-cut");
    TCase *t = tcase_create("cut");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, shrink_and_reset);
    tcase_add_test(t, shrink_everything);
    tcase_add_test(t, random_against_reference);
    suite_add_tcase(s, t);
    return s;
}

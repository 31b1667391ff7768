/* Unit tests for the range allocator (engine/alloc/range.h): every placement rule and
 * error path on small hand-built layouts, checked block by block. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_main.h"
#include "range.h"
#include "test_rand.h"

#define BU MEMD_DIR_BOTTOM_UP
#define TD MEMD_DIR_TOP_DOWN
#define FIRST MEMD_FIT_FIRST
#define BEST MEMD_FIT_BEST

typedef struct blk {
    uint64_t addr, size;
    bool used;
} blk;

typedef struct layout {
    blk b[64];
    int n;
} layout;

static int collect(void *ctx, uint64_t addr, uint64_t size, bool used)
{
    layout *l = ctx;
    if (l->n >= 64)
        return -E2BIG;
    l->b[l->n++] = (blk){addr, size, used};
    return 0;
}

/* The whole map, block by block, plus the internal invariants. */
static void expect_layout(const memd_range *r, const blk *want, int n)
{
    layout got = {.n = 0};
    ck_assert_int_eq(memd_range_foreach(r, collect, &got), 0);
    ck_assert_int_eq(got.n, n);
    for (int i = 0; i < n; i++) {
        ck_assert_msg(got.b[i].addr == want[i].addr && got.b[i].size == want[i].size &&
                          got.b[i].used == want[i].used,
                      "block %d: got [0x%llx +0x%llx %s], want [0x%llx +0x%llx %s]", i,
                      (unsigned long long)got.b[i].addr, (unsigned long long)got.b[i].size,
                      got.b[i].used ? "used" : "free", (unsigned long long)want[i].addr,
                      (unsigned long long)want[i].size, want[i].used ? "used" : "free");
    }
    ck_assert_int_eq(memd_range_check(r), 0);
}

#define EXPECT_LAYOUT(r, ...)                                                                  \
    expect_layout((r), (const blk[]){__VA_ARGS__},                                             \
                  (int)(sizeof((const blk[]){__VA_ARGS__}) / sizeof(blk)))

static memd_range *mk(uint64_t base, uint64_t size, uint64_t min_align)
{
    memd_range *r = NULL;
    ck_assert_int_eq(memd_range_create(base, size, min_align, &r), 0);
    ck_assert_ptr_nonnull(r);
    return r;
}

static uint64_t alloc_ok(memd_range *r, uint64_t size, uint64_t align, memd_dir dir,
                         memd_fit fit)
{
    uint64_t a = UINT64_MAX;
    ck_assert_int_eq(memd_range_alloc(r, size, align, dir, fit, &a), 0);
    return a;
}

static void free_ok(memd_range *r, uint64_t addr)
{
    ck_assert_int_eq(memd_range_free(r, addr, NULL), 0);
}

static memd_range_stats stats(const memd_range *r)
{
    memd_range_stats st;
    memd_range_stats_get(r, &st);
    return st;
}

/* A row of n allocations of `each` bytes from the bottom of r; returns their addresses. */
static void fill_row(memd_range *r, uint64_t *addr, int n, uint64_t each)
{
    for (int i = 0; i < n; i++)
        addr[i] = alloc_ok(r, each, 0, BU, FIRST);
}

/* ---------------------------------------------------------------- create */

START_TEST(test_create_errors)
{
    memd_range *r = (memd_range *)&r; /* must be reset to NULL on failure */
    ck_assert_int_eq(memd_range_create(0, 0, 32, &r), -EINVAL);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(memd_range_create(0, 1024, 0, &r), -EINVAL);
    ck_assert_int_eq(memd_range_create(0, 1024, 3, &r), -EINVAL);
    ck_assert_int_eq(memd_range_create(0, 1024, 96, &r), -EINVAL);
    ck_assert_int_eq(memd_range_create(UINT64_MAX, 1, 1, &r), -EINVAL);     /* end = 2^64 */
    ck_assert_int_eq(memd_range_create(UINT64_MAX - 9, 11, 1, &r), -EINVAL);
    ck_assert_int_eq(memd_range_create(1, 62, 32, &r), -EINVAL); /* [1, 63): no whole unit */
    ck_assert_int_eq(memd_range_create(UINT64_MAX - 5, 5, 32, &r), -EINVAL); /* align-up wraps */
    ck_assert_int_eq(memd_range_create(0, 1024, 32, NULL), -EINVAL);
    ck_assert_ptr_null(r);
}
END_TEST

START_TEST(test_create_fresh)
{
    memd_range *r = mk(0x1000, 0x10000, 64);
    ck_assert_uint_eq(memd_range_base(r), 0x1000);
    ck_assert_uint_eq(memd_range_size(r), 0x10000);
    ck_assert_uint_eq(memd_range_min_align(r), 64);
    memd_range_stats st = stats(r);
    ck_assert_uint_eq(st.total, 0x10000);
    ck_assert_uint_eq(st.allocated, 0);
    ck_assert_uint_eq(st.free, 0x10000);
    ck_assert_uint_eq(st.largest_free, 0x10000);
    ck_assert_uint_eq(st.largest_free_addr, 0x1000);
    ck_assert_uint_eq(st.free_blocks, 1);
    ck_assert_uint_eq(st.allocations, 0);
    EXPECT_LAYOUT(r, {0x1000, 0x10000, false});
    memd_range_destroy(r);
    memd_range_destroy(NULL);
}
END_TEST

/* An unaligned base and end are trimmed to whole min_align units. */
START_TEST(test_unaligned_base_and_size)
{
    memd_range *r = mk(1000, 10000, 64); /* usable [1024, 10944) */
    memd_range_stats st = stats(r);
    ck_assert_uint_eq(st.total, 10944 - 1024);
    ck_assert_uint_eq(st.free, 10944 - 1024);
    ck_assert_uint_eq(st.largest_free_addr, 1024);
    ck_assert_uint_eq(memd_range_base(r), 1000);
    ck_assert_uint_eq(memd_range_size(r), 10000);

    ck_assert_uint_eq(alloc_ok(r, 1, 0, BU, FIRST), 1024);
    ck_assert_uint_eq(alloc_ok(r, 100, 0, TD, FIRST), 10944 - 128);
    ck_assert_int_eq(memd_range_alloc_at(r, 960, 64), -EINVAL);  /* aligned, below the range */
    ck_assert_int_eq(memd_range_alloc_at(r, 1000, 64), -EINVAL); /* the base itself: unaligned */
    ck_assert_int_eq(memd_range_alloc_at(r, 10944, 1), -EINVAL); /* the trimmed tail */
    ck_assert_int_eq(memd_range_alloc_at(r, 10816, 64), -EBUSY);
    ck_assert_int_eq(memd_range_alloc_at(r, 10752, 64), 0);
    EXPECT_LAYOUT(r, {1024, 64, true}, {1088, 10752 - 1088, false}, {10752, 64, true},
                  {10816, 128, true});
    memd_range_destroy(r);
}
END_TEST

/* ---------------------------------------------------------------- argument errors */

START_TEST(test_alloc_bad_args)
{
    memd_range *r = mk(0, 4096, 32);
    uint64_t a = 77;
    ck_assert_int_eq(memd_range_alloc(r, 0, 0, BU, FIRST, &a), -EINVAL);
    ck_assert_int_eq(memd_range_alloc(r, 32, 3, BU, FIRST, &a), -EINVAL);
    ck_assert_int_eq(memd_range_alloc(r, 32, 96, BU, FIRST, &a), -EINVAL);
    ck_assert_int_eq(memd_range_alloc(r, 32, 0, (memd_dir)2, FIRST, &a), -EINVAL);
    ck_assert_int_eq(memd_range_alloc(r, 32, 0, BU, (memd_fit)2, &a), -EINVAL);
    ck_assert_int_eq(memd_range_alloc(r, 32, 0, BU, FIRST, NULL), -EINVAL);
    ck_assert_int_eq(memd_range_alloc(NULL, 32, 0, BU, FIRST, &a), -EINVAL);
    ck_assert_uint_eq(a, 77); /* untouched on error */
    ck_assert_int_eq(memd_range_alloc(r, UINT64_MAX, 0, BU, FIRST, &a), -EOVERFLOW);
    ck_assert_int_eq(memd_range_alloc(r, UINT64_MAX - 30, 0, TD, BEST, &a), -EOVERFLOW);
    ck_assert_int_eq(memd_range_alloc(r, 4097, 0, BU, FIRST, &a), -ENOMEM);
    ck_assert_uint_eq(stats(r).allocations, 0);
    EXPECT_LAYOUT(r, {0, 4096, false});
    memd_range_destroy(r);
}
END_TEST

/* With min_align 1 nothing is rounded, so a huge size is merely too big. */
START_TEST(test_no_rounding_with_min_align_1)
{
    memd_range *r = mk(0, 100, 1);
    uint64_t a;
    ck_assert_int_eq(memd_range_alloc(r, UINT64_MAX, 0, BU, FIRST, &a), -ENOMEM);
    ck_assert_uint_eq(alloc_ok(r, 3, 0, BU, FIRST), 0);
    ck_assert_uint_eq(alloc_ok(r, 5, 0, BU, FIRST), 3);
    ck_assert_uint_eq(alloc_ok(r, 7, 0, TD, FIRST), 93);
    ck_assert_uint_eq(alloc_ok(r, 4, 4, BU, FIRST), 8); /* aligned up from 8: no pad */
    ck_assert_uint_eq(alloc_ok(r, 1, 16, BU, FIRST), 16);
    EXPECT_LAYOUT(r, {0, 3, true}, {3, 5, true}, {8, 4, true}, {12, 4, false}, {16, 1, true},
                  {17, 76, false}, {93, 7, true});
    memd_range_destroy(r);
}
END_TEST

/* ---------------------------------------------------------------- placement */

START_TEST(test_exact_fit_whole_range)
{
    memd_range *r = mk(0, 1024, 32);
    uint64_t a, sz = 0;
    ck_assert_uint_eq(alloc_ok(r, 1024, 0, TD, FIRST), 0);
    memd_range_stats st = stats(r);
    ck_assert_uint_eq(st.free_blocks, 0);
    ck_assert_uint_eq(st.largest_free, 0);
    ck_assert_uint_eq(st.largest_free_addr, 0);
    ck_assert_uint_eq(st.free, 0);
    ck_assert_int_eq(memd_range_alloc(r, 1, 0, BU, FIRST, &a), -ENOMEM);
    ck_assert_int_eq(memd_range_alloc(r, 1, 0, TD, BEST, &a), -ENOMEM);
    ck_assert_int_eq(memd_range_alloc_at(r, 0, 32), -EBUSY);
    EXPECT_LAYOUT(r, {0, 1024, true});
    ck_assert_int_eq(memd_range_free(r, 0, &sz), 0);
    ck_assert_uint_eq(sz, 1024);
    EXPECT_LAYOUT(r, {0, 1024, false});
    memd_range_destroy(r);
}
END_TEST

START_TEST(test_size_rounding_and_lookup)
{
    memd_range *r = mk(0, 4096, 32);
    uint64_t a = alloc_ok(r, 1, 0, BU, FIRST), sz = 0;
    uint64_t b = alloc_ok(r, 33, 0, BU, FIRST);
    ck_assert_uint_eq(a, 0);
    ck_assert_uint_eq(b, 32);
    ck_assert_int_eq(memd_range_lookup(r, a, &sz), 0);
    ck_assert_uint_eq(sz, 32);
    ck_assert_int_eq(memd_range_lookup(r, b, &sz), 0);
    ck_assert_uint_eq(sz, 64);
    ck_assert_int_eq(memd_range_lookup(r, b, NULL), 0);
    ck_assert_int_eq(memd_range_lookup(r, b + 32, &sz), -ENOENT);
    ck_assert_int_eq(memd_range_lookup(r, 96, &sz), -ENOENT); /* a free block's start */
    ck_assert_uint_eq(stats(r).allocated, 96);
    memd_range_destroy(r);
}
END_TEST

START_TEST(test_directions_fill_from_each_end)
{
    memd_range *r = mk(0x10000, 0x1000, 32);
    ck_assert_uint_eq(alloc_ok(r, 64, 0, BU, FIRST), 0x10000);
    ck_assert_uint_eq(alloc_ok(r, 64, 0, BU, FIRST), 0x10040);
    ck_assert_uint_eq(alloc_ok(r, 32, 0, TD, FIRST), 0x10fe0);
    ck_assert_uint_eq(alloc_ok(r, 96, 0, TD, FIRST), 0x10f80);
    EXPECT_LAYOUT(r, {0x10000, 64, true}, {0x10040, 64, true}, {0x10080, 0xf00, false},
                  {0x10f80, 96, true}, {0x10fe0, 32, true});
    memd_range_destroy(r);
}
END_TEST

/* Holes of 128 at 128, 64 at 384, 256 at 640 (the rest allocated), then the tail. */
static memd_range *holes(uint64_t *tail_addr)
{
    memd_range *r = mk(0, 4096, 32);
    uint64_t a[8];
    const uint64_t sizes[8] = {128, 128, 128, 64, 192, 256, 128, 64};
    for (int i = 0; i < 8; i++)
        a[i] = alloc_ok(r, sizes[i], 0, BU, FIRST);
    free_ok(r, a[1]); /* [128, 256) */
    free_ok(r, a[3]); /* [384, 448) */
    free_ok(r, a[5]); /* [640, 896) */
    *tail_addr = 1088;
    EXPECT_LAYOUT(r, {0, 128, true}, {128, 128, false}, {256, 128, true}, {384, 64, false},
                  {448, 192, true}, {640, 256, false}, {896, 128, true}, {1024, 64, true},
                  {1088, 3008, false});
    return r;
}

START_TEST(test_first_fit_bottom_up_lowest_block)
{
    uint64_t tail;
    memd_range *r = holes(&tail);
    ck_assert_uint_eq(alloc_ok(r, 64, 0, BU, FIRST), 128);  /* first block that fits */
    ck_assert_uint_eq(alloc_ok(r, 65, 0, BU, FIRST), 640);  /* 64 left at 192 is too small */
    ck_assert_uint_eq(alloc_ok(r, 64, 0, BU, FIRST), 192);
    ck_assert_uint_eq(alloc_ok(r, 200, 0, BU, FIRST), tail); /* nothing below 1088 holds 224 */
    memd_range_destroy(r);
}
END_TEST

START_TEST(test_first_fit_top_down_highest_block)
{
    uint64_t tail;
    memd_range *r = holes(&tail);
    ck_assert_uint_eq(alloc_ok(r, 3008, 0, TD, FIRST), tail); /* exact fit of the tail */
    ck_assert_uint_eq(alloc_ok(r, 64, 0, TD, FIRST), 896 - 64); /* high end of [640, 896) */
    ck_assert_uint_eq(alloc_ok(r, 128, 0, TD, FIRST), 832 - 128);
    ck_assert_uint_eq(alloc_ok(r, 64, 0, TD, FIRST), 704 - 64); /* exact: [640, 704) */
    ck_assert_uint_eq(alloc_ok(r, 64, 0, TD, FIRST), 384);
    ck_assert_uint_eq(alloc_ok(r, 96, 0, TD, FIRST), 256 - 96);
    EXPECT_LAYOUT(r, {0, 128, true}, {128, 32, false}, {160, 96, true}, {256, 128, true},
                  {384, 64, true}, {448, 192, true}, {640, 64, true}, {704, 128, true},
                  {832, 64, true}, {896, 128, true}, {1024, 64, true}, {1088, 3008, true});
    memd_range_destroy(r);
}
END_TEST

START_TEST(test_align_bottom_up_pads_low)
{
    memd_range *r = mk(0, 4096, 32);
    ck_assert_uint_eq(alloc_ok(r, 32, 0, BU, FIRST), 0);
    ck_assert_uint_eq(alloc_ok(r, 64, 256, BU, FIRST), 256);
    ck_assert_uint_eq(alloc_ok(r, 32, 1, BU, FIRST), 32); /* align below min_align: 32 */
    EXPECT_LAYOUT(r, {0, 32, true}, {32, 32, true}, {64, 192, false}, {256, 64, true},
                  {320, 3776, false});
    memd_range_stats st = stats(r);
    ck_assert_uint_eq(st.free_blocks, 2);
    ck_assert_uint_eq(st.largest_free, 3776);
    ck_assert_uint_eq(st.largest_free_addr, 320);
    memd_range_destroy(r);
}
END_TEST

START_TEST(test_align_top_down_pads_high)
{
    memd_range *r = mk(0, 4096, 32);
    /* 4096 - 128 = 3968, aligned down to 1024: 3072; [3200, 4096) stays free above it. */
    ck_assert_uint_eq(alloc_ok(r, 100, 1024, TD, FIRST), 3072);
    EXPECT_LAYOUT(r, {0, 3072, false}, {3072, 128, true}, {3200, 896, false});
    ck_assert_uint_eq(alloc_ok(r, 896, 128, TD, FIRST), 3200); /* exact, already aligned */
    ck_assert_uint_eq(alloc_ok(r, 32, 2048, TD, FIRST), 2048);
    EXPECT_LAYOUT(r, {0, 2048, false}, {2048, 32, true}, {2080, 992, false}, {3072, 128, true},
                  {3200, 896, true});
    memd_range_destroy(r);
}
END_TEST

/* A block big enough by size but not once aligned is passed over, in both directions. */
START_TEST(test_align_passes_over_unfit_blocks)
{
    memd_range *r = mk(0, 8192, 32);
    ck_assert_int_eq(memd_range_alloc_at(r, 0, 32), 0);
    ck_assert_int_eq(memd_range_alloc_at(r, 160, 864), 0);   /* hole [32, 160): 128 bytes */
    ck_assert_int_eq(memd_range_alloc_at(r, 1152, 5920), 0); /* hole [1024, 1152) */
    ck_assert_int_eq(memd_range_alloc_at(r, 7200, 992), 0);  /* hole [7072, 7200) at the top */
    ck_assert_uint_eq(alloc_ok(r, 128, 1024, BU, FIRST), 1024);
    ck_assert_int_eq(memd_range_free(r, 1024, NULL), 0);
    ck_assert_uint_eq(alloc_ok(r, 128, 1024, TD, FIRST), 1024); /* [7072, 7200) unaligned */
    uint64_t a;
    ck_assert_int_eq(memd_range_alloc(r, 128, 1024, BU, FIRST, &a), -ENOMEM);
    ck_assert_int_eq(memd_range_alloc(r, 128, 1024, TD, BEST, &a), -ENOMEM);
    ck_assert_uint_eq(alloc_ok(r, 128, 32, TD, FIRST), 7072);
    ck_assert_uint_eq(alloc_ok(r, 128, 0, BU, FIRST), 32);
    memd_range_destroy(r);
}
END_TEST

/* 64-byte buffers in a 4 KiB-aligned class leave a 4032-byte free block behind each
 * live buffer: one that fits by size but never once aligned. A first-fit search must not
 * walk them all (issue 14: 280 us per allocation at 65k live): after the first walk the
 * alignment is indexed and each search examines one entry, in both directions, with
 * exactly the placements of the walk. */
START_TEST(test_aligned_first_fit_does_not_walk)
{
    enum { LIVE = 10000 };
    const uint64_t page = 4096;
    for (int d = 0; d < 2; d++) {
        memd_dir dir = d ? TD : BU;
        uint64_t size = (uint64_t)2 * LIVE * page;
        memd_range *r = mk(0, size, 32);
        uint64_t *a = malloc(LIVE * sizeof(*a));
        ck_assert_ptr_nonnull(a);
        for (uint64_t i = 0; i < LIVE; i++) {
            a[i] = alloc_ok(r, 64, page, dir, FIRST);
            /* bottom-up: page i's start; top-down: the last aligned start of page i from the top */
            ck_assert_uint_eq(a[i], d ? size - (i + 1) * page : i * page);
        }
        uint64_t before = memd_range_probes(r);
        /* Free every other buffer and take the holes back: each goes where the walk
         * would have put it, the lowest (highest) free page. */
        for (uint64_t i = 0; i < LIVE; i += 2)
            ck_assert_int_eq(memd_range_free(r, a[i], NULL), 0);
        for (uint64_t i = 0; i < LIVE; i += 2)
            ck_assert_uint_eq(alloc_ok(r, 64, page, dir, FIRST), a[i]);
        ck_assert_uint_eq(alloc_ok(r, 64, page, dir, FIRST), d ? size - (LIVE + 1) * page
                                                               : LIVE * page);
        uint64_t probes = memd_range_probes(r) - before;
        ck_assert_msg(probes <= LIVE / 2 + 1, "%" PRIu64 " blocks examined for %d allocations",
                      probes, LIVE / 2 + 1);
        ck_assert_int_eq(memd_range_check(r), 0);
        free(a);
        memd_range_destroy(r);
    }
}
END_TEST

/* Indexes are kept for MEMD_RANGE_AIDX_MAX alignments; more alignments walk, with the
 * same placements, and every index follows frees, coalescing and reset. */
START_TEST(test_aligned_indexes_follow_changes)
{
    memd_range *r = mk(0, UINT64_C(1) << 26, 32);
    uint64_t a[600];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 600; i++) {
            uint64_t al = UINT64_C(64) << (i % 6); /* 64 .. 2048: six alignments */
            a[i] = alloc_ok(r, 32 + 32 * (uint64_t)(i % 5), al, i % 3 ? BU : TD, FIRST);
            ck_assert_uint_eq(a[i] % al, 0);
        }
        ck_assert_int_eq(memd_range_check(r), 0);
        for (int i = 0; i < 600; i += 1 + i % 3)
            ck_assert_int_eq(memd_range_free(r, a[i], NULL), 0);
        ck_assert_int_eq(memd_range_check(r), 0);
        memd_range_reset(r);
        ck_assert_int_eq(memd_range_check(r), 0);
    }
    memd_range_destroy(r);
}
END_TEST

/* Alignment arithmetic at the very top of the address space must not wrap. */
START_TEST(test_overflow_near_top_of_address_space)
{
    uint64_t base = UINT64_MAX - 4095; /* 0xffff...f000, end = UINT64_MAX exactly */
    memd_range *r = mk(base, 4095, 16);
    uint64_t hi = UINT64_MAX & ~UINT64_C(15), a;
    ck_assert_uint_eq(stats(r).total, hi - base);
    ck_assert_int_eq(memd_range_alloc(r, 16, UINT64_C(1) << 63, BU, FIRST, &a), -ENOMEM);
    ck_assert_int_eq(memd_range_alloc(r, 16, UINT64_C(1) << 63, TD, FIRST, &a), -ENOMEM);
    ck_assert_int_eq(memd_range_alloc(r, 16, UINT64_C(1) << 63, BU, BEST, &a), -ENOMEM);
    ck_assert_int_eq(memd_range_alloc(r, UINT64_MAX - 3, 0, BU, FIRST, &a), -EOVERFLOW);
    ck_assert_int_eq(memd_range_alloc(r, UINT64_MAX - 15, 0, BU, FIRST, &a), -ENOMEM);
    ck_assert_int_eq(memd_range_alloc_at(r, hi - 16, 17), -EINVAL);
    ck_assert_int_eq(memd_range_alloc_at(r, hi, 16), -EINVAL);
    ck_assert_int_eq(memd_range_alloc_at(r, hi - 16, UINT64_MAX), -EINVAL);
    ck_assert_int_eq(memd_range_alloc_at(r, hi - 16, UINT64_MAX - 15), -EINVAL);
    ck_assert_int_eq(memd_range_alloc_at(r, hi - 16, 16), 0);
    ck_assert_uint_eq(alloc_ok(r, 16, 4096, BU, FIRST), base);
    ck_assert_uint_eq(alloc_ok(r, 16, 2048, TD, FIRST), base + 2048);
    ck_assert_uint_eq(alloc_ok(r, 1, 0, TD, FIRST), hi - 32);
    EXPECT_LAYOUT(r, {base, 16, true}, {base + 16, 2032, false}, {base + 2048, 16, true},
                  {base + 2064, hi - 32 - (base + 2064), false}, {hi - 32, 16, true},
                  {hi - 16, 16, true});
    free_ok(r, hi - 16);
    free_ok(r, hi - 32);
    EXPECT_LAYOUT(r, {base, 16, true}, {base + 16, 2032, false}, {base + 2048, 16, true},
                  {base + 2064, hi - (base + 2064), false});
    memd_range_destroy(r);
}
END_TEST

/* ---------------------------------------------------------------- free and coalescing */

START_TEST(test_coalesce_none_right_left_both)
{
    memd_range *r = mk(0, 1280, 256); /* A B C D E, 256 each */
    uint64_t a[5];
    fill_row(r, a, 5, 256);
    free_ok(r, a[1]); /* no free neighbour */
    EXPECT_LAYOUT(r, {0, 256, true}, {256, 256, false}, {512, 256, true}, {768, 256, true},
                  {1024, 256, true});
    free_ok(r, a[0]); /* free neighbour on the right */
    EXPECT_LAYOUT(r, {0, 512, false}, {512, 256, true}, {768, 256, true}, {1024, 256, true});
    free_ok(r, a[3]);
    ck_assert_uint_eq(stats(r).free_blocks, 2);
    free_ok(r, a[2]); /* free neighbours on both sides */
    EXPECT_LAYOUT(r, {0, 1024, false}, {1024, 256, true});
    ck_assert_uint_eq(stats(r).free_blocks, 1);
    free_ok(r, a[4]); /* free neighbour on the left */
    EXPECT_LAYOUT(r, {0, 1280, false});
    memd_range_stats st = stats(r);
    ck_assert_uint_eq(st.allocated, 0);
    ck_assert_uint_eq(st.allocations, 0);
    ck_assert_uint_eq(st.largest_free, 1280);
    memd_range_destroy(r);
}
END_TEST

START_TEST(test_bad_frees)
{
    memd_range *r = mk(0, 4096, 32);
    uint64_t sz = 123;
    ck_assert_int_eq(memd_range_free(r, 0, &sz), -ENOENT); /* start of a free block */
    ck_assert_uint_eq(sz, 123);
    uint64_t a = alloc_ok(r, 64, 0, BU, FIRST);
    ck_assert_int_eq(memd_range_free(r, a + 32, NULL), -ENOENT); /* inside an allocation */
    ck_assert_int_eq(memd_range_free(r, a + 1, NULL), -ENOENT);
    ck_assert_int_eq(memd_range_free(r, 1 << 20, NULL), -ENOENT); /* outside the range */
    ck_assert_int_eq(memd_range_free(r, a, &sz), 0);
    ck_assert_uint_eq(sz, 64);
    ck_assert_int_eq(memd_range_free(r, a, &sz), -ENOENT); /* double free */
    ck_assert_int_eq(memd_range_free(NULL, a, &sz), -EINVAL);
    ck_assert_int_eq(memd_range_lookup(NULL, a, &sz), -EINVAL);
    EXPECT_LAYOUT(r, {0, 4096, false});
    memd_range_destroy(r);
}
END_TEST

/* ---------------------------------------------------------------- alloc_at */

/* The lowest allocation: none, at the base, above a free block, after frees. */
START_TEST(test_lowest)
{
    memd_range *r = mk(0x4000, 0x1000, 64);
    uint64_t at;
    ck_assert(!memd_range_lowest(r, &at));
    ck_assert_int_eq(memd_range_alloc_at(r, 0x4800, 64), 0);
    ck_assert(memd_range_lowest(r, &at));
    ck_assert_uint_eq(at, 0x4800);
    ck_assert_int_eq(memd_range_alloc_at(r, 0x4000, 64), 0);
    ck_assert(memd_range_lowest(r, &at));
    ck_assert_uint_eq(at, 0x4000);
    ck_assert_int_eq(memd_range_alloc_at(r, 0x4040, 0x7c0), 0); /* the first 2 KiB full */
    ck_assert(memd_range_lowest(r, &at));
    ck_assert_uint_eq(at, 0x4000);
    ck_assert_int_eq(memd_range_free(r, 0x4000, NULL), 0);
    ck_assert(memd_range_lowest(r, &at));
    ck_assert_uint_eq(at, 0x4040);
    ck_assert_int_eq(memd_range_free(r, 0x4040, NULL), 0);
    ck_assert_int_eq(memd_range_free(r, 0x4800, NULL), 0);
    ck_assert(!memd_range_lowest(r, &at));
    ck_assert_int_eq(memd_range_alloc_at(r, 0x4000, 0x1000), 0); /* no free block at all */
    ck_assert(memd_range_lowest(r, &at));
    ck_assert_uint_eq(at, 0x4000);
    memd_range_destroy(r);
}
END_TEST

START_TEST(test_alloc_at_edges_and_overlap)
{
    memd_range *r = mk(0x4000, 0x1000, 64);
    ck_assert_int_eq(memd_range_alloc_at(r, 0x4000, 64), 0);         /* low edge */
    ck_assert_int_eq(memd_range_alloc_at(r, 0x4fc0, 1), 0);          /* high edge */
    ck_assert_int_eq(memd_range_alloc_at(r, 0x4800, 0x100), 0);      /* middle: splits in 3 */
    EXPECT_LAYOUT(r, {0x4000, 64, true}, {0x4040, 0x7c0, false}, {0x4800, 0x100, true},
                  {0x4900, 0x6c0, false}, {0x4fc0, 64, true});
    ck_assert_int_eq(memd_range_alloc_at(r, 0x4800, 64), -EBUSY);   /* same start */
    ck_assert_int_eq(memd_range_alloc_at(r, 0x4880, 64), -EBUSY);   /* inside */
    ck_assert_int_eq(memd_range_alloc_at(r, 0x47c0, 128), -EBUSY);  /* runs into it */
    ck_assert_int_eq(memd_range_alloc_at(r, 0x4780, 0x200), -EBUSY); /* spans two free blocks */
    ck_assert_int_eq(memd_range_alloc_at(r, 0x4f80, 128), -EBUSY);  /* runs into the top one */
    ck_assert_int_eq(memd_range_alloc_at(r, 0x4000, 0), -EINVAL);
    ck_assert_int_eq(memd_range_alloc_at(r, 0x4041, 64), -EINVAL);  /* unaligned */
    ck_assert_int_eq(memd_range_alloc_at(r, 0x3fc0, 64), -EINVAL);  /* below */
    ck_assert_int_eq(memd_range_alloc_at(r, 0x5000, 64), -EINVAL);  /* above */
    ck_assert_int_eq(memd_range_alloc_at(r, 0x4f00, 0x200), -EINVAL); /* leaves the range */
    ck_assert_int_eq(memd_range_alloc_at(NULL, 0x4000, 64), -EINVAL);
    ck_assert_int_eq(memd_range_alloc_at(r, 0x4040, 0x7c0), 0);     /* exactly a free block */
    ck_assert_int_eq(memd_range_alloc_at(r, 0x4900, 64), 0);        /* its low end */
    ck_assert_int_eq(memd_range_alloc_at(r, 0x4f80, 64), 0);        /* its high end */
    EXPECT_LAYOUT(r, {0x4000, 64, true}, {0x4040, 0x7c0, true}, {0x4800, 0x100, true},
                  {0x4900, 64, true}, {0x4940, 0x640, false}, {0x4f80, 64, true},
                  {0x4fc0, 64, true});
    free_ok(r, 0x4800);
    free_ok(r, 0x4040);
    free_ok(r, 0x4900);
    EXPECT_LAYOUT(r, {0x4000, 64, true}, {0x4040, 0xf40, false}, {0x4f80, 64, true},
                  {0x4fc0, 64, true});
    memd_range_destroy(r);
}
END_TEST

/* ---------------------------------------------------------------- fragmentation */

START_TEST(test_oom_under_fragmentation)
{
    memd_range *r = mk(0, 1024, 32);
    uint64_t a[32], x;
    fill_row(r, a, 32, 32);
    for (int i = 1; i < 32; i += 2)
        free_ok(r, a[i]);
    memd_range_stats st = stats(r);
    ck_assert_uint_eq(st.free, 512);
    ck_assert_uint_eq(st.free_blocks, 16);
    ck_assert_uint_eq(st.largest_free, 32);
    ck_assert_uint_eq(st.largest_free_addr, 32);
    for (int dir = 0; dir < 2; dir++)
        for (int fit = 0; fit < 2; fit++)
            ck_assert_int_eq(memd_range_alloc(r, 64, 0, (memd_dir)dir, (memd_fit)fit, &x),
                             -ENOMEM);
    ck_assert_int_eq(memd_range_alloc_at(r, 32, 64), -EBUSY);
    ck_assert_uint_eq(alloc_ok(r, 32, 0, BU, FIRST), 32);
    ck_assert_uint_eq(alloc_ok(r, 32, 0, TD, FIRST), 992);
    /* Every hole now starts at an odd multiple of 32: none holds a 64-aligned block. */
    ck_assert_int_eq(memd_range_alloc(r, 32, 64, BU, FIRST, &x), -ENOMEM);
    ck_assert_int_eq(memd_range_alloc(r, 32, 64, TD, FIRST, &x), -ENOMEM);
    ck_assert_uint_eq(stats(r).free_blocks, 14);
    free_ok(r, a[2]); /* [64, 128): the only aligned room */
    ck_assert_uint_eq(alloc_ok(r, 32, 64, TD, FIRST), 64);
    ck_assert_uint_eq(stats(r).free_blocks, 14);
    memd_range_destroy(r);
}
END_TEST

/* ---------------------------------------------------------------- best fit */

/* Free blocks: 256 at 0, 96 at 512, 128 at 1024, 96 at 1536, then the tail at 2048. */
static memd_range *best_holes(void)
{
    memd_range *r = mk(0, 4096, 32);
    ck_assert_int_eq(memd_range_alloc_at(r, 256, 256), 0);
    ck_assert_int_eq(memd_range_alloc_at(r, 608, 416), 0);
    ck_assert_int_eq(memd_range_alloc_at(r, 1152, 384), 0);
    ck_assert_int_eq(memd_range_alloc_at(r, 1632, 416), 0);
    EXPECT_LAYOUT(r, {0, 256, false}, {256, 256, true}, {512, 96, false}, {608, 416, true},
                  {1024, 128, false}, {1152, 384, true}, {1536, 96, false}, {1632, 416, true},
                  {2048, 2048, false});
    return r;
}

START_TEST(test_best_fit_ties_bottom_up_lowest)
{
    memd_range *r = best_holes();
    ck_assert_uint_eq(alloc_ok(r, 80, 0, BU, BEST), 512); /* two 96s: the lower one */
    ck_assert_uint_eq(alloc_ok(r, 96, 0, BU, BEST), 1536);
    ck_assert_uint_eq(alloc_ok(r, 64, 0, BU, BEST), 1024); /* 128 now beats 256 */
    ck_assert_uint_eq(alloc_ok(r, 64, 0, BU, BEST), 1088);
    ck_assert_uint_eq(alloc_ok(r, 200, 0, BU, BEST), 0);
    memd_range_destroy(r);
}
END_TEST

START_TEST(test_best_fit_ties_top_down_highest)
{
    memd_range *r = best_holes();
    ck_assert_uint_eq(alloc_ok(r, 80, 0, TD, BEST), 1536); /* two 96s: the higher one */
    ck_assert_uint_eq(alloc_ok(r, 96, 0, TD, BEST), 512);
    ck_assert_uint_eq(alloc_ok(r, 64, 0, TD, BEST), 1088); /* high end of the 128 */
    ck_assert_uint_eq(alloc_ok(r, 2000, 0, TD, BEST), 4096 - 2016);
    EXPECT_LAYOUT(r, {0, 256, false}, {256, 256, true}, {512, 96, true}, {608, 416, true},
                  {1024, 64, false}, {1088, 64, true}, {1152, 384, true}, {1536, 96, true},
                  {1632, 416, true}, {2048, 32, false}, {2080, 2016, true});
    memd_range_destroy(r);
}
END_TEST

START_TEST(test_best_fit_differs_from_first_fit)
{
    memd_range *r = best_holes();
    ck_assert_uint_eq(alloc_ok(r, 100, 0, BU, BEST), 1024); /* best fit: the 128 */
    ck_assert_uint_eq(alloc_ok(r, 100, 0, BU, FIRST), 0);   /* first fit: the 256 */
    ck_assert_uint_eq(alloc_ok(r, 32, 0, TD, FIRST), 4064); /* first fit top-down: the tail */
    ck_assert_uint_eq(alloc_ok(r, 32, 0, TD, BEST), 1600);  /* best: the higher 96, its top */
    memd_range_destroy(r);
}
END_TEST

/* The smallest block that holds the size may not hold it aligned: take the next size. */
START_TEST(test_best_fit_with_alignment)
{
    memd_range *r = best_holes();
    ck_assert_uint_eq(alloc_ok(r, 64, 1024, BU, BEST), 1024); /* 96s at 512/1536 can't */
    ck_assert_uint_eq(alloc_ok(r, 64, 512, BU, BEST), 512);
    ck_assert_uint_eq(alloc_ok(r, 64, 512, TD, BEST), 1536);   /* the 96 at 1536 is aligned */
    ck_assert_uint_eq(alloc_ok(r, 128, 2048, TD, BEST), 0);    /* 0 is aligned to anything */
    ck_assert_uint_eq(alloc_ok(r, 300, 2048, TD, BEST), 2048); /* only the tail holds 320 */
    memd_range_destroy(r);
}
END_TEST

/* The size index is built on the first best-fit request and then maintained by every
 * kind of operation, first-fit ones included. */
START_TEST(test_best_fit_index_follows_first_fit_traffic)
{
    memd_range *r = mk(0, 1 << 16, 32);
    uint64_t a[64];
    ck_assert_uint_eq(alloc_ok(r, 32, 0, BU, BEST), 0); /* builds the index */
    for (int i = 0; i < 64; i++)
        a[i] = alloc_ok(r, 32 * (uint64_t)(1 + i % 5), 0, (memd_dir)(i % 2), FIRST);
    for (int i = 0; i < 64; i += 3)
        free_ok(r, a[i]);
    ck_assert_int_eq(memd_range_alloc_at(r, 1 << 15, 64), 0);
    ck_assert_int_eq(memd_range_check(r), 0);
    /* Smallest hole first: every hole left has size 32..160; a 32-byte request must land
     * in a 32-byte hole if one exists. */
    layout l = {.n = 0};
    uint64_t want = UINT64_MAX;
    memd_range_foreach(r, collect, &l);
    for (int i = 0; i < l.n; i++)
        if (!l.b[i].used && l.b[i].size == 32 && want == UINT64_MAX)
            want = l.b[i].addr;
    ck_assert_uint_ne(want, UINT64_MAX);
    ck_assert_uint_eq(alloc_ok(r, 32, 0, BU, BEST), want);
    memd_range_reset(r);
    ck_assert_uint_eq(alloc_ok(r, 64, 0, TD, BEST), (1 << 16) - 64);
    ck_assert_int_eq(memd_range_check(r), 0);
    memd_range_destroy(r);
}
END_TEST

/* ---------------------------------------------------------------- stats, foreach, reset */

START_TEST(test_stats_largest_free_lowest_address)
{
    memd_range *r = mk(0, 4096, 32);
    ck_assert_int_eq(memd_range_alloc_at(r, 512, 32), 0);
    ck_assert_int_eq(memd_range_alloc_at(r, 1056, 2528), 0); /* free: 512@0, 512@544, 512@3584 */
    memd_range_stats st = stats(r);
    ck_assert_uint_eq(st.largest_free, 512);
    ck_assert_uint_eq(st.largest_free_addr, 0);
    ck_assert_uint_eq(st.free_blocks, 3);
    ck_assert_uint_eq(st.allocations, 2);
    ck_assert_uint_eq(st.allocated, 2560);
    ck_assert_uint_eq(st.free, 1536);
    ck_assert_int_eq(memd_range_alloc_at(r, 0, 32), 0);
    st = stats(r);
    ck_assert_uint_eq(st.largest_free, 512);
    ck_assert_uint_eq(st.largest_free_addr, 544);
    ck_assert_int_eq(memd_range_alloc_at(r, 544, 32), 0);
    ck_assert_uint_eq(stats(r).largest_free_addr, 3584);
    ck_assert_int_eq(memd_range_alloc_at(r, 3584, 32), 0);
    st = stats(r);
    ck_assert_uint_eq(st.largest_free, 480);
    ck_assert_uint_eq(st.largest_free_addr, 32);
    memd_range_destroy(r);
}
END_TEST

static int stop_at_third(void *ctx, uint64_t addr, uint64_t size, bool used)
{
    (void)addr;
    (void)size;
    (void)used;
    int *n = ctx;
    return ++*n == 3 ? 7 : 0;
}

START_TEST(test_foreach_order_and_early_stop)
{
    uint64_t tail;
    memd_range *r = holes(&tail); /* checks the order of all nine blocks */
    int n = 0;
    ck_assert_int_eq(memd_range_foreach(r, stop_at_third, &n), 7);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(memd_range_foreach(r, NULL, NULL), -EINVAL);
    ck_assert_int_eq(memd_range_foreach(NULL, stop_at_third, &n), -EINVAL);
    memd_range_destroy(r);
}
END_TEST

/* A walk resumed at any block's start sees the same blocks as the whole walk from
 * there; a start inside a block is refused. */
START_TEST(test_foreach_from_resumes_at_a_block)
{
    uint64_t tail;
    memd_range *r = holes(&tail);
    layout all = {.n = 0};
    ck_assert_int_eq(memd_range_foreach(r, collect, &all), 0);
    for (int i = 0; i < all.n; i++) {
        layout part = {.n = 0};
        ck_assert_int_eq(memd_range_foreach_from(r, all.b[i].addr, collect, &part), 0);
        ck_assert_int_eq(part.n, all.n - i);
        for (int j = 0; j < part.n; j++)
            ck_assert(part.b[j].addr == all.b[i + j].addr &&
                      part.b[j].size == all.b[i + j].size &&
                      part.b[j].used == all.b[i + j].used);
        ck_assert_int_eq(memd_range_foreach_from(r, all.b[i].addr + 1, collect, &part),
                         -ENOENT);
    }
    layout none = {.n = 0};
    uint64_t end = all.b[all.n - 1].addr + all.b[all.n - 1].size;
    ck_assert_int_eq(memd_range_foreach_from(r, end, collect, &none), 0);
    ck_assert_int_eq(none.n, 0);
    ck_assert_int_eq(memd_range_foreach_from(r, end + 1, collect, &none), -EINVAL);
    memd_range_destroy(r);
}
END_TEST

START_TEST(test_reset)
{
    memd_range *r = mk(64, 4096, 64);
    uint64_t a = alloc_ok(r, 100, 0, BU, FIRST);
    alloc_ok(r, 100, 0, TD, BEST);
    ck_assert_int_eq(memd_range_alloc_at(r, 1024, 64), 0);
    memd_range_reset(r);
    EXPECT_LAYOUT(r, {64, 4096, false});
    memd_range_stats st = stats(r);
    ck_assert_uint_eq(st.allocated, 0);
    ck_assert_uint_eq(st.allocations, 0);
    ck_assert_uint_eq(st.free_blocks, 1);
    ck_assert_int_eq(memd_range_lookup(r, a, NULL), -ENOENT);
    ck_assert_int_eq(memd_range_free(r, a, NULL), -ENOENT);
    ck_assert_uint_eq(alloc_ok(r, 64, 0, BU, FIRST), 64);
    ck_assert_uint_eq(alloc_ok(r, 64, 0, TD, BEST), 4096);
    memd_range_destroy(r);
}
END_TEST

/* ---------------------------------------------------------------- scale */

/* Enough blocks to grow the node pools and the hash several times and to build trees
 * several levels deep, with sizes that differ and orders that jump around so that
 * splits, borrows and merges happen everywhere in both indexes; the invariant check runs
 * throughout. */
START_TEST(test_many_blocks)
{
    enum { N = 40000, HALF = N / 2 };
    static uint64_t a[N], sz[N];
    uint64_t total = 0;
    for (int i = 0; i < N; i++) {
        sz[i] = 32 * (uint64_t)(1 + (i * 5) % 7);
        total += sz[i];
    }
    memd_range *r = mk(0, total, 32);
    ck_assert_uint_eq(alloc_ok(r, 32, 0, BU, BEST), 0); /* builds the size index */
    free_ok(r, 0);
    for (int i = 0; i < N; i++)
        a[i] = alloc_ok(r, sz[i], 0, BU, FIRST);
    ck_assert_uint_eq(stats(r).free_blocks, 0);

    for (int j = 0; j < HALF; j++) { /* the even blocks, in a scrambled order */
        free_ok(r, a[2 * (int)(((uint64_t)j * 7919) % HALF)]);
        if (j % 2500 == 0)
            ck_assert_int_eq(memd_range_check(r), 0);
    }
    memd_range_stats st = stats(r);
    ck_assert_uint_eq(st.free_blocks, HALF);
    ck_assert_uint_eq(st.allocations, HALF);
    ck_assert_uint_eq(st.largest_free, 32 * 7);
    ck_assert_int_eq(memd_range_check(r), 0);

    for (int j = 0; j < HALF; j++) { /* refill every hole exactly, in another order */
        int i = 2 * (int)(((uint64_t)j * 104729) % HALF);
        ck_assert_int_eq(memd_range_alloc_at(r, a[i], sz[i]), 0);
        if (j % 2500 == 0)
            ck_assert_int_eq(memd_range_check(r), 0);
    }
    ck_assert_uint_eq(stats(r).free_blocks, 0);

    for (int j = 0; j < N; j++) { /* everything, coalescing on every side */
        free_ok(r, a[(int)(((uint64_t)j * 7919) % N)]);
        if (j % 5000 == 0)
            ck_assert_int_eq(memd_range_check(r), 0);
    }
    EXPECT_LAYOUT(r, {0, total, false});
    memd_range_destroy(r);
}
END_TEST

/* Steady state: once the pools have grown, alloc/free traffic of the same shape never
 * touches the heap. Sanitizer allocators report nothing through mallinfo2; there the test
 * says so and checks nothing (the plain build does). */
START_TEST(test_no_malloc_in_steady_state)
{
    void *probe = malloc(1 << 16);
    size_t seen = mallinfo2().uordblks;
    free(probe);
    if (seen == 0) {
        printf("# mallinfo2 reports no heap use here (sanitizer build): not checked\n");
        return;
    }
    memd_range *r = mk(0, 1 << 24, 32);
    uint64_t a[2000];
    for (int round = 0; round < 2; round++) { /* the same sequence twice */
        uint64_t s = 1;
        struct mallinfo2 before = mallinfo2();
        int bad = 0;
        for (int k = 0; k < 20; k++) {
            for (int i = 0; i < 2000; i++) {
                memd_test_lcg(&s);
                bad |= memd_range_alloc(r, 32 + (s >> 54), 0, (memd_dir)(s >> 63), FIRST, &a[i]);
            }
            for (int i = 0; i < 2000; i += 1 + (int)(s >> 62))
                bad |= memd_range_free(r, a[i], NULL);
            memd_range_reset(r);
        }
        struct mallinfo2 after = mallinfo2();
        ck_assert_int_eq(bad, 0);
        if (round == 1) /* round 0 warms up the pools */
            ck_assert_uint_eq(after.uordblks, before.uordblks);
    }
    memd_range_destroy(r);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("range");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_create_errors);
    tcase_add_test(tc, test_create_fresh);
    tcase_add_test(tc, test_unaligned_base_and_size);
    tcase_add_test(tc, test_alloc_bad_args);
    tcase_add_test(tc, test_no_rounding_with_min_align_1);
    tcase_add_test(tc, test_exact_fit_whole_range);
    tcase_add_test(tc, test_size_rounding_and_lookup);
    tcase_add_test(tc, test_directions_fill_from_each_end);
    tcase_add_test(tc, test_first_fit_bottom_up_lowest_block);
    tcase_add_test(tc, test_first_fit_top_down_highest_block);
    tcase_add_test(tc, test_align_bottom_up_pads_low);
    tcase_add_test(tc, test_align_top_down_pads_high);
    tcase_add_test(tc, test_align_passes_over_unfit_blocks);
    tcase_add_test(tc, test_aligned_first_fit_does_not_walk);
    tcase_add_test(tc, test_aligned_indexes_follow_changes);
    tcase_add_test(tc, test_overflow_near_top_of_address_space);
    tcase_add_test(tc, test_coalesce_none_right_left_both);
    tcase_add_test(tc, test_bad_frees);
    tcase_add_test(tc, test_alloc_at_edges_and_overlap);
    tcase_add_test(tc, test_lowest);
    tcase_add_test(tc, test_oom_under_fragmentation);
    tcase_add_test(tc, test_best_fit_ties_bottom_up_lowest);
    tcase_add_test(tc, test_best_fit_ties_top_down_highest);
    tcase_add_test(tc, test_best_fit_differs_from_first_fit);
    tcase_add_test(tc, test_best_fit_with_alignment);
    tcase_add_test(tc, test_best_fit_index_follows_first_fit_traffic);
    tcase_add_test(tc, test_stats_largest_free_lowest_address);
    tcase_add_test(tc, test_foreach_order_and_early_stop);
    tcase_add_test(tc, test_foreach_from_resumes_at_a_block);
    tcase_add_test(tc, test_reset);
    tcase_add_test(tc, test_many_blocks);
    tcase_add_test(tc, test_no_malloc_in_steady_state);
    suite_add_tcase(s, tc);
    return s;
}

/* Anchored searches through cursors (engine/alloc/range_cur.h) against a brute-force
 * reference.
 *
 * A seeded stream of allocations and frees (both directions, several alignments) keeps
 * a range and the linear reference (tests/common/ref_range.c) in the same state. Every
 * few steps, walks of anchored questions run on the range: one cursor per walk, `from`
 * moving one way in small, zero and large steps (the way bank-subset placement moves
 * its candidate, and further), each answer compared with the first fitting start found
 * by scanning the reference's free blocks (and with the cursor-less
 * memd_range_fit_from). Then the allocation is made with memd_range_alloc_at_cur from
 * the walk's cursor (or, at random, from a cursor left on another block, or none) and
 * must land exactly there, as in the reference. memd_bt_seek_k_near is exercised
 * through the cursors' longer jumps. Seed: MEMD_TEST_SEED or a fixed default. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ref_range.h"
#include "check_main.h"
#include "bank_hints.h"
#include "range_cur.h"
#include "test_rand.h"

#define DEFAULT_SEED UINT64_C(0x637572736f727321)

typedef struct blocks {
    uint64_t a[8192], s[8192];
    size_t n;
} blocks;

static int collect_free(void *ctx, uint64_t addr, uint64_t size, bool allocated)
{
    blocks *b = ctx;
    if (!allocated) {
        ck_assert_uint_lt(b->n, 8192);
        b->a[b->n] = addr;
        b->s[b->n++] = size;
    }
    return 0;
}

/* The reference answer: scan every free block in direction dir for the first whose
 * window (cut at from) holds sz bytes aligned to al. */
static bool ref_fit_from(const blocks *b, uint64_t sz, uint64_t al, memd_dir dir, uint64_t from,
                         uint64_t *at, uint64_t *blk)
{
    for (size_t k = 0; k < b->n; k++) {
        size_t i = dir == MEMD_DIR_TOP_DOWN ? b->n - 1 - k : k;
        uint64_t a = b->a[i], e = a + b->s[i], lo = a, hi = e;
        if (dir == MEMD_DIR_TOP_DOWN) {
            if (from > UINT64_MAX - sz || from + sz < hi)
                hi = from > UINT64_MAX - sz ? hi : from + sz;
        } else if (from > lo) {
            lo = from;
        }
        if (hi <= lo || hi - lo < sz)
            continue;
        uint64_t x = dir == MEMD_DIR_TOP_DOWN ? (hi - sz) & ~(al - 1) : (lo + al - 1) & ~(al - 1);
        if (x < lo || x > hi - sz)
            continue;
        *at = x;
        *blk = a;
        return true;
    }
    return false;
}

static void run(uint64_t seed, uint64_t base, uint64_t size, uint64_t steps)
{
    enum { MIN_ALIGN = 32, MAXLIVE = 3000 };
    memd_range *r;
    ref_range *ref;
    ck_assert_int_eq(memd_range_create(base, size, MIN_ALIGN, &r), 0);
    ck_assert_int_eq(ref_range_create(base, size, MIN_ALIGN, &ref), 0);
    uint64_t rng = seed, *live = calloc(MAXLIVE, sizeof(*live)), walks = 0, answered = 0;
    size_t n = 0;
    blocks *fb = malloc(sizeof(*fb));
    ck_assert_ptr_nonnull(live);
    ck_assert_ptr_nonnull(fb);
    for (uint64_t step = 0; step < steps; step++) {
        uint64_t rv = memd_test_rand(&rng);
        uint64_t fill = (step / 3000) % 2 == 0 ? 70 : 35;
        if (n && (n == MAXLIVE || rv % 100 >= fill)) {
            size_t k = (rv >> 8) % n;
            ck_assert_int_eq(memd_range_free(r, live[k], NULL), 0);
            ck_assert_int_eq(ref_range_free(ref, live[k], NULL), 0);
            live[k] = live[--n];
            continue;
        }
        uint64_t sz = 1 + memd_test_rand(&rng) % (1u << (5 + memd_test_rand(&rng) % 7));
        uint64_t al = (uint64_t)MIN_ALIGN << (memd_test_rand(&rng) % 4 == 0 ? memd_test_rand(&rng) % 6 : 0);
        memd_dir dir = (memd_dir)(memd_test_rand(&rng) % 2);
        if (step % 7 != 0) { /* a plain allocation, the same in both */
            uint64_t a, b;
            int rc = memd_range_alloc(r, sz, al, dir, MEMD_FIT_FIRST, &a);
            ck_assert_int_eq(rc, ref_range_alloc(ref, sz, al, dir, MEMD_FIT_FIRST, &b));
            if (rc == 0) {
                ck_assert_uint_eq(a, b);
                live[n++] = a;
            }
            continue;
        }
        /* A walk: one cursor, `from` moving one way from a random start. */
        fb->n = 0;
        ref_range_foreach(ref, collect_free, fb);
        uint64_t rsz = (sz + MIN_ALIGN - 1) & ~(uint64_t)(MIN_ALIGN - 1);
        memd_range_cur c = MEMD_RANGE_CUR_INIT;
        uint64_t from = dir == MEMD_DIR_TOP_DOWN ? base + size - memd_test_rand(&rng) % (size / 4 + 1)
                                                 : base + memd_test_rand(&rng) % (size / 4 + 1);
        uint64_t at = 0, blk = 0, bs = 0, want = 0, wblk = 0;
        bool got = false;
        walks++;
        for (int q = 0; q < 40; q++) {
            got = memd_range_fit_from_cur(r, &c, sz, al, dir, from, &at, &blk, &bs);
            bool exp = ref_fit_from(fb, rsz, al, dir, from, &want, &wblk);
            ck_assert_msg(got == exp && (!got || (at == want && blk == wblk)),
                          "seed %#" PRIx64 " step %" PRIu64 " walk step %d: dir %d from %#" PRIx64
                          " size %" PRIu64 " align %" PRIu64 ": cursor %d %#" PRIx64 " (block %#"
                          PRIx64 "), reference %d %#" PRIx64 " (block %#" PRIx64 ")", seed, step,
                          q, dir, from, sz, al, got, at, blk, exp, want, wblk);
            uint64_t a2, b2, s2;
            ck_assert(memd_range_fit_from(r, sz, al, dir, from, &a2, &b2, &s2) == got);
            if (!got)
                break;
            answered++;
            ck_assert(!got || (a2 == at && b2 == blk && s2 == bs));
            if (q == 39 || memd_test_rand(&rng) % 8 == 0)
                break;
            uint64_t r2 = memd_test_rand(&rng) % 8, d;
            d = r2 < 2 ? 0 : r2 < 6 ? memd_test_rand(&rng) % 2048 : memd_test_rand(&rng) % (size / 8 + 1);
            if (dir == MEMD_DIR_TOP_DOWN) {
                if (at - base < d)
                    break;
                from = at - d;
            } else {
                from = at + d;
            }
        }
        if (!got || n == MAXLIVE)
            continue;
        /* Allocate where the walk ended: from its cursor, from a cursor on another
         * block, or without one; all land exactly there. */
        memd_range_cur other = MEMD_RANGE_CUR_INIT, *use = &c;
        uint64_t k = memd_test_rand(&rng) % 4;
        if (k == 1) {
            uint64_t x, ob, os;
            use = memd_range_fit_from_cur(r, &other, MIN_ALIGN, 0, MEMD_DIR_BOTTOM_UP, base, &x,
                                          &ob, &os) ? &other : NULL;
        } else if (k == 2) {
            use = NULL;
        }
        /* The cursor's block, one byte longer, runs into an allocation (free blocks are
         * coalesced): refused, nothing changed. */
        if (blk + bs < base + size)
            ck_assert_int_eq(memd_range_alloc_at_cur(r, &c, blk, bs + 1), -EBUSY);
        ck_assert_int_eq(memd_range_reserve(r), 0);
        ck_assert_int_eq(memd_range_alloc_at_cur(r, use, at, sz), 0);
        ck_assert_int_eq(ref_range_alloc_at(ref, at, sz), 0);
        live[n++] = at;
        /* A span that is no longer free is refused, whichever block a (fresh) cursor is
         * on. */
        memd_range_cur again = MEMD_RANGE_CUR_INIT;
        uint64_t x, ob, os;
        (void)memd_range_fit_from_cur(r, &again, MIN_ALIGN, 0, dir, at, &x, &ob, &os);
        ck_assert_int_eq(memd_range_alloc_at_cur(r, &again, at, sz), -EBUSY);
        if (step % 997 == 0)
            ck_assert_int_eq(memd_range_check(r), 0);
    }
    /* The two maps agree block by block at the end. */
    fb->n = 0;
    ref_range_foreach(ref, collect_free, fb);
    blocks *mb = malloc(sizeof(*mb));
    ck_assert_ptr_nonnull(mb);
    mb->n = 0;
    ck_assert_int_eq(memd_range_foreach(r, collect_free, mb), 0);
    ck_assert_uint_eq(mb->n, fb->n);
    ck_assert(memcmp(mb->a, fb->a, fb->n * sizeof(uint64_t)) == 0);
    ck_assert_int_eq(memd_range_check(r), 0);
    printf("# %" PRIu64 " walks, %" PRIu64 " answers checked\n", walks, answered);
    ck_assert(answered > walks);
    free(mb);
    free(fb);
    free(live);
    memd_range_destroy(r);
    ref_range_destroy(ref);
}

/* The reference for memd_range_fit_both(_from): the intersection of two sorted
 * free-block lists, cut at the bound `from` (bottom-up no start below it, top-down none
 * above), then first or best fit over it in direction dir. */
static bool ref_fit_both_from(const blocks *x, const blocks *y, uint64_t sz, uint64_t al,
                              memd_dir dir, memd_fit fit, uint64_t from, uint64_t *at)
{
    static uint64_t ia[16384], ie[16384];
    size_t n = 0, i = 0, j = 0;
    while (i < x->n && j < y->n) {
        uint64_t lo = x->a[i] > y->a[j] ? x->a[i] : y->a[j];
        uint64_t xe = x->a[i] + x->s[i], ye = y->a[j] + y->s[j], hi = xe < ye ? xe : ye;
        if (dir == MEMD_DIR_TOP_DOWN && from < UINT64_MAX - sz && hi > from + sz)
            hi = from + sz;
        if (dir != MEMD_DIR_TOP_DOWN && lo < from)
            lo = from;
        if (lo < hi) {
            ia[n] = lo;
            ie[n++] = hi;
        }
        if (xe < ye)
            i++;
        else
            j++;
    }
    bool found = false;
    uint64_t best = 0;
    for (size_t k = 0; k < n; k++) {
        size_t q = dir == MEMD_DIR_TOP_DOWN ? n - 1 - k : k;
        uint64_t s = ie[q] - ia[q], v;
        if (s < sz)
            continue;
        v = dir == MEMD_DIR_TOP_DOWN ? (ie[q] - sz) & ~(al - 1) : (ia[q] + al - 1) & ~(al - 1);
        if (v < ia[q] || v > ie[q] - sz || (found && s >= best))
            continue;
        found = true;
        best = s;
        *at = v;
        if (fit == MEMD_FIT_FIRST)
            break;
    }
    return found;
}

static bool ref_fit_both(const blocks *x, const blocks *y, uint64_t sz, uint64_t al, memd_dir dir,
                         memd_fit fit, uint64_t *at)
{
    return ref_fit_both_from(x, y, sz, al, dir, fit, dir == MEMD_DIR_TOP_DOWN ? UINT64_MAX : 0, at);
}

/* A range and its reference model given the same changes: the live allocations'
 * addresses (at most max) and, once collected, the reference's free blocks. */
typedef struct twin {
    memd_range *r;
    ref_range *ref;
    uint64_t *live;
    size_t n, max;
    blocks *fb;
} twin;

static void twin_init(twin *t, uint64_t size, uint64_t align, size_t max)
{
    ck_assert_int_eq(memd_range_create(0, size, align, &t->r), 0);
    ck_assert_int_eq(ref_range_create(0, size, align, &t->ref), 0);
    t->live = calloc(max, sizeof(uint64_t));
    t->fb = malloc(sizeof(blocks));
    ck_assert_ptr_nonnull(t->live);
    ck_assert_ptr_nonnull(t->fb);
    t->n = 0;
    t->max = max;
}

/* Checks the range, then frees everything. */
static void twin_done(twin *t)
{
    ck_assert_int_eq(memd_range_check(t->r), 0);
    memd_range_destroy(t->r);
    ref_range_destroy(t->ref);
    free(t->live);
    free(t->fb);
}

/* A first-fit allocation of a random size (up to 1 KiB) and direction in both: the
 * same answer. */
static void twin_alloc_random(twin *t, uint64_t *rng)
{
    uint64_t a, b;
    uint64_t sz = 1 + memd_test_rand(rng) % (1u << (5 + memd_test_rand(rng) % 6));
    memd_dir dir = (memd_dir)(memd_test_rand(rng) % 2);
    int rc = memd_range_alloc(t->r, sz, 0, dir, MEMD_FIT_FIRST, &a);
    ck_assert_int_eq(rc, ref_range_alloc(t->ref, sz, 0, dir, MEMD_FIT_FIRST, &b));
    if (rc == 0)
        t->live[t->n++] = a;
}

/* Takes sz bytes at `at` in both, the range from cursor c's block. */
static void twin_take(twin *t, memd_range_cur *c, uint64_t at, uint64_t sz)
{
    ck_assert_int_eq(memd_range_reserve(t->r), 0);
    ck_assert_int_eq(memd_range_alloc_at_cur(t->r, c, at, sz), 0);
    ck_assert_int_eq(ref_range_alloc_at(t->ref, at, sz), 0);
    t->live[t->n++] = at;
}

static void twin_collect(twin *t)
{
    t->fb->n = 0;
    ref_range_foreach(t->ref, collect_free, t->fb);
}

/* Two ranges over the same span, each with its own seeded stream of allocations and
 * frees (the second offset so their blocks interleave); after every step a few
 * requests of both directions, both fits and several alignments through
 * memd_range_fit_both must give the reference's placement, and the cursors must be on
 * blocks that hold it (an allocation from them lands there). */
START_TEST(fit_both_against_reference)
{
    enum { MIN_ALIGN = 32, MAXLIVE = 1500 };
    uint64_t seed = memd_test_seed(DEFAULT_SEED) ^ 0x626f7468ull, rng = seed, checked = 0;
    printf("# seed %#" PRIx64 "\n", seed);
    twin tw[2];
    for (int k = 0; k < 2; k++)
        twin_init(&tw[k], UINT64_C(1) << 19, MIN_ALIGN, MAXLIVE);
    for (uint64_t step = 0; step < 12000; step++) {
        twin *tv = &tw[memd_test_rand(&rng) % 2];
        uint64_t fill = (step / 2000) % 2 == 0 ? 70 : 40;
        if (tv->n && (tv->n == MAXLIVE || memd_test_rand(&rng) % 100 >= fill)) {
            size_t i = memd_test_rand(&rng) % tv->n;
            ck_assert_int_eq(memd_range_free(tv->r, tv->live[i], NULL), 0);
            ck_assert_int_eq(ref_range_free(tv->ref, tv->live[i], NULL), 0);
            tv->live[i] = tv->live[--tv->n];
        } else {
            twin_alloc_random(tv, &rng);
        }
        if (step % 5 != 0)
            continue;
        for (int j = 0; j < 2; j++)
            twin_collect(&tw[j]);
        for (int q = 0; q < 4; q++) {
            uint64_t sz = 1 + memd_test_rand(&rng) % (1u << (5 + memd_test_rand(&rng) % 8));
            uint64_t al = (uint64_t)MIN_ALIGN << (memd_test_rand(&rng) % 3 == 0 ? memd_test_rand(&rng) % 6 : 0);
            memd_dir dir = (memd_dir)(memd_test_rand(&rng) % 2);
            memd_fit fit = (memd_fit)(memd_test_rand(&rng) % 2);
            uint64_t rsz = (sz + MIN_ALIGN - 1) & ~(uint64_t)(MIN_ALIGN - 1), want = 0, got = 0;
            memd_range_cur c0 = MEMD_RANGE_CUR_INIT, c1 = MEMD_RANGE_CUR_INIT;
            int rc = memd_range_fit_both(tw[0].r, &c0, tw[1].r, &c1, sz, al, dir, fit, &got);
            bool exp = ref_fit_both(tw[0].fb, tw[1].fb, rsz, al, dir, fit, &want);
            ck_assert_msg((rc == 0) == exp && (rc == 0 || rc == -ENOMEM) && (!exp || got == want),
                          "seed %#" PRIx64 " step %" PRIu64 ": size %" PRIu64 " align %" PRIu64
                          " dir %d fit %d: %d %#" PRIx64 ", reference %d %#" PRIx64, seed, step, sz,
                          al, dir, fit, rc, got, exp, want);
            checked++;
            if (rc || tw[0].n == MAXLIVE || tw[1].n == MAXLIVE || q != 0)
                continue;
            /* Both cursors hold the placement: allocate it in both from them. */
            for (int j = 0; j < 2; j++)
                twin_take(&tw[j], j ? &c1 : &c0, got, sz);
            break; /* the block lists changed */
        }
    }
    printf("# %" PRIu64 " intersections checked\n", checked);
    for (int k = 0; k < 2; k++)
        twin_done(&tw[k]);
    /* Bad arguments. */
    memd_range *x, *y;
    ck_assert_int_eq(memd_range_create(0, 4096, 32, &x), 0);
    ck_assert_int_eq(memd_range_create(0, 4096, 64, &y), 0);
    memd_range_cur a = MEMD_RANGE_CUR_INIT, b = MEMD_RANGE_CUR_INIT;
    uint64_t at;
    ck_assert_int_eq(memd_range_fit_both(x, &a, y, &b, 64, 0, MEMD_DIR_BOTTOM_UP, MEMD_FIT_FIRST, &at),
                     -EINVAL); /* different min_align */
    ck_assert_int_eq(memd_range_fit_both(x, &a, x, &b, 0, 0, MEMD_DIR_BOTTOM_UP, MEMD_FIT_FIRST, &at),
                     -EINVAL);
    ck_assert_int_eq(memd_range_fit_both(x, &a, x, &b, 64, 48, MEMD_DIR_BOTTOM_UP, MEMD_FIT_FIRST, &at),
                     -EINVAL);
    ck_assert_int_eq(memd_range_fit_both(x, &a, x, &b, 8192, 0, MEMD_DIR_TOP_DOWN, MEMD_FIT_BEST, &at),
                     -ENOMEM);
    ck_assert_int_eq(memd_range_fit_both(x, &a, x, &b, 4096, 0, MEMD_DIR_TOP_DOWN, MEMD_FIT_BEST, &at), 0);
    ck_assert_uint_eq(at, 0);
    memd_range_destroy(x);
    memd_range_destroy(y);
}
END_TEST

START_TEST(cursor_walks_against_reference)
{
    uint64_t seed = memd_test_seed(DEFAULT_SEED);
    printf("# seed %#" PRIx64 "\n", seed);
    run(seed, 0, UINT64_C(1) << 20, 40000);      /* many small blocks: a tree of height 3 */
    run(seed ^ 1, 0x4000, 96 * 1024, 20000);     /* few blocks: a root leaf */
}
END_TEST

/* First-fit bounds (bank_hints.h) against the reference. Three banks' own ranges and
 * one shared range, each with a seeded stream of allocations and frees (every free
 * reported to the bounds, as device_banks.c does); after every step, questions for a
 * random bank, size, direction and alignment: the bound must not pass the reference's
 * first fit over the bank's and the shared free blocks (a stale bound would), the
 * search from it must find exactly that fit, and a unit-aligned answer then tightens
 * the bounds. Bank 2 is asked rarely, so it misses more shared frees than the log
 * keeps and must forget. memd_range_fit_both_from is also asked from random bounds. */
START_TEST(bounds_against_reference)
{
    enum { UNIT = 32, MAXLIVE = 1200, NR = 4, SHARED = 3 };
    uint64_t seed = memd_test_seed(DEFAULT_SEED) ^ 0x68696e74ull, rng = seed, checked = 0;
    uint64_t bounded = 0, size = UINT64_C(1) << 19;
    printf("# seed %#" PRIx64 "\n", seed);
    twin tw[NR];
    memd_hints *h;
    ck_assert_int_eq(memd_hints_create(SHARED, UNIT, &h), 0);
    for (int k = 0; k < NR; k++)
        twin_init(&tw[k], size, UNIT, MAXLIVE);
    for (uint64_t step = 0; step < 12000; step++) {
        /* The shared range changes as often as all banks together. */
        int k = memd_test_rand(&rng) % 2 ? SHARED : (int)(memd_test_rand(&rng) % SHARED);
        twin *tv = &tw[k];
        uint64_t fill = (step / 2000) % 2 == 0 ? 65 : 40, lo, hi;
        if (tv->n && (tv->n == MAXLIVE || memd_test_rand(&rng) % 100 >= fill)) {
            size_t i = memd_test_rand(&rng) % tv->n;
            ck_assert_int_eq(memd_range_free_block(tv->r, tv->live[i], NULL, &lo, &hi), 0);
            ck_assert_int_eq(ref_range_free(tv->ref, tv->live[i], NULL), 0);
            if (k == SHARED)
                memd_hints_shared_freed(h, lo, hi);
            else
                memd_hints_own_freed(h, (uint32_t)k, lo, hi);
            tv->live[i] = tv->live[--tv->n];
        } else {
            twin_alloc_random(tv, &rng);
        }
        for (int j = 0; j < NR; j++)
            twin_collect(&tw[j]);
        for (int q = 0; q < 3; q++) {
            uint32_t bank = (uint32_t)(memd_test_rand(&rng) % 16 == 0 ? 2 : memd_test_rand(&rng) % 2);
            uint64_t sz = 1 + memd_test_rand(&rng) % (1u << (5 + memd_test_rand(&rng) % 9));
            uint64_t al = memd_test_rand(&rng) % 4 == 0 ? (uint64_t)UNIT << (1 + memd_test_rand(&rng) % 4) : UNIT;
            memd_dir dir = (memd_dir)(memd_test_rand(&rng) % 2);
            bool down = dir == MEMD_DIR_TOP_DOWN;
            uint64_t rsz = (sz + UNIT - 1) & ~(uint64_t)(UNIT - 1), want = 0, got = 0, w;
            uint64_t from = memd_hints_start(h, bank, dir, rsz);
            bool exp = ref_fit_both(tw[bank].fb, tw[SHARED].fb, rsz, al, dir, MEMD_FIT_FIRST, &want);
            ck_assert_msg(!exp || (down ? want <= from : want >= from),
                          "seed %#" PRIx64 " step %" PRIu64 ": bank %u size %" PRIu64 " dir %d: bound %#"
                          PRIx64 " passes the first fit %#" PRIx64, seed, step, bank, rsz, dir, from, want);
            bounded += from != (down ? UINT64_MAX : 0);
            memd_range_cur c0 = MEMD_RANGE_CUR_INIT, c1 = MEMD_RANGE_CUR_INIT;
            int rc = memd_range_fit_both_from(tw[bank].r, &c0, tw[SHARED].r, &c1, sz, al, dir,
                                              MEMD_FIT_FIRST, from, &got, &w);
            ck_assert_msg((rc == 0) == exp && (rc == 0 || rc == -ENOMEM) && (!exp || got == want),
                          "seed %#" PRIx64 " step %" PRIu64 ": from bound %#" PRIx64 ": %d %#" PRIx64
                          ", reference %d %#" PRIx64, seed, step, from, rc, got, exp, want);
            ck_assert_uint_ge(w, rc == 0 ? 2 : 0);
            if (rc == 0 && al == UNIT)
                memd_hints_found(h, bank, dir, rsz, got);
            /* From an arbitrary bound: the first fit among the starts it allows. */
            uint64_t any = memd_test_rand(&rng) % (size + 1);
            exp = ref_fit_both_from(tw[bank].fb, tw[SHARED].fb, rsz, al, dir, MEMD_FIT_FIRST, any, &want);
            rc = memd_range_fit_both_from(tw[bank].r, &c0, tw[SHARED].r, &c1, sz, al, dir, MEMD_FIT_FIRST,
                                          any, &got, NULL);
            ck_assert_msg((rc == 0) == exp && (!exp || got == want),
                          "seed %#" PRIx64 " step %" PRIu64 ": from %#" PRIx64 " dir %d size %" PRIu64
                          ": %d %#" PRIx64 ", reference %d %#" PRIx64, seed, step, any, dir, rsz, rc,
                          got, exp, want);
            checked++;
            if (rc || tw[bank].n == MAXLIVE || q != 0 || memd_test_rand(&rng) % 2)
                continue;
            /* The bank takes a piece there from the cursor (it is free in both). */
            twin_take(&tw[bank], &c0, got, sz);
            break; /* the block lists changed */
        }
    }
    printf("# %" PRIu64 " questions, %" PRIu64 " from a bound\n", checked, bounded);
    ck_assert_uint_gt(bounded, checked / 2);
    for (int k = 0; k < NR; k++)
        twin_done(&tw[k]);
    memd_hints_destroy(h);
    memd_hints *bad;
    ck_assert_int_eq(memd_hints_create(0, UNIT, &bad), -EINVAL);
    ck_assert_int_eq(memd_hints_create(2, 48, &bad), -EINVAL);
    memd_range *x;
    ck_assert_int_eq(memd_range_create(0, 4096, 32, &x), 0);
    memd_range_cur a = MEMD_RANGE_CUR_INIT, b = MEMD_RANGE_CUR_INIT;
    uint64_t at;
    ck_assert_int_eq(memd_range_fit_both_from(x, &a, x, &b, 64, 0, MEMD_DIR_BOTTOM_UP, MEMD_FIT_BEST,
                                              64, &at, NULL), -EINVAL); /* best fit: no bound */
    ck_assert_int_eq(memd_range_free_block(x, 0, NULL, NULL, &at), -EINVAL);
    memd_range_destroy(x);
}
END_TEST

/* A bank that missed more shared frees than the log keeps forgets its bounds; one that
 * missed exactly as many applies them all. The shared range is 200 one-unit buffers;
 * the bank's bound for one unit is then unit 200. The first free (unit 10) is the one
 * that makes a fit far below; the next 63 or 64 frees (units 100..) matter less. */
START_TEST(bounds_forget_after_log)
{
    enum { UNIT = 32, LOG = 64 };
    for (int extra = LOG - 1; extra <= LOG; extra++) {
        memd_range *own, *shared;
        memd_hints *h;
        uint64_t at, lo, hi, w;
        ck_assert_int_eq(memd_range_create(0, 2048 * UNIT, UNIT, &own), 0);
        ck_assert_int_eq(memd_range_create(0, 2048 * UNIT, UNIT, &shared), 0);
        ck_assert_int_eq(memd_hints_create(1, UNIT, &h), 0);
        for (int i = 0; i < 200; i++) {
            ck_assert_int_eq(memd_range_alloc(shared, UNIT, 0, MEMD_DIR_BOTTOM_UP, MEMD_FIT_FIRST, &at), 0);
            ck_assert_uint_eq(at, (uint64_t)i * UNIT);
        }
        memd_range_cur c0 = MEMD_RANGE_CUR_INIT, c1 = MEMD_RANGE_CUR_INIT;
        ck_assert_uint_eq(memd_hints_start(h, 0, MEMD_DIR_BOTTOM_UP, UNIT), 0);
        ck_assert_int_eq(memd_range_fit_both_from(own, &c0, shared, &c1, UNIT, 0, MEMD_DIR_BOTTOM_UP,
                                                  MEMD_FIT_FIRST, 0, &at, &w), 0);
        ck_assert_uint_eq(at, 200 * UNIT);
        memd_hints_found(h, 0, MEMD_DIR_BOTTOM_UP, UNIT, at);
        ck_assert_uint_eq(memd_hints_start(h, 0, MEMD_DIR_BOTTOM_UP, UNIT), 200 * UNIT);
        for (int i = 0; i <= extra; i++) {
            uint64_t a = (i == 0 ? 10 : 99 + (uint64_t)i) * UNIT;
            ck_assert_int_eq(memd_range_free_block(shared, a, NULL, &lo, &hi), 0);
            memd_hints_shared_freed(h, lo, hi);
        }
        uint64_t from = memd_hints_start(h, 0, MEMD_DIR_BOTTOM_UP, UNIT);
        ck_assert_uint_eq(from, extra < LOG ? 10 * UNIT : 0); /* all applied, or forgotten */
        ck_assert_int_eq(memd_range_fit_both_from(own, &c0, shared, &c1, UNIT, 0, MEMD_DIR_BOTTOM_UP,
                                                  MEMD_FIT_FIRST, from, &at, &w), 0);
        ck_assert_uint_eq(at, 10 * UNIT);
        memd_hints_destroy(h);
        memd_range_destroy(own);
        memd_range_destroy(shared);
    }
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("range-cur");
    TCase *t = tcase_create("random");
    tcase_set_timeout(t, 600);
    tcase_add_test(t, cursor_walks_against_reference);
    tcase_add_test(t, fit_both_against_reference);
    tcase_add_test(t, bounds_against_reference);
    tcase_add_test(t, bounds_forget_after_log);
    suite_add_tcase(s, t);
    return s;
}

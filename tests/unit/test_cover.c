/* Coverage map (engine/alloc/cover.c) against a plain reference: an array of counts, one per
 * unit. Seeded random add / remove of intervals (overlapping freely, as pieces of
 * different banks do) and, after every step, a random placement query in both
 * directions, both fits and random alignments, which must equal a first / best fit
 * computed from the array's uncovered runs with range.h's rules. Every few steps every
 * unit's count, the tree's invariants and its memory bound are checked. Seed:
 * MEMD_TEST_SEED or a fixed default. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "cover.h"
#include "test_rand.h"

#define DEFAULT_SEED UINT64_C(0x636f766572616765)

/* ------------------------------------------------------------- reference */

typedef struct ref {
    uint64_t base, unit, units;
    uint32_t *cnt;
} ref;

/* range.h's placement inside one block, written out again (not shared with the engine,
 * so a wrong rule there shows here). */
static bool ref_place(uint64_t a, uint64_t s, uint64_t sz, uint64_t al, memd_dir dir, uint64_t *at)
{
    if (s < sz)
        return false;
    uint64_t last = a + s - sz, x;
    if (dir == MEMD_DIR_TOP_DOWN) {
        x = last / al * al;
        if (x < a)
            return false;
    } else {
        x = (a + al - 1) / al * al;
        if (x > last)
            return false;
    }
    *at = x;
    return true;
}

/* Walk the uncovered runs in direction order: first fit takes the first that holds the
 * request, best fit the smallest (the first of equal size in walk order); *blk / *bs the
 * run taken. */
static bool ref_fit(const ref *r, uint64_t size, uint64_t align, memd_dir dir, memd_fit fit,
                    uint64_t *at, uint64_t *blk, uint64_t *bs)
{
    uint64_t sz = (size + r->unit - 1) / r->unit * r->unit, al = align > r->unit ? align : r->unit;
    bool found = false;
    uint64_t best = 0;
    uint64_t n = r->units;
    for (uint64_t k = 0; k < n;) {
        /* The k-th unit in walk order, and the run from it on in that order. */
        uint64_t u = dir == MEMD_DIR_TOP_DOWN ? n - 1 - k : k;
        if (r->cnt[u]) {
            k++;
            continue;
        }
        uint64_t len = 0;
        while (k + len < n && r->cnt[dir == MEMD_DIR_TOP_DOWN ? n - 1 - (k + len) : k + len] == 0)
            len++;
        uint64_t lo = dir == MEMD_DIR_TOP_DOWN ? u + 1 - len : u;
        uint64_t a = r->base + lo * r->unit, s = len * r->unit, x;
        k += len;
        if (!ref_place(a, s, sz, al, dir, &x))
            continue;
        if (fit == MEMD_FIT_FIRST) {
            *at = x;
            *blk = a;
            *bs = s;
            return true;
        }
        if (!found || s < best) {
            found = true;
            best = s;
            *at = x;
            *blk = a;
            *bs = s;
        }
    }
    return found;
}

/* ------------------------------------------------------------- workload */

typedef struct span {
    uint64_t addr, size;
    uint32_t n; /* occupants at once */
} span;

typedef struct world {
    memd_cover *c;
    ref r;
    span *live;
    size_t nlive, cap;
    uint64_t rng, seed, step, weight;
} world;

static void check_counts(world *w)
{
    ck_assert_int_eq(memd_cover_check(w->c), 0);
    ck_assert_uint_eq(memd_cover_weight(w->c), w->weight);
    for (uint64_t u = 0; u < w->r.units; u++)
        ck_assert_msg(memd_cover_count(w->c, w->r.base + u * w->r.unit) == w->r.cnt[u],
                      "seed %#" PRIx64 " step %" PRIu64 ": unit %" PRIu64 " count %u, reference %u",
                      w->seed, w->step, u, memd_cover_count(w->c, w->r.base + u * w->r.unit),
                      w->r.cnt[u]);
    /* Memory: a span update creates at most four nodes per level. */
    uint64_t levels = 1;
    for (uint64_t n = w->r.units; n > 1; n = n - n / 2)
        levels++;
    ck_assert_uint_le(memd_cover_nodes(w->c), w->nlive * 4 * levels);
}

/* A unit near a multiple of 32 (leaf chunks end near those), or anywhere. */
static uint64_t pick_unit(world *w, uint64_t below_n)
{
    if (below_n > 34 && memd_test_below(&w->rng, 3) == 0) {
        uint64_t u = memd_test_below(&w->rng, below_n / 32 + 1) * 32 + memd_test_below(&w->rng, 3);
        u = u > 0 ? u - 1 : 0;
        return u < below_n ? u : below_n - 1;
    }
    return memd_test_below(&w->rng, below_n);
}

static void step_add(world *w)
{
    uint64_t units = w->r.units;
    /* Mostly short spans, some long ones that cover many others. */
    uint64_t n = memd_test_below(&w->rng, 8) == 0 ? 1 + memd_test_below(&w->rng, units)
                                                  : 1 + memd_test_below(&w->rng, 1 + units / 16);
    uint64_t u = pick_unit(w, units - n + 1);
    if (units > 34 && memd_test_below(&w->rng, 4) == 0) {
        /* Or ending near a multiple of 32 too: inside, at or just past a chunk's edge. */
        uint64_t e = pick_unit(w, units + 1);
        if (e > u)
            n = e - u;
    }
    /* Sizes not a multiple of the unit round up. */
    uint64_t size =
        n * w->r.unit - (memd_test_below(&w->rng, 2) ? memd_test_below(&w->rng, w->r.unit) : 0);
    uint32_t occ = memd_test_below(&w->rng, 4) ? 1 : 2 + (uint32_t)memd_test_below(&w->rng, 5);
    ck_assert_int_eq(memd_cover_add(w->c, w->r.base + u * w->r.unit, size, occ), 0);
    for (uint64_t k = u; k < u + n; k++)
        w->r.cnt[k] += occ;
    w->weight += n * occ;
    if (w->nlive == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 64;
        w->live = realloc(w->live, w->cap * sizeof(*w->live));
        ck_assert_ptr_nonnull(w->live);
    }
    w->live[w->nlive++] = (span){w->r.base + u * w->r.unit, size, occ};
}

static void step_remove(world *w)
{
    size_t i = memd_test_below(&w->rng, w->nlive);
    span s = w->live[i];
    w->live[i] = w->live[--w->nlive];
    /* More occupants than the span has are refused, and nothing changes. */
    ck_assert_int_eq(memd_cover_remove(w->c, s.addr, s.size, UINT32_MAX), -ENOENT);
    if (memd_test_below(&w->rng, 2))
        ck_assert_int_eq(memd_cover_remove(w->c, s.addr, s.size, s.n), 0);
    else
        memd_cover_drop(w->c, s.addr, s.size, s.n);
    uint64_t u = (s.addr - w->r.base) / w->r.unit, n = (s.size + w->r.unit - 1) / w->r.unit;
    for (uint64_t k = u; k < u + n; k++)
        w->r.cnt[k] -= s.n;
    w->weight -= n * s.n;
}

static void step_query(world *w)
{
    memd_dir dir = memd_test_below(&w->rng, 2) ? MEMD_DIR_TOP_DOWN : MEMD_DIR_BOTTOM_UP;
    memd_fit fit = memd_test_below(&w->rng, 2) ? MEMD_FIT_BEST : MEMD_FIT_FIRST;
    uint64_t most = w->r.unit * (1 + memd_test_below(&w->rng, 1 + w->r.units / 4));
    uint64_t size = 1 + memd_test_below(&w->rng, most);
    uint64_t align = memd_test_below(&w->rng, 3) ? 0 : w->r.unit << memd_test_below(&w->rng, 7);
    uint64_t want = 0, got = 0, wb = 0, wbs = 0, gb = 0, gbs = 0;
    bool ok = ref_fit(&w->r, size, align, dir, fit, &want, &wb, &wbs);
    /* Without the block wanted first fit takes its short cut (the run's near edge only). */
    bool blk = memd_test_below(&w->rng, 2);
    int rc = memd_cover_fit(w->c, size, align, dir, fit, &got, blk ? &gb : NULL, blk ? &gbs : NULL);
    ck_assert_msg(rc == (ok ? 0 : -ENOMEM) && (!ok || got == want) &&
                      (!ok || !blk || (gb == wb && gbs == wbs)),
                  "seed %#" PRIx64 " step %" PRIu64 ": size %" PRIu64 " align %" PRIu64
                  " dir %d fit %d: rc %d at %#" PRIx64 " block %#" PRIx64 "+%#" PRIx64
                  ", reference %d at %#" PRIx64 " block %#" PRIx64 "+%#" PRIx64,
                  w->seed, w->step, size, align, dir, fit, rc, got, gb, gbs, ok, want, wb, wbs);

    /* probe and next_free from anywhere, often a chunk's edge. */
    uint64_t units = w->r.units, u = pick_unit(w, units);
    uint64_t n = 1 + memd_test_below(&w->rng, units - u < 80 ? units - u : 80), k = u;
    while (k < u + n && w->r.cnt[k] == 0)
        k++;
    uint64_t addr = w->r.base + u * w->r.unit;
    uint64_t psize =
        n * w->r.unit - (memd_test_below(&w->rng, 2) ? memd_test_below(&w->rng, w->r.unit) : 0);
    ck_assert_msg(memd_cover_probe(w->c, addr, psize) == (k == u + n ? 0 : -EBUSY),
                  "seed %#" PRIx64 " step %" PRIu64 ": probe unit %" PRIu64 " +%" PRIu64,
                  w->seed, w->step, u, n);
    for (k = u; k < units && w->r.cnt[k]; k++)
        ;
    uint64_t f = 0;
    bool any = memd_cover_next_free(w->c, addr + memd_test_below(&w->rng, w->r.unit), &f);
    ck_assert_msg(any == (k < units) && (!any || f == w->r.base + k * w->r.unit),
                  "seed %#" PRIx64 " step %" PRIu64 ": next_free from unit %" PRIu64
                  ": %d at %#" PRIx64 ", reference unit %" PRIu64,
                  w->seed, w->step, u, any, f, k);
}

static void run(uint64_t base, uint64_t unit, uint64_t units, uint64_t steps, uint64_t seed)
{
    world w = {.rng = seed, .seed = seed, .r = {base, unit, units, NULL}};
    w.r.cnt = calloc(units, sizeof(*w.r.cnt));
    ck_assert_ptr_nonnull(w.r.cnt);
    ck_assert_int_eq(memd_cover_create(base, unit, units, &w.c), 0);
    for (w.step = 0; w.step < steps; w.step++) {
        /* Phases: fill (60 % adds), then drain (30 %). */
        uint64_t fill = (w.step / 500) % 2 == 0 ? 60 : 30;
        if (memd_test_below(&w.rng, 100) < fill || w.nlive == 0)
            step_add(&w);
        else
            step_remove(&w);
        for (int q = 0; q < 3; q++)
            step_query(&w);
        if (w.step % 97 == 0)
            check_counts(&w);
    }
    check_counts(&w);
    /* Drained, the tree is gone and its memory follows. */
    while (w.nlive)
        step_remove(&w);
    check_counts(&w);
    ck_assert_uint_eq(memd_cover_nodes(w.c), 0);
    ck_assert_uint_le(memd_cover_bytes(w.c), 128 << 10); /* the pools' floors */
    uint64_t at;
    ck_assert_int_eq(memd_cover_fit(w.c, units * unit, 0, MEMD_DIR_TOP_DOWN, MEMD_FIT_BEST, &at,
                                    NULL, NULL), 0);
    ck_assert_uint_eq(at, base);
    memd_cover_destroy(w.c);
    free(w.r.cnt);
    free(w.live);
}

START_TEST(random_against_counts)
{
    uint64_t seed = memd_test_seed(DEFAULT_SEED);
    printf("# seed %#" PRIx64 "\n", seed);
    run(0x4000, 32, 1000, 6000, seed);     /* not a power of two */
    run(0, 1, 64, 3000, seed ^ 1);         /* a power of two, unit 1: one whole leaf */
    run(0x100, 256, 7, 1500, seed ^ 2);    /* tiny, odd */
    run(0x8000, 32, 1, 300, seed ^ 3);     /* one unit */
    /* Leaf chunks: two whole ones, one full and one of a unit, chunks of 64 units
     * exactly, and chunks of 32 or 33 units with spans around their edges. */
    run(0, 8, 128, 3000, seed ^ 4);
    run(0x40, 64, 65, 2000, seed ^ 5);
    run(0x10000, 32, 4096, 5000, seed ^ 6);
    run(0x200, 32, 4133, 5000, seed ^ 7);
}
END_TEST

/* Many intervals, then all but ten gone: the pools are compacted back down. stride:
 * units from one span's start to the next (3: many spans per leaf chunk, 70: one chunk
 * each). */
static void follow_spans(uint64_t stride, uint64_t spans)
{
    memd_cover *c;
    uint64_t b = stride * 32, last = spans - 5;
    ck_assert_int_eq(memd_cover_create(0, 32, UINT64_C(1) << 21, &c), 0);
    for (uint64_t i = 0; i < spans; i++)
        ck_assert_int_eq(memd_cover_add(c, i * b, 64, 1), 0);
    uint64_t peak = memd_cover_bytes(c);
    ck_assert_uint_gt(peak, spans * 8);
    ck_assert_int_eq(memd_cover_check(c), 0);
    for (uint64_t i = 0; i < spans - 10; i++)
        ck_assert_int_eq(memd_cover_remove(c, i * b, 64, 1), 0);
    ck_assert_int_eq(memd_cover_check(c), 0);
    ck_assert_uint_lt(memd_cover_bytes(c), peak / 8);
    ck_assert_uint_eq(memd_cover_count(c, last * b), 1);
    ck_assert_uint_eq(memd_cover_count(c, last * b + 64), 0);
    uint64_t at;
    ck_assert(memd_cover_next_free(c, (spans - 10) * b, &at));
    ck_assert_uint_eq(at, (spans - 10) * b + 64);
    memd_cover_destroy(c);
}

START_TEST(memory_follows_live_spans)
{
    follow_spans(3, 60000);
    follow_spans(70, 20000);
}
END_TEST

START_TEST(bad_arguments)
{
    memd_cover *c;
    ck_assert_int_eq(memd_cover_create(0, 3, 10, &c), -EINVAL);
    ck_assert_int_eq(memd_cover_create(16, 32, 10, &c), -EINVAL);
    ck_assert_int_eq(memd_cover_create(0, 32, 0, &c), -EINVAL);
    ck_assert_int_eq(memd_cover_create(UINT64_MAX - 63, 32, 4, &c), -EINVAL);
    ck_assert_int_eq(memd_cover_create(64, 32, 10, &c), 0);
    ck_assert_int_eq(memd_cover_add(c, 0, 32, 1), -EINVAL);       /* below */
    ck_assert_int_eq(memd_cover_add(c, 80, 32, 1), -EINVAL);      /* unaligned */
    ck_assert_int_eq(memd_cover_add(c, 64, 0, 1), -EINVAL);
    ck_assert_int_eq(memd_cover_add(c, 64, 32, 0), -EINVAL);
    ck_assert_int_eq(memd_cover_add(c, 64 + 9 * 32, 33, 1), -EINVAL); /* past the end */
    ck_assert_int_eq(memd_cover_add(c, 64 + 2 * 32, 64, 1), 0);
    /* A span not covered is not removed (nothing changes). */
    ck_assert_int_eq(memd_cover_remove(c, 64, 64, 1), -ENOENT);
    ck_assert_int_eq(memd_cover_remove(c, 64 + 32, 96, 1), -ENOENT);
    ck_assert_uint_eq(memd_cover_count(c, 64 + 3 * 32), 1);
    uint64_t at, b, bs;
    ck_assert_int_eq(memd_cover_fit(c, 0, 0, MEMD_DIR_BOTTOM_UP, MEMD_FIT_FIRST, &at, NULL, NULL), -EINVAL);
    ck_assert_int_eq(memd_cover_fit(c, 32, 48, MEMD_DIR_BOTTOM_UP, MEMD_FIT_FIRST, &at, NULL, NULL), -EINVAL);
    ck_assert_int_eq(memd_cover_fit(c, 7 * 32, 0, MEMD_DIR_BOTTOM_UP, MEMD_FIT_FIRST, &at, NULL, NULL), -ENOMEM);
    ck_assert_int_eq(memd_cover_fit(c, 6 * 32, 0, MEMD_DIR_BOTTOM_UP, MEMD_FIT_FIRST, &at, &b, &bs), 0);
    ck_assert_uint_eq(at, 64 + 4 * 32);
    ck_assert_uint_eq(b, 64 + 4 * 32);
    ck_assert_uint_eq(bs, 6 * 32);
    /* Best fit: the two-unit run below the span wins over the six-unit one above. */
    ck_assert_int_eq(memd_cover_fit(c, 32, 0, MEMD_DIR_TOP_DOWN, MEMD_FIT_BEST, &at, &b, &bs), 0);
    ck_assert_uint_eq(at, 64 + 32);
    ck_assert_uint_eq(bs, 64);
    ck_assert_int_eq(memd_cover_remove(c, 64 + 2 * 32, 64, 1), 0);
    ck_assert_uint_eq(memd_cover_nodes(c), 0);
    memd_cover_destroy(c);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("cover");
    memd_test_tcase(s, "cover", 300, NULL, NULL,
                    (const TTest *const[]){bad_arguments, memory_follows_live_spans,
                                           random_against_counts, NULL});
    return s;
}

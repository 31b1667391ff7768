/* Randomized differential test: memd_range against the linear reference model
 * (tests/common/ref_range.c) on a seeded stream of mixed operations — allocations in
 * both directions and both fits with random alignments, alloc-at, frees of live and
 * bogus addresses, lookups, the odd reset and plenty of invalid arguments. After EVERY
 * step the return codes, addresses, sizes and all statistics must agree; every
 * FULL_EVERY steps the two maps are compared block by block and memd's internal
 * invariants are checked.
 *
 * A third allocator, created with MEMD_RANGE_F_CALLER_SIZES, follows the same stream
 * (freed with the sizes the reference gives): its placements, statistics and merged
 * block map must be the same, and a free of free space must be refused.
 *
 * Seed: MEMD_TEST_SEED (decimal or 0x-hex) or a fixed default; it is printed as a TAP
 * comment, and every failure message names the seed, the arena and the step.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ref_range.h"
#include "check_main.h"
#include "range.h"
#include "test_rand.h"

#define DEFAULT_SEED UINT64_C(0x6d656d6452414e47)
#define FULL_EVERY 1000

typedef struct arena {
    const char *name;
    uint64_t base, size, min_align;
    uint64_t steps;
    uint64_t max_req;  /* typical request sizes are log-uniform in [1, max_req] */
    bool best_fit;     /* also issue best-fit requests (builds memd's size index) */
    bool aligned;      /* aligned-heavy: most requests small and aligned to one of six
                          alignments well above min_align (builds memd's aligned indexes,
                          more alignments than it keeps indexes for) */
} arena;

/* 1.47 million steps in all. */
static const arena arenas[] = {
    {"plain", 0, UINT64_C(1) << 20, 32, 250000, UINT64_C(1) << 14, false},
    {"unaligned-ends", 0x10000007, 65536 + 13, 64, 200000, 4096, true},
    {"byte-granular", 5, 4096, 1, 200000, 256, true},
    {"top-of-address-space", UINT64_MAX - 1000000, 1000000, 16, 200000, 1 << 15, true},
    {"pages", UINT64_C(1) << 40, UINT64_C(1) << 22, 4096, 150000, UINT64_C(1) << 18, true},
    {"many-blocks", 0, UINT64_C(1) << 24, 32, 120000, 1024, true}, /* > 1024 free blocks */
    {"aligned-small", 0, UINT64_C(1) << 24, 32, 200000, 256, false, true},
    {"aligned-mixed", 0x3000, UINT64_C(1) << 26, 64, 150000, 1 << 14, true, true},
};
#define NARENAS (int)(sizeof(arenas) / sizeof(arenas[0]))

typedef struct world {
    const arena *a;
    memd_range *r;
    memd_range *u;     /* MEMD_RANGE_F_CALLER_SIZES */
    ref_range *ref;
    uint64_t lo, hi; /* usable range, from the reference's statistics */
    uint64_t rng, seed, step;
    uint64_t *live;
    size_t nlive, cap;
    uint64_t last_freed, last_freed_size;
    char op[160]; /* the current operation, for failure messages */
} world;

static uint64_t below(world *w, uint64_t n)
{
    return n ? memd_test_rand(&w->rng) % n : 0;
}

/* Check only on failure: every passing ck_assert records its location with a write(). */
#define CHECK(w, cond, fmt, ...)                                                              \
    do {                                                                                      \
        if (!(cond))                                                                          \
            ck_abort_msg("seed 0x%016" PRIx64 " arena %s step %" PRIu64 " (%s): " fmt,        \
                         (w)->seed, (w)->a->name, (w)->step, (w)->op, ##__VA_ARGS__);         \
    } while (0)

/* ---------------------------------------------------------------- live list */

static void live_add(world *w, uint64_t addr)
{
    if (w->nlive == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 256;
        w->live = realloc(w->live, w->cap * sizeof(uint64_t));
        ck_assert_ptr_nonnull(w->live);
    }
    w->live[w->nlive++] = addr;
}

static void live_remove(world *w, uint64_t addr)
{
    for (size_t i = 0; i < w->nlive; i++) {
        if (w->live[i] == addr) {
            w->live[i] = w->live[--w->nlive];
            return;
        }
    }
    CHECK(w, 0, "freed 0x%" PRIx64 " is not in the live list", addr);
}

/* ---------------------------------------------------------------- generators */

static uint64_t gen_size(world *w)
{
    uint64_t k = below(w, 100);
    if (k < 2)
        return 0;
    if (k < 4)
        return UINT64_MAX - below(w, 2 * w->a->min_align); /* rounding overflow or huge */
    if (k < 6)
        return w->hi - w->lo - below(w, 3) * w->a->min_align; /* about the whole range */
    unsigned bits = 0;
    while ((UINT64_C(1) << (bits + 1)) <= w->a->max_req)
        bits++;
    return 1 + below(w, UINT64_C(1) << below(w, bits + 1));
}

static uint64_t gen_align(world *w)
{
    uint64_t k = below(w, 100);
    if (w->a->aligned && k < 85)
        return w->a->min_align << (1 + below(w, 6));
    if (k < 50)
        return 0;
    if (k < 54)
        return 3 + 2 * below(w, 1000); /* odd: never a power of two */
    if (k < 56)
        return 48;
    if (k < 95)
        return UINT64_C(1) << below(w, 16);
    return UINT64_C(1) << (16 + below(w, 48)); /* up to 2^63 */
}

static uint64_t gen_addr(world *w)
{
    uint64_t m = w->a->min_align, k = below(w, 100);
    if (k < 35 && w->last_freed != UINT64_MAX)
        return w->last_freed;
    if (k < 70)
        return w->lo + m * below(w, (w->hi - w->lo) / m);
    if (k < 80 && w->nlive)
        return w->live[below(w, w->nlive)];
    if (k < 85)
        return w->lo - m;
    if (k < 90)
        return w->hi - m * below(w, 2);
    if (k < 95)
        return w->lo + 1 + below(w, w->hi - w->lo); /* mostly unaligned */
    return memd_test_rand(&w->rng);
}

/* ---------------------------------------------------------------- comparisons */

static void compare_stats(world *w)
{
    memd_range_stats a, b, c;
    memd_range_stats_get(w->r, &a);
    ref_range_stats_get(w->ref, &b);
    memd_range_stats_get(w->u, &c);
    CHECK(w, memcmp(&a, &c, sizeof a) == 0, "caller-sized range's statistics differ");
    CHECK(w, a.total == b.total && a.allocated == b.allocated && a.free == b.free,
          "total/allocated/free %" PRIu64 "/%" PRIu64 "/%" PRIu64 " vs %" PRIu64 "/%" PRIu64
          "/%" PRIu64,
          a.total, a.allocated, a.free, b.total, b.allocated, b.free);
    CHECK(w, a.largest_free == b.largest_free && a.largest_free_addr == b.largest_free_addr,
          "largest free %" PRIu64 "@0x%" PRIx64 " vs %" PRIu64 "@0x%" PRIx64, a.largest_free,
          a.largest_free_addr, b.largest_free, b.largest_free_addr);
    CHECK(w, a.free_blocks == b.free_blocks && a.allocations == b.allocations,
          "free blocks/allocations %" PRIu64 "/%" PRIu64 " vs %" PRIu64 "/%" PRIu64,
          a.free_blocks, a.allocations, b.free_blocks, b.allocations);
}

typedef struct blocks {
    uint64_t (*b)[3];
    size_t n, cap;
} blocks;

static int collect(void *ctx, uint64_t addr, uint64_t size, bool used)
{
    blocks *l = ctx;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->b = realloc(l->b, l->cap * sizeof(*l->b));
        if (!l->b)
            return -ENOMEM;
    }
    l->b[l->n][0] = addr;
    l->b[l->n][1] = size;
    l->b[l->n][2] = used;
    l->n++;
    return 0;
}

static int by_size_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x < y) - (x > y);
}

/* memd_range_largest_free: free blocks of the reference's map, largest first, their
 * sizes the k largest (ties in any order). */
static void compare_largest(world *w, const blocks *y)
{
    uint64_t *sizes = malloc((y->n + 1) * sizeof *sizes);
    CHECK(w, sizes != NULL, "out of memory");
    size_t nfree = 0;
    for (size_t i = 0; i < y->n; i++)
        if (!y->b[i][2])
            sizes[nfree++] = y->b[i][1];
    qsort(sizes, nfree, sizeof *sizes, by_size_desc);
    static const size_t ks[] = {1, 8, 32};
    for (size_t t = 0; t < sizeof ks / sizeof ks[0]; t++) {
        uint64_t addr[32], size[32];
        size_t k = ks[t], n = memd_range_largest_free(w->r, k, addr, size);
        CHECK(w, n == (nfree < k ? nfree : k), "%zu largest free blocks of %zu, not %zu", n,
              nfree, k);
        for (size_t i = 0; i < n; i++) {
            CHECK(w, size[i] == sizes[i], "largest free block %zu: %" PRIu64 " bytes, not %"
                  PRIu64, i, size[i], sizes[i]);
            bool real = false;
            for (size_t j = 0; j < y->n && !real; j++)
                real = !y->b[j][2] && y->b[j][0] == addr[i] && y->b[j][1] == size[i];
            CHECK(w, real, "largest free block %zu at 0x%" PRIx64 " is not free", i, addr[i]);
        }
    }
    free(sizes);
}

/* Block by block, plus what must hold of any correct map: the blocks tile [lo, hi)
 * and no two free blocks touch. */
static void compare_full(world *w)
{
    blocks x = {0}, y = {0};
    CHECK(w, memd_range_foreach(w->r, collect, &x) == 0, "memd foreach failed");
    CHECK(w, ref_range_foreach(w->ref, collect, &y) == 0, "reference foreach failed");
    CHECK(w, x.n == y.n, "%zu blocks vs %zu", x.n, y.n);
    uint64_t cur = w->lo;
    for (size_t i = 0; i < x.n; i++) {
        CHECK(w, memcmp(x.b[i], y.b[i], sizeof(x.b[i])) == 0,
              "block %zu: [0x%" PRIx64 " +0x%" PRIx64 " %s] vs [0x%" PRIx64 " +0x%" PRIx64
              " %s]",
              i, x.b[i][0], x.b[i][1], x.b[i][2] ? "used" : "free", y.b[i][0], y.b[i][1],
              y.b[i][2] ? "used" : "free");
        CHECK(w, x.b[i][0] == cur && x.b[i][1] > 0, "block %zu does not start at 0x%" PRIx64,
              i, cur);
        CHECK(w, i == 0 || x.b[i][2] || x.b[i - 1][2], "free blocks %zu and %zu touch", i - 1,
              i);
        cur += x.b[i][1];
    }
    CHECK(w, cur == w->hi, "blocks end at 0x%" PRIx64 ", not 0x%" PRIx64, cur, w->hi);
    CHECK(w, memd_range_check(w->r) == 0, "memd_range_check failed");
    compare_largest(w, &y);
    /* The caller-sized range: the same map with each run of allocations as one block;
     * a free of a free block, or of a span reaching into one, changes nothing. */
    blocks z = {0};
    CHECK(w, memd_range_foreach(w->u, collect, &z) == 0, "caller-sized foreach failed");
    size_t j = 0;
    for (size_t i = 0; i < x.n; j++) {
        uint64_t at = x.b[i][0], len = 0;
        bool used = x.b[i][2];
        do
            len += x.b[i++][1];
        while (used && i < x.n && x.b[i][2]);
        CHECK(w, j < z.n && z.b[j][0] == at && z.b[j][1] == len && z.b[j][2] == used,
              "caller-sized block %zu differs", j);
        if (!used) {
            CHECK(w, memd_range_free_sized(w->u, at, len) == -ENOENT, "freed a free block");
            if (at > w->lo)
                CHECK(w, memd_range_free_sized(w->u, at - w->a->min_align, 2 * w->a->min_align) ==
                         -ENOENT, "freed a span reaching into a free block");
        }
    }
    CHECK(w, j == z.n, "caller-sized range has %zu blocks, not %zu", z.n, j);
    CHECK(w, memd_range_check(w->u) == 0, "memd_range_check failed (caller-sized)");
    uint64_t sz;
    CHECK(w, memd_range_lookup(w->u, w->lo, &sz) == -EINVAL && memd_range_free(w->u, w->lo, &sz) == -EINVAL,
          "caller-sized range answered lookup or free");
    free(z.b);
    free(x.b);
    free(y.b);
}

/* ---------------------------------------------------------------- operations */

static void op_alloc(world *w, bool plain)
{
    uint64_t size = plain ? 1 + below(w, w->a->max_req) : gen_size(w);
    uint64_t align = plain ? 0 : gen_align(w);
    uint64_t k = below(w, 100);
    memd_dir dir = (memd_dir)(k % 2);
    if (!plain && k < 2)
        dir = (memd_dir)(2 + below(w, 5));
    memd_fit fit = MEMD_FIT_FIRST;
    k = below(w, 100);
    if (w->a->best_fit && k < 30)
        fit = MEMD_FIT_BEST;
    if (!plain && k >= 98)
        fit = (memd_fit)(2 + below(w, 5));
    snprintf(w->op, sizeof(w->op), "alloc size 0x%" PRIx64 " align 0x%" PRIx64 " dir %d fit %d",
             size, align, (int)dir, (int)fit);
    uint64_t a = 1, b = 2;
    int ra = memd_range_alloc(w->r, size, align, dir, fit, &a);
    int rb = ref_range_alloc(w->ref, size, align, dir, fit, &b);
    CHECK(w, ra == rb, "memd %d, reference %d", ra, rb);
    uint64_t c = 3;
    int rc = memd_range_alloc(w->u, size, align, dir, fit, &c);
    CHECK(w, rc == ra && (rc != 0 || c == a), "caller-sized: %d at 0x%" PRIx64, rc, c);
    if (ra == 0) {
        CHECK(w, a == b, "memd placed at 0x%" PRIx64 ", reference at 0x%" PRIx64, a, b);
        live_add(w, a);
    }
}

static void op_alloc_at(world *w)
{
    uint64_t m = w->a->min_align, k = below(w, 100), addr, size;
    memd_range_stats st;
    ref_range_stats_get(w->ref, &st);
    if (k < 10 && st.largest_free) { /* a whole free block, or its last unit */
        bool whole = below(w, 2);
        addr = whole ? st.largest_free_addr : st.largest_free_addr + st.largest_free - m;
        size = whole ? st.largest_free : m;
    } else if (k < 35 && st.largest_free) { /* somewhere inside the largest free block */
        uint64_t units = st.largest_free / m, off = below(w, units);
        addr = st.largest_free_addr + off * m;
        uint64_t room = (units - off) * m;
        size = 1 + below(w, room < w->a->max_req ? room : w->a->max_req);
    } else if (k < 50 && w->last_freed != UINT64_MAX) { /* where something was just freed */
        addr = w->last_freed;
        size = 1 + below(w, w->last_freed_size);
    } else {
        addr = gen_addr(w);
        k = below(w, 100);
        size = k < 5 ? UINT64_MAX - below(w, m) : k < 8 ? 0 : 1 + below(w, w->a->max_req);
    }
    snprintf(w->op, sizeof(w->op), "alloc_at 0x%" PRIx64 " size 0x%" PRIx64, addr, size);
    int ra = memd_range_alloc_at(w->r, addr, size);
    int rb = ref_range_alloc_at(w->ref, addr, size);
    CHECK(w, ra == rb, "memd %d, reference %d", ra, rb);
    CHECK(w, memd_range_alloc_at(w->u, addr, size) == ra, "caller-sized alloc_at differs");
    if (ra == 0)
        live_add(w, addr);
}

static void op_free(world *w, bool bogus)
{
    uint64_t addr;
    size_t idx = SIZE_MAX;
    if (!bogus && w->nlive) {
        idx = (size_t)below(w, w->nlive);
        addr = w->live[idx];
    } else {
        uint64_t k = below(w, 4);
        if (k == 0 && w->nlive)
            addr = w->live[below(w, w->nlive)] + w->a->min_align * (1 + below(w, 3));
        else if (k == 1 && w->last_freed != UINT64_MAX)
            addr = w->last_freed; /* double free, unless it was allocated again */
        else
            addr = gen_addr(w);
    }
    snprintf(w->op, sizeof(w->op), "free 0x%" PRIx64 "%s", addr, bogus ? " (bogus)" : "");
    uint64_t sa = 1, sb = 2;
    int ra = memd_range_free(w->r, addr, &sa);
    int rb = ref_range_free(w->ref, addr, &sb);
    CHECK(w, ra == rb, "memd %d, reference %d", ra, rb);
    CHECK(w, idx == SIZE_MAX || ra == 0, "a live block failed to free: %d", ra);
    if (ra != 0)
        return;
    CHECK(w, sa == sb, "freed size 0x%" PRIx64 " vs 0x%" PRIx64, sa, sb);
    int rc = memd_range_free_sized(w->u, addr, sb - below(w, w->a->min_align));
    CHECK(w, rc == 0, "caller-sized free: %d", rc);
    if (idx != SIZE_MAX)
        w->live[idx] = w->live[--w->nlive];
    else
        live_remove(w, addr);
    w->last_freed = addr;
    w->last_freed_size = sa;
}

static void op_lookup(world *w)
{
    uint64_t addr = below(w, 2) && w->nlive ? w->live[below(w, w->nlive)] : gen_addr(w);
    snprintf(w->op, sizeof(w->op), "lookup 0x%" PRIx64, addr);
    uint64_t sa = 1, sb = 2;
    int ra = memd_range_lookup(w->r, addr, &sa);
    int rb = ref_range_lookup(w->ref, addr, &sb);
    CHECK(w, ra == rb, "memd %d, reference %d", ra, rb);
    CHECK(w, ra != 0 || sa == sb, "size 0x%" PRIx64 " vs 0x%" PRIx64, sa, sb);
}

static void op_reset(world *w)
{
    snprintf(w->op, sizeof(w->op), "reset");
    memd_range_reset(w->r);
    memd_range_reset(w->u);
    ref_range_reset(w->ref);
    w->nlive = 0;
    w->last_freed = UINT64_MAX;
}

START_TEST(test_random_against_reference)
{
    world w = {.a = &arenas[_i], .last_freed = UINT64_MAX};
    w.seed = memd_test_seed(DEFAULT_SEED);
    w.rng = w.seed ^ (0xA5A5A5A5u * (uint64_t)(_i + 1));
    printf("# range-random arena %s: MEMD_TEST_SEED=0x%016" PRIx64 "\n", w.a->name, w.seed);
    fflush(stdout);

    int ca = memd_range_create(w.a->base, w.a->size, w.a->min_align, &w.r);
    int cb = ref_range_create(w.a->base, w.a->size, w.a->min_align, &w.ref);
    ck_assert_int_eq(ca, 0);
    ck_assert_int_eq(cb, 0);
    ck_assert_int_eq(memd_range_create_flags(w.a->base, w.a->size, w.a->min_align,
                                             MEMD_RANGE_F_CALLER_SIZES, &w.u), 0);
    ck_assert_int_eq(memd_range_create_flags(0, 64, 1, 2, &(memd_range *){NULL}), -EINVAL);
    memd_range_stats st;
    ref_range_stats_get(w.ref, &st);
    w.lo = st.largest_free_addr;
    w.hi = w.lo + st.total;
    snprintf(w.op, sizeof(w.op), "create");
    compare_stats(&w);
    compare_full(&w);

    for (w.step = 1; w.step <= w.a->steps; w.step++) {
        uint64_t k = below(&w, 1000);
        if (k == 0 && below(&w, 50) == 0)
            op_reset(&w);
        else if (k < 400)
            op_alloc(&w, false);
        else if (k < 500)
            op_alloc(&w, true);
        else if (k < 800)
            op_free(&w, false);
        else if (k < 850)
            op_free(&w, true);
        else if (k < 950)
            op_alloc_at(&w);
        else
            op_lookup(&w);
        compare_stats(&w);
        if (w.step % FULL_EVERY == 0)
            compare_full(&w);
    }
    compare_full(&w);
    memd_range_destroy(w.r);
    memd_range_destroy(w.u);
    ref_range_destroy(w.ref);
    free(w.live);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("range-random");
    TCase *tc = tcase_create("differential");
    tcase_set_timeout(tc, 120); /* per arena; Check's own default is 4 s */
    tcase_add_loop_test(tc, test_random_against_reference, 0, NARENAS);
    suite_add_tcase(s, tc);
    return s;
}

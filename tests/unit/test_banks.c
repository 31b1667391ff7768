/* Bank subsets: lockstep over all banks, uniform (RANGE), range-lockstep and per-bank
 * placement over bank sets, in one device, against a per-bank reference.
 *
 * The reference keeps linear allocators (tests/common/ref_range.c): one per bank for its
 * pieces of uniform and per-bank buffers, and one for the buffers every bank reserves
 * (lockstep and range lockstep); a bank is free where both are. Per-bank requests run
 * first or best fit over each bank's free space; the others intersect the free blocks of
 * their banks (every bank for lockstep, the set for uniform and range lockstep) the
 * obvious way (sorted interval lists) and apply first or best fit to the intersection.
 * A range-lockstep buffer then lies in every bank, over pieces outside its set too, as
 * tt-metal's does. After EVERY step the engine's placement must be the reference's to
 * the byte, and every FULL_EVERY steps every bank's free blocks and used bytes are
 * compared and the device checked. Seed: MEMD_TEST_SEED or a fixed default. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/fail_alloc.h"
#include "../common/ref_range.h"
#include "check_main.h"
#include "device.h"
#include "device_internal.h" /* hint_walk: per-bank first-fit bounds always on */
#include "test_rand.h"

#define KiB 1024ull
#define DEFAULT_SEED UINT64_C(0x62616e6b73657473)
#define FULL_EVERY 500
#define NBANKS 12

/* SRAM group of `banks` banks, region "buffers" [16 KiB, 16 KiB + size) (240 KiB unless
 * a volume run asks for more); the four classes cover both directions and both fits. */
static void subset_spec_sized(memd_device_spec *s, uint32_t banks, uint64_t size)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->name, sizeof(s->name), "subsets");
    memd_bank_group_spec *g = &s->groups[MEMD_KIND_SRAM];
    g->banks = banks;
    g->bank_size = 16 * KiB + size;
    g->alignment = 32;
    g->nregions = 2;
    snprintf(g->regions[0].name, MEMD_NAME_MAX, "reserved");
    g->regions[0].size = 16 * KiB;
    snprintf(g->regions[1].name, MEMD_NAME_MAX, "buffers");
    g->regions[1].base = 16 * KiB;
    g->regions[1].size = size;
    g->regions[1].allocatable = true;
    memd_device_spec_default_policy(s);
    memd_class_policy *p = s->policy[MEMD_KIND_SRAM];
    p[MEMD_CLASS_CODE] = (memd_class_policy){true, 1, MEMD_DIR_TOP_DOWN, MEMD_FIT_FIRST, 0};
    p[MEMD_CLASS_CONSTANT] = (memd_class_policy){true, 1, MEMD_DIR_BOTTOM_UP, MEMD_FIT_FIRST, 0};
    p[MEMD_CLASS_PLACEHOLDER] = (memd_class_policy){true, 1, MEMD_DIR_TOP_DOWN, MEMD_FIT_BEST, 0};
    p[MEMD_CLASS_INTERNAL] = (memd_class_policy){true, 1, MEMD_DIR_BOTTOM_UP, MEMD_FIT_BEST, 0};
}

static memd_device *make_sized(uint32_t banks, uint64_t size)
{
    memd_device_spec s;
    subset_spec_sized(&s, banks, size);
    memd_device *d = NULL;
    memd_error err = {0};
    ck_assert_msg(memd_device_create(&s, &d, &err) == 0, "%s", err.msg);
    return d;
}

static memd_device *make(uint32_t banks)
{
    return make_sized(banks, 240 * KiB);
}

/* ------------------------------------------------------------- reference */

typedef struct iv {
    uint64_t a, e; /* [a, e) */
} iv;

typedef struct ivs {
    iv *v;
    size_t n, cap;
} ivs;

static void ivs_push(ivs *l, uint64_t a, uint64_t e)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->v = realloc(l->v, l->cap * sizeof(*l->v));
        ck_assert_ptr_nonnull(l->v);
    }
    l->v[l->n++] = (iv){a, e};
}

static int collect_free(void *ctx, uint64_t addr, uint64_t size, bool allocated)
{
    if (!allocated)
        ivs_push(ctx, addr, addr + size);
    return 0;
}

/* l = l ∩ m, both sorted and disjoint. */
static void ivs_intersect(ivs *l, const ivs *m)
{
    ivs out = {0};
    size_t i = 0, j = 0;
    while (i < l->n && j < m->n) {
        uint64_t a = l->v[i].a > m->v[j].a ? l->v[i].a : m->v[j].a;
        uint64_t e = l->v[i].e < m->v[j].e ? l->v[i].e : m->v[j].e;
        if (a < e)
            ivs_push(&out, a, e);
        if (l->v[i].e < m->v[j].e)
            i++;
        else
            j++;
    }
    free(l->v);
    *l = out;
}

static bool place(uint64_t a, uint64_t s, uint64_t sz, uint64_t al, memd_dir dir, uint64_t *at)
{
    if (s < sz)
        return false;
    uint64_t last = a + (s - sz), x;
    if (dir == MEMD_DIR_TOP_DOWN) {
        x = last & ~(al - 1);
        if (x < a)
            return false;
    } else {
        x = (a + (al - 1)) & ~(al - 1);
        if (x > last)
            return false;
    }
    *at = x;
    return true;
}

/* The free intersection of the pieces of banks set[0..n) and the lockstep buffers. */
static ivs ref_free(ref_range **piece, ref_range *lock, const uint32_t *set, uint32_t n)
{
    ivs l = {0};
    ref_range_foreach(lock, collect_free, &l);
    for (uint32_t j = 0; j < n; j++) {
        ivs m = {0};
        ref_range_foreach(piece[set[j]], collect_free, &m);
        ivs_intersect(&l, &m);
        free(m.v);
    }
    return l;
}

/* First or best fit of sz aligned to al over ref_free(set[0..n)). */
static bool ref_common(ref_range **piece, ref_range *lock, const uint32_t *set, uint32_t n,
                       uint64_t sz, uint64_t al, memd_dir dir, memd_fit fit, uint64_t *at)
{
    ivs l = ref_free(piece, lock, set, n);
    bool found = false;
    uint64_t best = 0;
    for (size_t k = 0; k < l.n; k++) {
        size_t i = dir == MEMD_DIR_TOP_DOWN ? l.n - 1 - k : k;
        uint64_t x, s = l.v[i].e - l.v[i].a;
        if (!place(l.v[i].a, s, sz, al, dir, &x))
            continue;
        if (fit == MEMD_FIT_FIRST) {
            *at = x;
            found = true;
            break;
        }
        if (!found || s < best) {
            found = true;
            best = s;
            *at = x;
        }
    }
    free(l.v);
    return found;
}

/* ------------------------------------------------------------- the workload */

typedef struct live {
    memd_placement p;
} live;

typedef struct world {
    memd_device *d;
    ref_range *piece[64], *lock; /* the reference: pieces per bank, every bank's buffers */
    uint32_t banks;
    live *lv;
    size_t nlive, cap;
    uint64_t rng, seed, step;
    const memd_class_policy *pol;
    uint64_t placed[MEMD_BANKS_MODE_COUNT], oom[MEMD_BANKS_MODE_COUNT];
    uint64_t over; /* range-lockstep buffers placed over a piece outside their set */
    uint64_t sized; /* per-bank buffers placed with a size per piece */
    /* The mix: percent of allocations that are lockstep (the rest split evenly between
     * uniform, per bank and range lockstep), and the largest size as a power of two. */
    uint32_t lock_pct, max_log;
    size_t peak;
    bool saw_bounds; /* the region kept first-fit bounds (bank_hints.h) at some step */
} world;

static void ref_reserve(world *w, const memd_placement *p, uint64_t sz)
{
    if (memd_mode_lockstep(p->mode)) {
        int rc = ref_range_alloc_at(w->lock, p->address, sz);
        ck_assert_msg(rc == 0, "seed %#" PRIx64 " step %" PRIu64 ": lockstep at %#" PRIx64
                      " overlaps (%d)", w->seed, w->step, p->address, rc);
        /* Count range-lockstep buffers that lie over a piece of another bank. */
        for (uint32_t b = 0; p->mode == MEMD_BANKS_RANGE_LOCKSTEP && b < w->banks; b++)
            if (ref_range_alloc_at(w->piece[b], p->address, sz) == 0)
                ck_assert_int_eq(ref_range_free(w->piece[b], p->address, NULL), 0);
            else {
                w->over++;
                break;
            }
        return;
    }
    for (uint32_t j = 0; j < p->nset; j++) {
        uint64_t a = p->addrs ? p->addrs[j] : p->address;
        int rc = ref_range_alloc_at(w->piece[p->set[j]], a, p->sizes ? p->sizes[j] : sz);
        ck_assert_msg(rc == 0, "seed %#" PRIx64 " step %" PRIu64 ": piece at %#" PRIx64
                      " overlaps in bank %u (%d)", w->seed, w->step, a, p->set[j], rc);
    }
}

static void ref_release(world *w, const memd_placement *p)
{
    if (memd_mode_lockstep(p->mode)) {
        ck_assert_int_eq(ref_range_free(w->lock, p->address, NULL), 0);
        return;
    }
    for (uint32_t j = 0; j < p->nset; j++)
        ck_assert_int_eq(
            ref_range_free(w->piece[p->set[j]], p->addrs ? p->addrs[j] : p->address, NULL), 0);
}

/* A random bank set: a contiguous run, a scatter, one bank, or (rarely) every bank. */
static uint32_t random_set(world *w, uint32_t *set)
{
    uint32_t n = 0, kind = (uint32_t)memd_test_below(&w->rng, 4);
    if (kind == 0) {
        uint32_t a = (uint32_t)memd_test_below(&w->rng, w->banks),
                 len = 1 + (uint32_t)memd_test_below(&w->rng, w->banks - a);
        for (uint32_t i = a; i < a + len; i++)
            set[n++] = i;
    } else if (kind == 1) {
        for (uint32_t i = 0; i < w->banks; i++)
            if (memd_test_below(&w->rng, 3) == 0)
                set[n++] = i;
        if (n == 0)
            set[n++] = (uint32_t)memd_test_below(&w->rng, w->banks);
    } else if (kind == 2) {
        set[n++] = (uint32_t)memd_test_below(&w->rng, w->banks);
    } else {
        for (uint32_t i = 0; i < w->banks; i++)
            set[n++] = i;
    }
    return n;
}

static void step_alloc(world *w)
{
    uint32_t set[64], nset = 0;
    memd_alloc_req req = {.cls = (memd_class)memd_test_below(&w->rng, 4), .scope = MEMD_SCOPE_SRAM};
    uint32_t mode =
        memd_test_below(&w->rng, 100) < w->lock_pct ? 0 : 1 + (uint32_t)memd_test_below(&w->rng, 3);
    if (mode != 0)
        nset = random_set(w, set);
    if (nset) {
        req.bank_set = set;
        req.nbank_set = nset;
    }
    req.per_bank = mode == 2;
    req.range_lockstep = mode == 3;
    /* Per bank over a set: half of them with a size per piece (tt-metal's per-core shard
     * sizes), each rounded up to the group's 32 bytes. */
    uint64_t sizes[64], want_sz[64];
    bool sized = req.per_bank && nset && memd_test_below(&w->rng, 2) == 0;
    for (uint32_t j = 0; sized && j < nset; j++) {
        sizes[j] = 1 + memd_test_below(&w->rng, 1u << (4 + memd_test_below(&w->rng, w->max_log - 3)));
        want_sz[j] = (sizes[j] + 31) & ~31ull;
    }
    if (sized)
        req.sizes = sizes;
    else
        req.bytes = 1 + memd_test_below(&w->rng, 1u << (4 + memd_test_below(&w->rng, w->max_log - 3)));
    if (!sized && memd_test_below(&w->rng, 4) == 0)
        req.page_size = 32u << memd_test_below(&w->rng, 6);
    if (memd_test_below(&w->rng, 5) == 0)
        req.alignment = 32u << memd_test_below(&w->rng, 8);

    memd_placement fp;
    ck_assert_int_eq(memd_device_footprint(w->d, &req, &fp), 0);
    const memd_class_policy *pol = &w->pol[req.cls];
    uint64_t al = req.alignment > 32 ? req.alignment : 32, sz = fp.size_per_bank;

    /* The reference's answer. */
    uint32_t all[64] = {0};
    for (uint32_t i = 0; i < w->banks; i++)
        all[i] = i;
    const uint32_t *rs = fp.mode == MEMD_BANKS_ALL ? all : (nset ? set : all);
    uint32_t rn = fp.mode == MEMD_BANKS_ALL ? w->banks : fp.nset;
    uint64_t want[64];
    int want_rc = 0;
    uint32_t want_oom = UINT32_MAX;
    if (fp.mode == MEMD_BANKS_PER_BANK) {
        for (uint32_t j = 0; j < rn && !want_rc; j++) {
            if (ref_common(w->piece, w->lock, &rs[j], 1, sized ? want_sz[j] : sz, al, pol->dir,
                           pol->fit, &want[j]))
                continue;
            want_rc = -ENOMEM;
            want_oom = rs[j];
        }
    } else if (!ref_common(w->piece, w->lock, rs, rn, sz, al, pol->dir, pol->fit, &want[0])) {
        want_rc = -ENOMEM;
    }

    memd_placement p;
    int rc = memd_device_alloc(w->d, &req, &p);
    ck_assert_msg(rc == want_rc, "seed %#" PRIx64 " step %" PRIu64 ": mode %d rc %d, reference %d",
                  w->seed, w->step, fp.mode, rc, want_rc);
    if (rc) {
        w->oom[fp.mode]++;
        if (fp.mode == MEMD_BANKS_PER_BANK)
            ck_assert_uint_eq(memd_device_oom_bank(w->d), want_oom);
        else if (memd_device_region_split(w->d, MEMD_KIND_SRAM, 1))
            ck_assert_uint_lt(memd_device_oom_bank(w->d), w->banks);
        return;
    }
    ck_assert_int_eq(p.mode, fp.mode);
    w->placed[p.mode]++;
    for (uint32_t j = 0; j < (p.mode == MEMD_BANKS_PER_BANK ? rn : 1); j++) {
        uint64_t got = p.mode == MEMD_BANKS_PER_BANK ? p.addrs[j] : p.address;
        ck_assert_msg(got == want[j], "seed %#" PRIx64 " step %" PRIu64 ": mode %d bank %u at %#"
                      PRIx64 ", reference %#" PRIx64, w->seed, w->step, p.mode, rs[j], got, want[j]);
    }
    if (p.mode != MEMD_BANKS_ALL)
        for (uint32_t j = 0; j < p.nset; j++)
            ck_assert_uint_eq(p.set[j], rs[j]);
    ck_assert(p.mode != MEMD_BANKS_RANGE_LOCKSTEP || !p.addrs);
    ck_assert(sized == (p.sizes != NULL));
    uint64_t total = 0, most = 0;
    for (uint32_t j = 0; sized && j < p.nset; j++) {
        ck_assert_uint_eq(p.sizes[j], want_sz[j]);
        total += want_sz[j];
        most = want_sz[j] > most ? want_sz[j] : most;
    }
    if (sized) {
        ck_assert_uint_eq(memd_placement_bytes(&p), total);
        ck_assert_uint_eq(p.size_per_bank, most);
        w->sized++;
    }
    ref_reserve(w, &p, sz);
    if (w->nlive == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 256;
        w->lv = realloc(w->lv, w->cap * sizeof(*w->lv));
        ck_assert_ptr_nonnull(w->lv);
    }
    w->lv[w->nlive++].p = p;
    w->saw_bounds |= w->d->hints[MEMD_KIND_SRAM][1] != NULL;
    if (w->nlive > w->peak)
        w->peak = w->nlive;
}

static void step_free(world *w)
{
    size_t i = memd_test_below(&w->rng, w->nlive);
    memd_placement p = w->lv[i].p;
    w->lv[i] = w->lv[--w->nlive];
    ck_assert_int_eq(memd_device_release(w->d, &p), 0);
    /* A second release of the same placement finds nothing. */
    if (p.mode != MEMD_BANKS_ALL)
        ck_assert_int_eq(memd_device_release(w->d, &p), -ENOENT);
    ref_release(w, &p);
    memd_placement_fini(&p);
}

/* Blocks as [a, e) with bit 63 of e set for allocations (addresses here are small). */
static int collect_all(void *ctx, uint64_t addr, uint64_t size, bool allocated)
{
    ivs_push(ctx, addr, (addr + size) | ((uint64_t)allocated << 63));
    return 0;
}

/* Each bank's free blocks and used bytes are the reference's (where a range-lockstep
 * buffer lies over a piece, the union of both is used once). */
static void compare_all(world *w)
{
    ck_assert_int_eq(memd_device_check(w->d), 0);
    for (uint32_t b = 0; b < w->banks; b++) {
        ivs x = {0}, y = ref_free(w->piece, w->lock, &b, 1);
        ck_assert_int_eq(memd_device_bank_foreach(w->d, MEMD_KIND_SRAM, 1, b, collect_free, &x), 0);
        ck_assert_msg(x.n == y.n, "seed %#" PRIx64 " step %" PRIu64 ": bank %u has %zu free "
                      "blocks, reference %zu", w->seed, w->step, b, x.n, y.n);
        ck_assert(memcmp(x.v, y.v, x.n * sizeof(*x.v)) == 0);
        uint64_t free_bytes = 0;
        for (size_t i = 0; i < y.n; i++)
            free_bytes += y.v[i].e - y.v[i].a;
        memd_range_stats st;
        ck_assert_int_eq(memd_device_bank_stats(w->d, MEMD_KIND_SRAM, 1, b, &st), 0);
        ck_assert_uint_eq(st.allocated, st.total - free_bytes);
        ck_assert_uint_eq(st.free_blocks, y.n);
        free(x.v);
        free(y.v);
    }
    /* The region's and the group's statistics count every live buffer, whatever its mode
     * (one per buffer, not per bank). */
    memd_range_stats rs, gs;
    ck_assert_int_eq(memd_device_region_stats(w->d, MEMD_KIND_SRAM, 1, &rs), 0);
    ck_assert_int_eq(memd_device_group_stats(w->d, MEMD_KIND_SRAM, &gs), 0);
    ck_assert_msg(rs.allocations == w->nlive && gs.allocations == w->nlive,
                  "seed %#" PRIx64 " step %" PRIu64 ": %" PRIu64 "/%" PRIu64 " allocations "
                  "counted, %zu live", w->seed, w->step, rs.allocations, gs.allocations, w->nlive);
}

/* bounds: per-bank first-fit searches always start from their bounds (hint_walk 0),
 * which the region otherwise keeps only once its searches walk long: every free must
 * reach them, or a stale bound skips the first fit and the placement differs. */
static void run_mix(uint32_t banks, uint64_t steps, uint64_t seed, uint64_t size,
                    uint32_t lock_pct, uint32_t max_log, bool bounds)
{
    world w = {.banks = banks, .rng = seed, .seed = seed, .lock_pct = lock_pct,
               .max_log = max_log};
    w.d = make_sized(banks, size);
    if (bounds)
        w.d->hint_walk = 0;
    w.pol = memd_device_spec_of(w.d)->policy[MEMD_KIND_SRAM];
    for (uint32_t b = 0; b < banks; b++)
        ck_assert_int_eq(ref_range_create(16 * KiB, size, 32, &w.piece[b]), 0);
    ck_assert_int_eq(ref_range_create(16 * KiB, size, 32, &w.lock), 0);
    /* A lockstep-only prefix: the region is not split until the first subset request,
     * and its placements must be the reference's as well. */
    for (w.step = 0; w.step < steps; w.step++) {
        uint64_t r = memd_test_below(&w.rng, 100);
        /* Phases: fill up (70 % allocations), then drain (35 %). */
        uint64_t fill = (w.step / 2000) % 2 == 0 ? 70 : 35;
        if (r < fill || w.nlive == 0)
            step_alloc(&w);
        else
            step_free(&w);
        if (w.step % FULL_EVERY == 0)
            compare_all(&w);
    }
    compare_all(&w);
    /* The workload must exercise every mode, and both outcomes. */
    printf("# %u banks: placed all/range/per-bank/range-lockstep %" PRIu64 "/%" PRIu64 "/%"
           PRIu64 "/%" PRIu64 ", out of room %" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64
           ", %" PRIu64 " range-lockstep over other banks' pieces, %" PRIu64 " per bank with "
           "sizes, peak live %zu\n", banks, w.placed[0], w.placed[1], w.placed[2], w.placed[3],
           w.oom[0], w.oom[1], w.oom[2], w.oom[3], w.over, w.sized, w.peak);
    for (int m = 0; m < MEMD_BANKS_MODE_COUNT; m++)
        ck_assert_msg(w.placed[m] > steps / 40 && w.oom[m] > 0, "mode %d: %" PRIu64 " placed, %"
                      PRIu64 " out of room (peak live %zu)", m, w.placed[m], w.oom[m], w.peak);
    ck_assert(w.over > 0);
    ck_assert(w.sized > 0);
    ck_assert(!bounds || w.saw_bounds);
    size_t subsets = 0;
    for (size_t i = 0; i < w.nlive; i++)
        subsets += !memd_mode_lockstep(w.lv[i].p.mode);
    ck_assert(subsets == 0 || memd_device_region_split(w.d, MEMD_KIND_SRAM, 1));
    while (w.nlive)
        step_free(&w);
    for (uint32_t b = 0; b < banks; b++) {
        memd_range_stats st;
        ck_assert_int_eq(memd_device_bank_stats(w.d, MEMD_KIND_SRAM, 1, b, &st), 0);
        ck_assert_uint_eq(st.allocations, 0);
        ref_range_destroy(w.piece[b]);
    }
    ref_range_destroy(w.lock);
    free(w.lv);
    memd_device_destroy(w.d);
}

static void run(uint32_t banks, uint64_t steps, uint64_t seed)
{
    run_mix(banks, steps, seed, 240 * KiB, 34, 14, false);
}

START_TEST(random_mixed_modes)
{
    uint64_t seed = memd_test_seed(DEFAULT_SEED);
    fprintf(stdout, "# seed %#" PRIx64 "\n", seed);
    run(NBANKS, 20000, seed);
    run(3, 10000, seed ^ 1);
    /* Sets of more than 16 banks: range searches keep their cursors on the heap. */
    run(24, 5000, seed ^ 2);
}
END_TEST

/* Volume: hundreds of live buffers, mostly lockstep, in a split region of 16 banks (the
 * lockstep ones placed through the coverage map), small sizes so that pieces and
 * lockstep buffers interleave finely. */
START_TEST(random_volume_lockstep_in_split)
{
    uint64_t seed = memd_test_seed(DEFAULT_SEED) ^ 0x766f6c;
    fprintf(stdout, "# seed %#" PRIx64 "\n", seed);
    run_mix(16, 12000, seed, 256 * KiB, 60, 12, false);
    run_mix(5, 6000, seed ^ 1, 80 * KiB, 66, 9, false);
}
END_TEST

/* The same mixes with per-bank first-fit bounds always on (bank_hints.h): every
 * placement must still be the reference's. */
START_TEST(random_with_bounds)
{
    uint64_t seed = memd_test_seed(DEFAULT_SEED) ^ 0x626e64;
    fprintf(stdout, "# seed %#" PRIx64 "\n", seed);
    run_mix(NBANKS, 20000, seed, 240 * KiB, 34, 14, true);
    run_mix(16, 12000, seed ^ 1, 256 * KiB, 60, 12, true);
    run_mix(5, 6000, seed ^ 2, 80 * KiB, 66, 9, true);
}
END_TEST

/* ------------------------------------------------------------- fixed cases */

static memd_alloc_req sram(memd_class cls, uint64_t bytes)
{
    return (memd_alloc_req){.cls = cls, .scope = MEMD_SCOPE_SRAM, .bytes = bytes};
}

START_TEST(footprint_over_the_set)
{
    memd_device *d = make(8);
    uint32_t set[] = {1, 2, 5, 7};
    memd_alloc_req r = sram(MEMD_CLASS_CONSTANT, 10 * 1024);
    r.page_size = 1024;
    r.bank_set = set;
    r.nbank_set = 4;
    memd_placement p;
    ck_assert_int_eq(memd_device_footprint(d, &r, &p), 0);
    ck_assert_int_eq(p.mode, MEMD_BANKS_RANGE);
    ck_assert_uint_eq(p.banks, 4);
    ck_assert_uint_eq(p.size_per_bank, 3 * 1024); /* ceil(10 / 4) pages */
    r.per_bank = true;
    ck_assert_int_eq(memd_device_footprint(d, &r, &p), 0);
    ck_assert_int_eq(p.mode, MEMD_BANKS_PER_BANK);
    /* A set of every bank is plain lockstep. */
    uint32_t every[] = {0, 1, 2, 3, 4, 5, 6, 7};
    memd_alloc_req e = sram(MEMD_CLASS_CONSTANT, 64);
    e.bank_set = every;
    e.nbank_set = 8;
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), 0);
    ck_assert_int_eq(p.mode, MEMD_BANKS_ALL);
    /* Bad sets. */
    uint32_t unsorted[] = {2, 1}, dup[] = {1, 1}, out[] = {3, 8};
    char msg[256];
    const uint32_t *bad[] = {unsorted, dup, out};
    /* The message names the id at fault. */
    const char *why[] = {"strictly increasing, 1 comes after 2",
                         "strictly increasing, 1 comes after 1",
                         "bank set: no bank 8 (banks 0-7)"};
    for (int i = 0; i < 3; i++) {
        memd_alloc_req b = sram(MEMD_CLASS_CONSTANT, 64);
        b.bank_set = bad[i];
        b.nbank_set = 2;
        ck_assert_int_eq(memd_device_footprint(d, &b, &p), -EINVAL);
        memd_device_describe_error(d, &b, -EINVAL, msg, sizeof msg);
        ck_assert_msg(strstr(msg, why[i]), "%s", msg);
    }
    memd_alloc_req b = sram(MEMD_CLASS_CONSTANT, 64);
    b.bank_set = set;
    b.nbank_set = 4;
    b.banks = 3;
    ck_assert_int_eq(memd_device_footprint(d, &b, &p), -EINVAL);
    /* Per bank without a set has a piece in every bank: banks must be 0 or all of them
     * (it used to take all 8 pieces while saying banks 3). */
    memd_alloc_req pb = sram(MEMD_CLASS_CONSTANT, 64);
    pb.per_bank = true;
    pb.banks = 3;
    ck_assert_int_eq(memd_device_footprint(d, &pb, &p), -EINVAL);
    memd_device_describe_error(d, &pb, -EINVAL, msg, sizeof msg);
    ck_assert_msg(strstr(msg, "each of the 8 banks: banks 3 would leave the others unused"), "%s",
                  msg);
    pb.banks = 8;
    ck_assert_int_eq(memd_device_footprint(d, &pb, &p), 0);
    ck_assert_int_eq(p.mode, MEMD_BANKS_PER_BANK);
    ck_assert_uint_eq(p.nset, 8);
    memd_placement_fini(&p);
    memd_device_destroy(d);
}
END_TEST

/* A range lockstep buffer leaves the other banks' range usable; a lockstep buffer then
 * has to go around it; the bank that ran out is named. */
START_TEST(range_keeps_other_banks_usable)
{
    memd_device *d = make(4);
    uint32_t s01[] = {0, 1}, s23[] = {2, 3};
    memd_alloc_req r = sram(MEMD_CLASS_CONSTANT, 200 * KiB);
    r.bank_set = s01;
    r.nbank_set = 2;
    memd_placement a, b, c;
    ck_assert_int_eq(memd_device_alloc(d, &r, &a), 0);
    ck_assert_int_eq(a.mode, MEMD_BANKS_RANGE);
    ck_assert_uint_eq(a.address, 16 * KiB);
    r.bank_set = s23;
    ck_assert_int_eq(memd_device_alloc(d, &r, &b), 0);
    ck_assert_uint_eq(b.address, 16 * KiB); /* the same range, other banks */
    /* Lockstep: only 40 KiB are free in every bank. */
    memd_alloc_req l = sram(MEMD_CLASS_CONSTANT, 41 * KiB);
    ck_assert_int_eq(memd_device_alloc(d, &l, &c), -ENOMEM);
    ck_assert_uint_lt(memd_device_oom_bank(d), 4);
    char msg[256];
    memd_device_describe_error(d, &l, -ENOMEM, msg, sizeof msg);
    ck_assert_msg(strstr(msg, "bank ") && strstr(msg, "largest free block 40960"), "%s", msg);
    l.bytes = 40 * KiB;
    ck_assert_int_eq(memd_device_alloc(d, &l, &c), 0);
    ck_assert_uint_eq(c.address, 216 * KiB);
    uint64_t x;
    ck_assert_int_eq(memd_placement_bank_addr(&a, 1, &x), 0);
    ck_assert_uint_eq(x, 16 * KiB);
    ck_assert_int_eq(memd_placement_bank_addr(&a, 2, &x), -ENOENT);
    /* Freeing the subset buffers frees their banks only. */
    ck_assert_int_eq(memd_device_release(d, &a), 0);
    memd_range_stats st;
    ck_assert_int_eq(memd_device_bank_stats(d, MEMD_KIND_SRAM, 1, 0, &st), 0);
    ck_assert_uint_eq(st.allocated, 40 * KiB);
    ck_assert_int_eq(memd_device_bank_stats(d, MEMD_KIND_SRAM, 1, 3, &st), 0);
    ck_assert_uint_eq(st.allocated, 240 * KiB);
    ck_assert_int_eq(memd_device_release(d, &b), 0);
    ck_assert_int_eq(memd_device_release(d, &c), 0);
    memd_placement_fini(&a);
    memd_placement_fini(&b);
    memd_device_destroy(d);
}
END_TEST

/* Per bank: every bank of the set gets its own first fit; the OOM names the bank. */
START_TEST(per_bank_independent_addresses)
{
    memd_device *d = make(4);
    uint32_t s1[] = {1}, s02[] = {0, 1, 2};
    memd_alloc_req r = sram(MEMD_CLASS_CONSTANT, 100 * KiB);
    r.bank_set = s1;
    r.nbank_set = 1;
    memd_placement a, b, c;
    ck_assert_int_eq(memd_device_alloc(d, &r, &a), 0);
    r.bank_set = s02;
    r.nbank_set = 3;
    r.per_bank = true;
    r.bytes = 32 * KiB;
    ck_assert_int_eq(memd_device_alloc(d, &r, &b), 0);
    ck_assert_uint_eq(b.nset, 3);
    ck_assert_uint_eq(b.addrs[0], 16 * KiB);
    ck_assert_uint_eq(b.addrs[1], 116 * KiB);
    ck_assert_uint_eq(b.addrs[2], 16 * KiB);
    /* Bank 1 has 108 KiB left, banks 0 and 2 have 208 KiB. */
    r.bytes = 150 * KiB;
    ck_assert_int_eq(memd_device_alloc(d, &r, &c), -ENOMEM);
    ck_assert_uint_eq(memd_device_oom_bank(d), 1);
    char msg[256];
    memd_device_describe_error(d, &r, -ENOMEM, msg, sizeof msg);
    ck_assert_msg(strstr(msg, "in bank 1 ") != NULL, "%s", msg);
    /* Nothing stayed behind in banks 0 (rolled back). */
    memd_range_stats st;
    memd_device_bank_stats(d, MEMD_KIND_SRAM, 1, 0, &st);
    ck_assert_uint_eq(st.allocated, 32 * KiB);
    /* Restore into a fresh device: the same placements are accepted, overlaps are not. */
    memd_device *e = make(4);
    ck_assert_int_eq(memd_device_alloc_at(e, &a), 0);
    ck_assert_int_eq(memd_device_alloc_at(e, &b), 0);
    ck_assert_int_eq(memd_device_alloc_at(e, &b), -EBUSY);
    memd_placement bad;
    ck_assert_int_eq(memd_placement_copy(&bad, &b), 0);
    bad.set[1] = 0; /* not increasing */
    ck_assert_int_eq(memd_device_alloc_at(e, &bad), -EINVAL);
    memd_placement_fini(&bad);
    for (uint32_t i = 0; i < 4; i++) {
        memd_range_stats x, y;
        memd_device_bank_stats(d, MEMD_KIND_SRAM, 1, i, &x);
        memd_device_bank_stats(e, MEMD_KIND_SRAM, 1, i, &y);
        ck_assert_uint_eq(x.allocated, y.allocated);
    }
    ck_assert_int_eq(memd_device_release(d, &b), 0);
    ck_assert_int_eq(memd_device_release(d, &a), 0);
    memd_placement_fini(&a);
    memd_placement_fini(&b);
    memd_device_destroy(d);
    memd_device_destroy(e);
}
END_TEST

/* tt-metal's PerCoreAllocationTest.DifferentSizesPerCore: 1, 2, 3 and 4 KiB on cores
 * 0..3, each core at its own address; its DeallocationFreesPerCoreSpace: the space comes
 * back. Put again where it was (the state store's reload), the pieces keep their sizes. */
START_TEST(per_core_shard_sizes)
{
    memd_device *d = make(NBANKS);
    const uint32_t set[] = {0, 1, 2, 3};
    const uint64_t sizes[] = {1 * KiB, 2 * KiB, 3 * KiB, 4 * KiB};
    memd_alloc_req req = {.cls = MEMD_CLASS_CONSTANT, .scope = MEMD_SCOPE_SRAM, .bank_set = set,
                          .nbank_set = 4, .per_bank = true, .sizes = sizes};
    memd_placement hog, p;
    /* A 2 KiB piece in bank 1 first: bank 1's piece goes above it, the others at the base. */
    memd_alloc_req one = {.cls = MEMD_CLASS_CONSTANT, .scope = MEMD_SCOPE_SRAM, .bytes = 2 * KiB,
                          .bank_set = &set[1], .nbank_set = 1, .per_bank = true};
    ck_assert_int_eq(memd_device_alloc(d, &one, &hog), 0);
    ck_assert_int_eq(memd_device_alloc(d, &req, &p), 0);
    ck_assert_uint_eq(p.size_per_bank, 4 * KiB);
    ck_assert_uint_eq(memd_placement_bytes(&p), 10 * KiB);
    for (uint32_t i = 0; i < 4; i++) {
        ck_assert_uint_eq(p.sizes[i], sizes[i]);
        ck_assert_uint_eq(p.addrs[i], 16 * KiB + (i == 1 ? 2 * KiB : 0));
        memd_range_stats st;
        ck_assert_int_eq(memd_device_bank_stats(d, MEMD_KIND_SRAM, 1, set[i], &st), 0);
        ck_assert_uint_eq(st.allocated, sizes[i] + (i == 1 ? 2 * KiB : 0));
    }
    ck_assert_int_eq(memd_device_check(d), 0);
    memd_placement again;
    ck_assert_int_eq(memd_placement_copy(&again, &p), 0);
    ck_assert_int_eq(memd_device_release(d, &p), 0);
    for (uint32_t i = 0; i < 4; i++) {
        memd_range_stats st;
        ck_assert_int_eq(memd_device_bank_stats(d, MEMD_KIND_SRAM, 1, set[i], &st), 0);
        ck_assert_uint_eq(st.allocated, i == 1 ? 2 * KiB : 0);
    }
    ck_assert_int_eq(memd_device_alloc_at(d, &again), 0);
    memd_range_stats st;
    ck_assert_int_eq(memd_device_bank_stats(d, MEMD_KIND_SRAM, 1, 3, &st), 0);
    ck_assert_uint_eq(st.allocated, 4 * KiB);
    ck_assert_int_eq(memd_device_check(d), 0);
    /* Sizes only per bank over a set, each non-zero, without bytes or a page size. */
    memd_placement fp;
    memd_alloc_req bad = req;
    bad.per_bank = false;
    ck_assert_int_eq(memd_device_footprint(d, &bad, &fp), -EINVAL);
    bad = req;
    bad.bytes = 4 * KiB;
    ck_assert_int_eq(memd_device_footprint(d, &bad, &fp), -EINVAL);
    bad = req;
    bad.bank_set = NULL;
    bad.nbank_set = 0;
    ck_assert_int_eq(memd_device_footprint(d, &bad, &fp), -EINVAL);
    const uint64_t zero[] = {1 * KiB, 0, 1 * KiB, 1 * KiB};
    bad = req;
    bad.sizes = zero;
    ck_assert_int_eq(memd_device_footprint(d, &bad, &fp), -EINVAL);
    const uint64_t huge[] = {1 * KiB, 241 * KiB, 1 * KiB, 1 * KiB};
    bad.sizes = huge;
    ck_assert_int_eq(memd_device_footprint(d, &bad, &fp), -E2BIG);
    ck_assert_int_eq(memd_device_release(d, &again), 0);
    ck_assert_int_eq(memd_device_release(d, &hog), 0);
    memd_placement_fini(&again);
    memd_placement_fini(&p);
    memd_placement_fini(&hog);
    memd_device_destroy(d);
}
END_TEST

/* memd_device_walks counts what the searches with lockstep buffers in their way pass:
 * the merges of per-bank searches and the leapfrog questions of range searches. */
START_TEST(walks_count_searches)
{
    memd_device *d = make(4);
    uint32_t s01[] = {0, 1}, s02[] = {0, 2}, s13[] = {1, 3};
    memd_device_walks w;
    memd_placement a, b, c, e;
    memd_alloc_req r = sram(MEMD_CLASS_CONSTANT, 100 * KiB);
    r.bank_set = s01;
    r.nbank_set = 2;
    ck_assert_int_eq(memd_device_alloc(d, &r, &a), 0); /* [16K, 116K) in banks 0, 1 */
    memd_device_walks_get(d, &w);
    /* No lockstep buffer: the two banks are asked once each and agree. */
    ck_assert_uint_eq(w.ranges, 1);
    ck_assert_uint_eq(w.range_questions, 2);
    ck_assert_uint_eq(w.merges, 0);
    memd_alloc_req l = sram(MEMD_CLASS_CONSTANT, 20 * KiB);
    ck_assert_int_eq(memd_device_alloc(d, &l, &b), 0);
    ck_assert_uint_eq(b.address, 116 * KiB); /* lockstep: [116K, 136K) */
    r.bank_set = s02;
    r.per_bank = true;
    r.bytes = 10 * KiB;
    ck_assert_int_eq(memd_device_alloc(d, &r, &c), 0);
    ck_assert_uint_eq(c.addrs[0], 136 * KiB);
    ck_assert_uint_eq(c.addrs[1], 16 * KiB);
    memd_device_walks_get(d, &w);
    ck_assert_uint_eq(w.merges, 2); /* one per bank of the set */
    ck_assert_uint_ge(w.merge_blocks, 2);
    ck_assert_uint_le(w.merge_blocks, 8);
    ck_assert_uint_eq(w.ranges, 1);
    /* Range over banks 1, 3 and the lockstep map: bank 1 moves the candidate to 116K,
     * bank 3 agrees, the lockstep map moves it to 136K, banks 1 and 3 agree: 5. */
    r.bank_set = s13;
    r.per_bank = false;
    ck_assert_int_eq(memd_device_alloc(d, &r, &e), 0);
    ck_assert_uint_eq(e.address, 136 * KiB);
    memd_device_walks_get(d, &w);
    ck_assert_uint_eq(w.ranges, 2);
    ck_assert_uint_eq(w.range_questions, 7);
    ck_assert_uint_eq(w.merges, 2);
    memd_placement *all[] = {&a, &b, &c, &e};
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(memd_device_release(d, all[i]), 0);
        memd_placement_fini(all[i]);
    }
    memd_device_destroy(d);
}
END_TEST

/* Lockstep buffers placed before a split keep their addresses, and later lockstep
 * placements match an unsplit device's while no subset buffer is in the way. */
START_TEST(split_keeps_lockstep)
{
    memd_device *d = make(6), *e = make(6);
    memd_placement a, b;
    memd_alloc_req l = sram(MEMD_CLASS_CODE, 10 * KiB);
    ck_assert_int_eq(memd_device_alloc(d, &l, &a), 0);
    ck_assert_int_eq(memd_device_alloc(e, &l, &b), 0);
    ck_assert_uint_eq(a.address, b.address);
    uint32_t s[] = {4};
    memd_alloc_req r = sram(MEMD_CLASS_CONSTANT, 1 * KiB);
    r.bank_set = s;
    r.nbank_set = 1;
    memd_placement x;
    ck_assert_int_eq(memd_device_alloc(d, &r, &x), 0);
    ck_assert(memd_device_region_split(d, MEMD_KIND_SRAM, 1));
    ck_assert(!memd_device_region_split(e, MEMD_KIND_SRAM, 1));
    for (int i = 0; i < 20; i++) {
        l.cls = i % 2 ? MEMD_CLASS_CODE : MEMD_CLASS_INTERNAL;
        l.bytes = (uint64_t)(i + 1) * 512;
        ck_assert_int_eq(memd_device_alloc(d, &l, &a), 0);
        ck_assert_int_eq(memd_device_alloc(e, &l, &b), 0);
        if (l.cls == MEMD_CLASS_CODE) /* top-down: nowhere near the bottom-up subset piece */
            ck_assert_uint_eq(a.address, b.address);
        else
            ck_assert_uint_ge(a.address, 17 * KiB);
    }
    /* The lockstep (ALL) free path of a split region. */
    ck_assert_int_eq(memd_device_free(d, MEMD_KIND_SRAM, 1, a.address), 0);
    ck_assert_int_eq(memd_device_free(d, MEMD_KIND_SRAM, 1, a.address), -ENOENT);
    ck_assert_int_eq(memd_device_release(d, &x), 0);
    memd_placement_fini(&x);
    memd_device_destroy(d);
    memd_device_destroy(e);
}
END_TEST

/* A split region whose bank-set buffers are gone places lockstep buffers as a device
 * that never split does (same seeded requests, same addresses, step by step), and
 * un-splits after exactly banks + lockstep buffers lockstep operations; bank-set
 * buffers split it again. The lockstep buffers placed while it was split are copied
 * into the other device with memd_device_alloc_at, so both lockstep maps stay equal. */
START_TEST(unsplit_after_last_piece)
{
    enum { BANKS = 6, MAXLIVE = 400 };
    memd_device *d = make(BANKS), *e = make(BANKS);
    uint64_t rng = memd_test_seed(DEFAULT_SEED) ^ 0x756e73706c6974ull;
    memd_placement ld[MAXLIVE], le[MAXLIVE];
    size_t n = 0;
    /* One lockstep step on both devices; false when it had no room. */
#define LOCK_STEP(both)                                                                            \
    do {                                                                                           \
        if (n && (n == MAXLIVE || memd_test_below(&rng, 100) < 40)) {                              \
            size_t k = memd_test_below(&rng, n);                                                   \
            ck_assert_int_eq(memd_device_release(d, &ld[k]), 0);                                   \
            ck_assert_int_eq(memd_device_release(e, &le[k]), 0);                                   \
            ld[k] = ld[--n];                                                                       \
            le[k] = le[n];                                                                         \
            break;                                                                                 \
        }                                                                                          \
        memd_alloc_req q =                                                                         \
            sram((memd_class)memd_test_below(&rng, 4), 1 + memd_test_below(&rng, 3000));           \
        if (memd_test_below(&rng, 4) == 0)                                                         \
            q.alignment = 32u << memd_test_below(&rng, 5);                                         \
        int r1 = memd_device_alloc(d, &q, &ld[n]);                                                 \
        int r2 = (both) ? memd_device_alloc(e, &q, &le[n]) : r1;                                   \
        ck_assert_int_eq(r1, r2);                                                                  \
        if (r1)                                                                                    \
            break;                                                                                 \
        if (both) {                                                                                \
            ck_assert_uint_eq(ld[n].address, le[n].address);                                       \
        } else {                                                                                   \
            ck_assert_int_eq(memd_device_alloc_at(e, &ld[n]), 0);                                  \
            le[n] = ld[n];                                                                         \
        }                                                                                          \
        n++;                                                                                       \
    } while (0)
    for (int i = 0; i < 300; i++)
        LOCK_STEP(true);
    ck_assert(!memd_device_region_split(d, MEMD_KIND_SRAM, 1));
    for (int round = 0; round < 3; round++) {
        /* Bank-set buffers split d; lockstep buffers placed meanwhile are copied to e. */
        uint32_t s01[] = {0, 1}, s3[] = {3, 4};
        memd_alloc_req r = sram(MEMD_CLASS_CONSTANT, 700);
        r.bank_set = s01;
        r.nbank_set = 2;
        memd_placement a, b;
        ck_assert_int_eq(memd_device_alloc(d, &r, &a), 0);
        r.bank_set = s3;
        r.per_bank = true;
        r.cls = MEMD_CLASS_CODE;
        ck_assert_int_eq(memd_device_alloc(d, &r, &b), 0);
        ck_assert(memd_device_region_split(d, MEMD_KIND_SRAM, 1));
        /* Round 0: no lockstep request while they are there (no coverage is built, and
         * lockstep buffers then go straight to the lockstep map); then some. */
        for (int i = 0; round > 0 && i < 100; i++)
            LOCK_STEP(false);
        ck_assert_int_eq(memd_device_release(d, &a), 0);
        ck_assert_int_eq(memd_device_release(d, &b), 0);
        memd_placement_fini(&a);
        memd_placement_fini(&b);
        /* From here on both devices answer the same; d un-splits after exactly
         * BANKS + n lockstep operations (placements and releases alike). */
        memd_range_stats st;
        ck_assert_int_eq(memd_device_region_stats(d, MEMD_KIND_SRAM, 1, &st), 0);
        ck_assert_uint_eq(st.allocations, n);
        uint64_t budget = BANKS + n, ops = 0;
        ck_assert(memd_device_region_split(d, MEMD_KIND_SRAM, 1));
        while (memd_device_region_split(d, MEMD_KIND_SRAM, 1)) {
            size_t before = n;
            LOCK_STEP(true);
            ops += n != before; /* a placement or a release, not a refusal */
            ck_assert_uint_le(ops, budget);
            if (ops % 16 == 0)
                ck_assert_int_eq(memd_device_check(d), 0);
        }
        ck_assert_uint_eq(ops, budget);
        ck_assert_int_eq(memd_device_check(d), 0);
        for (int i = 0; i < 200; i++)
            LOCK_STEP(true);
        ck_assert(!memd_device_region_split(d, MEMD_KIND_SRAM, 1));
        for (uint32_t i = 0; i < BANKS; i++) {
            memd_range_stats x, y;
            ck_assert_int_eq(memd_device_bank_stats(d, MEMD_KIND_SRAM, 1, i, &x), 0);
            ck_assert_int_eq(memd_device_bank_stats(e, MEMD_KIND_SRAM, 1, i, &y), 0);
            ck_assert(memcmp(&x, &y, sizeof x) == 0);
        }
    }
#undef LOCK_STEP
    ck_assert_int_eq(memd_device_check(d), 0);
    memd_device_destroy(d);
    memd_device_destroy(e);
}
END_TEST

/* ------------------------------------------------------------- allocation failures */

/* Everything a failed operation must leave as it was: every bank's blocks, the lockstep
 * map's blocks and the region's buffer count. */
typedef struct snap {
    ivs bank[8], lock;
    uint64_t allocations;
} snap;

static void snap_take(memd_device *d, uint32_t banks, snap *s)
{
    memset(s, 0, sizeof(*s));
    for (uint32_t b = 0; b < banks; b++)
        ck_assert_int_eq(memd_device_bank_foreach(d, MEMD_KIND_SRAM, 1, b, collect_all, &s->bank[b]), 0);
    ck_assert_int_eq(memd_range_foreach(memd_device_region_range(d, MEMD_KIND_SRAM, 1), collect_all,
                                        &s->lock), 0);
    memd_range_stats st;
    ck_assert_int_eq(memd_device_region_stats(d, MEMD_KIND_SRAM, 1, &st), 0);
    s->allocations = st.allocations;
}

static bool ivs_same(const ivs *a, const ivs *b)
{
    return a->n == b->n && memcmp(a->v, b->v, a->n * sizeof(*a->v)) == 0;
}

static void snap_same_and_drop(snap *a, snap *b, uint32_t banks)
{
    ck_assert(ivs_same(&a->lock, &b->lock));
    ck_assert_uint_eq(a->allocations, b->allocations);
    free(a->lock.v);
    free(b->lock.v);
    for (uint32_t i = 0; i < banks; i++) {
        ck_assert_msg(ivs_same(&a->bank[i], &b->bank[i]), "bank %u changed", i);
        free(a->bank[i].v);
        free(b->bank[i].v);
    }
}

/* Every operation is first tried with allocations failing after a random few
 * (tests/common/fail_alloc.c): an allocation across several banks refused for memory
 * (-ENOBUFS) must leave every bank, the lockstep map and the coverage as they were (all
 * or nothing), and succeed once memory is back; a release always succeeds (issue 27). */
/* Per-bank first-fit bounds (bank_hints.h) follow the walks: a region makes them once
 * its merged per-bank searches pass many blocks, and drops them once those pass few
 * again. Bank 0 takes the lockstep map's one-unit holes one by one, so each first fit
 * walks past all the holes it took before (bank 0 and the lockstep map disagree on
 * every one); every placement is checked. */
START_TEST(bounds_follow_walks)
{
    enum { N = 600 };
    memd_device *d = make(2);
    memd_placement *lk = calloc(2 * N, sizeof(*lk)), *pc = calloc(N + 1, sizeof(*pc)), far;
    ck_assert_ptr_nonnull(lk);
    ck_assert_ptr_nonnull(pc);
    memd_alloc_req r = sram(MEMD_CLASS_CONSTANT, 32); /* bottom-up first fit */
    for (uint32_t i = 0; i < 2 * N; i++) {
        ck_assert_int_eq(memd_device_alloc(d, &r, &lk[i]), 0);
        ck_assert_uint_eq(lk[i].address, 16 * KiB + 32 * i);
    }
    uint32_t s0[] = {0}, s1[] = {1};
    memd_alloc_req t = sram(MEMD_CLASS_CODE, 32); /* top-down: out of the way */
    t.bank_set = s1;
    t.nbank_set = 1;
    ck_assert_int_eq(memd_device_alloc(d, &t, &far), 0); /* splits the region */
    for (uint32_t i = 0; i < 2 * N; i += 2) {
        ck_assert_int_eq(memd_device_release(d, &lk[i]), 0);
        memd_placement_fini(&lk[i]);
    }
    r.bank_set = s0;
    r.nbank_set = 1;
    r.per_bank = true;
    for (uint32_t j = 0; j <= N; j++) {
        ck_assert_int_eq(memd_device_alloc(d, &r, &pc[j]), 0);
        ck_assert_uint_eq(pc[j].addrs[0], 16 * KiB + 64 * j); /* the next hole, then the end */
    }
    ck_assert_ptr_nonnull(d->hints[MEMD_KIND_SRAM][1]);
    ck_assert_int_eq(memd_device_check(d), 0);
    /* Short walks again: one lockstep buffer stays (searches still merge two lists). */
    for (uint32_t j = 0; j <= N; j++) {
        ck_assert_int_eq(memd_device_release(d, &pc[j]), 0);
        memd_placement_fini(&pc[j]);
    }
    for (uint32_t i = 1; i + 2 < 2 * N; i += 2) {
        ck_assert_int_eq(memd_device_release(d, &lk[i]), 0);
        memd_placement_fini(&lk[i]);
    }
    for (uint32_t j = 0; j < 1000 && d->hints[MEMD_KIND_SRAM][1]; j++) {
        ck_assert_int_eq(memd_device_alloc(d, &r, &pc[0]), 0);
        ck_assert_uint_eq(pc[0].addrs[0], 16 * KiB);
        ck_assert_int_eq(memd_device_release(d, &pc[0]), 0);
        memd_placement_fini(&pc[0]);
    }
    ck_assert_ptr_null(d->hints[MEMD_KIND_SRAM][1]);
    ck_assert_int_eq(memd_device_check(d), 0);
    ck_assert_int_eq(memd_device_release(d, &lk[2 * N - 1]), 0);
    ck_assert_int_eq(memd_device_release(d, &far), 0);
    memd_placement_fini(&lk[2 * N - 1]);
    memd_placement_fini(&far);
    free(lk);
    free(pc);
    memd_device_destroy(d);
}
END_TEST

START_TEST(nomem_changes_nothing)
{
    enum { BANKS = 8, MAXLIVE = 1500 };
    memd_device *d = make(BANKS);
    uint64_t rng = memd_test_seed(DEFAULT_SEED) ^ 0x6e6f6d656dull;
    memd_placement *lv = calloc(MAXLIVE, sizeof(*lv));
    ck_assert_ptr_nonnull(lv);
    size_t n = 0;
    uint64_t failed[2] = {0, 0}, done[2] = {0, 0};
    for (uint64_t step = 0; step < 12000; step++) {
        uint64_t fill = (step / 1000) % 2 == 0 ? 75 : 30;
        bool alloc = n == 0 || (n < MAXLIVE && memd_test_below(&rng, 100) < fill);
        uint32_t set[BANKS], nset = 0;
        memd_alloc_req req = {.cls = (memd_class)memd_test_below(&rng, 4),
                              .scope = MEMD_SCOPE_SRAM,
                              .bytes =
                                  1 + memd_test_below(&rng, 1u << (5 + memd_test_below(&rng, 6)))};
        uint32_t mode = (uint32_t)memd_test_below(&rng, 3);
        if (mode) { /* a run of banks, not all of them */
            uint32_t a = (uint32_t)memd_test_below(&rng, BANKS),
                     len = 1 + (uint32_t)memd_test_below(&rng, BANKS - a);
            if (len == BANKS)
                len--;
            for (uint32_t i = a; i < a + len; i++)
                set[nset++] = i;
            req.bank_set = set;
            req.nbank_set = nset;
            req.per_bank = mode == 2;
        }
        size_t k = alloc ? 0 : memd_test_below(&rng, n);
        snap before, after;
        snap_take(d, BANKS, &before);
        unsigned long f0 = memd_test_failed_allocs();
        memd_placement p;
        /* Fail from the first allocation on, or after a few (past the placement's own
         * arrays, into the allocators' and the coverage's pools). */
        memd_test_fail_allocs_after((long)memd_test_below(&rng, 4));
        int rc = alloc ? memd_device_alloc(d, &req, &p) : memd_device_release(d, &lv[k]);
        memd_test_fail_allocs_after(-1);
        bool injected = memd_test_failed_allocs() != f0;
        if (!alloc)
            ck_assert_int_eq(rc, 0);
        if (rc) {
            ck_assert(rc == -ENOMEM || (rc == -ENOBUFS && injected)); /* no room, or memory */
            snap_take(d, BANKS, &after);
            snap_same_and_drop(&before, &after, BANKS);
            ck_assert_int_eq(memd_device_check(d), 0);
            if (!injected) /* no room: nothing to retry */
                continue;
            failed[alloc]++;
            rc = alloc ? memd_device_alloc(d, &req, &p) : memd_device_release(d, &lv[k]);
            if (alloc && rc == -ENOMEM)
                continue;
            ck_assert_int_eq(rc, 0);
        } else {
            for (uint32_t i = 0; i < BANKS; i++)
                free(before.bank[i].v);
            free(before.lock.v);
        }
        done[alloc]++;
        if (alloc) {
            lv[n++] = p;
        } else {
            memd_placement_fini(&lv[k]);
            lv[k] = lv[--n];
        }
        if (step % 200 == 0)
            ck_assert_int_eq(memd_device_check(d), 0);
    }
    printf("# allocations %" PRIu64 " (%" PRIu64 " refused for memory first), releases %" PRIu64
           "\n", done[1], failed[1], done[0]);
    ck_assert(failed[1] > 0);
    ck_assert(done[0] > 0);
    while (n)
        memd_placement_fini(&lv[--n]);
    free(lv);
    memd_device_destroy(d);
}
END_TEST

/* A release needs no memory (issue 27: bank-set frees under memory pressure left pieces
 * behind): bank 1 is fragmented one piece at a time (32-byte pieces 64-aligned: one more
 * free block each, so its free-block tree grows), and after every piece a buffer over
 * banks 0 and 1 is released with every allocation failing: it must go from both banks,
 * and is put back once memory is back. */
START_TEST(release_needs_no_memory)
{
    memd_device *d = make(2);
    uint32_t both[] = {0, 1}, one[] = {1};
    memd_alloc_req x = sram(MEMD_CLASS_CONSTANT, 64);
    x.bank_set = both;
    x.nbank_set = 2;
    x.per_bank = true;
    memd_placement px, piece;
    ck_assert_int_eq(memd_device_alloc(d, &x, &px), 0);
    memd_alloc_req frag = sram(MEMD_CLASS_CONSTANT, 32);
    frag.bank_set = one;
    frag.nbank_set = 1;
    frag.alignment = 64;
    memd_range_stats st;
    for (int i = 0; i < 3000; i++) {
        ck_assert_int_eq(memd_device_alloc(d, &frag, &piece), 0);
        memd_placement_fini(&piece);
        memd_test_fail_allocs_after(0);
        int rc = memd_device_release(d, &px);
        memd_test_fail_allocs_after(-1);
        ck_assert_int_eq(rc, 0);
        ck_assert_int_eq(memd_device_bank_stats(d, MEMD_KIND_SRAM, 1, 0, &st), 0);
        ck_assert_uint_eq(st.allocated, 0);
        ck_assert_int_eq(memd_device_bank_stats(d, MEMD_KIND_SRAM, 1, 1, &st), 0);
        ck_assert_uint_eq(st.allocations, (uint64_t)i + 1);
        ck_assert_int_eq(memd_device_alloc_at(d, &px), 0);
        if (i % 500 == 0)
            ck_assert_int_eq(memd_device_check(d), 0);
    }
    ck_assert_int_eq(memd_device_check(d), 0);
    ck_assert_int_eq(memd_device_release(d, &px), 0);
    ck_assert_int_eq(memd_device_release(d, &px), -ENOENT);
    memd_placement_fini(&px);
    memd_device_destroy(d);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("banks");
    memd_test_tcase(s, "fixed", 0, NULL, NULL,
                    (const TTest *const[]){footprint_over_the_set, range_keeps_other_banks_usable,
                                           per_bank_independent_addresses, per_core_shard_sizes,
                                           split_keeps_lockstep,
                                           walks_count_searches, unsplit_after_last_piece,
                                           bounds_follow_walks, NULL});
    memd_test_tcase(s, "random", 600, NULL, NULL,
                    (const TTest *const[]){random_mixed_modes, random_volume_lockstep_in_split,
                                           random_with_bounds, nomem_changes_nothing,
                                           release_needs_no_memory, NULL});
    return s;
}

/* Planner engine: lower bound, validator, input checks, planner validity on seeded
 * random problems (pins, alignments, empty buffers), determinism, exactness on
 * perfectly packable problems, and both greedy placer modes. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "plan.h"
#include "plan_bound_check.h"
#include "plan_internal.h"
#include "test_clock.h"
#include "test_rand.h"

#define B(lo, up, sz) {.lower = (lo), .upper = (up), .size = (sz)}

/* ---- lower bound ---- */

static uint64_t lb_of(const memd_plan_buffer *b, size_t n)
{
    uint64_t lb = 12345;
    ck_assert_int_eq(memd_plan_lower_bound(b, n, &lb), 0);
    return lb;
}

START_TEST(lb_handmade)
{
    ck_assert_uint_eq(lb_of(NULL, 0), 0);
    memd_plan_buffer one[] = {B(0, 10, 5)};
    ck_assert_uint_eq(lb_of(one, 1), 5);
    /* Half-open: [0,5) and [5,10) never live together. */
    memd_plan_buffer touch[] = {B(0, 5, 10), B(5, 10, 20)};
    ck_assert_uint_eq(lb_of(touch, 2), 20);
    memd_plan_buffer over[] = {B(0, 5, 10), B(4, 10, 20)};
    ck_assert_uint_eq(lb_of(over, 2), 30);
    /* t=2: 1+2+4 = 7; t=3: 1+4+8 = 13; t=4: 1+8 = 9. */
    memd_plan_buffer nest[] = {B(0, 10, 1), B(2, 3, 2), B(2, 4, 4), B(3, 5, 8)};
    ck_assert_uint_eq(lb_of(nest, 4), 13);
    /* Empty buffers add nothing. */
    memd_plan_buffer empty[] = {B(0, 10, 0), B(0, 10, 7), B(3, 4, 0)};
    ck_assert_uint_eq(lb_of(empty, 3), 7);
    /* Input order does not matter. */
    memd_plan_buffer rev[] = {B(3, 5, 8), B(2, 4, 4), B(2, 3, 2), B(0, 10, 1)};
    ck_assert_uint_eq(lb_of(rev, 4), 13);
}
END_TEST

START_TEST(lb_errors)
{
    uint64_t lb;
    memd_plan_buffer bad[] = {B(0, 10, 1), B(5, 5, 1)};
    ck_assert_int_eq(memd_plan_lower_bound(bad, 2, &lb), -EINVAL);
    memd_plan_buffer inv[] = {B(6, 5, 1)};
    ck_assert_int_eq(memd_plan_lower_bound(inv, 1, &lb), -EINVAL);
    memd_plan_buffer big[] = {B(0, 10, UINT64_MAX / 2 + 1), B(1, 2, UINT64_MAX / 2 + 1)};
    ck_assert_int_eq(memd_plan_lower_bound(big, 2, &lb), -EOVERFLOW);
    /* Not live together: no overflow. */
    memd_plan_buffer seq[] = {B(0, 1, UINT64_MAX / 2 + 1), B(1, 2, UINT64_MAX / 2 + 1)};
    ck_assert_int_eq(memd_plan_lower_bound(seq, 2, &lb), 0);
    ck_assert_uint_eq(lb, UINT64_MAX / 2 + 1);
}
END_TEST

/* Brute force: the load at every integer time step. */
static uint64_t brute_lb(const memd_plan_buffer *b, size_t n, uint64_t tmax)
{
    uint64_t best = 0;
    for (uint64_t t = 0; t < tmax; t++) {
        uint64_t s = 0;
        for (size_t i = 0; i < n; i++)
            if (b[i].lower <= t && t < b[i].upper)
                s += b[i].size;
        if (s > best)
            best = s;
    }
    return best;
}

/* Brute force: does any pair overlap in time and space? */
static bool brute_overlap(const memd_plan_buffer *b, size_t n, const uint64_t *off, size_t i,
                          size_t j)
{
    (void)n;
    return b[i].size && b[j].size && b[i].lower < b[j].upper && b[j].lower < b[i].upper &&
           off[i] < off[j] + b[j].size && off[j] < off[i] + b[i].size;
}

static bool brute_any_overlap(const memd_plan_buffer *b, size_t n, const uint64_t *off)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (brute_overlap(b, n, off, i, j))
                return true;
    return false;
}

/* ---- validator ---- */

START_TEST(validate_names_pair)
{
    memd_plan_buffer b[] = {B(0, 10, 10), B(0, 10, 10), B(5, 8, 4)};
    uint64_t off[] = {0, 10, 15};
    memd_plan_violation v;
    uint64_t arena = 0;
    ck_assert_int_eq(memd_plan_validate(b, 3, off, &v, &arena), 1);
    ck_assert_int_eq(v.issue, MEMD_PLAN_OVERLAP);
    ck_assert_uint_eq(v.a, 2);
    ck_assert_uint_eq(v.b, 1);
    /* Moved up to 20 it is fine; arena 24. */
    off[2] = 20;
    ck_assert_int_eq(memd_plan_validate(b, 3, off, &v, &arena), 0);
    ck_assert_int_eq(v.issue, MEMD_PLAN_VALID);
    ck_assert_uint_eq(arena, 24);
    /* Overlap with the buffer above (successor side). */
    memd_plan_buffer c[] = {B(0, 10, 8), B(2, 5, 5)};
    uint64_t coff[] = {8, 4};
    ck_assert_int_eq(memd_plan_validate(c, 2, coff, &v, NULL), 1);
    ck_assert_int_eq(v.issue, MEMD_PLAN_OVERLAP);
    ck_assert_uint_eq(v.a, 1);
    ck_assert_uint_eq(v.b, 0);
    /* Same offset, same start. */
    memd_plan_buffer d[] = {B(3, 4, 1), B(3, 9, 1)};
    uint64_t doff[] = {7, 7};
    ck_assert_int_eq(memd_plan_validate(d, 2, doff, &v, NULL), 1);
    ck_assert_uint_eq(v.a, 1);
    ck_assert_uint_eq(v.b, 0);
    /* The first overlap in time is named, not the first in index order. */
    memd_plan_buffer e[] = {B(50, 60, 4), B(50, 60, 4), B(0, 10, 4), B(5, 10, 4)};
    uint64_t eoff[] = {0, 2, 100, 101};
    ck_assert_int_eq(memd_plan_validate(e, 4, eoff, &v, NULL), 1);
    ck_assert_uint_eq(v.a, 3);
    ck_assert_uint_eq(v.b, 2);
}
END_TEST

START_TEST(validate_touching_is_valid)
{
    /* Touching in time (half-open) and touching in space are both fine. */
    memd_plan_buffer b[] = {B(0, 5, 10), B(5, 10, 10), B(0, 10, 6), B(2, 3, 0)};
    uint64_t off[] = {0, 0, 10, 3};
    uint64_t arena;
    memd_plan_violation v;
    ck_assert_int_eq(memd_plan_validate(b, 4, off, &v, &arena), 0);
    ck_assert_uint_eq(arena, 16);
}
END_TEST

START_TEST(validate_per_buffer_issues)
{
    memd_plan_violation v;
    memd_plan_buffer al[] = {B(0, 5, 10), {.lower = 0, .upper = 5, .size = 8, .align = 16}};
    uint64_t aoff[] = {0, 24};
    ck_assert_int_eq(memd_plan_validate(al, 2, aoff, &v, NULL), 1);
    ck_assert_int_eq(v.issue, MEMD_PLAN_MISALIGNED);
    ck_assert_uint_eq(v.a, 1);
    memd_plan_buffer pin[] = {{.lower = 0, .upper = 5, .size = 8, .offset = 64, .pinned = true}};
    uint64_t poff[] = {0};
    ck_assert_int_eq(memd_plan_validate(pin, 1, poff, &v, NULL), 1);
    ck_assert_int_eq(v.issue, MEMD_PLAN_PIN_MOVED);
    poff[0] = 64;
    ck_assert_int_eq(memd_plan_validate(pin, 1, poff, &v, NULL), 0);
    memd_plan_buffer big[] = {B(0, 5, 2)};
    uint64_t boff[] = {UINT64_MAX};
    ck_assert_int_eq(memd_plan_validate(big, 1, boff, &v, NULL), 1);
    ck_assert_int_eq(v.issue, MEMD_PLAN_OUT_OF_RANGE);
    memd_plan_buffer life[] = {B(0, 5, 2), B(7, 7, 2)};
    uint64_t loff[] = {0, 0};
    ck_assert_int_eq(memd_plan_validate(life, 2, loff, &v, NULL), 1);
    ck_assert_int_eq(v.issue, MEMD_PLAN_BAD_LIFETIME);
    ck_assert_uint_eq(v.a, 1);
    memd_plan_buffer ba[] = {{.lower = 0, .upper = 5, .size = 8, .align = 12}};
    ck_assert_int_eq(memd_plan_validate(ba, 1, loff, &v, NULL), 1);
    ck_assert_int_eq(v.issue, MEMD_PLAN_BAD_ALIGN);
    ck_assert_str_eq(memd_plan_issue_name(MEMD_PLAN_OVERLAP), "overlap");
    ck_assert_str_eq(memd_plan_issue_reason(MEMD_PLAN_PIN_CONFLICT),
                     "two pinned buffers overlap: no plan can exist");
}
END_TEST

START_TEST(validate_matches_brute_force)
{
    uint64_t s = 0xB0B;
    for (int round = 0; round < 400; round++) {
        size_t n = 1 + memd_test_below(&s, 30);
        memd_plan_buffer b[30];
        uint64_t off[30];
        for (size_t i = 0; i < n; i++) {
            uint64_t lo = memd_test_below(&s, 20);
            b[i] = (memd_plan_buffer)B(lo, lo + 1 + memd_test_below(&s, 6), memd_test_below(&s, 8));
            off[i] = memd_test_below(&s, 40);
        }
        memd_plan_violation v;
        int rc = memd_plan_validate(b, n, off, &v, NULL);
        ck_assert_int_eq(rc, brute_any_overlap(b, n, off) ? 1 : 0);
        if (rc == 1) {
            ck_assert_int_eq(v.issue, MEMD_PLAN_OVERLAP);
            ck_assert(brute_overlap(b, n, off, v.a, v.b));
        }
    }
}
END_TEST

/* ---- input checks ---- */

START_TEST(check_rejects_bad_input)
{
    memd_plan_violation v;
    memd_plan_buffer al[] = {B(0, 5, 1), {.lower = 0, .upper = 5, .size = 8, .align = 3}};
    ck_assert_int_eq(memd_plan_check(al, 2, &v), -EINVAL);
    ck_assert_int_eq(v.issue, MEMD_PLAN_BAD_ALIGN);
    ck_assert_uint_eq(v.a, 1);
    memd_plan_buffer life[] = {B(9, 5, 1)};
    ck_assert_int_eq(memd_plan_check(life, 1, &v), -EINVAL);
    ck_assert_int_eq(v.issue, MEMD_PLAN_BAD_LIFETIME);
    memd_plan_buffer mis[] = {{.lower = 0, .upper = 5, .size = 8, .align = 8, .offset = 4,
                               .pinned = true}};
    ck_assert_int_eq(memd_plan_check(mis, 1, &v), -EINVAL);
    ck_assert_int_eq(v.issue, MEMD_PLAN_MISALIGNED);
    memd_plan_buffer pins[] = {
        {.lower = 0, .upper = 5, .size = 8, .offset = 0, .pinned = true},
        {.lower = 7, .upper = 9, .size = 8, .offset = 0, .pinned = true},
        {.lower = 4, .upper = 9, .size = 8, .offset = 4, .pinned = true},
    };
    ck_assert_int_eq(memd_plan_check(pins, 3, &v), -EINVAL);
    ck_assert_int_eq(v.issue, MEMD_PLAN_PIN_CONFLICT);
    ck_assert_uint_eq(v.a, 2);
    ck_assert_uint_eq(v.b, 0);
    memd_plan_buffer big[] = {B(0, 5, UINT64_MAX / 2), B(6, 9, UINT64_MAX / 2 + 2)};
    ck_assert_int_eq(memd_plan_check(big, 2, &v), -EOVERFLOW);
    memd_plan_buffer pbig[] = {{.lower = 0, .upper = 5, .size = 8, .offset = UINT64_MAX - 4,
                                .pinned = true}};
    ck_assert_int_eq(memd_plan_check(pbig, 1, &v), -EOVERFLOW);
    ck_assert_int_eq(v.issue, MEMD_PLAN_OUT_OF_RANGE);
    /* solve reports the same. */
    uint64_t off[3];
    memd_plan_result res;
    ck_assert_int_eq(memd_plan_solve(pins, 3, NULL, off, &res, &v), -EINVAL);
    ck_assert_int_eq(v.issue, MEMD_PLAN_PIN_CONFLICT);
}
END_TEST

/* ---- planner ---- */

/* A random problem with a known valid plan: buffers are first placed naively (index
 * order, first fit), then some keep that offset as a pin. */
static size_t random_problem(uint64_t *s, memd_plan_buffer *b, size_t maxn, uint64_t tmax)
{
    static const uint64_t aligns[] = {0, 1, 2, 4, 8, 16, 64};
    size_t n = 1 + memd_test_below(s, maxn);
    uint64_t off[256];
    for (size_t i = 0; i < n; i++) {
        uint64_t lo = memd_test_below(s, tmax - 1);
        uint64_t up = lo + 1 + memd_test_below(s, tmax - lo - 1 > 0 ? tmax - lo - 1 : 1);
        if (up > tmax)
            up = tmax;
        b[i] = (memd_plan_buffer){.lower = lo,
                                  .upper = up,
                                  .size = memd_test_below(s, 8) ? 1 + memd_test_below(s, 100) : 0,
                                  .align = aligns[memd_test_below(s, 7)]};
        uint64_t a = b[i].align ? b[i].align : 1, cand = 0;
        for (bool moved = true; moved;) {
            moved = false;
            for (size_t j = 0; j < i; j++)
                if (b[j].size && b[i].size && b[j].lower < b[i].upper && b[i].lower < b[j].upper &&
                    off[j] < cand + b[i].size && cand < off[j] + b[j].size) {
                    cand = (off[j] + b[j].size + a - 1) / a * a;
                    moved = true;
                }
        }
        off[i] = cand;
        if (memd_test_below(s, 5) == 0) {
            b[i].pinned = true;
            b[i].offset = cand;
        }
    }
    return n;
}

START_TEST(random_plans_are_valid)
{
    uint64_t s = 0x5EED;
    for (int round = 0; round < 300; round++) {
        memd_plan_buffer b[64];
        uint64_t tmax = 2 + memd_test_below(&s, 40);
        size_t n = random_problem(&s, b, 64, tmax);
        uint64_t off[64];
        memd_plan_result res;
        memd_plan_violation v;
        memd_plan_opts o = {.seed = (uint64_t)round, .max_iterations = 300};
        ck_assert_int_eq(memd_plan_solve(b, n, &o, off, &res, &v), 0);
        uint64_t arena;
        ck_assert_int_eq(memd_plan_validate(b, n, off, &v, &arena), 0);
        ck_assert(!brute_any_overlap(b, n, off));
        ck_assert_uint_eq(arena, res.arena);
        ck_assert_uint_eq(res.lower_bound, brute_lb(b, n, tmax));
        ck_assert_uint_ge(res.arena, res.lower_bound);
        for (size_t i = 0; i < n; i++) {
            uint64_t a = b[i].align ? b[i].align : 1;
            ck_assert_uint_eq(off[i] % a, 0);
            if (b[i].pinned)
                ck_assert_uint_eq(off[i], b[i].offset);
        }
        /* Break the plan: the validator must notice. */
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n; j++)
                if (!b[i].pinned && !b[j].pinned && b[i].size && b[j].size &&
                    b[i].lower < b[j].upper && b[j].lower < b[i].upper &&
                    (b[j].align ? b[j].align : 1) <= 1) {
                    uint64_t keep = off[j];
                    off[j] = off[i];
                    ck_assert_int_eq(memd_plan_validate(b, n, off, &v, NULL), 1);
                    ck_assert_int_eq(v.issue, MEMD_PLAN_OVERLAP);
                    ck_assert(brute_overlap(b, n, off, v.a, v.b));
                    off[j] = keep;
                    goto next;
                }
    next:;
    }
}
END_TEST

START_TEST(deterministic)
{
    uint64_t s = 0xDE7;
    memd_plan_buffer b[200];
    size_t n = 0;
    while (n < 150)
        n = random_problem(&s, b, 200, 60);
    for (size_t i = 0; i < n; i++)
        b[i].pinned = false; /* pinned-free, so the exact search runs too */
    uint64_t o1[200], o2[200], o3[200];
    memd_plan_result r1, r2, r3;
    memd_plan_opts o = {.seed = 42, .max_iterations = 5000};
    ck_assert_int_eq(memd_plan_solve(b, n, &o, o1, &r1, NULL), 0);
    ck_assert_int_eq(memd_plan_solve(b, n, &o, o2, &r2, NULL), 0);
    ck_assert_mem_eq(o1, o2, n * sizeof(*o1));
    ck_assert_uint_eq(r1.arena, r2.arena);
    ck_assert_str_eq(r1.strategy, r2.strategy);
    ck_assert_uint_eq(r1.iterations, r2.iterations);
    /* With pins (local search path) too. */
    for (size_t i = 0; i < n; i += 7)
        b[i].size = 0, b[i].pinned = true, b[i].offset = 0;
    ck_assert_int_eq(memd_plan_solve(b, n, &o, o1, &r1, NULL), 0);
    ck_assert_int_eq(memd_plan_solve(b, n, &o, o3, &r3, NULL), 0);
    ck_assert_mem_eq(o1, o3, n * sizeof(*o1));
}
END_TEST

/* Guillotine cuts of a [0,T) x [0,S) rectangle: a perfect packing exists, so the
 * optimum is exactly S = the lower bound. */
static size_t guillotine(uint64_t *s, memd_plan_buffer *b, size_t n, size_t max, uint64_t t0,
                         uint64_t t1, uint64_t y0, uint64_t y1, int depth)
{
    bool cut_time = memd_test_below(s, 2) == 0;
    if (depth == 0 || n + 2 > max || (t1 - t0 < 2 && y1 - y0 < 2)) {
        b[n] = (memd_plan_buffer)B(t0, t1, y1 - y0);
        return n + 1;
    }
    if (t1 - t0 < 2)
        cut_time = false;
    if (y1 - y0 < 2)
        cut_time = true;
    if (cut_time) {
        uint64_t m = t0 + 1 + memd_test_below(s, t1 - t0 - 1);
        n = guillotine(s, b, n, max, t0, m, y0, y1, depth - 1);
        return guillotine(s, b, n, max, m, t1, y0, y1, depth - 1);
    }
    uint64_t m = y0 + 1 + memd_test_below(s, y1 - y0 - 1);
    n = guillotine(s, b, n, max, t0, t1, y0, m, depth - 1);
    return guillotine(s, b, n, max, t0, t1, m, y1, depth - 1);
}

START_TEST(perfect_packing_found)
{
    uint64_t s = 0x9A11;
    int exact = 0;
    for (int round = 0; round < 20; round++) {
        memd_plan_buffer b[64];
        size_t n = guillotine(&s, b, 0, 64, 0, 100, 0, 1000, 6);
        uint64_t off[64];
        memd_plan_result res;
        memd_plan_opts o = {.seed = 1, .max_iterations = 20000};
        ck_assert_int_eq(memd_plan_solve(b, n, &o, off, &res, NULL), 0);
        ck_assert_uint_eq(res.lower_bound, 1000);
        ck_assert_int_eq(memd_plan_validate(b, n, off, NULL, NULL), 0);
        exact += res.arena == 1000 && res.optimal;
    }
    /* The exact search settles these small instances. */
    ck_assert_int_eq(exact, 20);
}
END_TEST

START_TEST(empty_and_trivial)
{
    memd_plan_result res;
    ck_assert_int_eq(memd_plan_solve(NULL, 0, NULL, NULL, &res, NULL), 0);
    ck_assert_uint_eq(res.arena, 0);
    ck_assert(res.optimal);
    memd_plan_buffer b[] = {B(0, 3, 0), B(1, 2, 0)};
    uint64_t off[2] = {9, 9};
    ck_assert_int_eq(memd_plan_solve(b, 2, NULL, off, &res, NULL), 0);
    ck_assert_uint_eq(res.arena, 0);
    ck_assert_uint_eq(off[0], 0);
    ck_assert_uint_eq(off[1], 0);
}
END_TEST

START_TEST(clock_budget_stops)
{
    uint64_t s = 0xC10C;
    memd_plan_buffer b[200];
    size_t n = 0;
    while (n < 120)
        n = random_problem(&s, b, 200, 50);
    uint64_t off[200], t = 0;
    memd_plan_result res;
    memd_plan_opts o = {.clock = memd_test_fake_ms, .clock_ctx = &t, .budget_ns = 50000000};
    ck_assert_int_eq(memd_plan_solve(b, n, &o, off, &res, NULL), 0);
    ck_assert_int_eq(memd_plan_validate(b, n, off, NULL, NULL), 0);
    /* 50 ms of fake time = about 50 readings, each at most 64 steps apart. */
    ck_assert_uint_le(res.iterations, 64u * 60u);
}
END_TEST

/* The placer modes (conflict graph, offset list, segment tree) give valid plans, and
 * the same plan (the tree's best fit told to read every gap that fits). */
START_TEST(placer_modes_agree)
{
    uint64_t s = 0x91A;
    for (int round = 0; round < 100; round++) {
        memd_plan_buffer b[64];
        size_t n = random_problem(&s, b, 64, 30);
        plan_graph g;
        ck_assert_int_eq(memd_plan_graph_build(b, n, &g), 0);
        plan_placer pg, pl, pt;
        ck_assert_int_eq(memd_plan_placer_init(&pg, b, n, &g), 0);
        ck_assert_int_eq(memd_plan_placer_init(&pl, b, n, NULL), 0);
        ck_assert_int_eq(memd_plan_placer_init_tree(&pt, b, n), 0);
        pt.fit_gaps = 0;
        uint32_t order[64];
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (b[i].pinned)
                order[k++] = (uint32_t)i;
        for (size_t i = 0; i < n; i++)
            if (!b[i].pinned)
                order[k++] = (uint32_t)i;
        for (size_t i = 0; i < n; i++)
            pg.pos[order[i]] = pl.pos[order[i]] = (uint32_t)i;
        ck_assert_ptr_null(pt.pos); /* tree mode needs no positions */
        for (int fit = 0; fit < 2; fit++) {
            uint64_t og[64], ol[64], ot[64];
            uint64_t ag = memd_plan_place_range(&pg, order, 0, fit, og);
            uint64_t al = memd_plan_place_range(&pl, order, 0, fit, ol);
            uint64_t at = memd_plan_place_range(&pt, order, 0, fit, ot);
            ck_assert_uint_eq(ag, al);
            ck_assert_mem_eq(og, ol, n * sizeof(*og));
            ck_assert_uint_eq(ag, at);
            ck_assert_mem_eq(og, ot, n * sizeof(*og));
            ck_assert_int_eq(memd_plan_validate(b, n, og, NULL, NULL), 0);
            /* With the arena as the bound each mode ends the same; one byte lower it
             * stops at the placement that passes it, the ones before as they were. */
            plan_placer *ps[] = {&pg, &pl, &pt};
            for (int m = 0; m < 3 && ag > 0; m++) {
                uint64_t o[64];
                memd_test_placer_bound(ps[m], b, n, order, fit, og, ag, o);
            }
        }
        memd_plan_placer_free(&pg);
        memd_plan_placer_free(&pl);
        memd_plan_placer_free(&pt);
        memd_plan_graph_free(&g);
    }
}
END_TEST

static uint64_t late_clock(void *ctx)
{
    (void)ctx;
    return 2000000000u;
}

/* A tree-mode run given a deadline that has passed gives up (after at most 256
 * placements) instead of finishing: UINT64_MAX, never taken as a plan. */
START_TEST(tree_run_stops_at_deadline)
{
    memd_plan_buffer b[600];
    for (size_t i = 0; i < 600; i++)
        b[i] = (memd_plan_buffer){.lower = i, .upper = i + 10, .size = 1 + i % 7};
    uint32_t order[600];
    uint64_t off[600];
    plan_placer pt;
    ck_assert_int_eq(memd_plan_placer_init_tree(&pt, b, 600), 0);
    for (uint32_t i = 0; i < 600; i++)
        order[i] = i;
    plan_budget late = {.clock = late_clock, .deadline_ns = 1000000000u};
    pt.stop = &late;
    ck_assert_uint_eq(memd_plan_place_range(&pt, order, 0, false, off), UINT64_MAX);
    late.deadline_ns = 3000000000u; /* not yet: the run ends */
    ck_assert_uint_lt(memd_plan_place_range(&pt, order, 0, false, off), UINT64_MAX);
    ck_assert_int_eq(memd_plan_validate(b, 600, off, NULL, NULL), 0);
    memd_plan_placer_free(&pt);
}
END_TEST

/* True when x fits at o among order[0..k) (brute force over them). */
static bool fits_at(const memd_plan_buffer *b, const uint32_t *order, size_t k, uint32_t x,
                    const uint64_t *off, uint64_t o)
{
    for (size_t i = 0; i < k; i++) {
        uint32_t y = order[i];
        if (b[y].size && b[y].lower < b[x].upper && b[x].lower < b[y].upper &&
            off[y] < o + b[x].size && o < off[y] + b[y].size)
            return false;
    }
    return true;
}

/* Segment tree, first fit, in a random order on traces of mostly short lifetimes with a
 * few long ones (ranges of one leaf, a few, and most of the tree): every buffer sits at
 * the lowest offset free of the buffers placed before it. The lowest free aligned offset is
 * 0 or an aligned end of one of them, so checking those below it proves it lowest. */
START_TEST(tree_first_fit_is_lowest)
{
    uint64_t s = 0xB10C;
    for (int round = 0; round < 200; round++) {
        memd_plan_buffer b[80];
        size_t n = 1 + memd_test_below(&s, 80);
        for (size_t i = 0; i < n; i++) {
            uint64_t lo = memd_test_below(&s, 200), len = memd_test_below(&s, 30)
                                                              ? 1 + memd_test_below(&s, 4)
                                                              : 1 + memd_test_below(&s, 400);
            b[i] = (memd_plan_buffer){.lower = lo,
                                      .upper = lo + len,
                                      .size = memd_test_below(&s, 10) ? 1 + memd_test_below(&s, 100)
                                                                      : 0,
                                      .align = memd_test_below(&s, 2) ? 8 : 0};
        }
        uint32_t order[80];
        memd_test_shuffled(&s, order, n);
        plan_placer pt;
        ck_assert_int_eq(memd_plan_placer_init_tree(&pt, b, n), 0);
        uint64_t off[80];
        memd_plan_place_range(&pt, order, 0, false, off);
        ck_assert_int_eq(memd_plan_validate(b, n, off, NULL, NULL), 0);
        for (size_t k = 0; k < n; k++) {
            uint32_t x = order[k];
            if (!b[x].size)
                continue;
            uint64_t a = b[x].align ? b[x].align : 1;
            ck_assert(fits_at(b, order, k, x, off, off[x]));
            ck_assert(off[x] == 0 || !fits_at(b, order, k, x, off, 0));
            for (size_t i = 0; i < k; i++) {
                uint64_t c = (off[order[i]] + b[order[i]].size + a - 1) / a * a;
                ck_assert(c >= off[x] || !fits_at(b, order, k, x, off, c));
            }
        }
        memd_plan_placer_free(&pt);
    }
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("plan");
    TCase *tc = tcase_create("plan");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, lb_handmade);
    tcase_add_test(tc, lb_errors);
    tcase_add_test(tc, validate_names_pair);
    tcase_add_test(tc, validate_touching_is_valid);
    tcase_add_test(tc, validate_per_buffer_issues);
    tcase_add_test(tc, validate_matches_brute_force);
    tcase_add_test(tc, check_rejects_bad_input);
    tcase_add_test(tc, random_plans_are_valid);
    tcase_add_test(tc, deterministic);
    tcase_add_test(tc, perfect_packing_found);
    tcase_add_test(tc, empty_and_trivial);
    tcase_add_test(tc, clock_budget_stops);
    tcase_add_test(tc, tree_first_fit_is_lowest);
    tcase_add_test(tc, tree_run_stops_at_deadline);
    tcase_add_test(tc, placer_modes_agree);
    suite_add_tcase(s, tc);
    return s;
}

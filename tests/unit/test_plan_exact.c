/* The exact search's two lanes (plan_exact.c) on seeded random problems: for an
 * iteration budget the plan (offsets, arena, strategy, iterations) is the same with no
 * runner, a reversed runner and threads; both lanes do work; a cancel from the
 * progress callback while the lanes run on threads returns the best plan found, valid,
 * the last one reported. */
#include <check.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "plan.h"
#include "plan_internal.h"
#include "plan_runners.h"
#include "test_rand.h"

#define MAXN 200

/* A perfect packing cut into n pieces: the box [0, 64) x [0, 256 x 16 bytes) split
 * at random places, across time or across offsets, until there are n buffers. Greedy
 * is 5-45 % above the lower bound; the search needs thousands of iterations or more. */
static size_t problem(uint64_t *s, memd_plan_buffer *b, size_t n)
{
    uint64_t box[MAXN][4] = {{0, 64, 0, 256}}; /* lower, upper, low and high granule */
    size_t m = 1;
    while (m < n) {
        uint64_t *x = box[memd_test_rand(s) % m];
        unsigned across = memd_test_rand(s) % 2 ? 0 : 2; /* 0: a time cut */
        uint64_t lo = x[across], hi = x[across + 1];
        if (hi - lo < 2)
            continue;
        uint64_t c = lo + 1 + memd_test_rand(s) % (hi - lo - 1);
        memcpy(box[m], x, sizeof(box[m]));
        x[across + 1] = c;
        box[m++][across] = c;
    }
    for (size_t i = 0; i < m; i++)
        b[i] = (memd_plan_buffer){.lower = box[i][0], .upper = box[i][1],
                                  .size = 16 * (box[i][3] - box[i][2])};
    return m;
}

static const memd_plan_runner_fn runners[] = {NULL, memd_test_runner_reversed,
                                              memd_test_runner_threaded};

/* Counts the rounds and lanes it ran (in order). */
typedef struct counting {
    unsigned calls, lanes;
} counting;

static void counted(void *ctx, unsigned lanes, memd_plan_lane_fn fn, void *arg)
{
    counting *c = ctx;
    c->calls++;
    c->lanes = lanes;
    for (unsigned i = 0; i < lanes; i++)
        fn(arg, i);
}

START_TEST(same_plan_on_any_runner)
{
    uint64_t s = 0xE7AC7 + (uint64_t)_i;
    memd_plan_buffer b[MAXN];
    size_t n = problem(&s, b, 100 + (size_t)(memd_test_rand(&s) % 60));
    uint64_t o1[MAXN], o2[MAXN];
    memd_plan_result r1, r2;
    memd_plan_opts o = {.seed = 5 + (uint64_t)_i, .max_iterations = 40000};
    ck_assert_int_eq(memd_plan_solve(b, n, &o, o1, &r1, NULL), 0);
    uint64_t arena = 0;
    ck_assert_int_eq(memd_plan_validate(b, n, o1, NULL, &arena), 0);
    ck_assert_uint_eq(arena, r1.arena);
    for (int k = 1; k < 3; k++) {
        o.runner = runners[k];
        ck_assert_int_eq(memd_plan_solve(b, n, &o, o2, &r2, NULL), 0);
        ck_assert_uint_eq(r1.arena, r2.arena);
        ck_assert_uint_eq(r1.iterations, r2.iterations);
        ck_assert_str_eq(r1.strategy, r2.strategy);
        ck_assert_int_eq(r1.optimal, r2.optimal);
        ck_assert_mem_eq(o1, o2, n * sizeof(*o1));
    }
    /* The search ran in two lanes, in rounds (unless the greedy plan was optimal). */
    counting c = {0};
    o.runner = counted;
    o.runner_ctx = &c;
    ck_assert_int_eq(memd_plan_solve(b, n, &o, o2, &r2, NULL), 0);
    ck_assert_mem_eq(o1, o2, n * sizeof(*o1));
    if (r1.iterations) {
        ck_assert_uint_ge(c.calls, 1);
        ck_assert_uint_eq(c.lanes, 2);
    }
}
END_TEST

/* Straight on memd_plan_exact from the size-order plan: the lanes lower it within the
 * budget on these problems, use most of the budget and no more, the same on every
 * runner. */
START_TEST(exact_lanes_lower_the_plan)
{
    uint64_t s = 0x1A4E + (uint64_t)_i;
    memd_plan_buffer b[MAXN];
    size_t n = problem(&s, b, 150);
    uint64_t lb, first, o1[MAXN], o2[MAXN];
    ck_assert_int_eq(memd_plan_lower_bound(b, n, &lb), 0);
    ck_assert_int_eq(memd_plan_greedy_run(b, n, 0, false, o1, &first), 0);
    plan_graph g;
    ck_assert_int_eq(memd_plan_graph_build(b, n, &g), 0);
    uint64_t arena[3];
    for (int k = 0; k < 3; k++) {
        uint64_t *out = k ? o2 : o1;
        ck_assert_int_eq(memd_plan_greedy_run(b, n, 0, false, out, &first), 0);
        plan_budget bu = {.limit = 30000};
        plan_best bp = {.arena = first, .off = out, .strategy = "greedy", .have = true};
        memd_plan_opts o = {.runner = runners[k]};
        ck_assert_int_ge(memd_plan_exact(b, n, &g, lb, 9, &o, &bu, &bp), 0);
        ck_assert_uint_le(bu.used, 30000);
        ck_assert_uint_gt(bu.used, 30000 / 2);
        uint64_t a = 0;
        ck_assert_int_eq(memd_plan_validate(b, n, out, NULL, &a), 0);
        ck_assert_uint_eq(a, bp.arena);
        ck_assert_uint_lt(bp.arena, first);
        ck_assert_uint_ge(bp.arena, lb);
        arena[k] = bp.arena;
        if (k)
            ck_assert_mem_eq(o1, o2, n * sizeof(*o1));
    }
    ck_assert_uint_eq(arena[0], arena[1]);
    ck_assert_uint_eq(arena[0], arena[2]);
    memd_plan_graph_free(&g);
}
END_TEST

/* A clock that advances 1 us per reading, from any thread. */
static uint64_t fake_clock(void *ctx)
{
    return atomic_fetch_add((atomic_uint_fast64_t *)ctx, 1000) + 1000;
}

/* With a clock and a runner, a lane past its quantum goes on while the other works:
 * lanes one after the other (reversed) must still each run and stop, on threads too;
 * the plan stays valid and no worse than greedy. */
START_TEST(clock_rounds_end_on_any_runner)
{
    uint64_t s = 0xC10C + (uint64_t)_i;
    memd_plan_buffer b[MAXN];
    size_t n = problem(&s, b, 150);
    uint64_t lb, first, off[MAXN];
    ck_assert_int_eq(memd_plan_lower_bound(b, n, &lb), 0);
    plan_graph g;
    ck_assert_int_eq(memd_plan_graph_build(b, n, &g), 0);
    for (int k = 1; k < 3; k++) {
        atomic_uint_fast64_t now;
        atomic_init(&now, 0);
        ck_assert_int_eq(memd_plan_greedy_run(b, n, 0, false, off, &first), 0);
        plan_budget bu = {.clock = fake_clock, .clock_ctx = &now, .deadline_ns = 1000000};
        plan_best bp = {.arena = first, .off = off, .strategy = "greedy", .have = true};
        memd_plan_opts o = {.runner = runners[k]};
        ck_assert_int_ge(memd_plan_exact(b, n, &g, lb, 3, &o, &bu, &bp), 0);
        ck_assert(bu.expired || bp.arena == lb);
        ck_assert_uint_gt(bu.used, 0);
        uint64_t a = 0;
        ck_assert_int_eq(memd_plan_validate(b, n, off, NULL, &a), 0);
        ck_assert_uint_eq(a, bp.arena);
        ck_assert_uint_le(bp.arena, first);
    }
    memd_plan_graph_free(&g);
}
END_TEST

typedef struct rec {
    size_t calls, cancel_at;
    uint64_t last;
} rec;

static bool record(void *ctx, const memd_plan_progress *p)
{
    rec *r = ctx;
    r->calls++;
    if (p->have_plan)
        r->last = p->arena;
    return r->calls >= r->cancel_at;
}

/* A cancel while the lanes run on threads: the best plan found is returned (valid,
 * the last one reported), long before the budget. */
START_TEST(cancel_on_threads_keeps_the_best)
{
    uint64_t s = 0xCA4C + (uint64_t)_i;
    memd_plan_buffer b[MAXN];
    size_t n = problem(&s, b, 180);
    uint64_t off[MAXN];
    memd_plan_result res;
    rec r = {.cancel_at = 4};
    memd_plan_opts o = {.seed = 2, .max_iterations = 50000000, .progress = record,
                        .progress_ctx = &r, .runner = memd_test_runner_threaded};
    ck_assert_int_eq(memd_plan_solve(b, n, &o, off, &res, NULL), 0);
    uint64_t arena = 0;
    ck_assert_int_eq(memd_plan_validate(b, n, off, NULL, &arena), 0);
    ck_assert_uint_eq(arena, res.arena);
    ck_assert(res.cancelled || res.optimal);
    ck_assert_uint_lt(res.iterations, 1000000);
    ck_assert_uint_eq(res.arena, r.last);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("plan-exact");
    TCase *tc = tcase_create("plan-exact");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, same_plan_on_any_runner, 0, 6);
    tcase_add_loop_test(tc, exact_lanes_lower_the_plan, 0, 3);
    tcase_add_loop_test(tc, cancel_on_threads_keeps_the_best, 0, 2);
    tcase_add_loop_test(tc, clock_rounds_end_on_any_runner, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

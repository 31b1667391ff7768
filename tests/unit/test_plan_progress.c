/* Planner progress callback and cancellation: reports only improvements (and periodic
 * beats), a callback that never cancels changes nothing, a cancel returns the best plan
 * found so far, valid, soon. Seeded random problems. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "plan.h"
#include "plan_internal.h"
#include "test_clock.h"
#include "test_rand.h"

#define MAXN 160

/* Random sizes and lifetimes: greedy is rarely optimal here, so the search improves. */
static size_t problem(uint64_t *s, memd_plan_buffer *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t lo = memd_test_rand(s) % 60;
        b[i] = (memd_plan_buffer){.lower = lo,
                                  .upper = lo + 1 + memd_test_rand(s) % 20,
                                  .size = 1 + memd_test_rand(s) % 97};
    }
    return n;
}

typedef struct rec {
    size_t calls, beats;
    uint64_t arenas[4096];
    size_t narenas;
    size_t cancel_at; /* cancel on this call (1-based); 0: never */
    uint64_t last_iter;
} rec;

static bool record(void *ctx, const memd_plan_progress *p)
{
    rec *r = ctx;
    r->calls++;
    ck_assert(p->iterations >= r->last_iter);
    r->last_iter = p->iterations;
    if (p->have_plan) {
        if (r->narenas && p->arena == r->arenas[r->narenas - 1])
            r->beats++;
        else if (r->narenas < 4096)
            r->arenas[r->narenas++] = p->arena;
        ck_assert_uint_ge(p->arena, p->lower_bound);
    }
    return r->cancel_at && r->calls >= r->cancel_at;
}

START_TEST(progress_reports_improvements)
{
    uint64_t s = 0x9806 + (uint64_t)_i;
    memd_plan_buffer b[MAXN];
    size_t n = problem(&s, b, 40 + (size_t)(memd_test_rand(&s) % 120));
    uint64_t o1[MAXN], o2[MAXN];
    memd_plan_result r1, r2;
    memd_plan_opts o = {.seed = 3, .max_iterations = 30000};
    ck_assert_int_eq(memd_plan_solve(b, n, &o, o1, &r1, NULL), 0);
    rec *r = calloc(1, sizeof(*r));
    o.progress = record;
    o.progress_ctx = r;
    ck_assert_int_eq(memd_plan_solve(b, n, &o, o2, &r2, NULL), 0);
    /* A callback that never cancels changes nothing. */
    ck_assert_uint_eq(r1.arena, r2.arena);
    ck_assert_uint_eq(r1.iterations, r2.iterations);
    ck_assert_mem_eq(o1, o2, n * sizeof(*o1));
    ck_assert(!r2.cancelled);
    /* Every improvement was reported, strictly decreasing, ending at the result. */
    ck_assert_uint_ge(r->narenas, 1);
    for (size_t k = 1; k < r->narenas; k++)
        ck_assert_uint_lt(r->arenas[k], r->arenas[k - 1]);
    ck_assert_uint_eq(r->arenas[r->narenas - 1], r2.arena);
    free(r);
}
END_TEST

/* Solves b with the given seed and iteration budget, cancelling on the cancel_at-th
 * report; the plan must be valid and its arena the one reported in *res. Returns the
 * reports (the caller frees them). */
static rec *solve_cancelled(const memd_plan_buffer *b, size_t n, size_t cancel_at,
                            uint64_t seed, uint64_t max_iterations, memd_plan_result *res)
{
    uint64_t off[MAXN];
    rec *r = calloc(1, sizeof(*r));
    r->cancel_at = cancel_at;
    memd_plan_opts o = {.seed = seed, .max_iterations = max_iterations, .progress = record,
                        .progress_ctx = r};
    ck_assert_int_eq(memd_plan_solve(b, n, &o, off, res, NULL), 0);
    uint64_t arena = 0;
    ck_assert_int_eq(memd_plan_validate(b, n, off, NULL, &arena), 0);
    ck_assert_uint_eq(arena, res->arena);
    return r;
}

/* Cancelling on the first report (the first greedy plan) returns that plan. */
START_TEST(cancel_at_first_plan)
{
    uint64_t s = 0xCA9C + (uint64_t)_i;
    memd_plan_buffer b[MAXN];
    size_t n = problem(&s, b, 100 + (size_t)(memd_test_rand(&s) % 60));
    memd_plan_result res;
    rec *r = solve_cancelled(b, n, 1, 1, 1000000, &res);
    ck_assert(res.cancelled || res.optimal);
    ck_assert_uint_eq(res.arena, r->arenas[0]);
    ck_assert_uint_eq(res.iterations, 0);
    free(r);
}
END_TEST

/* Cancelling in the middle of the improvement (the k-th call) stops it well before its
 * budget and keeps the best plan found, which is no worse than the first. A pin high
 * above everything keeps the arena off the lower bound, so nothing ends the
 * improvement early but the cancel. */
START_TEST(cancel_mid_search)
{
    uint64_t s = 0x3ED + (uint64_t)_i;
    memd_plan_buffer b[MAXN];
    size_t n = problem(&s, b, 150);
    b[n++] = (memd_plan_buffer){.lower = 0, .upper = 100, .size = 1, .offset = 1000000,
                                .pinned = true};
    memd_plan_result res;
    rec *r = solve_cancelled(b, n, 6, 2, 2000000, &res);
    ck_assert(res.cancelled);
    ck_assert(!res.optimal);
    /* Beats come every 4096 iterations: six calls end it long before 2M. */
    ck_assert_uint_le(res.iterations, 6u * 4096u);
    ck_assert_uint_gt(res.iterations, 0);
    ck_assert_uint_le(res.arena, r->arenas[0]);
    ck_assert_uint_eq(res.arena, r->arenas[r->narenas - 1]);
    free(r);
}
END_TEST

/* With a clock, beats come about every progress_ns while the planner works. */
START_TEST(beats_on_the_clock)
{
    uint64_t s = 0xBEA7;
    memd_plan_buffer b[MAXN];
    size_t n = problem(&s, b, 150);
    uint64_t off[MAXN], t = 0;
    memd_plan_result res;
    rec *r = calloc(1, sizeof(*r));
    memd_plan_opts o = {.seed = 2, .clock = memd_test_fake_ms, .clock_ctx = &t,
                        .budget_ns = 400000000, .progress = record, .progress_ctx = r,
                        .progress_ns = 20000000};
    ck_assert_int_eq(memd_plan_solve(b, n, &o, off, &res, NULL), 0);
    ck_assert_int_eq(memd_plan_validate(b, n, off, NULL, NULL), 0);
    if (!res.optimal)
        ck_assert_uint_ge(r->calls, 5);
    ck_assert(!res.cancelled);
    free(r);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("plan-progress");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, progress_reports_improvements, 0, 8);
    tcase_add_loop_test(tc, cancel_at_first_plan, 0, 8);
    tcase_add_loop_test(tc, cancel_mid_search, 0, 4);
    tcase_add_test(tc, beats_on_the_clock);
    suite_add_tcase(s, tc);
    return s;
}

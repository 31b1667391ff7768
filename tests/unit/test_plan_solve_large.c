/* memd_plan_solve end to end on a problem just above the planner's list limit (20000
 * buffers, too many overlapping pairs for a conflict graph): the path over the segment
 * tree (size order first fit, the squeaky-wheel lanes, the rest of the portfolio). For
 * an iteration budget the plan is the same with no runner, lanes in reverse and lanes on
 * threads; a progress callback that never cancels changes nothing
 * and sees every improvement; a cancel keeps the best plan found, valid. The other
 * planner suites cover these on small problems, which never take this path. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "plan.h"
#include "plan_runners.h"
#include "test_clock.h"
#include "test_rand.h"

/* Just above the list placer's limit: the smallest problem that takes the tree path. */
#define N 20480
/* Two squeaky-wheel runs a lane (a run is worth N / 8 + 1 iterations). */
#define ITERATIONS (2u * 2u * (N / 8u + 1u))

typedef struct problem {
    memd_plan_buffer b[N];
    uint64_t lb, first; /* lower bound; size order first fit's arena (the first plan) */
} problem;

/* Shaped like large/gen_large.py's traces (mostly short lives, a heavy tail, some long
 * ones): the long ones make well over the graph's cap of overlapping pairs. */
static problem *make(uint64_t seed)
{
    problem *p = malloc(sizeof(*p));
    ck_assert_ptr_nonnull(p);
    uint64_t s = seed, T = N * 3 / 2;
    static const uint64_t sizes[] = {3, 40, 700, 4096, 9000, 65537, 300000, 1u << 20};
    for (size_t i = 0; i < N; i++) {
        uint64_t lo = memd_test_below(&s, T), r = memd_test_below(&s, 100), life;
        if (r < 70)
            life = 1 + memd_test_below(&s, 6);
        else if (r < 92)
            life = 8 + memd_test_below(&s, 8) * memd_test_below(&s, 8);
        else
            life = T / 20 + memd_test_below(&s, T / 2 - T / 20);
        uint64_t hi = lo + life < T ? lo + life : T;
        p->b[i] = (memd_plan_buffer){.lower = lo,
                                     .upper = hi > lo ? hi : lo + 1,
                                     .size = sizes[memd_test_below(&s, 8)] + memd_test_below(&s, 3),
                                     .align = memd_test_below(&s, 4) ? 0 : 64};
    }
    ck_assert_int_eq(memd_plan_lower_bound(p->b, N, &p->lb), 0);
    return p;
}

typedef struct rec {
    size_t calls;
    uint64_t arenas[256];
    size_t narenas;
    size_t cancel_at; /* cancel on this call (1-based); 0: never */
} rec;

static bool record(void *ctx, const memd_plan_progress *p)
{
    rec *r = ctx;
    r->calls++;
    if (p->have_plan && (!r->narenas || p->arena != r->arenas[r->narenas - 1])) {
        ck_assert_uint_lt(r->narenas, 256);
        r->arenas[r->narenas++] = p->arena;
    }
    return r->cancel_at && r->calls >= r->cancel_at;
}

/* Solves and checks the result against the validator. */
static memd_plan_result solve(const problem *p, const memd_plan_opts *o, uint64_t *off)
{
    memd_plan_result res;
    ck_assert_int_eq(memd_plan_solve(p->b, N, o, off, &res, NULL), 0);
    uint64_t arena = 0;
    ck_assert_int_eq(memd_plan_validate(p->b, N, off, NULL, &arena), 0);
    ck_assert_uint_eq(arena, res.arena);
    ck_assert_uint_eq(res.lower_bound, p->lb);
    return res;
}

static void same(const memd_plan_result *r1, const uint64_t *o1, const memd_plan_result *r2,
                 const uint64_t *o2)
{
    ck_assert_uint_eq(r1->arena, r2->arena);
    ck_assert_str_eq(r1->strategy, r2->strategy);
    ck_assert_uint_eq(r1->iterations, r2->iterations);
    ck_assert_mem_eq(o1, o2, N * sizeof(*o1));
}

/* Same seed and budget: the same plan with no runner (lanes in order, improvements taken
 * at once), lanes in reverse order and lanes on threads (each lane's best taken at the
 * end); a callback that never cancels changes nothing and saw every improvement, from
 * the first plan down to the result. (Three solves, not more: each is about 15 placer
 * runs over 20k buffers, and valgrind runs this suite too.) */
START_TEST(same_plan_on_any_runner)
{
    problem *p = make(memd_test_seed(0x50A7E));
    uint64_t *o1 = malloc(N * sizeof(*o1)), *o2 = malloc(N * sizeof(*o2));
    memd_plan_opts o = {.seed = 7, .max_iterations = ITERATIONS};
    memd_plan_result r1 = solve(p, &o, o1);
    /* The tree path, improved: the squeaky-wheel lanes made the plan (a list- or
     * graph-placed problem would name a greedy or local-search run). */
    ck_assert_msg(!strncmp(r1.strategy, "squeaky-", 8), "strategy %s", r1.strategy);
    ck_assert(!r1.cancelled);
    ck_assert_uint_gt(r1.iterations, 0);
    ck_assert_uint_le(r1.iterations, ITERATIONS);
    rec *r = calloc(1, sizeof(*r));
    o.runner = memd_test_runner_reversed;
    o.progress = record;
    o.progress_ctx = r;
    memd_plan_result r2 = solve(p, &o, o2);
    same(&r1, o1, &r2, o2);
    ck_assert_uint_ge(r->narenas, 2);
    for (size_t k = 1; k < r->narenas; k++)
        ck_assert_uint_lt(r->arenas[k], r->arenas[k - 1]);
    ck_assert_uint_eq(r->arenas[r->narenas - 1], r1.arena);
    free(r);
    memset(o2, 0, N * sizeof(*o2));
    o.runner = memd_test_runner_threaded;
    o.progress = NULL;
    r2 = solve(p, &o, o2);
    same(&r1, o1, &r2, o2);
    free(o1);
    free(o2);
    free(p);
}
END_TEST

/* Cancelling at the first report (the first plan: size order first fit) returns that
 * plan at once, on threads too; cancelling at the second report (the lanes' first
 * improvement) keeps that better plan, and nothing runs after it. */
START_TEST(cancel_keeps_the_best_plan)
{
    problem *p = make(memd_test_seed(0xCA9CE1));
    uint64_t *off = malloc(N * sizeof(*off));
    static const memd_plan_runner_fn runners[] = {NULL, memd_test_runner_threaded};
    for (int k = 0; k < 2; k++)
        for (size_t at = 1; at <= 2; at++) {
            rec *r = calloc(1, sizeof(*r));
            r->cancel_at = at;
            memd_plan_opts o = {.seed = 1, .max_iterations = 1000000, .progress = record,
                                .progress_ctx = r, .runner = runners[k]};
            memd_plan_result res = solve(p, &o, off);
            ck_assert(res.cancelled);
            /* The result is the last plan reported. In order (no runner) that is the
             * one reported at the cancel; on threads lane 1 may have found a lower one
             * before it saw the cancel: that one is kept (and reported). */
            ck_assert_uint_ge(r->narenas, at);
            ck_assert_uint_eq(res.arena, r->arenas[r->narenas - 1]);
            ck_assert_uint_le(res.arena, r->arenas[at - 1]);
            if (!runners[k])
                ck_assert_uint_eq(r->calls, at);
            if (at == 1) {
                ck_assert_str_eq(res.strategy, "greedy-size-first");
                ck_assert_uint_eq(res.iterations, 0);
                if (!runners[k])
                    p->first = res.arena;
                else
                    ck_assert_uint_eq(res.arena, p->first);
            } else {
                ck_assert_uint_lt(res.arena, p->first);
                ck_assert_msg(!strncmp(res.strategy, "squeaky-", 8), "%s", res.strategy);
                /* The lanes stopped at the cancel, a few runs in (a run is N / 8 + 1
                 * iterations; lane 1 on a thread may be a run or two ahead). */
                ck_assert_uint_le(res.iterations, 8u * (N / 8u + 1u));
            }
            free(r);
        }
    free(off);
    free(p);
}
END_TEST

typedef struct beats {
    size_t before; /* calls with no plan yet */
    bool have;
} beats;

static bool count_beats(void *ctx, const memd_plan_progress *p)
{
    beats *b = ctx;
    if (!p->have_plan) {
        ck_assert(!b->have);
        b->before++;
    }
    b->have = b->have || p->have_plan;
    return false;
}

/* plan.h: "called ... while it works, about every progress_ns of the clock". The first
 * run over the tree takes seconds at a million buffers; a caller (memctl plan on a
 * terminal) must hear from it: the first tree run polls the watch (it does not stop it). */
START_TEST(beats_before_the_first_plan)
{
    problem *p = make(memd_test_seed(0xBEA7));
    uint64_t *off = malloc(N * sizeof(*off)), t = 0;
    beats b = {0};
    memd_plan_opts o = {.seed = 1, .clock = memd_test_fake_ms, .clock_ctx = &t,
                        .budget_ns = 100000000000ull, .max_iterations = ITERATIONS,
                        .progress = count_beats, .progress_ctx = &b, .progress_ns = 1000000};
    solve(p, &o, off);
    ck_assert(b.have);
    ck_assert_uint_ge(b.before, 1);
    free(off);
    free(p);
}
END_TEST

static bool no_more_than_one(void *ctx, const memd_plan_progress *p)
{
    (void)ctx;
    ck_assert_uint_le(p->iterations, 1); /* fails at once instead of running for ever */
    return false;
}

/* An iteration budget of 1 is a budget: the plan comes back (here the first plan, or at
 * most one run better). The lanes' share of it, 1 * 85 / 100, is nothing: they must
 * not read it as limit 0, "no limit" (they ran to the lower bound: `memctl plan BIG.csv
 * --iterations 1` did not end). */
START_TEST(one_iteration_is_a_budget)
{
    problem *p = make(memd_test_seed(0x1));
    uint64_t *off = malloc(N * sizeof(*off));
    memd_plan_opts o = {.seed = 1, .max_iterations = 1, .progress = no_more_than_one};
    memd_plan_result res = solve(p, &o, off);
    ck_assert_uint_le(res.iterations, 1);
    free(off);
    free(p);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("plan-solve-large");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, same_plan_on_any_runner);
    tcase_add_test(tc, cancel_keeps_the_best_plan);
    tcase_add_test(tc, beats_before_the_first_plan);
    tcase_add_test(tc, one_iteration_is_a_budget);
    suite_add_tcase(s, tc);
    return s;
}

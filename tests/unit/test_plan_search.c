/* Planner exact search (the decision problem "is there a plan with arena <= C?"):
 * agreement with a brute force on small random problems (alignments, identical
 * buffers, every preorder, perturbed and guided orders), limits that must cut the
 * search short without a false "impossible", reuse of one context across runs, and the
 * planner's optimality claims and first-plan time. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "plan.h"
#include "plan_internal.h"
#include "test_clock.h"
#include "test_rand.h"

#define MAXN 8

static bool live_together(const memd_plan_buffer *a, const memd_plan_buffer *b)
{
    return a->size && b->size && a->lower < b->upper && b->lower < a->upper;
}

/* Brute force: tries every aligned offset in [0, cap - size] for buffer i, in index
 * order, against the buffers already placed. */
static bool brute_fits(const memd_plan_buffer *b, size_t n, uint64_t cap, size_t i,
                       uint64_t *off)
{
    if (i == n)
        return true;
    if (!b[i].size) {
        off[i] = 0;
        return brute_fits(b, n, cap, i + 1, off);
    }
    if (b[i].size > cap)
        return false;
    uint64_t a = b[i].align ? b[i].align : 1;
    for (uint64_t o = 0; o + b[i].size <= cap; o += a) {
        bool clash = false;
        for (size_t j = 0; j < i && !clash; j++)
            clash = live_together(&b[i], &b[j]) && off[j] < o + b[i].size &&
                    o < off[j] + b[j].size;
        if (clash)
            continue;
        off[i] = o;
        if (brute_fits(b, n, cap, i + 1, off))
            return true;
    }
    return false;
}

/* Small problems with many ties: short time axis, small sizes, some alignments, and
 * exact copies of earlier buffers (the search breaks their symmetry). */
static size_t small_problem(uint64_t *s, memd_plan_buffer *b)
{
    static const uint64_t aligns[] = {0, 1, 1, 2, 4};
    size_t n = 1 + memd_test_below(s, MAXN);
    for (size_t i = 0; i < n; i++) {
        if (i && memd_test_below(s, 5) == 0) {
            b[i] = b[memd_test_below(s, i)];
            continue;
        }
        uint64_t lo = memd_test_below(s, 6);
        b[i] = (memd_plan_buffer){.lower = lo,
                                  .upper = lo + 1 + memd_test_below(s, 4),
                                  .size = memd_test_below(s, 10) ? 1 + memd_test_below(s, 5) : 0,
                                  .align = aligns[memd_test_below(s, 5)]};
    }
    return n;
}

/* The lower bound of b (in *lb) and the smallest arena brute force fits b in. */
static uint64_t brute_optimum(const memd_plan_buffer *b, size_t n, uint64_t *lb)
{
    ck_assert_int_eq(memd_plan_lower_bound(b, n, lb), 0);
    uint64_t off[MAXN];
    for (uint64_t cap = *lb;; cap++)
        if (brute_fits(b, n, cap, 0, off))
            return cap;
}

/* One drawn problem, its lower bound and brute-force optimum, and its round. */
typedef struct small_case {
    memd_plan_buffer b[MAXN];
    size_t n;
    uint64_t lb, opt;
    int round;
} small_case;

/* rounds small problems drawn from seed, each checked by fn; fn may draw from *s too,
 * which the next problem's draw then follows. */
static void each_small_problem(uint64_t seed, int rounds,
                               void (*fn)(const small_case *k, uint64_t *s, void *arg), void *arg)
{
    uint64_t s = seed;
    for (int round = 0; round < rounds; round++) {
        small_case k = {.round = round};
        k.n = small_problem(&s, k.b);
        k.opt = brute_optimum(k.b, k.n, &k.lb);
        fn(&k, &s, arg);
    }
}

/* b's conflict graph in *g and a search context on it (2^20 nodes at most). */
static plan_search_ctx *search_new(const memd_plan_buffer *b, size_t n, plan_graph *g)
{
    ck_assert_int_eq(memd_plan_graph_build(b, n, g), 0);
    plan_search_ctx *c;
    ck_assert_int_eq(memd_plan_search_new(b, n, g, 1u << 20, &c), 0);
    return c;
}

static void search_free(plan_search_ctx *c, plan_graph *g)
{
    memd_plan_search_free(c);
    memd_plan_graph_free(g);
}

static void check_plan(const memd_plan_buffer *b, size_t n, const uint64_t *off, uint64_t cap)
{
    memd_plan_violation v;
    uint64_t arena = 0;
    ck_assert_int_eq(memd_plan_validate(b, n, off, &v, &arena), 0);
    ck_assert_uint_le(arena, cap);
}

/* Below the optimum every preorder proves "impossible"; at it, each finds a valid plan.
 * The same context serves every run. */
static void decision_case(const small_case *k, uint64_t *s, void *arg)
{
    (void)s;
    (void)arg;
    plan_graph g;
    plan_search_ctx *c = search_new(k->b, k->n, &g);
    uint64_t out[MAXN];
    for (int h = 0; h < PLAN_HEUR_COUNT; h++) {
        if (h == PLAN_HEUR_GUIDED) {
            uint64_t bo[MAXN];
            ck_assert(brute_fits(k->b, k->n, k->opt, 0, bo));
            memd_plan_search_guide(c, bo);
        }
        for (uint64_t seed = 0; seed < 2; seed++) {
            for (uint64_t cap = k->lb > 2 ? k->lb - 2 : 0; cap < k->opt; cap++) {
                plan_budget bu = {0};
                ck_assert_int_eq(
                    memd_plan_search_run(c, cap, h, seed * 77, PLAN_DISC_ALL, 0, &bu, out), 0);
            }
            for (uint64_t cap = k->opt; cap <= k->opt + 2; cap++) {
                plan_budget bu = {0};
                ck_assert_int_eq(
                    memd_plan_search_run(c, cap, h, seed * 77, PLAN_DISC_ALL, 0, &bu, out), 1);
                check_plan(k->b, k->n, out, cap);
            }
        }
    }
    search_free(c, &g);
}

START_TEST(decision_matches_brute_force)
{
    each_small_problem(0xDEC1, 250, decision_case, NULL);
}
END_TEST

/* Limits (nodes, discrepancies, iterations) may only turn an answer into -EAGAIN:
 * never a plan that does not fit, never "impossible" when a plan exists. *arg counts
 * the runs they cut short. */
static void limits_case(const small_case *k, uint64_t *s, void *arg)
{
    int *cut = arg;
    plan_graph g;
    plan_search_ctx *c = search_new(k->b, k->n, &g);
    uint64_t out[MAXN];
    for (uint64_t cap = k->lb; cap <= k->opt + 1; cap++) {
        uint32_t disc = (uint32_t)memd_test_below(s, 3);
        uint64_t nodes = 1 + memd_test_below(s, 4);
        plan_budget bu = {.limit = memd_test_below(s, 2) ? 1 + memd_test_below(s, 5) : 0};
        int h = (int)memd_test_below(s, PLAN_HEUR_COUNT);
        int rc = memd_plan_search_run(c, cap, h, memd_test_below(s, 3), disc, nodes, &bu, out);
        ck_assert(rc == 1 || rc == 0 || rc == -EAGAIN);
        if (rc == 1)
            check_plan(k->b, k->n, out, cap);
        if (rc == 0)
            ck_assert_uint_lt(cap, k->opt);
        *cut += rc == -EAGAIN;
        ck_assert_uint_le(memd_plan_search_nodes(c), nodes);
        /* A cut-short run leaves the context ready for a complete one. */
        plan_budget full = {0};
        rc = memd_plan_search_run(c, cap, 0, 0, PLAN_DISC_ALL, 0, &full, out);
        ck_assert_int_eq(rc, cap >= k->opt ? 1 : 0);
        if (rc == 1)
            check_plan(k->b, k->n, out, cap);
    }
    search_free(c, &g);
}

START_TEST(limits_never_lie)
{
    int cut = 0;
    each_small_problem(0x11A1, 250, limits_case, &cut);
    ck_assert_int_gt(cut, 0); /* the limits did bite */
}
END_TEST

/* Identical buffers packed perfectly: symmetry breaking must not lose the packing. */
START_TEST(identical_buffers)
{
    memd_plan_buffer b[12];
    for (size_t i = 0; i < 12; i++)
        b[i] = (memd_plan_buffer){.lower = i < 6 ? 0 : 5, .upper = i < 6 ? 10 : 15, .size = 8};
    /* 6 live together at t in [0,5) and [10,15), 12 at [5,10): lb = 96. */
    plan_graph g;
    plan_search_ctx *c = search_new(b, 12, &g);
    uint64_t out[12];
    plan_budget bu = {0};
    ck_assert_int_eq(memd_plan_search_run(c, 96, 0, 0, PLAN_DISC_ALL, 0, &bu, out), 1);
    check_plan(b, 12, out, 96);
    ck_assert_int_eq(memd_plan_search_run(c, 95, 1, 3, PLAN_DISC_ALL, 0, &bu, out), 0);
    /* One node at most per buffer: identical buffers leave no alternatives to try. */
    ck_assert_int_eq(memd_plan_search_run(c, 200, 2, 0, PLAN_DISC_ALL, 0, &bu, out), 1);
    ck_assert_uint_le(memd_plan_search_nodes(c), 12);
    search_free(c, &g);
}
END_TEST

/* The planner proves optimality on small problems and its arena is the brute-force
 * optimum then; with pins it still never claims less than the optimum. *arg counts the
 * proofs. */
static void optimal_case(const small_case *k, uint64_t *s, void *arg)
{
    (void)s;
    int *proven = arg;
    uint64_t off[MAXN];
    memd_plan_result res;
    memd_plan_opts o = {.seed = (uint64_t)k->round, .max_iterations = 100000};
    ck_assert_int_eq(memd_plan_solve(k->b, k->n, &o, off, &res, NULL), 0);
    check_plan(k->b, k->n, off, res.arena);
    ck_assert_uint_ge(res.arena, k->opt);
    if (res.optimal)
        ck_assert_uint_eq(res.arena, k->opt);
    *proven += res.optimal;
    ck_assert_uint_eq(res.first_ns, 0); /* no clock, no time */
}

START_TEST(solve_is_optimal_on_small_problems)
{
    int proven = 0;
    each_small_problem(0x0B7, 200, optimal_case, &proven);
    ck_assert_int_eq(proven, 200);
}
END_TEST

START_TEST(first_plan_time_reported)
{
    uint64_t s = 0xF1;
    memd_plan_buffer b[64];
    for (size_t i = 0; i < 64; i++) {
        uint64_t lo = memd_test_below(&s, 50);
        b[i] = (memd_plan_buffer){.lower = lo,
                                  .upper = lo + 1 + memd_test_below(&s, 20),
                                  .size = 1 + memd_test_below(&s, 1000)};
    }
    uint64_t off[64], t = 0;
    memd_plan_result res;
    memd_plan_opts o = {.clock = memd_test_fake_us, .clock_ctx = &t, .budget_ns = 20000000};
    ck_assert_int_eq(memd_plan_solve(b, 64, &o, off, &res, NULL), 0);
    check_plan(b, 64, off, res.arena);
    ck_assert_uint_gt(res.first_ns, 0);
    ck_assert_uint_le(res.first_ns, t);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("plan-search");
    TCase *tc = tcase_create("plan-search");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, decision_matches_brute_force);
    tcase_add_test(tc, limits_never_lie);
    tcase_add_test(tc, identical_buffers);
    tcase_add_test(tc, solve_is_optimal_on_small_problems);
    tcase_add_test(tc, first_plan_time_reported);
    suite_add_tcase(s, tc);
    return s;
}

/* memd engine — the exact search within a budget, two interleaved halves with equal
 * node shares:
 *  - the decision problem at the lower bound, round robin over MiniMalloc's three
 *    preorders with a doubling node limit (it settles tight instances, and proves
 *    optimality);
 *  - descent: short randomized runs (restarts over perturbed preorders, and the order
 *    of the best plan so far with a time window ruined) at a capacity some steps below
 *    the best plan; a success lowers the best plan, a run of failures halves the step.
 *    Loose instances, where a complete search at the bound would wander forever (a
 *    depth-first search never revisits its first, lowest placements), improve here.
 * Every capacity is a multiple of the granule (the gcd of sizes and alignments: every
 * canonical plan's arena is one). */
#include <errno.h>
#include <string.h>

#include "plan_internal.h"

/* The exact search keeps section member lists: only where they stay small. */
#define PLAN_SEARCH_MAX_MEMBERS 4000000u

typedef struct exact {
    plan_search_ctx *c;
    const memd_plan_buffer *b;
    size_t n;
    plan_budget *bu;
    plan_best *bp;
    uint64_t *scratch;
    uint64_t lo;          /* no plan has an arena below lo (proven) */
    uint64_t gran;        /* every capacity tried is a multiple of it */
    uint64_t exact_limit; /* node limit of a decision run, doubling */
    uint64_t short_limit; /* node limit of a descent run */
    uint64_t step;        /* descent: granules below the best plan, 0 to pick anew */
    uint64_t rng, tries;
    unsigned fails;       /* descent runs cut short since the last success */
} exact;

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The gcd of the sizes and alignments of the non-empty buffers (1 if none); *m counts
 * those buffers. */
static uint64_t granule(const memd_plan_buffer *b, size_t n, size_t *m)
{
    uint64_t gran = 0;
    *m = 0;
    for (size_t i = 0; i < n; i++)
        if (b[i].size) {
            (*m)++;
            gran = gcd_u64(gran, b[i].size);
            gran = gcd_u64(gran, b[i].align ? b[i].align : 1);
        }
    return gran ? gran : 1;
}

static void take_found(exact *e)
{
    uint64_t top = 0;
    for (size_t i = 0; i < e->n; i++)
        if (e->scratch[i] + e->b[i].size > top)
            top = e->scratch[i] + e->b[i].size;
    memd_plan_best_take(e->bp, top, e->scratch, e->n, "search");
}

/* Decision at the bound: one run per preorder. 0, or a negative error. */
static int decide(exact *e)
{
    for (int h = 0; h < 3 && !e->bu->expired && e->bp->arena > e->lo; h++) {
        int rc = memd_plan_search_run(e->c, e->lo, h, 0, PLAN_DISC_ALL, e->exact_limit, e->bu,
                                      e->scratch);
        if (rc == 1)
            take_found(e);
        else if (rc == 0)
            e->lo += e->gran; /* proven: nothing fits at lo */
        else if (rc != -EAGAIN)
            return rc;
    }
    e->exact_limit *= 2;
    return 0;
}

/* Guides the next run along the best plan, in three of four of them with the buffers
 * live during one random buffer's lifetime shuffled (ruin and recreate: the search
 * starts next to the best plan and rebuilds around that window). */
static void guide_ruined(exact *e)
{
    const memd_plan_buffer *b = e->b;
    memcpy(e->scratch, e->bp->off, e->n * sizeof(*e->scratch));
    uint64_t r = plan_splitmix(&e->rng);
    size_t w = (size_t)(r % e->n);
    for (size_t i = 0; i < e->n && (r >> 32) % 4 != 0; i++)
        if (b[i].lower < b[w].upper && b[w].lower < b[i].upper)
            e->scratch[i] = plan_splitmix(&e->rng) % (e->bp->arena ? e->bp->arena : 1);
    memd_plan_search_guide(e->c, e->scratch);
}

/* One descent run. Every other run follows the best plan (guide_ruined); the others
 * restart from a perturbed preorder. 0, or a negative error. */
static int descend(exact *e)
{
    uint64_t room = (e->bp->arena - e->lo) / e->gran;
    if (!e->step || e->step > room)
        e->step = room > 4 ? room / 4 : 1;
    uint64_t cap = e->bp->arena - e->step * e->gran;
    int h = e->tries % 2 ? PLAN_HEUR_GUIDED : (int)((e->tries / 2) % PLAN_HEUR_GUIDED);
    if (h == PLAN_HEUR_GUIDED)
        guide_ruined(e);
    e->tries++;
    int rc = memd_plan_search_run(e->c, cap, h, plan_splitmix(&e->rng) | 1, PLAN_DISC_ALL,
                                  e->short_limit, e->bu, e->scratch);
    if (rc == 1) {
        take_found(e);
        e->fails = 0;
    } else if (rc == 0) {
        e->lo = cap + e->gran;
        e->step = 0;
    } else if (rc == -EAGAIN) {
        /* Halve the step after a full cycle of preorders failed. */
        if (++e->fails >= 2 * PLAN_HEUR_COUNT) {
            e->fails = 0;
            e->step = e->step > 1 ? e->step / 2 : 1;
        }
    } else {
        return rc;
    }
    return 0;
}

int memd_plan_exact(const memd_plan_buffer *b, size_t n, const plan_graph *g, uint64_t lb,
                    uint64_t seed, plan_budget *bu, plan_best *bp, uint64_t *scratch)
{
    exact e = {.b = b, .n = n, .bu = bu, .bp = bp, .scratch = scratch, .lo = lb,
               .rng = seed ^ 0x5EA5C4ull};
    int rc = memd_plan_search_new(b, n, g, PLAN_SEARCH_MAX_MEMBERS, &e.c);
    if (rc == -E2BIG)
        return 0;
    if (rc)
        return rc;
    size_t m;
    e.gran = granule(b, n, &m);
    e.exact_limit = 2 * (uint64_t)(m ? m : 1);
    e.short_limit = 4 * (uint64_t)(m ? m : 1) + 64;
    while (rc == 0 && !bu->expired && bp->arena > e.lo) {
        uint64_t before = bu->used;
        rc = decide(&e);
        /* Descent, for as many nodes as the exact half just used. */
        uint64_t share = 2 * (bu->used - before), start = bu->used;
        while (rc == 0 && !bu->expired && bp->arena > e.lo && bu->used - start < share)
            rc = descend(&e);
    }
    if (rc == 0)
        rc = bp->arena <= e.lo;
    memd_plan_search_free(e.c);
    return rc;
}

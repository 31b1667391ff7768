/* memd engine — iterated local search over the placement order: move a buffer earlier
 * in the order (or swap two), re-place the suffix from the first position that
 * changed, keep the move if the arena did not grow. A re-placement stops as soon as
 * its top passes the current arena: most moves are rejected, and early. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

typedef struct ls_state {
    plan_placer p;
    const memd_plan_buffer *b;
    size_t n, npinned;
    bool best_fit;
    uint32_t *order;
    uint64_t *off;
    uint64_t *pm;   /* pm[k] = max end over order[0..k) */
    uint64_t *save; /* offsets of the suffix before a trial move */
    uint32_t *save_order;
    uint64_t cur;   /* arena of the current order */
    plan_bound bound; /* = cur while a move is tried */
    uint64_t rng;
} ls_state;

static void ls_refresh_prefix(ls_state *s, size_t from)
{
    const memd_plan_buffer *b = s->b;
    for (size_t k = from; k < s->n; k++) {
        uint32_t x = s->order[k];
        uint64_t e = s->off[x] + b[x].size;
        s->pm[k + 1] = s->pm[k] > e ? s->pm[k] : e;
    }
}

/* Draws a move: positions j < i, and whether to swap them (else order[i] moves to j).
 * Half the moves take a buffer that reaches the top (one of the topmost at random) to
 * a random earlier place: it gets first pick of the low offsets. false: no move this
 * time. */
static bool pick_move(ls_state *s, size_t *pi, size_t *pj, bool *swap)
{
    size_t n = s->n, np = s->npinned, i, j;
    uint64_t r = plan_splitmix(&s->rng);
    int kind = (int)(r % 4);
    if (kind < 2) {
        size_t cnt = 0;
        i = n;
        for (size_t k = np; k < n; k++) {
            uint32_t x = s->order[k];
            if (s->off[x] + s->b[x].size == s->cur && plan_splitmix(&s->rng) % ++cnt == 0)
                i = k;
        }
        if (i == n || i == np)
            return false;
        j = np + (size_t)(plan_splitmix(&s->rng) % (i - np));
    } else {
        i = np + (size_t)(plan_splitmix(&s->rng) % (n - np));
        j = np + (size_t)(plan_splitmix(&s->rng) % (n - np));
        if (i == j)
            return false;
        if (j > i) {
            size_t t = i;
            i = j;
            j = t;
        }
    }
    *pi = i;
    *pj = j;
    *swap = kind == 3;
    return true;
}

/* Applies the move and re-places order[j..n). Kept when the arena does not grow:
 * sideways moves too, as plateaus are wide and the topmost buffer set changes as the
 * walk goes on; else undone. */
static void try_move(ls_state *s, size_t i, size_t j, bool swap)
{
    uint32_t *order = s->order;
    uint64_t *off = s->off;
    for (size_t k = j; k < s->n; k++) {
        s->save_order[k] = order[k];
        s->save[k] = off[order[k]];
    }
    if (swap) {
        uint32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    } else {
        uint32_t x = order[i];
        memmove(order + j + 1, order + j, (i - j) * sizeof(*order));
        order[j] = x;
    }
    for (size_t k = j; k <= i; k++)
        s->p.pos[order[k]] = (uint32_t)k;
    atomic_store_explicit(&s->bound, s->cur, memory_order_relaxed);
    uint64_t t = memd_plan_place_range(&s->p, order, j, s->best_fit, off);
    uint64_t cand = t > s->pm[j] ? t : s->pm[j];
    if (!s->p.beaten && cand <= s->cur) {
        memd_plan_placer_commit(&s->p);
        s->cur = cand;
        ls_refresh_prefix(s, j);
        return;
    }
    for (size_t k = j; k < s->n; k++) {
        order[k] = s->save_order[k];
        off[order[k]] = s->save[k];
        s->p.pos[order[k]] = (uint32_t)k;
    }
}

int memd_plan_local_search(const memd_plan_buffer *b, size_t n, const plan_graph *g,
                           uint32_t *order, size_t npinned, bool best_fit, uint64_t lb,
                           uint64_t seed, plan_budget *bu, uint64_t *off, uint64_t *arena)
{
    if (n - npinned < 2 || *arena <= lb)
        return 0;
    ls_state s = {.b = b, .n = n, .npinned = npinned, .best_fit = best_fit, .order = order,
                  .off = off, .rng = seed ^ 0x6C6F63616C736561ull};
    int rc = memd_plan_placer_init(&s.p, b, n, g);
    if (rc)
        return rc;
    atomic_init(&s.bound, UINT64_MAX);
    s.p.bound = &s.bound;
    s.pm = malloc((n + 1) * sizeof(*s.pm));
    s.save = malloc(n * sizeof(*s.save));
    s.save_order = malloc(n * sizeof(*s.save_order));
    uint64_t *best_off = malloc(n * sizeof(*best_off));
    if (!s.pm || !s.save || !s.save_order || !best_off) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t k = 0; k < n; k++)
        s.p.pos[order[k]] = (uint32_t)k;
    /* Start from the order's own placement so off matches order exactly. */
    s.pm[0] = 0;
    memd_plan_place_range(&s.p, order, 0, best_fit, off);
    memd_plan_placer_commit(&s.p);
    ls_refresh_prefix(&s, 0);
    s.cur = s.pm[n];
    uint64_t best = s.cur;
    memcpy(best_off, off, n * sizeof(*off));
    uint64_t last_ns = 0; /* duration of the last move, to avoid starting one too late */
    while (best > lb && !memd_plan_budget_spend(bu)) {
        uint64_t t0 = 0;
        if (bu->clock) {
            t0 = bu->clock(bu->clock_ctx);
            if (t0 + last_ns >= bu->deadline_ns)
                break;
        }
        size_t i, j;
        bool swap;
        if (!pick_move(&s, &i, &j, &swap))
            continue;
        try_move(&s, i, j, swap);
        if (bu->clock)
            last_ns = bu->clock(bu->clock_ctx) - t0;
        if (s.cur < best) {
            best = s.cur;
            memcpy(best_off, off, n * sizeof(*off));
            memd_plan_watch_best(bu->watch, best, bu->used);
        }
    }
    memcpy(off, best_off, n * sizeof(*off));
    *arena = best;
out:
    memd_plan_placer_free(&s.p);
    free(s.pm);
    free(s.save);
    free(s.save_order);
    free(best_off);
    return rc;
}

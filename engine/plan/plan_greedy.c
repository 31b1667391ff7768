/* memd engine — greedy placers in a priority order: over the conflict graph, over one
 * list of placed buffers sorted by offset, or over the segment tree of time
 * (plan_tree.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "plan_internal.h"

int memd_plan_placer_init(plan_placer *p, const memd_plan_buffer *b, size_t n, const plan_graph *g)
{
    memset(p, 0, sizeof(*p));
    p->b = b;
    p->n = n;
    p->g = g;
    size_t nn = n ? n : 1;
    p->pos = malloc(nn * sizeof(*p->pos));
    if (g) {
        size_t maxdeg = 1;
        for (size_t i = 0; i < n; i++)
            if (g->off[i + 1] - g->off[i] > maxdeg)
                maxdeg = g->off[i + 1] - g->off[i];
        p->pairs = malloc(2 * maxdeg * sizeof(*p->pairs));
        if (!p->pairs || !p->pos) {
            memd_plan_placer_free(p);
            return -ENOMEM;
        }
        return 0;
    }
    p->lst = malloc(nn * sizeof(*p->lst));
    p->work = malloc(nn * sizeof(*p->work));
    if (!p->pos || !p->lst || !p->work) {
        memd_plan_placer_free(p);
        return -ENOMEM;
    }
    return 0;
}

int memd_plan_placer_init_tree(plan_placer *p, const memd_plan_buffer *b, size_t n)
{
    memset(p, 0, sizeof(*p));
    p->b = b;
    p->n = n;
    p->fit_gaps = PLAN_TREE_FIT_GAPS;
    int rc = memd_plan_tree_new(b, n, &p->tr);
    if (rc)
        memd_plan_placer_free(p);
    return rc;
}

void memd_plan_placer_set_order(plan_placer *p, const uint32_t *order)
{
    if (p->pos)
        for (size_t k = 0; k < p->n; k++)
            p->pos[order[k]] = (uint32_t)k;
}

void memd_plan_placer_free(plan_placer *p)
{
    memd_plan_tree_free(p->tr);
    p->tr = NULL;
    free(p->pairs);
    free(p->pos);
    free(p->lst);
    free(p->work);
    p->pairs = NULL;
    p->pos = NULL;
    p->lst = NULL;
    p->work = NULL;
}

void memd_plan_placer_commit(plan_placer *p)
{
    uint32_t *t = p->lst;
    p->lst = p->work;
    p->work = t;
    p->nlst = p->nwork;
}

/* (offset, end) pairs sorted by offset: insertion sort for the short lists that
 * dominate, quicksort (median of three) above. Hand-written because qsort's indirect
 * calls cost more than the placement itself. */
static void pairs_sort(uint64_t *a, size_t n)
{
    while (n > 16) {
        size_t m = n / 2, last = n - 1;
        uint64_t x = a[0], y = a[2 * m], z = a[2 * last];
        uint64_t piv = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        size_t i = 0, j = last;
        for (;;) {
            while (a[2 * i] < piv)
                i++;
            while (a[2 * j] > piv)
                j--;
            if (i >= j)
                break;
            uint64_t t0 = a[2 * i], t1 = a[2 * i + 1];
            a[2 * i] = a[2 * j];
            a[2 * i + 1] = a[2 * j + 1];
            a[2 * j] = t0;
            a[2 * j + 1] = t1;
            i++;
            j--;
        }
        /* Recurse into the smaller half, loop on the larger. */
        size_t left = j + 1;
        if (left < n - left) {
            pairs_sort(a, left);
            a += 2 * left;
            n -= left;
        } else {
            pairs_sort(a + 2 * left, n - left);
            n = left;
        }
    }
    for (size_t i = 1; i < n; i++) {
        uint64_t k0 = a[2 * i], k1 = a[2 * i + 1];
        size_t j = i;
        while (j > 0 && a[2 * (j - 1)] > k0) {
            a[2 * j] = a[2 * (j - 1)];
            a[2 * j + 1] = a[2 * (j - 1) + 1];
            j--;
        }
        a[2 * j] = k0;
        a[2 * j + 1] = k1;
    }
}

/* Lowest (first fit) or tightest (best fit) aligned offset for `size` among the
 * occupied intervals in pairs (sorted by offset, may overlap each other). */
static uint64_t fit_gap(const uint64_t *pairs, size_t np, uint64_t size, uint64_t align,
                        bool best_fit)
{
    uint64_t reach = 0; /* highest end seen so far */
    uint64_t best = UINT64_MAX, best_gap = UINT64_MAX;
    for (size_t i = 0; i < np; i++) {
        uint64_t o = pairs[2 * i], e = pairs[2 * i + 1];
        if (o > reach) {
            uint64_t cand = plan_align_up(reach, align);
            if (cand <= o && o - cand >= size) {
                if (!best_fit)
                    return cand;
                if (o - reach < best_gap) {
                    best_gap = o - reach;
                    best = cand;
                }
            }
        }
        if (e > reach)
            reach = e;
    }
    return best != UINT64_MAX ? best : plan_align_up(reach, align);
}

/* The (offset, end) pairs of x's neighbours placed before position k, in p->pairs:
 * unsorted. */
static size_t gather(plan_placer *p, uint32_t x, size_t k, const uint64_t *off)
{
    const memd_plan_buffer *b = p->b;
    size_t np = 0;
    const plan_graph *g = p->g;
    for (size_t e = g->off[x]; e < g->off[x + 1]; e++) {
        uint32_t y = g->adj[e];
        if (p->pos[y] < k) {
            p->pairs[2 * np] = off[y];
            p->pairs[2 * np + 1] = off[y] + b[y].size;
            np++;
        }
    }
    return np;
}

/* Graph mode. */
static uint64_t place_neighbours(plan_placer *p, const uint32_t *order, size_t from,
                                 bool best_fit, uint64_t *off)
{
    const memd_plan_buffer *b = p->b;
    uint64_t top = 0, cap = plan_bound_get(p->bound);
    p->beaten = false;
    for (size_t k = from; k < p->n; k++) {
        uint32_t x = order[k];
        if (b[x].pinned) {
            off[x] = b[x].offset;
        } else if (b[x].size == 0) {
            off[x] = 0;
        } else {
            size_t np = gather(p, x, k, off);
            pairs_sort(p->pairs, np);
            off[x] = fit_gap(p->pairs, np, b[x].size, b[x].align ? b[x].align : 1, best_fit);
        }
        if (off[x] + b[x].size > top)
            top = off[x] + b[x].size;
        if (plan_run_stops(p, k, from, top, &cap))
            return UINT64_MAX;
    }
    return top;
}

/* List mode: every placed non-empty buffer in one list sorted by offset; a placement
 * walks it from the bottom, looking only at buffers live at the same time. O(placed)
 * per buffer but with no graph and no sorting: the better choice for dense traces. */
static uint64_t place_list(plan_placer *p, const uint32_t *order, size_t from, bool best_fit,
                           uint64_t *off)
{
    const memd_plan_buffer *b = p->b;
    size_t nw = 0;
    for (size_t r = 0; r < p->nlst; r++)
        if (p->pos[p->lst[r]] < from)
            p->work[nw++] = p->lst[r];
    uint64_t top = 0, cap = plan_bound_get(p->bound);
    p->beaten = false;
    for (size_t k = from; k < p->n; k++) {
        uint32_t x = order[k];
        uint64_t sz = b[x].size, lo = b[x].lower, up = b[x].upper;
        if (b[x].pinned) {
            off[x] = b[x].offset;
        } else if (sz == 0) {
            off[x] = 0;
        } else {
            uint64_t a = b[x].align ? b[x].align : 1;
            uint64_t reach = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
            bool done = false;
            for (size_t r = 0; r < nw && !done; r++) {
                uint32_t y = p->work[r];
                if (b[y].lower >= up || lo >= b[y].upper)
                    continue;
                uint64_t o = off[y], e = o + b[y].size;
                if (o > reach) {
                    uint64_t cand = plan_align_up(reach, a);
                    if (cand <= o && o - cand >= sz) {
                        if (!best_fit) {
                            best = cand;
                            done = true;
                        } else if (o - reach < best_gap) {
                            best_gap = o - reach;
                            best = cand;
                        }
                    }
                }
                if (e > reach)
                    reach = e;
            }
            off[x] = best != UINT64_MAX ? best : plan_align_up(reach, a);
        }
        if (off[x] + sz > top)
            top = off[x] + sz;
        if (plan_run_stops(p, k, from, top, &cap))
            return UINT64_MAX;
        if (sz) {
            /* Insert after the last entry with offset <= off[x]. */
            plan_off_key q = {off, off[x]};
            size_t l =
                memd_partition_point(p->work, nw, sizeof(*p->work), memd_plan_off_at_or_below, &q);
            memmove(p->work + l + 1, p->work + l, (nw - l) * sizeof(*p->work));
            p->work[l] = x;
            nw++;
        }
    }
    p->nwork = nw;
    return top;
}

/* How many placements ahead the tree placer asks for a buffer's data (4 to 16 did the
 * same on synth_60k). */
#define PLACE_AHEAD 8u

/* Tree mode. The tree holds exactly order[0..k) while order[k] is placed. Returns
 * UINT64_MAX when stopped, beaten or out of memory (off[] is then partial). */
static uint64_t place_tree(plan_placer *p, const uint32_t *order, size_t from, bool best_fit,
                           uint64_t *off)
{
    const memd_plan_buffer *b = p->b;
    /* In start order the placed buffers x overlaps are the ones live at its start: a
     * sweep over time finds the same offsets without the tree. */
    if (from == 0 && memd_plan_sweep_applies(b, order, p->n))
        return memd_plan_sweep_place(p, order, best_fit, off);
    int rc = 0;
    p->failed = p->beaten = false;
    memd_plan_tree_clear(p->tr);
    for (size_t k = 0; k < from && rc == 0; k++)
        rc = memd_plan_tree_insert(p->tr, order[k], off[order[k]], b[order[k]].size);
    uint64_t top = 0, cap = plan_bound_get(p->bound);
    for (size_t k = from; k < p->n && rc == 0; k++) {
        uint32_t x = order[k];
        if (k + PLACE_AHEAD < p->n) {
            /* The order visits the buffers at random: start the misses on the ones a
             * few placements ahead (synth_60k: ~10 % of a run waited for b[x]; 1M
             * size order first fit ~12 % faster). */
            uint32_t y = order[k + PLACE_AHEAD];
            __builtin_prefetch(&b[y]);
            __builtin_prefetch(&off[y], 1);
            memd_plan_tree_prefetch(p->tr, y);
        }
        if (b[x].pinned)
            off[x] = b[x].offset;
        else if (b[x].size == 0)
            off[x] = 0;
        else
            off[x] = memd_plan_tree_fit(p->tr, x, b[x].size, b[x].align ? b[x].align : 1,
                                        best_fit, p->fit_gaps);
        if (off[x] + b[x].size > top)
            top = off[x] + b[x].size;
        if (plan_run_stops(p, k, from, top, &cap))
            return UINT64_MAX;
        rc = memd_plan_tree_insert(p->tr, x, off[x], b[x].size);
    }
    p->failed = rc != 0;
    return rc ? UINT64_MAX : top;
}

uint64_t memd_plan_place_range(plan_placer *p, const uint32_t *order, size_t from, bool best_fit,
                               uint64_t *off)
{
    if (p->tr)
        return place_tree(p, order, from, best_fit, off);
    return p->g ? place_neighbours(p, order, from, best_fit, off)
                        : place_list(p, order, from, best_fit, off);
}

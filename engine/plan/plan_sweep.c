/* memd engine — greedy placement in start-time order as a sweep over time: when the
 * buffers are placed by start, the placed ones a buffer overlaps are exactly those still
 * live at its start (they all started at or before it; those that ended did so at or
 * before it starts). So a placement needs only the live buffers' offset intervals, and
 * these never overlap each other (all live at one instant): a treap of disjoint
 * intervals by offset, each subtree knowing its widest inner free gap, finds the lowest
 * gap that fits (and the next ones, for best fit) in O(log live). Ends leave through a
 * min-heap. O(n log n) in all, against the segment tree's (log T)^2 merged-set reads,
 * with exactly the segment tree's (and the list placers') offsets. */
#include <errno.h>
#include <stdlib.h>

#include "plan_internal.h"

/* A live buffer's interval [a, e) and its subtree's: lowest start, highest end, widest
 * free gap between two of its intervals. Slot 0 is "none". */
typedef struct sw_node {
    uint64_t a, e, mina, maxe, gap;
    uint32_t l, r;
} sw_node;

typedef struct sw_end {
    uint64_t upper;
    uint32_t slot;
} sw_end;

typedef struct sweep {
    sw_node *nd;
    sw_end *heap;
    uint32_t *freel; /* free slots */
    size_t cap, used, nfree, nheap;
} sweep;

/* Treap priority of a slot: a fixed mix of its number (slots are reused, each with its
 * own pseudo-random priority; the key order does not depend on it). */
static uint32_t prio(uint32_t s)
{
    uint32_t z = s * 0x9E3779B1u;
    z ^= z >> 16;
    z *= 0x85EBCA6Bu;
    z ^= z >> 13;
    return z;
}

static void pull(sw_node *nd, uint32_t v)
{
    sw_node *x = &nd[v];
    uint64_t g = 0;
    x->mina = x->a;
    x->maxe = x->e;
    if (x->l) {
        const sw_node *l = &nd[x->l];
        x->mina = l->mina;
        g = l->gap > x->a - l->maxe ? l->gap : x->a - l->maxe;
    }
    if (x->r) {
        const sw_node *r = &nd[x->r];
        x->maxe = r->maxe;
        uint64_t h = r->gap > r->mina - x->e ? r->gap : r->mina - x->e;
        g = h > g ? h : g;
    }
    x->gap = g;
}

static uint32_t insert(sw_node *nd, uint32_t v, uint32_t x)
{
    if (!v)
        return x;
    if (nd[x].a < nd[v].a) {
        uint32_t c = nd[v].l = insert(nd, nd[v].l, x);
        if (prio(c) > prio(v)) { /* rotate right */
            nd[v].l = nd[c].r;
            nd[c].r = v;
            pull(nd, v);
            pull(nd, c);
            return c;
        }
    } else {
        uint32_t c = nd[v].r = insert(nd, nd[v].r, x);
        if (prio(c) > prio(v)) { /* rotate left */
            nd[v].r = nd[c].l;
            nd[c].l = v;
            pull(nd, v);
            pull(nd, c);
            return c;
        }
    }
    pull(nd, v);
    return v;
}

/* Joins x and y (every key of x below every key of y). */
static uint32_t merge(sw_node *nd, uint32_t x, uint32_t y)
{
    if (!x || !y)
        return x ? x : y;
    if (prio(x) > prio(y)) {
        nd[x].r = merge(nd, nd[x].r, y);
        pull(nd, x);
        return x;
    }
    nd[y].l = merge(nd, x, nd[y].l);
    pull(nd, y);
    return y;
}

/* Removes the interval starting at a (present: starts are distinct among live
 * non-empty intervals). */
static uint32_t erase(sw_node *nd, uint32_t v, uint64_t a)
{
    if (nd[v].a == a)
        return merge(nd, nd[v].l, nd[v].r);
    if (a < nd[v].a)
        nd[v].l = erase(nd, nd[v].l, a);
    else
        nd[v].r = erase(nd, nd[v].r, a);
    pull(nd, v);
    return v;
}

/* The gaps that fit, lowest first, as the list placers see them: a gap runs from the
 * end of the interval below it (pe) to the next start; it fits when its first aligned
 * offset leaves room for size. Best fit keeps the tightest (ties: the lowest) of the
 * first max_gaps (0: all). */
typedef struct sw_query {
    uint64_t size, align;
    unsigned max_gaps, fits;
    bool best_fit, done;
    uint64_t best, tight;
} sw_query;

static void consider(sw_query *q, uint64_t pe, uint64_t a)
{
    uint64_t c = plan_align_up(pe, q->align);
    if (a <= pe || c > a || a - c < q->size)
        return;
    q->fits++;
    if (a - pe < q->tight) {
        q->tight = a - pe;
        q->best = c;
    }
    if (!q->best_fit || q->tight == q->size || (q->max_gaps && q->fits >= q->max_gaps))
        q->done = true;
}

/* In order over v's subtree, pe the end of the interval just below it; subtrees with
 * no gap as wide as size are skipped whole. */
static void gaps(const sw_node *nd, uint32_t v, uint64_t pe, sw_query *q)
{
    const sw_node *x = &nd[v];
    if (x->mina - pe < q->size && x->gap < q->size)
        return;
    if (x->l) {
        gaps(nd, x->l, pe, q);
        if (q->done)
            return;
        pe = nd[x->l].maxe;
    }
    consider(q, pe, x->a);
    if (!q->done && x->r)
        gaps(nd, x->r, x->e, q);
}

static void heap_push(sweep *w, uint64_t upper, uint32_t slot)
{
    size_t i = w->nheap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (w->heap[p].upper <= upper)
            break;
        w->heap[i] = w->heap[p];
        i = p;
    }
    w->heap[i] = (sw_end){upper, slot};
}

static void heap_pop(sweep *w)
{
    sw_end last = w->heap[--w->nheap];
    size_t i = 0, n = w->nheap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && w->heap[c + 1].upper < w->heap[c].upper)
            c++;
        if (w->heap[c].upper >= last.upper)
            break;
        w->heap[i] = w->heap[c];
        i = c;
    }
    if (n)
        w->heap[i] = last;
}

static int grow(sweep *w)
{
    size_t cap = w->cap ? 2 * w->cap : 256;
    sw_node *nd = realloc(w->nd, cap * sizeof(*nd));
    if (nd)
        w->nd = nd;
    sw_end *h = realloc(w->heap, cap * sizeof(*h));
    if (h)
        w->heap = h;
    uint32_t *f = realloc(w->freel, cap * sizeof(*f));
    if (f)
        w->freel = f;
    if (!nd || !h || !f)
        return -ENOMEM;
    w->cap = cap;
    return 0;
}

/* How many buffers ahead the sweep asks for a buffer's data. */
#define SWEEP_AHEAD 8u

bool memd_plan_sweep_applies(const memd_plan_buffer *b, const uint32_t *order, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (b[order[k]].pinned || (k && b[order[k]].lower < b[order[k - 1]].lower))
            return false;
    return true;
}

uint64_t memd_plan_sweep_place(plan_placer *p, const uint32_t *order, bool best_fit, uint64_t *off)
{
    const memd_plan_buffer *b = p->b;
    size_t n = p->n;
    sweep w = {0};
    uint32_t root = 0;
    uint64_t top = 0, cap = plan_bound_get(p->bound);
    int rc = 0;
    p->failed = p->beaten = false;
    for (size_t k = 0; k < n; k++) {
        uint32_t x = order[k];
        if (k + SWEEP_AHEAD < n) {
            /* Start order visits the buffers at random: start the misses on a later
             * one's data (1M: start order first fit ~30 % faster). */
            __builtin_prefetch(&b[order[k + SWEEP_AHEAD]]);
            __builtin_prefetch(&off[order[k + SWEEP_AHEAD]], 1);
        }
        /* Buffers that ended at or before x starts are free space again. */
        while (w.nheap && w.heap[0].upper <= b[x].lower) {
            uint32_t s = w.heap[0].slot;
            heap_pop(&w);
            root = erase(w.nd, root, w.nd[s].a);
            w.freel[w.nfree++] = s;
        }
        uint64_t size = b[x].size;
        if (!size) {
            off[x] = 0;
            continue;
        }
        sw_query q = {.size = size, .align = b[x].align ? b[x].align : 1,
                      .max_gaps = p->fit_gaps, .best_fit = best_fit,
                      .best = UINT64_MAX, .tight = UINT64_MAX};
        if (root)
            gaps(w.nd, root, 0, &q);
        off[x] = q.best != UINT64_MAX ? q.best
                                      : plan_align_up(root ? w.nd[root].maxe : 0, q.align);
        top = off[x] + size > top ? off[x] + size : top;
        if (plan_run_stops(p, k, 0, top, &cap)) {
            top = UINT64_MAX;
            break;
        }
        uint32_t s;
        if (w.nfree) {
            s = w.freel[--w.nfree];
        } else {
            if (w.used + 1 >= w.cap && (rc = grow(&w)) != 0)
                break;
            s = (uint32_t)++w.used;
        }
        w.nd[s] = (sw_node){.a = off[x], .e = off[x] + size};
        pull(w.nd, s);
        root = insert(w.nd, root, s);
        heap_push(&w, b[x].upper, s);
    }
    free(w.nd);
    free(w.heap);
    free(w.freel);
    p->failed = rc != 0;
    return rc ? UINT64_MAX : top;
}

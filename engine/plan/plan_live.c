/* memd engine — live intervals of a sweep over time (plan_live.h). */
#include <errno.h>
#include <stdlib.h>

#include "plan_internal.h"
#include "plan_live.h"

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

static void pull(plan_live_node *nd, uint32_t v)
{
    plan_live_node *x = &nd[v];
    uint64_t g = 0;
    x->mina = x->a;
    x->maxe = x->e;
    if (x->c[0]) {
        const plan_live_node *l = &nd[x->c[0]];
        x->mina = l->mina;
        g = l->gap > x->a - l->maxe ? l->gap : x->a - l->maxe;
    }
    if (x->c[1]) {
        const plan_live_node *r = &nd[x->c[1]];
        x->maxe = r->maxe;
        uint64_t h = r->gap > r->mina - x->e ? r->gap : r->mina - x->e;
        g = h > g ? h : g;
    }
    x->gap = g;
}

static uint32_t insert(plan_live_node *nd, uint32_t v, uint32_t x)
{
    if (!v)
        return x;
    int d = nd[x].a >= nd[v].a; /* the side x goes to; a rotation lifts it over v */
    uint32_t c = nd[v].c[d] = insert(nd, nd[v].c[d], x);
    if (prio(c) > prio(v)) {
        nd[v].c[d] = nd[c].c[!d];
        nd[c].c[!d] = v;
        pull(nd, v);
        pull(nd, c);
        return c;
    }
    pull(nd, v);
    return v;
}

/* Joins x and y (every key of x below every key of y). */
static uint32_t merge(plan_live_node *nd, uint32_t x, uint32_t y)
{
    if (!x || !y)
        return x ? x : y;
    if (prio(x) > prio(y)) {
        nd[x].c[1] = merge(nd, nd[x].c[1], y);
        pull(nd, x);
        return x;
    }
    nd[y].c[0] = merge(nd, x, nd[y].c[0]);
    pull(nd, y);
    return y;
}

/* Removes the interval starting at a (present: live intervals are disjoint and
 * non-empty, so their starts are distinct). */
static uint32_t erase(plan_live_node *nd, uint32_t v, uint64_t a)
{
    if (nd[v].a == a)
        return merge(nd, nd[v].c[0], nd[v].c[1]);
    if (a < nd[v].a)
        nd[v].c[0] = erase(nd, nd[v].c[0], a);
    else
        nd[v].c[1] = erase(nd, nd[v].c[1], a);
    pull(nd, v);
    return v;
}

/* The gaps that fit, lowest first, as the list placers see them: a gap runs from the
 * end of the interval below it (pe) to the next start; it fits when its first aligned
 * offset leaves room for size. */
typedef struct live_query {
    uint64_t size, align;
    unsigned max_gaps, fits;
    bool best_fit, done;
    uint64_t best, tight;
} live_query;

static void consider(live_query *q, uint64_t pe, uint64_t a)
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
static void gaps(const plan_live_node *nd, uint32_t v, uint64_t pe, live_query *q)
{
    const plan_live_node *x = &nd[v];
    if (x->mina - pe < q->size && x->gap < q->size)
        return;
    if (x->c[0]) {
        gaps(nd, x->c[0], pe, q);
        if (q->done)
            return;
        pe = nd[x->c[0]].maxe;
    }
    consider(q, pe, x->a);
    if (!q->done && x->c[1])
        gaps(nd, x->c[1], x->e, q);
}

uint64_t plan_live_fit(const plan_live *w, uint64_t size, uint64_t align, bool best_fit,
                       unsigned max_gaps)
{
    live_query q = {.size = size, .align = align, .max_gaps = max_gaps,
                    .best_fit = best_fit, .best = UINT64_MAX, .tight = UINT64_MAX};
    if (!w->root)
        return 0;
    gaps(w->nd, w->root, 0, &q);
    return q.best != UINT64_MAX ? q.best : plan_align_up(w->nd[w->root].maxe, align);
}

/* The live interval [a, e) overlaps, if any: only its neighbours by start can (the
 * intervals are disjoint), the last one starting at or below a and the first above. */
static uint32_t clash_of(const plan_live_node *nd, uint32_t v, uint64_t a, uint64_t e)
{
    while (v) {
        const plan_live_node *x = &nd[v];
        if (x->a <= a) {
            if (x->e > a)
                return v;
            v = x->c[1];
        } else {
            if (x->a < e)
                return v;
            v = x->c[0];
        }
    }
    return 0;
}

static void heap_push(plan_live *w, uint64_t upper, uint32_t slot)
{
    size_t i = w->nheap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (w->heap[p].upper <= upper)
            break;
        w->heap[i] = w->heap[p];
        i = p;
    }
    w->heap[i] = (plan_live_end){upper, slot};
}

static void heap_pop(plan_live *w)
{
    plan_live_end last = w->heap[--w->nheap];
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

void plan_live_expire(plan_live *w, uint64_t t)
{
    while (w->nheap && w->heap[0].upper <= t) {
        uint32_t s = w->heap[0].slot;
        heap_pop(w);
        w->root = erase(w->nd, w->root, w->nd[s].a);
        w->freel[w->nfree++] = s;
    }
}

static int grow(plan_live *w)
{
    size_t cap = w->cap ? 2 * w->cap : 256;
    plan_live_node *nd = realloc(w->nd, cap * sizeof(*nd));
    if (nd)
        w->nd = nd;
    plan_live_end *h = realloc(w->heap, cap * sizeof(*h));
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

int plan_live_add(plan_live *w, uint64_t a, uint64_t e, uint64_t upper, uint32_t id,
                  uint32_t *clash)
{
    uint32_t s = clash_of(w->nd, w->root, a, e);
    if (s) {
        *clash = w->nd[s].id;
        return 1;
    }
    if (w->nfree) {
        s = w->freel[--w->nfree];
    } else {
        int rc;
        if (w->used + 1 >= w->cap && (rc = grow(w)) != 0)
            return rc;
        s = (uint32_t)++w->used;
    }
    w->nd[s] = (plan_live_node){.a = a, .e = e, .id = id};
    pull(w->nd, s);
    w->root = insert(w->nd, w->root, s);
    heap_push(w, upper, s);
    return 0;
}

void plan_live_free(plan_live *w)
{
    free(w->nd);
    free(w->heap);
    free(w->freel);
    *w = (plan_live){0};
}

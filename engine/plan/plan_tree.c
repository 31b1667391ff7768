/* memd engine — a segment tree over time for the greedy placers on big problems: a
 * placement costs about (log T)^2 binary searches over merged offset intervals instead
 * of a walk over every placed buffer it overlaps in time (tens of thousands at a million
 * buffers).
 *
 * Time is reduced to ranks among the distinct start times (x and y overlap iff
 * rank(lower_x) < cnt(upper_y) and rank(lower_y) < cnt(upper_x), cnt(t) = number of
 * distinct starts below t), so a buffer is the rank range [lo, hi). A placed buffer is
 * stored at the O(log T) canonical nodes covering its range (set C of the node) and in
 * set S of those nodes and of all their ancestors: S(v) is the union of every buffer
 * stored in v's subtree, i.e. of every buffer that lives inside v's range. The buffers
 * overlapping a range are then exactly those in S(canonical nodes) plus those in C of the
 * canonical nodes' ancestors. Both sets are unions of offset intervals kept merged
 * (touching intervals fuse), so high nodes, which see most buffers, hold few intervals:
 * a placement reads the unions, not the buffers. Greedy runs only insert; a run starts
 * from a cleared tree. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

typedef struct iv {
    uint64_t a, e; /* occupied [a, e) */
} iv;

/* A set: a chunk of class cls in the pool (cls NO_CHUNK: none), len used. Classes step
 * by 1.5 and 4/3 (1, 2, 3, 4, 6, 8, 12, ...): less slack than powers of two, which
 * counts at a million buffers. */
typedef struct set {
    uint32_t at;
    uint32_t len : 26;
    uint32_t cls : 6;
} set;

/* A node's two sets side by side: one cache line serves a visit. The lowest
 * NO_S_LEVELS levels keep no S, the biggest share of the intervals: such a node's S
 * would be the union of the C sets of its subtree (at most 15), which a query reads
 * instead; their C sets live in a separate array of bare sets (8 bytes a node, not
 * 16). */
typedef struct node {
    set s, c;
} node;

#define NO_CHUNK 63u
#define NCLASSES 56u
/* Levels at the bottom without an S. 4, not 3: a million gen_large buffers' S sets
 * at the fourth level held 392k intervals (6 MB of the memory peak; nodes there also
 * take 8 bytes, not 16); a query reads up to 15 C sets instead of one S there, and
 * measured no slower (synth_60k ten runs, 1M size and length order first fit). */
#define NO_S_LEVELS 4u
#define MAX_SET_LEN ((1u << 26) - 1)
/* Per level a canonical node and an ancestor on each side, 33 levels; the canonical
 * nodes of the levels without an S give their subtrees' C sets (2 x (1 + 3 + 7 + 15)
 * sets, not 2 x 4); two path unions. */
#define MAX_SETS 192
_Static_assert(4 * 33 + 2 * ((2u << NO_S_LEVELS) - 2 - 2 * NO_S_LEVELS) + 2 <= MAX_SETS,
               "a query's sets must fit in MAX_SETS");
/* The level of the path unions (see struct plan_tree). Measured on synth_60k and a
 * million gen_large buffers: 7 or 8 best; higher costs more at inserts (a long buffer's
 * interval goes to every path union below its canonical nodes) than queries gain, and
 * more levels of path unions did not pay. */
#ifndef PU_LEVEL
#define PU_LEVEL 7u
#endif

struct plan_tree {
    size_t n;
    uint32_t leaves;    /* power of two >= ranks + 2 (boundary leaves) */
    uint32_t last_leaf; /* ranks + 1: no walk reaches a node wholly right of it */
    uint32_t *lo, *hi;  /* per buffer: rank range */
    uint32_t first_low; /* the first node without an S */
    node *nd;           /* nodes 1 .. first_low - 1 (the ones with an S) */
    set *low;           /* C of nodes first_low .. 2 * leaves - 1 */
    unsigned height;    /* leaves = 1 << height */
    /* Path unions: node w at level PU_LEVEL keeps pu[w - 2^PU_LEVEL], the union of the
     * C sets of w and its ancestors (the buffers that cover w whole). A query inside
     * one or two such nodes reads it instead of those C sets: the long-lived buffers'
     * blocks merged in one set, where the leapfrog bounced between ~PU_LEVEL sets of
     * them (synth_60k length order first fit: 17 passes a query -> 5). NULL: none
     * (trees too shallow). */
    set *pu;
    iv *pool;
    size_t pool_len, pool_cap;
    uint32_t freel[NCLASSES]; /* per class: a free chunk's index + 1, 0 none */
    const iv *qv[MAX_SETS];
    uint32_t qn[MAX_SETS];
};

/* ---- interval sets in one pool, chunks of a few sizes with free lists ---- */

static uint32_t class_size(unsigned cls)
{
    return cls == 0 ? 1u : cls & 1 ? 1u << ((cls + 1) / 2) : 3u << (cls / 2 - 1);
}

static void chunk_free(plan_tree *t, unsigned cls, uint32_t at);

static unsigned class_of(uint32_t size)
{
    unsigned c = 0;
    while (class_size(c) < size)
        c++;
    return c;
}

static int chunk_alloc(plan_tree *t, unsigned cls, uint32_t *at)
{
    if (t->freel[cls]) {
        *at = t->freel[cls] - 1;
        t->freel[cls] = (uint32_t)t->pool[*at].a;
        return 0;
    }
    /* A free chunk one or two classes up is split (the rest is a class of its own:
     * sizes step by 1.5 and 4/3, two steps double): a set growing out of a class
     * frees its old chunk, and without a split the chunks of the classes no set
     * grows into again stayed unused at the peak (a million buffers: 210k-370k
     * intervals, 3-6 MB). */
    for (unsigned up = 1; up <= 2 && cls + up < NCLASSES; up++) {
        if (!t->freel[cls + up])
            continue;
        *at = t->freel[cls + up] - 1;
        t->freel[cls + up] = (uint32_t)t->pool[*at].a;
        uint32_t rest = class_size(cls + up) - class_size(cls);
        chunk_free(t, class_of(rest), *at + class_size(cls));
        return 0;
    }
    size_t need = t->pool_len + class_size(cls);
    if (need > UINT32_MAX)
        return -ENOMEM;
    if (need > t->pool_cap) {
        size_t cap = t->pool_cap ? t->pool_cap : 1024;
        while (cap < need)
            cap += cap / 4; /* memory is tight at a million buffers */
        iv *p = realloc(t->pool, cap * sizeof(*p));
        if (!p)
            return -ENOMEM;
        t->pool = p;
        t->pool_cap = cap;
    }
    *at = (uint32_t)t->pool_len;
    t->pool_len = need;
    return 0;
}

static void chunk_free(plan_tree *t, unsigned cls, uint32_t at)
{
    t->pool[at].a = t->freel[cls];
    t->freel[cls] = at + 1;
}

/* First interval with end > x: a binary search without branches on the data (the
 * comparisons become conditional moves; a mispredicted branch per halving costs more
 * than the search). */
static uint32_t first_end_above(const iv *v, uint32_t len, uint64_t x)
{
    if (len == 0)
        return 0;
    const iv *base = v;
    while (len > 1) {
        uint32_t half = len / 2;
        /* Both halves' next probes are asked for while this one loads: the probes of a
         * long set are cache misses at a million buffers (1M size order first fit ~10 %
         * faster). */
        __builtin_prefetch(&base[half / 2].e);
        __builtin_prefetch(&base[half + half / 2].e);
        base = base[half].e <= x ? base + half : base;
        len -= half;
    }
    return (uint32_t)(base - v) + (base->e <= x);
}

/* Adds [a, e) to the set, fusing every interval it overlaps or touches. 1 when the set
 * already covered it (nothing changed), 0 added, -ENOMEM. */
static int set_add(plan_tree *t, set *st, uint64_t a, uint64_t e)
{
    iv *v = st->len ? t->pool + st->at : NULL;
    /* i: first interval with end >= a (touching fuses); j: first with start > e. */
    uint32_t i = a ? first_end_above(v, st->len, a - 1) : 0, j = i;
    if (i < st->len && v[i].a <= a && v[i].e >= e)
        return 1;
    while (j < st->len && v[j].a <= e)
        j++;
    if (j > i) {
        v[i].a = v[i].a < a ? v[i].a : a;
        v[i].e = v[j - 1].e > e ? v[j - 1].e : e;
        memmove(v + i + 1, v + j, (st->len - j) * sizeof(*v));
        st->len -= j - i - 1;
        return 0;
    }
    if (st->cls == NO_CHUNK || st->len == class_size(st->cls)) {
        unsigned nc = st->cls == NO_CHUNK ? 0 : st->cls + 1u;
        uint32_t at;
        if (st->len == MAX_SET_LEN || nc >= NCLASSES || chunk_alloc(t, nc, &at))
            return -ENOMEM;
        if (st->len) {
            memcpy(t->pool + at, t->pool + st->at, st->len * sizeof(*v));
            chunk_free(t, st->cls, st->at);
        }
        st->at = at;
        st->cls = nc & 63u;
        v = t->pool + at;
    }
    memmove(v + i + 1, v + i, (st->len - i) * sizeof(*v));
    v[i] = (iv){a, e};
    st->len++;
    return 0;
}

/* ---- the tree ---- */

static bool has_s(const plan_tree *t, uint32_t v)
{
    return v < t->first_low;
}

/* Ranks: lo = the number of distinct start times below the buffer's start, hi = below
 * its end; both from a pass over the buffers sorted (radix) by start and by end. */
static int rank_starts(plan_tree *t, const memd_plan_buffer *b, size_t n, size_t *ranks)
{
    *ranks = 0;
    if (n == 0)
        return 0;
    uint64_t *key = malloc(n * sizeof(*key));
    uint32_t *bs = malloc(n * sizeof(*bs)), *be = malloc(n * sizeof(*be));
    if (!key || !bs || !be) {
        free(key);
        free(bs);
        free(be);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        key[i] = b[i].lower;
        bs[i] = be[i] = (uint32_t)i;
    }
    memd_plan_sort_asc(bs, n, key);
    for (size_t i = 0; i < n; i++)
        key[i] = b[i].upper;
    memd_plan_sort_asc(be, n, key);
    size_t m = 0, j = 0; /* m: distinct starts so far; j: next end in order */
    for (size_t k = 0; k < n; k++) {
        uint64_t lo = b[bs[k]].lower;
        /* Ends at or below this start count the distinct starts below it. */
        for (; j < n && b[be[j]].upper <= lo; j++)
            t->hi[be[j]] = (uint32_t)m;
        if (k == 0 || b[bs[k - 1]].lower != lo)
            m++;
        t->lo[bs[k]] = (uint32_t)(m - 1);
    }
    for (; j < n; j++)
        t->hi[be[j]] = (uint32_t)m;
    /* Empty buffers overlap nothing: an empty range is never stored or queried. */
    for (size_t i = 0; i < n; i++)
        if (!b[i].size)
            t->hi[i] = t->lo[i];
    free(key);
    free(bs);
    free(be);
    *ranks = m;
    return 0;
}

int memd_plan_tree_new(const memd_plan_buffer *b, size_t n, plan_tree **out)
{
    plan_tree *t = calloc(1, sizeof(*t));
    if (!t)
        return -ENOMEM;
    t->n = n;
    t->lo = malloc((n ? n : 1) * sizeof(*t->lo));
    t->hi = malloc((n ? n : 1) * sizeof(*t->hi));
    size_t ranks = 0;
    if (!t->lo || !t->hi || rank_starts(t, b, n, &ranks))
        goto fail;
    t->last_leaf = (uint32_t)ranks + 1;
    t->leaves = 4;
    t->height = 2;
    while (t->leaves < ranks + 2) {
        t->leaves *= 2;
        t->height++;
    }
    /* The pool in one block from the start, about what size order's first fit needs
     * on big traces (4 to 5 intervals a buffer): growing it by copies would leave the
     * old blocks to the allocator at the peak (untouched pages cost nothing). */
    t->pool_cap = n < 256 ? 1024 : 6 * n;
    t->pool = malloc(t->pool_cap * sizeof(*t->pool));
    t->first_low = t->leaves >> (NO_S_LEVELS - 1);
    t->nd = malloc((t->first_low ? t->first_low : 1) * sizeof(*t->nd));
    t->low = malloc((2 * (size_t)t->leaves - t->first_low) * sizeof(*t->low));
    /* Path unions need an S at their level (a node there inside a query's range is read
     * through its S, which holds its own C set: that set is only in the unions). */
    if (PU_LEVEL + NO_S_LEVELS <= t->height &&
        !(t->pu = malloc(((size_t)1 << PU_LEVEL) * sizeof(*t->pu))))
        goto fail;
    if (!t->pool || !t->nd || !t->low)
        goto fail;
    memd_plan_tree_clear(t);
    *out = t;
    return 0;
fail:
    memd_plan_tree_free(t);
    return -ENOMEM;
}

void memd_plan_tree_free(plan_tree *t)
{
    if (!t)
        return;
    free(t->lo);
    free(t->hi);
    free(t->nd);
    free(t->low);
    free(t->pu);
    free(t->pool);
    free(t);
}

/* Clears only the nodes a walk can reach: the ones whose first leaf is at or left of
 * the last leaf (a walk runs between leaves 0 and ranks + 1 and reaches the ancestors
 * of those leaves and their siblings inside the range). The leaves are a power of two:
 * up to half of each level lies right of the last leaf, and those pages are never
 * touched (a million gen_large buffers: 730k ranks in 2^20 leaves, 7 MB). */
void memd_plan_tree_clear(plan_tree *t)
{
    set empty = {.at = 0, .len = 0, .cls = NO_CHUNK};
    for (unsigned lv = 0; lv <= t->height; lv++) {
        uint32_t v0 = 1u << lv, v1 = v0 + (t->last_leaf >> (t->height - lv)) + 1;
        for (uint32_t v = v0; v < v1; v++) {
            if (has_s(t, v))
                t->nd[v] = (node){empty, empty};
            else
                t->low[v - t->first_low] = empty;
        }
    }
    for (size_t v = 0; t->pu && v < (size_t)1 << PU_LEVEL; v++)
        t->pu[v] = empty;
    memset(t->freel, 0, sizeof(t->freel));
    t->pool_len = 0;
}

void *memd_plan_tree_scratch(plan_tree *t, size_t bytes)
{
    if (bytes > t->pool_cap * sizeof(*t->pool))
        return NULL;
    memd_plan_tree_clear(t);
    return t->pool;
}

/* Walks the canonical decomposition of x's range: boundary leaves just outside it
 * (rank lo - 1 and rank hi, leaf i + 1 holds rank i) climb until they are siblings.
 * A right sibling of the left boundary path (and a left sibling of the right one) is
 * a canonical node; a path node above a canonical node of its side is an ancestor of
 * one, as are the two paths' meeting point and everything above it (visited down
 * from node number top: the path unions stand for the nodes above). */
typedef void (*visit_fn)(plan_tree *t, void *ctx, uint32_t node, bool canonical);

static void walk(plan_tree *t, uint32_t x, uint32_t top, visit_fn fn, void *ctx)
{
    uint32_t l = t->leaves + t->lo[x], r = t->leaves + t->hi[x] + 1;
    bool lhas = false, rhas = false;
    while ((l ^ r) != 1) {
        if (!(l & 1)) {
            fn(t, ctx, l ^ 1, true);
            lhas = true;
        }
        if (r & 1) {
            fn(t, ctx, r ^ 1, true);
            rhas = true;
        }
        l >>= 1;
        r >>= 1;
        if (lhas)
            fn(t, ctx, l, false);
        if (rhas)
            fn(t, ctx, r, false);
    }
    for (uint32_t v = l >> 1; v >= top; v >>= 1)
        fn(t, ctx, v, false);
}


static set *cset(plan_tree *t, uint32_t v)
{
    return has_s(t, v) ? &t->nd[v].c : &t->low[v - t->first_low];
}

static unsigned level_of(uint32_t v)
{
    return 31u - (unsigned)__builtin_clz(v);
}

static int add_canonical(plan_tree *t, uint32_t v, uint64_t a, uint64_t e)
{
    int rc = 0;
    unsigned lv = level_of(v);
    if (t->pu && lv <= PU_LEVEL) {
        /* Every path union below v has v on its path. Queries read v's C set from
         * them only: it is not kept. */
        uint32_t w0 = v << (PU_LEVEL - lv), w1 = (v + 1) << (PU_LEVEL - lv);
        for (uint32_t w = w0; w < w1 && rc >= 0; w++) {
            int k = set_add(t, &t->pu[w - (1u << PU_LEVEL)], a, e);
            rc = k < 0 ? k : rc;
        }
    } else {
        rc = set_add(t, cset(t, v), a, e);
    }
    return rc < 0 || !has_s(t, v) ? rc : set_add(t, &t->nd[v].s, a, e);
}

/* Adds x's interval to C and S of its canonical nodes and to S of their ancestors. As
 * S(parent) contains S(child), the climb on a side stops at the first S that already
 * covers the interval: high nodes' unions mostly do. */
int memd_plan_tree_insert(plan_tree *t, uint32_t x, uint64_t off, uint64_t size)
{
    if (t->hi[x] <= t->lo[x] || size == 0)
        return 0;
    uint64_t a = off, e = off + size;
    uint32_t l = t->leaves + t->lo[x], r = t->leaves + t->hi[x] + 1;
    bool lhas = false, rhas = false, ldone = false, rdone = false;
    int rc = 0;
    while ((l ^ r) != 1) {
        if (!(l & 1)) {
            rc |= add_canonical(t, l ^ 1, a, e);
            lhas = true;
        }
        if (r & 1) {
            rc |= add_canonical(t, r ^ 1, a, e);
            rhas = true;
        }
        l >>= 1;
        r >>= 1;
        int k;
        if (lhas && !ldone && has_s(t, l) && (k = set_add(t, &t->nd[l].s, a, e)) != 0)
            k < 0 ? (void)(rc = k) : (void)(ldone = true);
        if (rhas && !rdone && has_s(t, r) && (k = set_add(t, &t->nd[r].s, a, e)) != 0)
            k < 0 ? (void)(rc = k) : (void)(rdone = true);
    }
    for (uint32_t v = l >> 1; v && !(ldone || rdone); v >>= 1) {
        if (!has_s(t, v))
            continue;
        int k = set_add(t, &t->nd[v].s, a, e);
        if (k < 0)
            rc = k;
        if (k)
            break;
    }
    return rc < 0 ? -ENOMEM : 0;
}

typedef struct gather_ctx {
    unsigned m;
    uint32_t skip_below; /* ancestors numbered below it: read from a path union */
} gather_ctx;

static void gather_set(plan_tree *t, gather_ctx *q, const set *st)
{
    if (st->len && q->m < MAX_SETS) {
        /* The first interval is read once the walk is done: start the miss now. */
        __builtin_prefetch(t->pool + st->at);
        t->qv[q->m] = t->pool + st->at;
        t->qn[q->m] = st->len;
        q->m++;
    }
}

/* The C sets of v's subtree (v without an S: at most NO_S_LEVELS levels). */
static void gather_subtree(plan_tree *t, gather_ctx *q, uint32_t v)
{
    gather_set(t, q, cset(t, v));
    if (v < t->leaves) {
        gather_subtree(t, q, 2 * v);
        gather_subtree(t, q, 2 * v + 1);
    }
}

/* A canonical node gives its S (low nodes: the C sets S would be made of), an
 * ancestor its C. */
static void visit_gather(plan_tree *t, void *ctx, uint32_t v, bool canonical)
{
    gather_ctx *q = ctx;
    if (!canonical) {
        if (v >= q->skip_below)
            gather_set(t, q, cset(t, v));
    } else if (!has_s(t, v)) {
        gather_subtree(t, q, v);
    } else {
        gather_set(t, q, &t->nd[v].s);
    }
}

/* The sets one query reads: cursors only move up (the candidate offset only grows),
 * and a set whose last interval ends at or below the candidate can never conflict
 * again: it leaves the active list (its end is kept in `dropped`, best fit's gap
 * starts need it). Each cursor's interval is cached (ka, ke) so the search for the
 * lowest conflicting interval scans a small array, not the sets. */
typedef struct query {
    plan_tree *t;
    unsigned m;
    uint64_t dropped;     /* highest end of a dropped set */
    uint32_t k[MAX_SETS]; /* cursor: first interval not known to end at or below cand */
    uint64_t ka[MAX_SETS], ke[MAX_SETS]; /* the cursor's interval */
    uint64_t kp[MAX_SETS]; /* the end of the interval before it (0: none) */
} query;

static void drop(query *q, unsigned i)
{
    plan_tree *t = q->t;
    uint64_t e = t->qv[i][t->qn[i] - 1].e;
    q->dropped = e > q->dropped ? e : q->dropped;
    q->m--;
    t->qv[i] = t->qv[q->m];
    t->qn[i] = t->qn[q->m];
    q->k[i] = q->k[q->m];
    q->ka[i] = q->ka[q->m];
    q->ke[i] = q->ke[q->m];
    q->kp[i] = q->kp[q->m];
}

/* Moves set i's cursor to its first interval ending above x (galloping: cursors move
 * a little at a time). False when there is none (the set is dropped). */
static bool seek(query *q, unsigned i, uint64_t x)
{
    if (q->ke[i] > x)
        return true;
    const iv *v = q->t->qv[i];
    uint32_t len = q->t->qn[i], k = q->k[i];
    uint32_t step = 1;
    while (k + step < len && v[k + step].e <= x) {
        k += step;
        step *= 2;
    }
    /* The set's last interval is read only when the gallop ran past the end (most
     * moves are short: a read beside the cursor, not one at the far end). */
    if (k + step >= len && v[len - 1].e <= x) {
        drop(q, i);
        return false;
    }
    uint32_t hi = k + step < len ? k + step : len - 1; /* v[hi].e > x */
    k++;
    k += first_end_above(v + k, hi - k, x);
    q->k[i] = k;
    q->ka[i] = v[k].a;
    q->ke[i] = v[k].e;
    q->kp[i] = v[k - 1].e; /* k >= 1 here; beside v[k] in memory */
    return true;
}

/* Lowest aligned offset >= cand where [o, o + size) meets no interval of the active
 * sets: the sets in order (top down, see memd_plan_tree_fit) until a whole pass moves
 * nothing. A set's cursor interval that conflicts moves cand past its end (no offset
 * below it fits), again while the set's next interval conflicts; then the pass starts
 * over from the top, whose long-lived blocks take cand furthest in one step (1M size
 * order first fit ~30 % faster than going on round robin). The cached cursor
 * intervals keep a set that moves nothing out of memory. */
static uint64_t lowest_free(query *q, uint64_t cand, uint64_t size, uint64_t align)
{
    unsigned i = 0;
    while (i < q->m) {
        if (!seek(q, i, cand))
            continue; /* dropped: another set is at i now */
        if (q->ka[i] >= cand + size) {
            i++;
            continue;
        }
        do
            cand = plan_align_up(q->ke[i], align);
        while (seek(q, i, cand) && q->ka[i] < cand + size);
        i = 0;
    }
    return cand;
}

/* After lowest_free returned c, every active set's cursor interval ends above c and
 * starts at or above c + size: the free run holding c ends at the lowest cursor start
 * (UINT64_MAX: none) and starts at the highest end below the cursors (or a dropped
 * set's last end): both from the cached cursors, no set is read. */
static uint64_t gap_end(const query *q)
{
    uint64_t g = UINT64_MAX;
    for (unsigned i = 0; i < q->m; i++)
        g = q->ka[i] < g ? q->ka[i] : g;
    return g;
}

static uint64_t gap_start(const query *q)
{
    uint64_t f = q->dropped;
    for (unsigned i = 0; i < q->m; i++)
        f = q->kp[i] > f ? q->kp[i] : f;
    return f;
}

uint64_t memd_plan_tree_fit(plan_tree *t, uint32_t x, uint64_t size, uint64_t align,
                            bool best_fit, unsigned max_gaps)
{
    gather_ctx gc = {0};
    if (t->hi[x] > t->lo[x]) {
        /* The boundary paths' nodes follow from the ranks alone: ask for all of them
         * (a sibling pair shares a line) before the walk reads them one by one (1M size
         * order first fit ~5 % faster). */
        uint32_t top = t->pu ? 2u << PU_LEVEL : 1;
        for (uint32_t l = t->leaves + t->lo[x], r = t->leaves + t->hi[x] + 1; l >= top;
             l >>= 1, r >>= 1) {
            __builtin_prefetch(has_s(t, l) ? (const void *)&t->nd[l]
                                           : (const void *)&t->low[l - t->first_low]);
            __builtin_prefetch(has_s(t, r) ? (const void *)&t->nd[r]
                                           : (const void *)&t->low[r - t->first_low]);
        }
        /* The C sets x needs at levels <= PU_LEVEL, from the path unions of the
         * nodes there holding x's first and last leaf (wl, wr). A node that meets x's
         * range without lying inside it holds one of those leaves, so it is on wl's or
         * wr's path: every C set the walk would read there is in the two unions. What
         * else they hold (nodes on those paths inside x's range) is inside a canonical
         * node, whose S (or subtree of C sets) the walk reads anyway: the union of
         * what the query reads is the same. Gathered last: read first (see below). */
        uint32_t wl = 0, wr = 0;
        if (t->pu) {
            unsigned sh = t->height - PU_LEVEL;
            wl = (t->leaves + t->lo[x] + 1) >> sh;
            wr = (t->leaves + t->hi[x]) >> sh;
            gc.skip_below = 2u << PU_LEVEL;
        }
        walk(t, x, top, visit_gather, &gc);
        if (t->pu) {
            gather_set(t, &gc, &t->pu[wl - (1u << PU_LEVEL)]);
            if (wr != wl)
                gather_set(t, &gc, &t->pu[wr - (1u << PU_LEVEL)]);
        }
    }
    query q; /* not zeroed: only the first m cursors are used (5 KB a query) */
    q.t = t;
    q.m = gc.m;
    q.dropped = 0;
    /* The walk gathered bottom up; lowest_free reads the sets top down: the high
     * nodes' sets hold the long-lived buffers, whose blocks move cand furthest before
     * the low sets' many short intervals are galloped through (synth_60k: the eight
     * tree runs ~8 % faster, size order first fit at a million buffers ~15 %). */
    for (unsigned i = 0, j = gc.m; i + 1 < j; i++) {
        j--;
        const iv *v = t->qv[i];
        uint32_t len = t->qn[i];
        t->qv[i] = t->qv[j];
        t->qn[i] = t->qn[j];
        t->qv[j] = v;
        t->qn[j] = len;
    }
    for (unsigned i = 0; i < gc.m; i++) {
        q.k[i] = 0;
        q.ka[i] = t->qv[i][0].a;
        q.ke[i] = t->qv[i][0].e;
        q.kp[i] = 0;
    }
    uint64_t cand = lowest_free(&q, 0, size, align);
    if (!best_fit)
        return cand;
    /* Best fit: the gaps that fit, bottom up, as the list placers see them (length from
     * the gap's unaligned start, ties to the lowest); the region above everything only
     * when nothing below fits. Each step: the gap's start, its end (the next interval
     * start above the fit), then the lowest fit above that end. */
    uint64_t best = UINT64_MAX, best_gap = UINT64_MAX;
    for (unsigned gaps = 0; max_gaps == 0 || gaps < max_gaps; gaps++) {
        uint64_t f = gap_start(&q);
        uint64_t g = gap_end(&q);
        if (g == UINT64_MAX)
            return best != UINT64_MAX ? best : cand;
        if (g - f < best_gap) {
            best_gap = g - f;
            best = cand;
            if (best_gap == size)
                return best; /* no tighter gap can exist */
        }
        cand = lowest_free(&q, g, size, align);
    }
    return best;
}

void memd_plan_tree_prefetch(const plan_tree *t, uint32_t x)
{
    __builtin_prefetch(&t->lo[x]);
    __builtin_prefetch(&t->hi[x]);
}

bool memd_plan_tree_path_unions(const plan_tree *t)
{
    return t->pu != NULL;
}

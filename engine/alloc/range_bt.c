/* memd engine — private B+tree for the range allocator (see range_bt.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "range_bt.h"

#define B MEMD_BT_FANOUT
#define MIN_FILL (B / 2)
#define NONE UINT32_MAX
#define POOL_INITIAL 8u

_Static_assert(sizeof(memd_bt_node) == 1024, "nodes are a power of two bytes, line aligned");

static inline bool pair_lt(uint64_t k1, uint64_t v1, uint64_t k2, uint64_t v2)
{
    return k1 < k2 || (k1 == k2 && v1 < v2);
}

static inline bool is_leaf(const memd_bt *t, unsigned level)
{
    return level + 1 == t->height;
}

/* Two independent running maxima over a pointer: a single one is a serial chain of
 * compares, and a 32-bit index costs an extra instruction per element. */
static uint64_t node_max(const memd_bt_node *x, bool leaf)
{
    const uint64_t *a = leaf ? x->v : x->m, *e = a + x->n;
    uint64_t m0 = 0, m1 = 0;
    for (; e - a >= 2; a += 2) {
        m0 = a[0] > m0 ? a[0] : m0;
        m1 = a[1] > m1 ? a[1] : m1;
    }
    if (a < e)
        m0 = a[0] > m0 ? a[0] : m0;
    return m0 > m1 ? m0 : m1;
}

/* ---------------------------------------------------------------- pool */

static uint32_t node_get(memd_bt *t)
{
    uint32_t x;
    if (t->spare != NONE) {
        x = t->spare;
        t->spare = t->node[x].c[0];
        t->nspare--;
    } else {
        x = t->top++;
    }
    t->node[x].n = 0;
    return x;
}

static void node_put(memd_bt *t, uint32_t x)
{
    t->node[x].c[0] = t->spare;
    t->spare = x;
    t->nspare++;
}

int memd_bt_init(memd_bt *t)
{
    memset(t, 0, sizeof(*t));
    t->node = aligned_alloc(64, POOL_INITIAL * sizeof(memd_bt_node));
    if (!t->node)
        return -ENOMEM;
    t->cap = POOL_INITIAL;
    memd_bt_clear(t);
    return 0;
}

void memd_bt_fini(memd_bt *t)
{
    free(t->node);
    t->node = NULL;
}

void memd_bt_clear(memd_bt *t)
{
    t->top = 0;
    t->spare = NONE;
    t->nspare = 0;
    t->count = 0;
    t->height = 1;
    t->root = node_get(t);
}

static int grow_to(memd_bt *t, uint64_t ncap)
{
    if (ncap >= NONE || ncap > SIZE_MAX / sizeof(memd_bt_node))
        return -ENOMEM;
    memd_bt_node *p = aligned_alloc(64, (size_t)ncap * sizeof(memd_bt_node));
    if (!p)
        return -ENOMEM;
    memcpy(p, t->node, (size_t)t->top * sizeof(memd_bt_node));
    free(t->node);
    t->node = p;
    t->cap = (uint32_t)ncap;
    return 0;
}

int memd_bt_grow(memd_bt *t, unsigned inserts)
{
    if (t->height + inserts >= MEMD_BT_MAX_DEPTH)
        return -ENOMEM;
    uint64_t need = (uint64_t)inserts * (t->height + 2);
    uint64_t have = (uint64_t)t->nspare + (t->cap - t->top);
    if (have >= need)
        return 0;
    uint64_t ncap = (uint64_t)t->cap * 2;
    while (ncap - t->top + t->nspare < need)
        ncap *= 2;
    return grow_to(t, ncap);
}

int memd_bt_hold(memd_bt *t, uint64_t entries)
{
    /* Non-root nodes hold >= MIN_FILL items: E / 16 leaves, E / 256 parents, ... */
    uint64_t need = entries / (MIN_FILL - 1) + 2;
    if (t->cap >= need)
        return 0;
    /* Doubling keeps holding amortized O(1) per entry. */
    return grow_to(t, need > (uint64_t)t->cap * 2 ? need : (uint64_t)t->cap * 2);
}

void memd_bt_clear_shrink(memd_bt *t)
{
    memd_bt_node *p = t->cap > POOL_INITIAL ? aligned_alloc(64, POOL_INITIAL * sizeof(memd_bt_node))
                                            : NULL;
    if (p) {
        free(t->node);
        t->node = p;
        t->cap = POOL_INITIAL;
    }
    memd_bt_clear(t);
}

/* ---------------------------------------------------------------- items */

/* An item is an entry (leaf) or a child record (inner: separator, max, id). Leaves never
 * read m[] or c[], so those are not moved for them. */

static void item_ins(memd_bt_node *x, uint32_t pos, bool leaf, uint64_t k, uint64_t v,
                     uint64_t m, uint32_t c)
{
    uint32_t cnt = x->n - pos;
    memmove(&x->k[pos + 1], &x->k[pos], cnt * sizeof(uint64_t));
    memmove(&x->v[pos + 1], &x->v[pos], cnt * sizeof(uint64_t));
    x->k[pos] = k;
    x->v[pos] = v;
    if (!leaf) {
        memmove(&x->m[pos + 1], &x->m[pos], cnt * sizeof(uint64_t));
        memmove(&x->c[pos + 1], &x->c[pos], cnt * sizeof(uint32_t));
        x->m[pos] = m;
        x->c[pos] = c;
    }
    x->n++;
}

static void item_del(memd_bt_node *x, uint32_t pos, bool leaf)
{
    uint32_t cnt = x->n - pos - 1;
    memmove(&x->k[pos], &x->k[pos + 1], cnt * sizeof(uint64_t));
    memmove(&x->v[pos], &x->v[pos + 1], cnt * sizeof(uint64_t));
    if (!leaf) {
        memmove(&x->m[pos], &x->m[pos + 1], cnt * sizeof(uint64_t));
        memmove(&x->c[pos], &x->c[pos + 1], cnt * sizeof(uint32_t));
    }
    x->n--;
}

/* Append src items [from, from + cnt) to dst (distinct nodes). */
static void items_append(memd_bt_node *dst, const memd_bt_node *src, uint32_t from,
                         uint32_t cnt, bool leaf)
{
    uint32_t at = dst->n;
    memcpy(&dst->k[at], &src->k[from], cnt * sizeof(uint64_t));
    memcpy(&dst->v[at], &src->v[from], cnt * sizeof(uint64_t));
    if (!leaf) {
        memcpy(&dst->m[at], &src->m[from], cnt * sizeof(uint64_t));
        memcpy(&dst->c[at], &src->c[from], cnt * sizeof(uint32_t));
    }
    dst->n += cnt;
}

/* par's record of child ch at index i. */
static void record(memd_bt_node *par, uint32_t i, const memd_bt_node *ch, bool ch_leaf)
{
    par->k[i] = ch->k[0];
    par->v[i] = ch->v[0];
    par->m[i] = node_max(ch, ch_leaf);
}

/* The node at `level` on p changed; refresh the records above it until one comes out
 * unchanged (everything higher was computed from that record). */
static void fix_up(memd_bt *t, const memd_bt_path *p, unsigned level)
{
    for (; level > 0; level--) {
        const memd_bt_node *x = &t->node[p->node[level]];
        memd_bt_node *par = &t->node[p->node[level - 1]];
        uint32_t i = p->idx[level - 1];
        uint64_t mx = node_max(x, is_leaf(t, level));
        if (par->m[i] == mx && par->k[i] == x->k[0] && par->v[i] == x->v[0])
            return;
        par->m[i] = mx;
        par->k[i] = x->k[0];
        par->v[i] = x->v[0];
    }
}

/* As fix_up, after one value in the leaf went from ov to nv (an insert is 0 -> v, a
 * delete v -> 0). A node's new maximum follows from its old one without a rescan unless
 * the value that held the old maximum shrank; one level up, the child's record is the
 * value that changed. */
static void fix_up_one(memd_bt *t, const memd_bt_path *p, uint64_t ov, uint64_t nv)
{
    for (unsigned level = t->height - 1; level > 0; level--) {
        const memd_bt_node *x = &t->node[p->node[level]];
        memd_bt_node *par = &t->node[p->node[level - 1]];
        uint32_t i = p->idx[level - 1];
        uint64_t old = par->m[i], mx;
        if (nv >= old)
            mx = nv;
        else if (ov < old)
            mx = old;
        else
            mx = node_max(x, is_leaf(t, level));
        if (mx == old && par->k[i] == x->k[0] && par->v[i] == x->v[0])
            return;
        par->m[i] = mx;
        par->k[i] = x->k[0];
        par->v[i] = x->v[0];
        ov = old;
        nv = mx;
    }
}

/* ---------------------------------------------------------------- navigation */

uint64_t memd_bt_max(const memd_bt *t)
{
    return node_max(&t->node[t->root], t->height == 1);
}

/* A candidate of memd_bt_top_v: a subtree (node at level, key its max) or, at level
 * height, a leaf entry (k its key, key its v). */
typedef struct top_cand {
    uint64_t key, k;
    uint32_t node, level;
} top_cand;

/* Into c[0, *m) sorted by key, largest first (equal keys: in tree order), at most cap. */
static void top_insert(top_cand *c, size_t *m, size_t cap, top_cand x)
{
    if (*m == cap && (cap == 0 || c[cap - 1].key >= x.key))
        return;
    size_t i = *m < cap ? (*m)++ : cap - 1;
    while (i > 0 && c[i - 1].key < x.key) {
        c[i] = c[i - 1];
        i--;
    }
    c[i] = x;
}

size_t memd_bt_top_v(const memd_bt *t, size_t n, uint64_t *k, uint64_t *v)
{
    if (n > MEMD_BT_TOP_MAX)
        n = MEMD_BT_TOP_MAX;
    if (t->count == 0 || n == 0)
        return 0;
    /* The n largest remaining entries each lie under one of the n best candidates: a
     * candidate not among them is beaten by n entries at least as large. */
    top_cand c[MEMD_BT_TOP_MAX];
    size_t m = 1, found = 0;
    c[0] = (top_cand){.key = memd_bt_max(t), .node = t->root};
    while (found < n && m > 0) {
        top_cand x = c[0];
        memmove(c, c + 1, --m * sizeof *c);
        if (x.level == t->height) {
            k[found] = x.k;
            v[found++] = x.key;
            if (m > n - found)
                m = n - found;
            continue;
        }
        const memd_bt_node *nd = &t->node[x.node];
        bool leaf = x.level == t->height - 1;
        for (uint32_t i = 0; i < nd->n; i++)
            top_insert(c, &m, n - found,
                       leaf ? (top_cand){.key = nd->v[i], .k = nd->k[i], .level = t->height}
                            : (top_cand){.key = nd->m[i], .node = nd->c[i], .level = x.level + 1});
    }
    return found;
}

void memd_bt_seek(const memd_bt *t, uint64_t k, uint64_t v, memd_bt_path *p)
{
    uint32_t x = t->root;
    unsigned l = 0;
    for (; !is_leaf(t, l); l++) {
        const memd_bt_node *nd = &t->node[x];
        /* The last child whose separator is <= (k, v), else the first. */
        uint32_t i = 0;
        while (i + 1 < nd->n && !pair_lt(k, v, nd->k[i + 1], nd->v[i + 1]))
            i++;
        p->node[l] = x;
        p->idx[l] = i;
        x = nd->c[i];
    }
    const memd_bt_node *lf = &t->node[x];
    uint32_t i = 0; /* the first entry >= (k, v) */
    while (i < lf->n && pair_lt(lf->k[i], lf->v[i], k, v))
        i++;
    p->node[l] = x;
    p->idx[l] = i;
}

/* Fetch all of a node's array (B * 8 bytes) at once: the searches below would otherwise
 * miss on its cache lines one after another. */
static inline void prefetch_array(const uint64_t *a)
{
    for (unsigned off = 0; off < B; off += 64 / sizeof(uint64_t))
        __builtin_prefetch(a + off);
}

/* memd_bt_seek_k's descent from node x at level l down. */
static inline __attribute__((always_inline)) void
seek_k_down(const memd_bt *t, uint32_t x, unsigned l, uint64_t k, memd_bt_path *p)
{
    for (; !is_leaf(t, l); l++) {
        const memd_bt_node *nd = &t->node[x];
        prefetch_array(nd->k);
        uint32_t i = (uint32_t)memd_lower_bound_u64(nd->k + 1, nd->n - 1, k);
        p->node[l] = x;
        p->idx[l] = i;
        x = nd->c[i];
    }
    const memd_bt_node *lf = &t->node[x];
    prefetch_array(lf->k);
    prefetch_array(lf->v); /* the caller reads the neighbours' sizes next */
    uint32_t i = (uint32_t)memd_lower_bound_u64(lf->k, lf->n, k);
    p->node[l] = x;
    p->idx[l] = i;
}

void memd_bt_seek_k(const memd_bt *t, uint64_t k, memd_bt_path *p)
{
    seek_k_down(t, t->root, 0, k, p);
}

/* Child i of an inner node takes the keys in (k[i], k[i + 1]] (memd_bt_seek_k's
 * choice); the first child's lower and the last child's upper bound are the parent's,
 * so at those edges the climb goes on. */
void memd_bt_seek_k_near(const memd_bt *t, uint64_t k, memd_bt_path *p)
{
    unsigned l = t->height - 1;
    for (; l > 0; l--) {
        const memd_bt_node *nd = &t->node[p->node[l - 1]];
        uint32_t i = p->idx[l - 1];
        if (i > 0 && k > nd->k[i] && i + 1 < nd->n && k <= nd->k[i + 1])
            break;
    }
    seek_k_down(t, p->node[l], l, k, p);
}

/* Descend from node x at `level` to the edge of its subtree (dir 0: first, 1: last). */
static void edge_down(const memd_bt *t, unsigned level, uint32_t x, int dir, memd_bt_path *p)
{
    for (;; level++) {
        const memd_bt_node *nd = &t->node[x];
        uint32_t i = dir ? nd->n - 1 : 0;
        p->node[level] = x;
        p->idx[level] = i;
        if (is_leaf(t, level))
            return;
        x = nd->c[i];
    }
}

/* Move one entry in direction dir (0: forward). A leaf index one past the end counts as
 * "just before the next leaf's first entry". */
static bool step(const memd_bt *t, memd_bt_path *p, int dir)
{
    unsigned leaf = t->height - 1;
    const memd_bt_node *lf = &t->node[p->node[leaf]];
    if (dir == 0 && p->idx[leaf] + 1 < lf->n) {
        p->idx[leaf]++;
        return true;
    }
    if (dir == 1 && p->idx[leaf] > 0 && lf->n > 0) {
        p->idx[leaf]--;
        return true;
    }
    for (unsigned l = leaf; l-- > 0;) {
        const memd_bt_node *nd = &t->node[p->node[l]];
        uint32_t i = p->idx[l];
        if (dir == 0 ? i + 1 < nd->n : i > 0) {
            i = dir == 0 ? i + 1 : i - 1;
            p->idx[l] = i;
            edge_down(t, l + 1, nd->c[i], dir, p);
            return true;
        }
    }
    return false;
}

bool memd_bt_settle(const memd_bt *t, memd_bt_path *p)
{
    unsigned leaf = t->height - 1;
    if (p->idx[leaf] < t->node[p->node[leaf]].n)
        return true;
    return step(t, p, 0);
}

bool memd_bt_next(const memd_bt *t, memd_bt_path *p)
{
    return step(t, p, 0);
}

bool memd_bt_prev(const memd_bt *t, memd_bt_path *p)
{
    return step(t, p, 1);
}

/* Index of the first (dir 0) or last (dir 1) a[i] >= x among i in [lo, hi), or NONE. */
static uint32_t scan(const uint64_t *a, uint32_t lo, uint32_t hi, uint64_t x, int dir)
{
    if (dir == 0) {
        for (const uint64_t *q = a + lo, *e = a + hi; q < e; q++)
            if (*q >= x)
                return (uint32_t)(q - a);
    } else {
        for (const uint64_t *q = a + hi, *b = a + lo; q > b;)
            if (*--q >= x)
                return (uint32_t)(q - a);
    }
    return NONE;
}

/* Descend from x (at `level`) to the edge-most entry with v >= want in its subtree;
 * false if there is none (only possible at the root: a child's record says whether its
 * subtree has one). */
static bool fit_down(const memd_bt *t, unsigned level, uint32_t x, uint64_t want, int dir,
                     memd_bt_path *p)
{
    for (;; level++) {
        const memd_bt_node *nd = &t->node[x];
        bool leaf = is_leaf(t, level);
        prefetch_array(leaf ? nd->v : nd->m);
        uint32_t i = scan(leaf ? nd->v : nd->m, 0, nd->n, want, dir);
        if (i == NONE)
            return false;
        p->node[level] = x;
        p->idx[level] = i;
        if (leaf)
            return true;
        x = nd->c[i];
    }
}

bool memd_bt_fit(const memd_bt *t, uint64_t want, int dir, memd_bt_path *p)
{
    return fit_down(t, 0, t->root, want, dir, p);
}

bool memd_bt_fit_next(const memd_bt *t, uint64_t want, int dir, memd_bt_path *p)
{
    for (unsigned l = t->height; l-- > 0;) {
        const memd_bt_node *nd = &t->node[p->node[l]];
        bool leaf = is_leaf(t, l);
        uint32_t cur = p->idx[l];
        uint32_t i = dir == 0 ? scan(leaf ? nd->v : nd->m, cur + 1, nd->n, want, 0)
                              : scan(leaf ? nd->v : nd->m, 0, cur, want, 1);
        if (i == NONE)
            continue;
        p->idx[l] = i;
        if (!leaf)
            fit_down(t, l + 1, nd->c[i], want, dir, p);
        return true;
    }
    return false;
}

/* ---------------------------------------------------------------- updates */

void memd_bt_set(memd_bt *t, memd_bt_path *p, uint64_t k, uint64_t v)
{
    unsigned leaf = t->height - 1;
    memd_bt_node *lf = &t->node[p->node[leaf]];
    uint64_t ov = lf->v[p->idx[leaf]];
    lf->k[p->idx[leaf]] = k;
    lf->v[p->idx[leaf]] = v;
    fix_up_one(t, p, ov, v);
}

void memd_bt_insert(memd_bt *t, memd_bt_path *p, uint64_t k, uint64_t v)
{
    unsigned l = t->height - 1;
    uint32_t pos = p->idx[l];
    uint64_t ik = k, iv = v, im = 0;
    uint32_t ic = 0;
    t->count++;
    for (;;) {
        bool leaf = is_leaf(t, l);
        uint32_t x = p->node[l];
        memd_bt_node *nx = &t->node[x];
        if (nx->n < B) {
            item_ins(nx, pos, leaf, ik, iv, im, ic);
            if (leaf)
                fix_up_one(t, p, 0, iv);
            else
                fix_up(t, p, l);
            return;
        }
        /* Split B + 1 items: 'keep' stay in x, the rest move to a new right sibling. */
        const uint32_t keep = (B + 2) / 2;
        uint32_t y = node_get(t);
        memd_bt_node *ny = &t->node[y];
        if (pos < keep) {
            items_append(ny, nx, keep - 1, B - keep + 1, leaf);
            nx->n = keep - 1;
            item_ins(nx, pos, leaf, ik, iv, im, ic);
        } else {
            items_append(ny, nx, keep, B - keep, leaf);
            nx->n = keep;
            item_ins(ny, pos - keep, leaf, ik, iv, im, ic);
        }
        if (l == 0) {
            uint32_t r = node_get(t);
            memd_bt_node *nr = &t->node[r];
            item_ins(nr, 0, false, nx->k[0], nx->v[0], node_max(nx, leaf), x);
            item_ins(nr, 1, false, ny->k[0], ny->v[0], node_max(ny, leaf), y);
            t->root = r;
            t->height++;
            return;
        }
        memd_bt_node *par = &t->node[p->node[l - 1]];
        uint32_t pi = p->idx[l - 1];
        record(par, pi, nx, leaf); /* before the parent may split and move it */
        ik = ny->k[0];
        iv = ny->v[0];
        im = node_max(ny, leaf);
        ic = y;
        pos = pi + 1;
        l--;
    }
}

void memd_bt_delete(memd_bt *t, memd_bt_path *p)
{
    unsigned l = t->height - 1;
    uint32_t pos = p->idx[l];
    uint64_t gone = t->node[p->node[l]].v[pos];
    t->count--;
    for (;;) {
        bool leaf = is_leaf(t, l);
        uint32_t x = p->node[l];
        memd_bt_node *nx = &t->node[x];
        item_del(nx, pos, leaf);
        if (l == 0) {
            if (!leaf && nx->n == 1) { /* an inner root with one child: drop a level */
                t->root = nx->c[0];
                node_put(t, x);
                t->height--;
            }
            return;
        }
        if (nx->n >= MIN_FILL) {
            if (leaf)
                fix_up_one(t, p, gone, 0);
            else
                fix_up(t, p, l);
            return;
        }
        /* Underflow: borrow from a sibling with spare items, else merge with it. */
        memd_bt_node *par = &t->node[p->node[l - 1]];
        uint32_t pi = p->idx[l - 1];
        if (pi + 1 < par->n) {
            uint32_t s = par->c[pi + 1];
            memd_bt_node *ns = &t->node[s];
            if (ns->n > MIN_FILL) {
                items_append(nx, ns, 0, 1, leaf);
                item_del(ns, 0, leaf);
                record(par, pi, nx, leaf);
                record(par, pi + 1, ns, leaf);
                fix_up(t, p, l - 1);
                return;
            }
            items_append(nx, ns, 0, ns->n, leaf);
            node_put(t, s);
            record(par, pi, nx, leaf);
            pos = pi + 1;
        } else {
            uint32_t s = par->c[pi - 1]; /* a non-root inner node has >= 2 children */
            memd_bt_node *ns = &t->node[s];
            if (ns->n > MIN_FILL) {
                uint32_t last = ns->n - 1;
                item_ins(nx, 0, leaf, ns->k[last], ns->v[last], leaf ? 0 : ns->m[last],
                         leaf ? 0 : ns->c[last]);
                ns->n--;
                record(par, pi - 1, ns, leaf);
                record(par, pi, nx, leaf);
                fix_up(t, p, l - 1);
                return;
            }
            items_append(ns, nx, 0, nx->n, leaf);
            node_put(t, x);
            record(par, pi - 1, ns, leaf);
            pos = pi;
        }
        l--;
    }
}

/* ---------------------------------------------------------------- check */

typedef struct check_ctx {
    const memd_bt *t;
    uint64_t count;
    bool have_last;
    uint64_t last_k, last_v;
} check_ctx;

/* Validates the subtree of x at `level`; returns its max through *mx. */
static int check_node(check_ctx *c, uint32_t x, unsigned level, uint64_t *mx)
{
    const memd_bt *t = c->t;
    if (x >= t->top || level >= t->height)
        return -EFAULT;
    const memd_bt_node *nd = &t->node[x];
    bool leaf = is_leaf(t, level);
    if (nd->n > B || (level > 0 && nd->n < MIN_FILL) || (level == 0 && !leaf && nd->n < 2))
        return -EFAULT;
    uint64_t m = 0;
    for (uint32_t i = 0; i < nd->n; i++) {
        if (leaf) {
            if (c->have_last && !pair_lt(c->last_k, c->last_v, nd->k[i], nd->v[i]))
                return -EFAULT;
            c->have_last = true;
            c->last_k = nd->k[i];
            c->last_v = nd->v[i];
            c->count++;
            if (nd->v[i] > m)
                m = nd->v[i];
            continue;
        }
        const memd_bt_node *ch = &t->node[nd->c[i]];
        uint64_t cm;
        if (nd->c[i] >= t->top || ch->n == 0 || nd->k[i] != ch->k[0] || nd->v[i] != ch->v[0])
            return -EFAULT;
        if (check_node(c, nd->c[i], level + 1, &cm) < 0 || cm != nd->m[i])
            return -EFAULT;
        if (cm > m)
            m = cm;
    }
    *mx = m;
    return 0;
}

int memd_bt_check(const memd_bt *t)
{
    check_ctx c = {.t = t};
    uint64_t mx;
    if (t->height == 0 || t->height >= MEMD_BT_MAX_DEPTH || check_node(&c, t->root, 0, &mx) < 0)
        return -EFAULT;
    return c.count == t->count ? 0 : -EFAULT;
}

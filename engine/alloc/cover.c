/* memd engine — coverage map (contract and structure in cover.h).
 *
 * Units are indexed 0..units-1 (unit u is [base + u * unit, base + (u + 1) * unit)). A
 * node of span n splits into a left child of ceil(n / 2) units and a right child of
 * floor(n / 2), down to leaves of at most LEAF units. Summaries are in units; an absent
 * node is a wholly uncovered span. Recursion depth is the tree's height, at most 60
 * levels.
 *
 * Leaves: a leaf keeps its own count (occupants covering all of it) like any node, and
 * the spans that cover part of it in a chunk of per-unit counts with a mask of the
 * units counted; its summary comes from the mask. The last six levels of a plain tree
 * hold most of its nodes and most of a span's descent (a short span decomposes into up
 * to two nodes per level there): one chunk instead makes the tree smaller and denser
 * and a descent shorter (perf: add/remove/search were half of a lockstep pair in a split
 * region, mostly cache misses on those nodes). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cover.h"
#include "place.h"

#define NIL 0u
#define NONE UINT64_MAX
/* Units in a leaf at most: a leaf's mask is one word. */
#define LEAF 64u
/* Pools at most this large are never compacted (40 KiB of nodes, 34 KiB of chunks). */
#define TRIM_MIN 1024u
#define CTRIM_MIN 128u

typedef struct cnode {
    uint64_t pre, suf, best; /* uncovered prefix, suffix and longest run of the span */
    uint32_t cnt;            /* occupants covering the whole span at this node */
    uint32_t ch[2];          /* children (NIL: wholly uncovered); ch[0] links spares;
                              * a leaf: ch[0] its chunk (NIL: none), ch[1] NIL */
} cnode;

typedef struct cchunk {
    uint64_t mask;       /* bit k: unit lo + k of the leaf has a count; 0 only when spare */
    uint32_t owner;      /* the leaf holding it (compaction moves both); links spares */
    uint32_t cnt[LEAF];  /* occupants of spans covering part of the leaf, per unit */
} cchunk;

struct memd_cover {
    cnode *n;        /* n[0] is never used: id 0 is NIL */
    uint32_t cap;    /* ids [1, cap) */
    uint32_t top;    /* ids >= top never handed out since the last compaction */
    uint32_t spare, nspare;
    uint32_t root;
    uint64_t live;   /* nodes in use */
    cchunk *k;       /* leaf chunks, a pool like n's (k[0] unused) */
    uint32_t kcap, ktop, kspare, nkspare;
    uint64_t klive;  /* chunks in use */
    uint64_t weight; /* memd_cover_weight */
    uint64_t base, unit, units;
    unsigned shift;  /* log2(unit) */
    unsigned levels; /* height of a full tree over units */
};

static inline uint64_t low(uint64_t k) /* bits [0, k), k <= 64 */
{
    return k >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << k) - 1;
}

/* ---------------------------------------------------------------- nodes */

static uint32_t node_new(memd_cover *c)
{
    uint32_t i;
    if (c->nspare) {
        i = c->spare;
        c->spare = c->n[i].ch[0];
        c->nspare--;
    } else {
        i = c->top++;
    }
    memset(&c->n[i], 0, sizeof(c->n[i]));
    c->live++;
    return i;
}

static void node_free(memd_cover *c, uint32_t i)
{
    c->n[i].ch[0] = c->spare;
    c->spare = i;
    c->nspare++;
    c->live--;
}

static uint32_t chunk_new(memd_cover *c, uint32_t owner)
{
    uint32_t j;
    if (c->nkspare) {
        j = c->kspare;
        c->kspare = c->k[j].owner;
        c->nkspare--;
    } else {
        j = c->ktop++;
    }
    memset(&c->k[j], 0, sizeof(c->k[j]));
    c->k[j].owner = owner;
    c->klive++;
    return j;
}

static void chunk_free(memd_cover *c, uint32_t j)
{
    c->k[j].mask = 0;
    c->k[j].owner = c->kspare;
    c->kspare = j;
    c->nkspare++;
    c->klive--;
}

/* The summaries of node i of span len (absent: wholly uncovered). */
static inline void vals(const memd_cover *c, uint32_t i, uint64_t len, uint64_t *pre,
                        uint64_t *suf, uint64_t *best)
{
    if (i == NIL) {
        *pre = *suf = *best = len;
        return;
    }
    *pre = c->n[i].pre;
    *suf = c->n[i].suf;
    *best = c->n[i].best;
}

/* The longest run of set bits in x. */
static uint64_t longest_ones(uint64_t x)
{
    uint64_t best = 0;
    while (x) {
        x >>= __builtin_ctzll(x);
        uint64_t r = ~x ? (uint64_t)__builtin_ctzll(~x) : 64;
        if (r > best)
            best = r;
        if (r == 64)
            break;
        x >>= r;
    }
    return best;
}

/* What node x of span len summarizes, from its count and its children or chunk. */
static void summary(const memd_cover *c, const cnode *x, uint64_t len, uint64_t *pre,
                    uint64_t *suf, uint64_t *best)
{
    if (x->cnt) {
        *pre = *suf = *best = 0;
        return;
    }
    if (len <= LEAF) {
        uint64_t m = x->ch[0] != NIL ? c->k[x->ch[0]].mask : 0;
        if (m == 0) {
            *pre = *suf = *best = len;
            return;
        }
        *pre = (uint64_t)__builtin_ctzll(m);
        *suf = len - 64 + (uint64_t)__builtin_clzll(m);
        *best = longest_ones(~m & low(len));
        return;
    }
    uint64_t ll = len - len / 2, lr = len / 2, lp, ls, lb, rp, rs, rb;
    vals(c, x->ch[0], ll, &lp, &ls, &lb);
    vals(c, x->ch[1], lr, &rp, &rs, &rb);
    *pre = lp == ll ? ll + rp : lp;
    *suf = rs == lr ? lr + ls : rs;
    *best = lb > rb ? lb : rb;
    if (ls + rp > *best)
        *best = ls + rp;
}

static void pull(memd_cover *c, uint32_t i, uint64_t len)
{
    cnode *x = &c->n[i];
    summary(c, x, len, &x->pre, &x->suf, &x->best);
}

/* ---------------------------------------------------------------- pool */

/* Grows a pool of *cap elements (top used from the start, spare freed among them) so
 * that `need` more fit: *out is the pool, moved or not. -ENOMEM leaves it as it was. */
static int pool_grow(void *pool, size_t elem, uint32_t *cap, uint32_t top, uint32_t spare,
                     uint64_t need, uint64_t first, void **out)
{
    *out = pool;
    if ((uint64_t)spare + (*cap > top ? *cap - top : 0) >= need)
        return 0;
    uint64_t ncap = *cap ? (uint64_t)*cap * 2 : first;
    while (ncap - top + spare < need)
        ncap *= 2;
    if (ncap > UINT32_MAX || ncap > SIZE_MAX / elem)
        return -ENOMEM;
    void *p = realloc(pool, (size_t)ncap * elem);
    if (!p)
        return -ENOMEM;
    *out = p;
    *cap = (uint32_t)ncap;
    return 0;
}

int memd_cover_reserve(memd_cover *c, unsigned adds)
{
    /* A span update visits at most four nodes per level, and creates at most those, and
     * at most two chunks (the leaves holding its ends). */
    void *p;
    int rc = pool_grow(c->n, sizeof(cnode), &c->cap, c->top, c->nspare,
                       (uint64_t)adds * 4 * c->levels, 64, &p);
    if (rc)
        return rc;
    c->n = p;
    rc = pool_grow(c->k, sizeof(cchunk), &c->kcap, c->ktop, c->nkspare, (uint64_t)adds * 2, 16, &p);
    if (rc)
        return rc; /* the node pool grew: still the same map */
    c->k = p;
    return 0;
}

static uint32_t copy_rec(memd_cover *c, uint32_t i, uint64_t len, cnode *to, uint32_t *top)
{
    if (i == NIL)
        return NIL;
    uint32_t j = (*top)++;
    to[j] = c->n[i];
    if (len <= LEAF) {
        if (to[j].ch[0] != NIL)
            c->k[to[j].ch[0]].owner = j;
        return j;
    }
    to[j].ch[0] = copy_rec(c, c->n[i].ch[0], len - len / 2, to, top);
    to[j].ch[1] = copy_rec(c, c->n[i].ch[1], len / 2, to, top);
    return j;
}

/* The capacity a pool of cap slots with live in use shrinks to (twice live, at least
 * floor) once at most a quarter is used; 0 while it stays. */
static inline uint64_t trim_cap(uint32_t cap, uint64_t live, uint32_t floor)
{
    if (cap <= floor || live * 4 >= cap)
        return 0;
    uint64_t ncap = 2 * live + 1;
    return ncap < floor ? floor : ncap;
}

/* A pool at most a quarter used moves its nodes into a new one twice the live nodes
 * (depth first, so a subtree's nodes end up close): amortized O(1) per remove, and the
 * memory follows the live intervals down. Without memory the pool simply stays. The
 * chunks are compacted on their own, in place order, through their owners. */
static void trim(memd_cover *c)
{
    uint64_t ncap = trim_cap(c->cap, c->live, TRIM_MIN);
    if (ncap) {
        cnode *p = malloc((size_t)ncap * sizeof(cnode));
        if (p) {
            uint32_t top = 1;
            c->root = copy_rec(c, c->root, c->units, p, &top);
            free(c->n);
            c->n = p;
            c->cap = (uint32_t)ncap;
            c->top = top;
            c->spare = NIL;
            c->nspare = 0;
        }
    }
    ncap = trim_cap(c->kcap, c->klive, CTRIM_MIN);
    if (ncap) {
        cchunk *p = malloc((size_t)ncap * sizeof(cchunk));
        if (!p)
            return;
        uint32_t top = 1;
        for (uint32_t j = 1; j < c->ktop; j++) {
            if (c->k[j].mask == 0)
                continue; /* spare */
            p[top] = c->k[j];
            c->n[p[top].owner].ch[0] = top;
            top++;
        }
        free(c->k);
        c->k = p;
        c->kcap = (uint32_t)ncap;
        c->ktop = top;
        c->kspare = NIL;
        c->nkspare = 0;
    }
}

/* ---------------------------------------------------------------- create */

int memd_cover_create(uint64_t base, uint64_t unit, uint64_t units, memd_cover **out)
{
    if (!out)
        return -EINVAL;
    *out = NULL;
    if (unit == 0 || (unit & (unit - 1)) != 0 || (base & (unit - 1)) != 0 || units == 0)
        return -EINVAL;
    unsigned shift = (unsigned)__builtin_ctzll(unit);
    if (units > (UINT64_MAX >> shift) || base > UINT64_MAX - (units << shift))
        return -EINVAL;
    memd_cover *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    *c = (memd_cover){.base = base, .unit = unit, .units = units, .shift = shift, .top = 1,
                      .ktop = 1, .levels = 1}; /* ids start at 1: 0 is NIL */
    for (uint64_t n = units; n > LEAF; n = n - n / 2)
        c->levels++;
    *out = c;
    return 0;
}

void memd_cover_destroy(memd_cover *c)
{
    if (!c)
        return;
    free(c->n);
    free(c->k);
    free(c);
}

/* [addr, addr + size) as units [*a, *b); false if it is not a span of the range. */
static bool span(const memd_cover *c, uint64_t addr, uint64_t size, uint64_t *a, uint64_t *b)
{
    if (size == 0 || addr < c->base || ((addr - c->base) & (c->unit - 1)) != 0)
        return false;
    uint64_t u = (addr - c->base) >> c->shift;
    uint64_t n = (size >> c->shift) + ((size & (c->unit - 1)) != 0);
    if (u >= c->units || n > c->units - u)
        return false;
    *a = u;
    *b = u + n;
    return true;
}

/* ---------------------------------------------------------------- add / remove */

/* The units [*s, *e) of leaf [lo, lo + len) that [a, b) covers (a part of it). */
static inline void in_leaf(uint64_t lo, uint64_t len, uint64_t a, uint64_t b, uint64_t *s,
                           uint64_t *e)
{
    *s = a > lo ? a - lo : 0;
    *e = (b < lo + len ? b : lo + len) - lo;
}

typedef uint32_t cover_rec(memd_cover *c, uint32_t i, uint64_t lo, uint64_t len, uint64_t a,
                           uint64_t b, uint32_t w);

/* add_rec's and remove_rec's step into the children of inner node i that [a, b) meets;
 * inlined, so each recursion calls itself directly. */
static inline __attribute__((always_inline)) void
into_children(memd_cover *c, uint32_t i, uint64_t lo, uint64_t len, uint64_t a, uint64_t b,
              uint32_t w, cover_rec *rec)
{
    uint64_t ll = len - len / 2, mid = lo + ll;
    if (a < mid) {
        uint32_t k = rec(c, c->n[i].ch[0], lo, ll, a, b, w);
        c->n[i].ch[0] = k;
    }
    if (b > mid) {
        uint32_t k = rec(c, c->n[i].ch[1], mid, len / 2, a, b, w);
        c->n[i].ch[1] = k;
    }
}

/* add_rec and remove_rec mirror each other on purpose: one recursion with a direction
 * flag measured ~7 % slower a lockstep pair in a split region (memd-bench-alloc --banks
 * lockstep-split --live 10000). */
static uint32_t add_rec(memd_cover *c, uint32_t i, uint64_t lo, uint64_t len, uint64_t a,
                        uint64_t b, uint32_t w)
{
    if (i == NIL)
        i = node_new(c); /* reserved: the pool does not move */
    if (a <= lo && lo + len <= b) {
        c->n[i].cnt += w;
    } else if (len <= LEAF) {
        uint64_t s, e;
        in_leaf(lo, len, a, b, &s, &e);
        if (c->n[i].ch[0] == NIL)
            c->n[i].ch[0] = chunk_new(c, i); /* reserved too */
        cchunk *k = &c->k[c->n[i].ch[0]];
        for (uint64_t u = s; u < e; u++)
            k->cnt[u] += w;
        k->mask |= low(e) & ~low(s);
    } else {
        into_children(c, i, lo, len, a, b, w, add_rec);
    }
    pull(c, i, len);
    return i;
}

/* The single path from the root while [a, b) lies within one child: its nodes' links
 * (&c->root or a parent's child slot) and span lengths into link / plen [0, returned),
 * and *at the link of the node below them (where the span splits, is canonical or
 * reaches a leaf), of span [*lo, *lo + *len). `make`: create absent path nodes
 * (reserved: the pool does not move). add and drop walk that path in a loop and recurse
 * only from *at (a lockstep pair in a split region measured 2-3 % faster than recursing
 * from the root). The height is at most 60. */
static unsigned descend(memd_cover *c, uint64_t a, uint64_t b, bool make, uint32_t **link,
                        uint64_t *plen, uint32_t **at, uint64_t *lo, uint64_t *len)
{
    uint32_t *l = &c->root;
    uint64_t x = 0, n = c->units;
    unsigned d = 0;
    while (n > LEAF && !(a <= x && x + n <= b)) {
        uint64_t ll = n - n / 2, mid = x + ll;
        if (a < mid && b > mid)
            break;
        if (*l == NIL && make)
            *l = node_new(c);
        link[d] = l;
        plen[d++] = n;
        if (b <= mid) {
            l = &c->n[*l].ch[0];
            n = ll;
        } else {
            l = &c->n[*l].ch[1];
            x = mid;
            n /= 2;
        }
    }
    *at = l;
    *lo = x;
    *len = n;
    return d;
}

int memd_cover_add(memd_cover *c, uint64_t addr, uint64_t size, uint32_t n)
{
    uint64_t a, b;
    if (!c || n == 0 || !span(c, addr, size, &a, &b))
        return -EINVAL;
    int rc = memd_cover_reserve(c, 1);
    if (rc)
        return rc;
    uint32_t *link[64], *at;
    uint64_t plen[64], lo, len;
    unsigned d = descend(c, a, b, true, link, plen, &at, &lo, &len);
    *at = add_rec(c, *at, lo, len, a, b, n);
    while (d--)
        pull(c, *link[d], plen[d]);
    c->weight += (b - a) * n;
    return 0;
}

/* Every canonical node of [a, b) exists and is covered there; in a leaf it covers in
 * part, every unit of the part is counted in its chunk. */
static bool has_rec(const memd_cover *c, uint32_t i, uint64_t lo, uint64_t len, uint64_t a,
                    uint64_t b, uint32_t w)
{
    if (i == NIL)
        return false;
    if (a <= lo && lo + len <= b)
        return c->n[i].cnt >= w;
    if (len <= LEAF) {
        uint64_t s, e;
        in_leaf(lo, len, a, b, &s, &e);
        if (c->n[i].ch[0] == NIL)
            return false;
        const cchunk *k = &c->k[c->n[i].ch[0]];
        for (uint64_t u = s; u < e; u++)
            if (k->cnt[u] < w)
                return false;
        return true;
    }
    uint64_t ll = len - len / 2, mid = lo + ll;
    if (a < mid && !has_rec(c, c->n[i].ch[0], lo, ll, a, b, w))
        return false;
    return b <= mid || has_rec(c, c->n[i].ch[1], mid, len / 2, a, b, w);
}

static uint32_t remove_rec(memd_cover *c, uint32_t i, uint64_t lo, uint64_t len, uint64_t a,
                           uint64_t b, uint32_t w)
{
    if (a <= lo && lo + len <= b) {
        c->n[i].cnt -= w;
    } else if (len <= LEAF) {
        uint64_t s, e, gone = 0;
        in_leaf(lo, len, a, b, &s, &e);
        cchunk *k = &c->k[c->n[i].ch[0]];
        for (uint64_t u = s; u < e; u++) {
            k->cnt[u] -= w;
            gone |= (uint64_t)(k->cnt[u] == 0) << u;
        }
        k->mask &= ~gone;
        if (k->mask == 0) {
            chunk_free(c, c->n[i].ch[0]);
            c->n[i].ch[0] = NIL;
        }
    } else {
        into_children(c, i, lo, len, a, b, w, remove_rec);
    }
    if (c->n[i].cnt == 0 && c->n[i].ch[0] == NIL && c->n[i].ch[1] == NIL) {
        node_free(c, i);
        return NIL;
    }
    pull(c, i, len);
    return i;
}

static void drop_units(memd_cover *c, uint64_t a, uint64_t b, uint32_t n)
{
    uint32_t *link[64], *at;
    uint64_t plen[64], lo, len;
    unsigned d = descend(c, a, b, false, link, plen, &at, &lo, &len);
    *at = remove_rec(c, *at, lo, len, a, b, n);
    while (d--) {
        uint32_t i = *link[d];
        if (c->n[i].cnt == 0 && c->n[i].ch[0] == NIL && c->n[i].ch[1] == NIL) {
            node_free(c, i);
            *link[d] = NIL;
        } else {
            pull(c, i, plen[d]);
        }
    }
    c->weight -= (b - a) * n;
    trim(c);
}

int memd_cover_remove(memd_cover *c, uint64_t addr, uint64_t size, uint32_t n)
{
    uint64_t a, b;
    if (!c || n == 0 || !span(c, addr, size, &a, &b) ||
        !has_rec(c, c->root, 0, c->units, a, b, n))
        return -ENOENT;
    drop_units(c, a, b, n);
    return 0;
}

void memd_cover_drop(memd_cover *c, uint64_t addr, uint64_t size, uint32_t n)
{
    uint64_t a, b;
    if (c && n && span(c, addr, size, &a, &b))
        drop_units(c, a, b, n);
}

/* ---------------------------------------------------------------- searches */

/* A search for len uncovered units: bottom-up, the lowest start >= lim; top-down, the
 * highest end <= lim. run: the uncovered units on the side already walked that touch
 * the current node (only units on the right side of lim count). */
typedef struct run_q {
    uint64_t lim, len, run, at;
} run_q;

static inline uint64_t rev64(uint64_t x)
{
    x = __builtin_bswap64(x);
    x = (x >> 4 & UINT64_C(0x0f0f0f0f0f0f0f0f)) | (x & UINT64_C(0x0f0f0f0f0f0f0f0f)) << 4;
    x = (x >> 2 & UINT64_C(0x3333333333333333)) | (x & UINT64_C(0x3333333333333333)) << 2;
    return (x >> 1 & UINT64_C(0x5555555555555555)) | (x & UINT64_C(0x5555555555555555)) << 1;
}

/* run_rec inside leaf i of span [lo, lo + n) (its count 0, so its chunk exists): its
 * units in walk order, from the first on lim's side, one uncovered run at a time. */
static bool leaf_run(const memd_cover *c, uint32_t i, uint64_t lo, uint64_t n, run_q *q, bool down)
{
    uint64_t m = c->k[c->n[i].ch[0]].mask, s;
    if (down) {
        m = rev64(m) >> (64 - n); /* bit p: unit lo + n - 1 - p */
        s = q->lim < lo + n ? lo + n - q->lim : 0;
    } else {
        s = q->lim > lo ? q->lim - lo : 0;
    }
    uint64_t free = ~m & low(n) & ~low(s);
    for (uint64_t p = s;;) {
        uint64_t f = free >> p; /* p < n */
        uint64_t r = ~f ? (uint64_t)__builtin_ctzll(~f) : 64;
        if (q->run + r >= q->len) {
            q->at = down ? lo + n - p + q->run : lo + p - q->run;
            return true;
        }
        if (p + r == n) {
            q->run += r;
            return false;
        }
        q->run = 0; /* walk position p + r is covered */
        uint64_t g = free & ~low(p + r + 1);
        if (g == 0)
            return false;
        p = (uint64_t)__builtin_ctzll(g);
    }
}

/* run_rec below node i of span [lo, lo + n), wholly on the walked side, present and
 * holding a run of len that the walk from it has not reached (q->run + near < len <=
 * best): the run found is inside, so the walk goes down one child at a time and never
 * back up. A loop rather than run_rec's recursion (the search's common case: a first
 * fit from the range's edge is all on the walked side). */
static void run_in(const memd_cover *c, uint32_t i, uint64_t lo, uint64_t n, run_q *q, bool down)
{
    while (n > LEAF) {
        uint64_t ll = n - n / 2, cn[2] = {ll, n / 2}, clo[2] = {lo, lo + ll};
        unsigned j = down;
        uint64_t pre, suf, best;
        vals(c, c->n[i].ch[j], cn[j], &pre, &suf, &best);
        uint64_t near = down ? suf : pre, far = down ? pre : suf;
        if (q->run + near >= q->len) {
            q->at = down ? clo[j] + cn[j] + q->run : clo[j] - q->run;
            return;
        }
        if (near == cn[j]) {
            q->run += cn[j];
        } else if (best < q->len) {
            q->run = far;
        } else {
            i = c->n[i].ch[j];
            lo = clo[j];
            n = cn[j];
            continue;
        }
        /* Not in the first child: in the other, from its near edge or below it. */
        j = !down;
        vals(c, c->n[i].ch[j], cn[j], &pre, &suf, &best);
        near = down ? suf : pre;
        if (q->run + near >= q->len) {
            q->at = down ? clo[j] + cn[j] + q->run : clo[j] - q->run;
            return;
        }
        i = c->n[i].ch[j];
        lo = clo[j];
        n = cn[j];
    }
    (void)leaf_run(c, i, lo, n, q, down); /* finds it */
}

/* One search for both directions: bottom-up the side already walked is below the node
 * and the near edge is its start (prefix), top-down it is above and the near edge is
 * its end (suffix); children are visited in walk order. */
static bool run_rec(const memd_cover *c, uint32_t i, uint64_t lo, uint64_t n, run_q *q, bool down)
{
    uint64_t hi = lo + n;
    if (down ? lo >= q->lim : hi <= q->lim)
        return false; /* wholly on the excluded side of lim */
    if (down ? hi <= q->lim : lo >= q->lim) {
        uint64_t pre, suf, best;
        vals(c, i, n, &pre, &suf, &best);
        uint64_t near = down ? suf : pre, far = down ? pre : suf;
        if (q->run + near >= q->len) {
            q->at = down ? hi + q->run : lo - q->run;
            return true;
        }
        if (near == n) {
            q->run += n;
            return false;
        }
        if (best < q->len) {
            q->run = far;
            return false;
        }
        run_in(c, i, lo, n, q, down); /* present, since near < n */
        return true;
    } else if (i == NIL) { /* lim cuts an uncovered span */
        q->run = down ? q->lim - lo : hi - q->lim;
        if (q->run < q->len)
            return false;
        q->at = q->lim;
        return true;
    } else if (c->n[i].cnt) {
        q->run = 0;
        return false;
    }
    if (n <= LEAF)
        return leaf_run(c, i, lo, n, q, down);
    uint64_t ll = n - n / 2;
    if (down)
        return run_rec(c, c->n[i].ch[1], lo + ll, n / 2, q, down) ||
               run_rec(c, c->n[i].ch[0], lo, ll, q, down);
    return run_rec(c, c->n[i].ch[0], lo, ll, q, down) ||
           run_rec(c, c->n[i].ch[1], lo + ll, n / 2, q, down);
}

/* The lowest covered unit >= from, or NONE. A present node always covers something,
 * so each level either answers or goes down one side: O(log U). */
static uint64_t next_cov(const memd_cover *c, uint32_t i, uint64_t lo, uint64_t n, uint64_t from)
{
    if (i == NIL || lo + n <= from)
        return NONE;
    if (c->n[i].cnt)
        return lo > from ? lo : from;
    if (n <= LEAF) {
        uint64_t m = c->k[c->n[i].ch[0]].mask & ~low(from > lo ? from - lo : 0);
        return m ? lo + (uint64_t)__builtin_ctzll(m) : NONE;
    }
    uint64_t ll = n - n / 2;
    uint64_t r = next_cov(c, c->n[i].ch[0], lo, ll, from);
    return r != NONE ? r : next_cov(c, c->n[i].ch[1], lo + ll, n / 2, from);
}

/* The highest covered unit < to, or NONE. */
static uint64_t prev_cov(const memd_cover *c, uint32_t i, uint64_t lo, uint64_t n, uint64_t to)
{
    if (i == NIL || lo >= to)
        return NONE;
    if (c->n[i].cnt)
        return (lo + n < to ? lo + n : to) - 1;
    if (n <= LEAF) {
        uint64_t m = c->k[c->n[i].ch[0]].mask & low((lo + n < to ? lo + n : to) - lo);
        return m ? lo + 63 - (uint64_t)__builtin_clzll(m) : NONE;
    }
    uint64_t ll = n - n / 2;
    uint64_t r = prev_cov(c, c->n[i].ch[1], lo + ll, n / 2, to);
    return r != NONE ? r : prev_cov(c, c->n[i].ch[0], lo, ll, to);
}
/* The next maximal uncovered run of at least len units, as [*a, *e): bottom-up the
 * lowest starting at or above lim, top-down the highest ending at or below lim. lim is
 * 0 / units or a covered unit's edge, so the run found is maximal. With `near_only`,
 * only the edge found by the search is exact and the other is len units away (the part
 * known to be uncovered), saving the second descent. */
static bool next_run(const memd_cover *c, uint64_t len, memd_dir dir, uint64_t lim, bool near_only,
                     uint64_t *a, uint64_t *e)
{
    bool down = dir == MEMD_DIR_TOP_DOWN;
    run_q q = {.lim = lim, .len = len};
    if (!run_rec(c, c->root, 0, c->units, &q, down))
        return false;
    if (!down) {
        uint64_t end = near_only ? q.at + len : next_cov(c, c->root, 0, c->units, q.at + len);
        *a = q.at;
        *e = end == NONE ? c->units : end;
        return true;
    }
    uint64_t below = near_only ? q.at - len - 1 : prev_cov(c, c->root, 0, c->units, q.at - len);
    *a = below == NONE ? 0 : below + 1;
    *e = q.at;
    return true;
}

int memd_cover_fit(const memd_cover *c, uint64_t size, uint64_t align, memd_dir dir,
                   memd_fit fit, uint64_t *addr, uint64_t *blk, uint64_t *blk_size)
{
    if (!c || !addr || size == 0 || (align & (align - 1)) != 0 ||
        (dir != MEMD_DIR_BOTTOM_UP && dir != MEMD_DIR_TOP_DOWN) ||
        (fit != MEMD_FIT_FIRST && fit != MEMD_FIT_BEST))
        return -EINVAL;
    if (size > UINT64_MAX - (c->unit - 1))
        return -EOVERFLOW;
    uint64_t sz = (size + (c->unit - 1)) & ~(c->unit - 1);
    uint64_t al = align > c->unit ? align : c->unit, len = sz >> c->shift;
    if (len > c->units)
        return -ENOMEM;
    bool found = false;
    uint64_t lim = dir == MEMD_DIR_TOP_DOWN ? c->units : 0, a, e, best = 0, ba = 0, bs = 0, x;
    /* First fit without the block wanted: the place inside a run depends only on the
     * edge the search finds (start bottom-up, end top-down), so when the request fits in
     * the len units known uncovered from there, the run's other edge is not needed. */
    bool near = fit == MEMD_FIT_FIRST && !blk && !blk_size;
    while (next_run(c, len, dir, lim, near, &a, &e)) {
        uint64_t ra = c->base + (a << c->shift), rs = (e - a) << c->shift;
        if (near && memd_place(ra, rs, sz, al, dir, &x)) {
            *addr = x;
            return 0;
        }
        if (near && !next_run(c, len, dir, lim, false, &a, &e))
            break; /* cannot happen: the same search */
        ra = c->base + (a << c->shift);
        rs = (e - a) << c->shift;
        if (memd_place(ra, rs, sz, al, dir, &x) && (!found || rs < best)) {
            found = true;
            best = rs;
            *addr = x;
            ba = ra;
            bs = rs;
            /* First fit takes the first; nothing is smaller than the request itself. */
            if (fit == MEMD_FIT_FIRST || rs == sz)
                break;
        }
        if (dir == MEMD_DIR_TOP_DOWN) {
            if (a == 0)
                break;
            lim = a; /* unit a - 1 is covered */
        } else {
            if (e == c->units)
                break;
            lim = e; /* unit e is covered */
        }
    }
    if (!found)
        return -ENOMEM;
    if (blk)
        *blk = ba;
    if (blk_size)
        *blk_size = bs;
    return 0;
}

int memd_cover_probe(const memd_cover *c, uint64_t addr, uint64_t size)
{
    uint64_t a, b;
    if (!c || !span(c, addr, size, &a, &b))
        return -EINVAL;
    run_q q = {.lim = a, .len = b - a};
    return run_rec(c, c->root, 0, c->units, &q, false) && q.at == a ? 0 : -EBUSY;
}

bool memd_cover_next_free(const memd_cover *c, uint64_t addr, uint64_t *free_addr)
{
    if (!c || !free_addr)
        return false;
    uint64_t from = addr < c->base ? 0 : (addr - c->base) >> c->shift;
    if (from >= c->units)
        return false;
    run_q q = {.lim = from, .len = 1};
    if (!run_rec(c, c->root, 0, c->units, &q, false))
        return false;
    *free_addr = c->base + (q.at << c->shift);
    return true;
}

uint32_t memd_cover_count(const memd_cover *c, uint64_t addr)
{
    if (!c || addr < c->base || ((addr - c->base) >> c->shift) >= c->units)
        return 0;
    uint64_t u = (addr - c->base) >> c->shift, lo = 0, n = c->units;
    uint32_t sum = 0;
    for (uint32_t i = c->root; i != NIL;) {
        sum += c->n[i].cnt;
        if (n <= LEAF) {
            if (c->n[i].ch[0] != NIL)
                sum += c->k[c->n[i].ch[0]].cnt[u - lo];
            break;
        }
        uint64_t ll = n - n / 2;
        if (u < lo + ll) {
            i = c->n[i].ch[0];
            n = ll;
        } else {
            i = c->n[i].ch[1];
            lo += ll;
            n /= 2;
        }
    }
    return sum;
}

uint64_t memd_cover_weight(const memd_cover *c)
{
    return c ? c->weight : 0;
}

uint64_t memd_cover_nodes(const memd_cover *c)
{
    return c ? c->live + c->klive : 0;
}

uint64_t memd_cover_bytes(const memd_cover *c)
{
    return c ? (uint64_t)c->cap * sizeof(cnode) + (uint64_t)c->kcap * sizeof(cchunk) : 0;
}

/* ---------------------------------------------------------------- check */

/* A leaf's chunk: owned by it, its mask exactly the units it counts, nothing counted
 * past the leaf's span. */
static bool check_chunk(const memd_cover *c, uint32_t i, uint64_t len)
{
    uint32_t j = c->n[i].ch[0];
    if (j >= c->ktop)
        return false;
    const cchunk *k = &c->k[j];
    uint64_t m = 0;
    for (uint64_t u = 0; u < LEAF; u++)
        if (k->cnt[u])
            m |= UINT64_C(1) << u;
    return k->owner == i && m != 0 && m == k->mask && (m & ~low(len)) == 0;
}

static bool check_rec(const memd_cover *c, uint32_t i, uint64_t len, uint64_t *seen,
                      uint64_t *kseen)
{
    if (i == NIL)
        return true;
    if (i >= c->top || ++*seen > c->live)
        return false;
    const cnode *x = &c->n[i];
    if (x->cnt == 0 && x->ch[0] == NIL && x->ch[1] == NIL)
        return false; /* an empty subtree must have gone back to the pool */
    if (len <= LEAF) {
        if (x->ch[1] != NIL)
            return false;
        if (x->ch[0] != NIL && (++*kseen > c->klive || !check_chunk(c, i, len)))
            return false;
    } else if (!check_rec(c, x->ch[0], len - len / 2, seen, kseen) ||
               !check_rec(c, x->ch[1], len / 2, seen, kseen)) {
        return false;
    }
    cnode want = *x;
    summary(c, x, len, &want.pre, &want.suf, &want.best);
    return want.pre == x->pre && want.suf == x->suf && want.best == x->best &&
           x->pre < len; /* present: something below is covered */
}

int memd_cover_check(const memd_cover *c)
{
    if (!c)
        return -EFAULT;
    uint64_t seen = 0, kseen = 0;
    if (!check_rec(c, c->root, c->units, &seen, &kseen) || seen != c->live ||
        c->live + c->nspare != (uint64_t)c->top - 1 || kseen != c->klive ||
        c->klive + c->nkspare != (uint64_t)c->ktop - 1)
        return -EFAULT;
    return 0;
}

/* memd engine — exact plan search: does a plan with arena <= capacity exist?
 *
 * A depth-first branch and bound over canonical plans, after MiniMalloc (Moffitt,
 * ASPLOS'23): every plan can be pushed down ("gravity") until each buffer sits at 0 or
 * on top of a buffer it overlaps in time, and such a plan can be built by placing
 * buffers in non-decreasing offset order, each at its lowest offset above the placed
 * buffers it overlaps. So at every node the only choices are which buffer goes next,
 * among those whose lowest offset is the current minimum, and the search prunes with:
 *  - monotonicity: (offset, preorder rank) of placements strictly increases;
 *  - dominance: a buffer whose lowest offset is at or above some other unplaced
 *    buffer's lowest top would leave a needless gap below it;
 *  - symmetry: of identical buffers (same lifetime, size, alignment) the one earlier in
 *    the preorder is placed first;
 *  - section inference: in every section (a maximal set of buffers live together),
 *    every unplaced buffer lands at or above max(current offset, its lowest offset), so
 *    max(current offset, lowest offset of its unplaced buffers) + their total size
 *    must fit under the capacity;
 *  - "hatless" placements (nothing unplaced overlaps the buffer) need no alternative;
 *  - dynamic decomposition: once no unplaced buffer crosses a section boundary, the two
 *    sides are solved independently.
 *
 * What makes a node cheap (it is the whole cost of the search):
 *  - sections are only the maximal cliques (the live set just before each distinct end
 *    time): a section between two starts is a subset of the next one and prunes
 *    nothing more, so this halves the sections to keep;
 *  - the lowest offset of a section's unplaced buffers is never recomputed as a
 *    whole: each section keeps a witness, an unplaced member low enough for the
 *    inference to pass. Only when a placement removes or raises the witness is the
 *    section scanned for another one, and a witness change is undone through the same
 *    trail as the lowest offsets. A section whose witness still holds needs no work;
 *  - the current-offset half of the inference is re-checked only when the offset grew;
 *  - no allocation on the way down except when a preallocated stack must grow.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "plan_internal.h"

enum { S_NOTFOUND = 0, S_FOUND = 1, S_ABORT = 2 };

#define NONE UINT32_MAX
#define TR_WIT 0x80000000u /* trail entry restores a witness (else a lowest offset) */

typedef struct trail_ent {
    uint32_t i; /* buffer (lowest offset) or TR_WIT | section (witness) */
    uint32_t w; /* witness entries: the previous witness */
    uint64_t v; /* lowest-offset entries: the previous value */
} trail_ent;

struct plan_search_ctx {
    const memd_plan_buffer *b;
    size_t n;
    const plan_graph *g;
    /* sections: maximal cliques, one per distinct end time */
    size_t ns;
    uint32_t *sl, *sh;    /* buffer -> [first, last+1) section */
    size_t *soff;         /* section -> members CSR; the unplaced ones come first */
    uint32_t *smem;
    uint32_t *nun_s;      /* per section: unplaced members (a prefix of its CSR row) */
    size_t *mbase;        /* buffer -> its membership slots (one per section it spans) */
    uint32_t *mpos;       /* membership slot -> position in the section's row */
    uint64_t *total0;     /* size of every member, per section */
    /* heuristic keys */
    uint64_t *k_width, *k_area, *k_total, *k_size, *k_len, *k_guide;
    uint32_t *twin_key;   /* identical buffers share a twin class id */
    uint64_t *sz, *amask; /* size and alignment - 1, compact for the hot loops */
    /* per run */
    uint64_t cap;
    uint64_t *minoff, *off, *out;
    uint8_t *placed;
    uint32_t *rank;
    uint32_t *twin_prev;  /* the identical buffer placed just before, or NONE */
    uint64_t *total;      /* unplaced size per section */
    uint32_t *wit;        /* per section: an unplaced member with minoff <= cap - total */
    uint32_t *wcnt;       /* per buffer: sections it is the witness of */
    uint32_t *pool;       /* partition lists (unplaced buffers), stacked */
    size_t npool, poolcap;
    uint32_t *upos;       /* position of a buffer in its partition's list */
    uint32_t *cuts;       /* boundary k (sections k|k+1): unplaced buffers across it */
    uint32_t *zero;       /* stack of boundaries whose cut count reached zero */
    size_t nzero, zerocap;
    trail_ent *tr;
    size_t ntr, trcap;
    uint32_t *cand;
    size_t ncand, candcap;
    uint64_t *mx;         /* stacked per-node prefix/suffix maxima of section totals */
    size_t nmx, mxcap;
    uint32_t *raised;     /* scratch of one placement: raised buffers that are witnesses */
    uint32_t *order;      /* scratch: the preorder */
    uint64_t nodes, node_limit;
    uint32_t disc;        /* discrepancies left (limited discrepancy search) */
    bool cut;             /* a branch was skipped for lack of discrepancies */
    plan_budget *bu;
    bool oom;
};

static bool trail_grow(plan_search_ctx *c)
{
    size_t nc = c->trcap ? 2 * c->trcap : 1024;
    trail_ent *e = realloc(c->tr, nc * sizeof(*e));
    if (!e) {
        c->oom = true;
        return false;
    }
    c->tr = e;
    c->trcap = nc;
    return true;
}

static inline bool trail_min(plan_search_ctx *c, uint32_t y)
{
    if (c->ntr == c->trcap && !trail_grow(c))
        return false;
    c->tr[c->ntr].i = y;
    c->tr[c->ntr].v = c->minoff[y];
    c->ntr++;
    return true;
}

static inline bool set_wit(plan_search_ctx *c, uint32_t s, uint32_t w)
{
    if (c->ntr == c->trcap && !trail_grow(c))
        return false;
    uint32_t old = c->wit[s];
    c->tr[c->ntr].i = TR_WIT | s;
    c->tr[c->ntr].w = old;
    c->ntr++;
    if (old != NONE)
        c->wcnt[old]--;
    c->wit[s] = w;
    c->wcnt[w]++;
    return true;
}

static void trail_undo(plan_search_ctx *c, size_t to)
{
    while (c->ntr > to) {
        const trail_ent *e = &c->tr[--c->ntr];
        if (e->i & TR_WIT) {
            uint32_t s = e->i & ~TR_WIT;
            c->wcnt[c->wit[s]]--;
            c->wit[s] = e->w;
            if (e->w != NONE)
                c->wcnt[e->w]++;
        } else {
            c->minoff[e->i] = e->v;
        }
    }
}

static int cmp_time(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

void plan_search_free(plan_search_ctx *c)
{
    if (!c)
        return;
    free(c->sl);
    free(c->sh);
    free(c->soff);
    free(c->smem);
    free(c->nun_s);
    free(c->mbase);
    free(c->mpos);
    free(c->total0);
    free(c->k_width);
    free(c->k_area);
    free(c->k_total);
    free(c->k_size);
    free(c->k_len);
    free(c->k_guide);
    free(c->twin_key);
    free(c->sz);
    free(c->amask);
    free(c->minoff);
    free(c->off);
    free(c->placed);
    free(c->rank);
    free(c->twin_prev);
    free(c->total);
    free(c->wit);
    free(c->wcnt);
    free(c->pool);
    free(c->upos);
    free(c->cuts);
    free(c->zero);
    free(c->tr);
    free(c->cand);
    free(c->mx);
    free(c->raised);
    free(c->order);
    free(c);
}

/* Identical buffers get the same class: sort indices by (lower, upper, size, align). */
static int cmp_twin(const void *x, const void *y, void *ctx)
{
    const memd_plan_buffer *b = ctx;
    const memd_plan_buffer *p = &b[*(const uint32_t *)x], *q = &b[*(const uint32_t *)y];
    if (p->lower != q->lower)
        return p->lower < q->lower ? -1 : 1;
    if (p->upper != q->upper)
        return p->upper < q->upper ? -1 : 1;
    if (p->size != q->size)
        return p->size < q->size ? -1 : 1;
    uint64_t pa = p->align ? p->align : 1, qa = q->align ? q->align : 1;
    if (pa != qa)
        return pa < qa ? -1 : 1;
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    return (i > j) - (i < j);
}

static void twin_classes(plan_search_ctx *c, uint32_t *idx)
{
    const memd_plan_buffer *b = c->b;
    for (size_t i = 0; i < c->n; i++)
        idx[i] = (uint32_t)i;
    qsort_r(idx, c->n, sizeof(*idx), cmp_twin, (void *)b);
    uint32_t cls = 0;
    for (size_t k = 0; k < c->n; k++) {
        if (k) {
            uint32_t p = idx[k - 1], q = idx[k];
            uint64_t pa = b[p].align ? b[p].align : 1, qa = b[q].align ? b[q].align : 1;
            if (b[p].lower != b[q].lower || b[p].upper != b[q].upper ||
                b[p].size != b[q].size || pa != qa)
                cls++;
        }
        c->twin_key[idx[k]] = cls;
    }
}

int plan_search_new(const memd_plan_buffer *b, size_t n, const plan_graph *g,
                    uint64_t max_members, plan_search_ctx **out)
{
    *out = NULL;
    plan_search_ctx *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->b = b;
    c->n = n;
    c->g = g;
    size_t nn = n ? n : 1;
    uint64_t *ends = malloc(nn * sizeof(*ends));
    c->sl = calloc(nn, sizeof(*c->sl));
    c->sh = calloc(nn, sizeof(*c->sh));
    if (!ends || !c->sl || !c->sh)
        goto oom;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (b[i].size)
            ends[k++] = b[i].upper;
    qsort(ends, k, sizeof(*ends), cmp_time);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (u == 0 || ends[u - 1] != ends[i])
            ends[u++] = ends[i];
    c->ns = u;
    /* Section k is the live set just before ends[k]: x is in it iff
     * lower < ends[k] <= upper. */
    uint64_t members = 0;
    for (size_t i = 0; i < n; i++)
        if (b[i].size) {
            c->sl[i] = (uint32_t)memd_lower_bound_u64(ends, u, b[i].lower + 1);
            c->sh[i] = (uint32_t)memd_lower_bound_u64(ends, u, b[i].upper) + 1;
            members += c->sh[i] - c->sl[i];
        }
    free(ends);
    ends = NULL;
    if (members > max_members) {
        plan_search_free(c);
        return -E2BIG;
    }
    size_t ns = c->ns ? c->ns : 1;
    c->soff = calloc(ns + 1, sizeof(*c->soff));
    c->smem = malloc((members ? members : 1) * sizeof(*c->smem));
    c->mpos = malloc((members ? members : 1) * sizeof(*c->mpos));
    c->mbase = malloc(nn * sizeof(*c->mbase));
    c->nun_s = malloc(ns * sizeof(*c->nun_s));
    c->total0 = calloc(ns, sizeof(*c->total0));
    c->total = calloc(ns, sizeof(*c->total));
    c->wit = malloc(ns * sizeof(*c->wit));
    c->k_width = malloc(nn * sizeof(uint64_t));
    c->k_area = malloc(nn * sizeof(uint64_t));
    c->k_total = malloc(nn * sizeof(uint64_t));
    c->k_size = malloc(nn * sizeof(uint64_t));
    c->k_len = malloc(nn * sizeof(uint64_t));
    c->k_guide = calloc(nn, sizeof(uint64_t));
    c->twin_key = malloc(nn * sizeof(uint32_t));
    c->sz = malloc(nn * sizeof(uint64_t));
    c->amask = malloc(nn * sizeof(uint64_t));
    c->twin_prev = malloc(nn * sizeof(uint32_t));
    c->minoff = malloc(nn * sizeof(uint64_t));
    c->off = malloc(nn * sizeof(uint64_t));
    c->placed = malloc(nn);
    c->rank = malloc(nn * sizeof(uint32_t));
    c->wcnt = calloc(nn, sizeof(uint32_t));
    c->poolcap = 4 * nn;
    c->pool = malloc(c->poolcap * sizeof(uint32_t));
    c->upos = malloc(nn * sizeof(uint32_t));
    c->cuts = calloc(ns, sizeof(uint32_t));
    c->zero = malloc(ns * sizeof(uint32_t));
    c->zerocap = ns;
    c->raised = malloc(nn * sizeof(uint32_t));
    c->order = malloc(nn * sizeof(uint32_t));
    c->candcap = 4 * nn;
    c->cand = malloc(c->candcap * sizeof(uint32_t));
    /* Along one path every placement raises each unplaced neighbour at most once and
     * changes each section's witness at most once: start with room for that. */
    c->trcap = 2 * (g->off[n] + ns) + 1024;
    c->tr = malloc(c->trcap * sizeof(*c->tr));
    if (!c->soff || !c->smem || !c->mpos || !c->mbase || !c->nun_s || !c->total0 || !c->total || !c->wit || !c->k_width ||
        !c->k_area || !c->k_total || !c->k_size || !c->k_len || !c->k_guide || !c->twin_key || !c->sz || !c->amask ||
        !c->twin_prev || !c->minoff || !c->off || !c->placed || !c->rank || !c->wcnt ||
        !c->pool || !c->upos || !c->cuts || !c->zero || !c->raised || !c->order || !c->cand ||
        !c->tr)
        goto oom;
    for (size_t i = 0; i < n; i++)
        for (uint32_t s = c->sl[i]; b[i].size && s < c->sh[i]; s++) {
            c->soff[s + 1]++;
            c->total0[s] += b[i].size; /* bounded: memd_plan_check summed all sizes */
        }
    for (size_t s = 0; s < c->ns; s++)
        c->soff[s + 1] += c->soff[s];
    size_t *fill = malloc(ns * sizeof(*fill));
    if (!fill)
        goto oom;
    memcpy(fill, c->soff, ns * sizeof(*fill));
    size_t slot = 0;
    for (size_t i = 0; i < n; i++) {
        c->mbase[i] = slot;
        for (uint32_t s = c->sl[i]; b[i].size && s < c->sh[i]; s++)
            c->smem[fill[s]++] = (uint32_t)i;
        if (b[i].size)
            slot += c->sh[i] - c->sl[i];
    }
    free(fill);
    for (size_t i = 0; i < n; i++) {
        uint64_t len = b[i].upper - b[i].lower, sz = b[i].size;
        c->k_width[i] = c->sh[i] - c->sl[i];
        c->k_area[i] = len && sz > UINT64_MAX / len ? UINT64_MAX : sz * len;
        c->k_size[i] = sz;
        c->k_len[i] = len;
        uint64_t t = 0;
        for (uint32_t s = c->sl[i]; b[i].size && s < c->sh[i]; s++)
            if (c->total0[s] > t)
                t = c->total0[s];
        c->k_total[i] = t;
    }
    for (size_t i = 0; i < n; i++) {
        c->sz[i] = b[i].size;
        c->amask[i] = (b[i].align ? b[i].align : 1) - 1;
    }
    twin_classes(c, c->order);
    *out = c;
    return 0;
oom:
    free(ends);
    plan_search_free(c);
    return -ENOMEM;
}

/* ---- the search ---- */

/* A partition: unplaced buffers confined to sections [s0, s1) that no unplaced buffer
 * outside it overlaps in time, so it can be solved on its own. Its list lives in the
 * pool at [base, base + nun). */
typedef struct part {
    size_t base, nun;
    uint32_t s0, s1;
} part;

static inline void unpl_remove(plan_search_ctx *c, part *pt, uint32_t x)
{
    uint32_t *l = c->pool + pt->base;
    uint32_t p = c->upos[x], last = l[--pt->nun];
    l[p] = last;
    c->upos[last] = p;
    l[pt->nun] = x; /* parked at the end so undo can swap back */
    c->upos[x] = (uint32_t)pt->nun;
}

static inline void unpl_restore(plan_search_ctx *c, part *pt, uint32_t x, uint32_t p)
{
    /* x sits at index nun (parked); the element now at p came from there. */
    uint32_t *l = c->pool + pt->base;
    uint32_t moved = l[p];
    l[p] = x;
    c->upos[x] = p;
    l[pt->nun] = moved;
    c->upos[moved] = (uint32_t)pt->nun;
    pt->nun++;
}

/* Finds a new witness for section s (total > 0): an unplaced member whose lowest
 * offset leaves room for the section's unplaced total. false when there is none (the
 * section cannot fit). */
static bool rewitness(plan_search_ctx *c, uint32_t s)
{
    /* The first member low enough will do: scanning for the lowest one costs more
     * than the extra re-witnessing it would save. */
    uint64_t lim = c->cap - c->total[s];
    const uint32_t *row = c->smem + c->soff[s];
    for (size_t m = 0, k = c->nun_s[s]; m < k; m++)
        if (c->minoff[row[m]] <= lim)
            return set_wit(c, s, row[m]);
    return false;
}

/* Places x at o and propagates: lowest offsets of its unplaced neighbours, section
 * totals and witnesses. Returns 1 when the inference still passes, 0 when this
 * placement cannot lead to a plan; *hatless tells whether nothing unplaced overlaps x.
 * Everything it changes is undone by unplace (c->oom is set on allocation failure). */
static int place(plan_search_ctx *c, part *pt, uint32_t x, uint64_t o, bool *hatless)
{
    const uint64_t *sz = c->sz, *am = c->amask;
    const plan_graph *g = c->g;
    uint64_t top = o + sz[x], cap = c->cap;
    c->off[x] = o;
    c->placed[x] = 1;
    unpl_remove(c, pt, x);
    for (uint32_t s = c->sl[x], *mp = c->mpos + c->mbase[x]; s < c->sh[x]; s++, mp++) {
        c->total[s] -= sz[x];
        /* swap x behind the unplaced prefix of the row; undo swaps it back */
        uint32_t *row = c->smem + c->soff[s];
        uint32_t last = --c->nun_s[s], y = row[last], p = *mp;
        row[p] = y;
        c->mpos[c->mbase[y] + (s - c->sl[y])] = p;
        row[last] = x; /* *mp keeps p: where x goes back to on undo */
    }
    *hatless = true;
    size_t nr = 0;
    for (size_t e = g->off[x]; e < g->off[x + 1]; e++) {
        uint32_t y = g->adj[e];
        if (c->placed[y])
            continue;
        *hatless = false;
        uint64_t h = (top + am[y]) & ~am[y];
        if (c->minoff[y] >= h)
            continue;
        if (!trail_min(c, y))
            return 0;
        c->minoff[y] = h;
        if (h > cap || sz[y] > cap - h)
            return 0;
        if (c->wcnt[y])
            c->raised[nr++] = y;
    }
    /* x itself may have been the witness of its sections; their totals fell, so a
     * witness that still stands stays valid. */
    for (uint32_t s = c->sl[x]; s < c->sh[x]; s++) {
        if (!c->total[s])
            continue;
        uint32_t w = c->wit[s];
        if (w == x || c->minoff[w] > cap - c->total[s])
            if (!rewitness(c, s))
                return 0;
    }
    for (size_t r = 0; r < nr; r++) {
        uint32_t y = c->raised[r];
        for (uint32_t s = c->sl[y]; s < c->sh[y] && c->wcnt[y]; s++)
            if (c->wit[s] == y && c->minoff[y] > cap - c->total[s])
                if (!rewitness(c, s))
                    return 0;
    }
    return 1;
}

static void unplace(plan_search_ctx *c, part *pt, uint32_t x, uint32_t upos, size_t tr)
{
    trail_undo(c, tr);
    /* Rows are restored in reverse order of the removals (x was removed last). */
    for (uint32_t s = c->sh[x], *mp = c->mpos + c->mbase[x] + (c->sh[x] - c->sl[x]); s-- > c->sl[x];) {
        mp--;
        c->total[s] += c->b[x].size;
        uint32_t *row = c->smem + c->soff[s];
        uint32_t p = *mp, at = c->nun_s[s]++; /* x sits at 'at' */
        uint32_t y = row[p];
        /* y was moved from 'at' to p when x was removed: move it back */
        row[at] = y;
        c->mpos[c->mbase[y] + (s - c->sl[y])] = at;
        row[p] = x;
    }
    c->placed[x] = 0;
    unpl_restore(c, pt, x, upos);
}

/* The largest unplaced total of a section of the partition. */
static uint64_t max_total(const plan_search_ctx *c, const part *pt)
{
    uint64_t t = 0;
    for (size_t s = pt->s0; s < pt->s1; s++)
        if (c->total[s] > t)
            t = c->total[s];
    return t;
}

/* Prefix and suffix maxima of the section totals of pt, for offset_fits: pre[i] =
 * max total over [s0, s0+i], suf[i] = over [s0+i, s1). NULL on allocation failure. */
static uint64_t *node_maxima(plan_search_ctx *c, const part *pt)
{
    size_t w = pt->s1 - pt->s0;
    if (c->nmx + 2 * w > c->mxcap) {
        size_t nc = 2 * (c->nmx + 2 * w);
        uint64_t *p = realloc(c->mx, nc * sizeof(*p));
        if (!p) {
            c->oom = true;
            return NULL;
        }
        c->mx = p;
        c->mxcap = nc;
    }
    uint64_t *pre = c->mx + c->nmx, *suf = pre + w, t = 0;
    c->nmx += 2 * w;
    for (size_t i = 0; i < w; i++) {
        uint64_t v = c->total[pt->s0 + i];
        pre[i] = t = v > t ? v : t;
    }
    t = 0;
    for (size_t i = w; i-- > 0;) {
        uint64_t v = c->total[pt->s0 + i];
        suf[i] = t = v > t ? v : t;
    }
    return pre;
}

/* Every unplaced buffer of the partition lands at or above o once x is placed there:
 * each section's unplaced total (x's sections without x) must fit above it.
 * Checked before placing x, so a failing candidate costs no placement. node_max
 * bounds the totals before the placement; when that is not enough, the maxima
 * outside x's sections come from the node's prefix/suffix table and only x's own
 * sections are read. */
static bool offset_fits(const plan_search_ctx *c, const part *pt, uint32_t x, uint64_t o,
                        uint64_t node_max, const uint64_t *pre)
{
    if (o > c->cap)
        return false;
    uint64_t lim = c->cap - o;
    if (node_max <= lim)
        return true;
    size_t w = pt->s1 - pt->s0;
    uint32_t lo = c->sl[x] - pt->s0, hi = c->sh[x] - pt->s0;
    if ((lo && pre[lo - 1] > lim) || (hi < w && pre[w + hi] > lim))
        return false;
    uint64_t sx = c->sz[x];
    for (uint32_t s = c->sl[x]; s < c->sh[x]; s++)
        if (c->total[s] - sx > lim)
            return false;
    return true;
}

static int rec(plan_search_ctx *c, part *pt, uint64_t last_off, int64_t last_rank);

/* Solves the pieces of pt between the boundaries c->zero[zb..zb+nz) (sorted; indices
 * because the stack may move) one after the other: they share no unplaced buffer and
 * no time, so a failure in one piece needs no retry of another (MiniMalloc's dynamic
 * decomposition). */
static int decompose(plan_search_ctx *c, part *pt, size_t zb, size_t nz)
{
    int res = S_FOUND;
    size_t mark = c->npool;
    if (c->npool + pt->nun > c->poolcap) {
        size_t nc = 2 * (c->npool + pt->nun);
        uint32_t *np = realloc(c->pool, nc * sizeof(*np));
        if (!np) {
            c->oom = true;
            return S_ABORT;
        }
        c->pool = np;
        c->poolcap = nc;
    }
    for (size_t k = 0; k <= nz && res == S_FOUND; k++) {
        part sub = {.base = c->npool, .nun = 0, .s0 = k ? c->zero[zb + k - 1] + 1 : pt->s0,
                    .s1 = k < nz ? c->zero[zb + k] + 1 : pt->s1};
        const uint32_t *l = c->pool + pt->base;
        for (size_t i = 0; i < pt->nun; i++) {
            uint32_t y = l[i];
            if (c->sl[y] >= sub.s0 && c->sh[y] <= sub.s1) {
                c->pool[sub.base + sub.nun] = y;
                c->upos[y] = (uint32_t)sub.nun++;
            }
        }
        if (!sub.nun)
            continue;
        c->npool += sub.nun;
        res = rec(c, &sub, 0, -1);
        c->npool = sub.base;
        l = c->pool + pt->base;
        for (size_t i = 0; i < pt->nun; i++)
            c->upos[l[i]] = (uint32_t)i;
    }
    c->npool = mark;
    return res;
}

static inline bool cand_less(const plan_search_ctx *c, uint32_t a, uint32_t b)
{
    if (c->minoff[a] != c->minoff[b])
        return c->minoff[a] < c->minoff[b];
    return c->rank[a] < c->rank[b];
}

/* Sorts candidates by (lowest offset, rank): insertion sort on runs of 16, then
 * bottom-up merges through tmp (no indirect calls: this runs at every node). */
static void sort_cand(const plan_search_ctx *c, uint32_t *a, size_t k, uint32_t *tmp)
{
    for (size_t r = 0; r < k; r += 16) {
        size_t e = r + 16 < k ? r + 16 : k;
        for (size_t i = r + 1; i < e; i++) {
            uint32_t v = a[i];
            size_t j = i;
            while (j > r && cand_less(c, v, a[j - 1])) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = v;
        }
    }
    uint32_t *src = a, *dst = tmp;
    for (size_t w = 16; w < k; w *= 2) {
        for (size_t lo = 0; lo < k; lo += 2 * w) {
            size_t mid = lo + w < k ? lo + w : k, hi = lo + 2 * w < k ? lo + 2 * w : k;
            size_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = cand_less(c, src[j], src[i]) ? src[j++] : src[i++];
            while (i < mid)
                dst[o++] = src[i++];
            while (j < hi)
                dst[o++] = src[j++];
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, k * sizeof(*a));
}

static int rec(plan_search_ctx *c, part *pt, uint64_t last_off, int64_t last_rank)
{
    if (pt->nun == 0) {
        for (size_t i = 0; i < c->n; i++)
            if (c->placed[i])
                c->out[i] = c->off[i];
        return S_FOUND;
    }
    if (c->nodes >= c->node_limit || plan_budget_spend(c->bu))
        return S_ABORT;
    c->nodes++;
    const memd_plan_buffer *b = c->b;
    const uint32_t *l = c->pool + pt->base;
    uint64_t min_h = UINT64_MAX;
    for (size_t k = 0; k < pt->nun; k++) {
        uint32_t x = l[k];
        uint64_t h = c->minoff[x] + b[x].size;
        if (h < min_h)
            min_h = h;
    }
    if (c->ncand + pt->nun > c->candcap) {
        size_t nc = 2 * (c->ncand + pt->nun);
        uint32_t *nca = realloc(c->cand, nc * sizeof(*nca));
        if (!nca) {
            c->oom = true;
            return S_ABORT;
        }
        c->cand = nca;
        c->candcap = nc;
    }
    size_t base = c->ncand;
    for (size_t k = 0; k < pt->nun; k++) {
        uint32_t x = l[k];
        uint64_t mo = c->minoff[x];
        if (mo >= min_h || mo < last_off || (mo == last_off && (int64_t)c->rank[x] <= last_rank))
            continue;
        uint32_t tw = c->twin_prev[x];
        if (tw != NONE && !c->placed[tw])
            continue;
        c->cand[c->ncand++] = x;
    }
    size_t end = c->ncand;
    uint64_t node_max = end > base ? max_total(c, pt) : 0;
    size_t mxmark = c->nmx;
    bool have_pre = false; /* the node's maxima table sits at c->mx + mxmark */
    sort_cand(c, c->cand + base, end - base, c->raised);
    int res = S_NOTFOUND;
    for (size_t ci = base; ci < end; ci++) {
        uint32_t x = c->cand[ci];
        uint64_t o = c->minoff[x];
        /* Taking the k-th best candidate costs k discrepancies. */
        uint32_t cost = (uint32_t)(ci - base < UINT32_MAX ? ci - base : UINT32_MAX);
        if (cost > c->disc) {
            c->cut = true;
            break;
        }
        c->disc -= cost;
        uint32_t up = c->upos[x];
        size_t tr = c->ntr;
        bool hatless;
        if (!have_pre && o != last_off && (o > c->cap || node_max > c->cap - o)) {
            if (!node_maxima(c, pt)) {
                c->disc += cost;
                res = S_ABORT;
                break;
            }
            have_pre = true;
        }
        if (o != last_off && !offset_fits(c, pt, x, o, node_max, c->mx + mxmark)) {
            c->disc += cost;
            continue;
        }
        int ok = place(c, pt, x, o, &hatless);
        if (c->oom) {
            unplace(c, pt, x, up, tr);
            res = S_ABORT;
            break;
        }
        /* Boundaries inside pt that x was the last unplaced buffer across. */
        size_t nz = 0;
        for (uint32_t k = c->sl[x]; k + 1 < c->sh[x]; k++)
            if (--c->cuts[k] == 0 && k >= pt->s0 && k + 1 < pt->s1)
                nz++;
        if (ok) {
            if (nz == 0 || pt->nun == 0) { /* nothing left: the leaf records the plan */
                res = rec(c, pt, o, c->rank[x]);
            } else {
                size_t zb = c->nzero;
                if (zb + nz > c->zerocap) {
                    size_t nc = 2 * (zb + nz);
                    uint32_t *nzp = realloc(c->zero, nc * sizeof(*nzp));
                    if (!nzp) {
                        c->oom = true;
                        res = S_ABORT;
                        nz = 0;
                    } else {
                        c->zero = nzp;
                        c->zerocap = nc;
                    }
                }
                if (nz) {
                    for (uint32_t k = c->sl[x]; k + 1 < c->sh[x]; k++)
                        if (c->cuts[k] == 0 && k >= pt->s0 && k + 1 < pt->s1)
                            c->zero[c->nzero++] = k;
                    res = decompose(c, pt, zb, nz);
                    c->nzero = zb;
                }
            }
        }
        for (uint32_t k = c->sl[x]; k + 1 < c->sh[x]; k++)
            c->cuts[k]++;
        unplace(c, pt, x, up, tr);
        c->disc += cost;
        if (res != S_NOTFOUND || (hatless && ok))
            break;
    }
    c->ncand = base;
    c->nmx = mxmark;
    return res;
}

/* Static preorder: three keys, all descending, then index. */
typedef struct pre_keys {
    const uint64_t *k[3];
} pre_keys;

static int cmp_pre(const void *x, const void *y, void *ctx)
{
    const pre_keys *pk = ctx;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    for (int i = 0; i < 3; i++)
        if (pk->k[i][a] != pk->k[i][b])
            return pk->k[i][a] > pk->k[i][b] ? -1 : 1;
    return (a > b) - (a < b);
}

/* The preorder of a run. Heuristics 0..2 are MiniMalloc's defaults: W(idth in
 * sections), A(rea), T(otal of the busiest section the buffer spans) in three
 * priorities; 3 and 4 lead with area and size, 5 with the lifetime length, and
 * PLAN_HEUR_GUIDED follows the offsets given to plan_search_guide (bottom first), so
 * the search starts next to a known plan and backtracks over its upper layers first.
 * A non-zero seed perturbs the order (short random swaps), so restarts explore
 * different trees. */
static void preorder(plan_search_ctx *c, uint32_t *ord, size_t m, int heuristic, uint64_t seed)
{
    static const int orders[PLAN_HEUR_COUNT][3] = {{0, 1, 2}, {2, 1, 0}, {2, 0, 1}, {1, 2, 0},
                                                   {3, 2, 1}, {4, 3, 2}, {5, 0, 1}};
    const uint64_t *keys[6] = {c->k_width, c->k_area, c->k_total, c->k_size, c->k_len,
                               c->k_guide};
    unsigned h = (unsigned)heuristic % PLAN_HEUR_COUNT;
    const int *o = orders[h];
    pre_keys pk = {.k = {keys[o[0]], keys[o[1]], keys[o[2]]}};
    qsort_r(ord, m, sizeof(*ord), cmp_pre, &pk);
    if (!seed || m < 2)
        return;
    uint64_t rng = seed;
    for (size_t k = 0; k + 1 < m; k++) {
        uint64_t r = plan_splitmix(&rng);
        if (r % 4 != 0)
            continue;
        size_t d = 1 + (size_t)((r >> 8) % 3);
        size_t j = k + d < m ? k + d : m - 1;
        uint32_t t = ord[k];
        ord[k] = ord[j];
        ord[j] = t;
    }
}

void plan_search_guide(plan_search_ctx *c, const uint64_t *offsets)
{
    for (size_t i = 0; i < c->n; i++)
        c->k_guide[i] = UINT64_MAX - offsets[i];
}

int plan_search_run(plan_search_ctx *c, uint64_t capacity, int heuristic, uint64_t seed,
                    uint32_t max_disc, uint64_t node_limit, plan_budget *bu, uint64_t *out)
{
    const memd_plan_buffer *b = c->b;
    size_t n = c->n;
    c->cap = capacity;
    c->out = out;
    c->bu = bu;
    c->nodes = 0;
    c->node_limit = node_limit ? node_limit : UINT64_MAX;
    c->oom = false;
    c->disc = max_disc;
    c->cut = false;
    c->ntr = 0;
    c->ncand = 0;
    c->nmx = 0;
    c->nzero = 0;
    size_t m = 0;
    for (size_t s = 0; s < c->ns; s++)
        c->cuts[s] = 0;
    for (size_t i = 0; i < n; i++) {
        c->placed[i] = b[i].size == 0; /* empty buffers take offset 0 and never conflict */
        c->off[i] = 0;
        c->minoff[i] = 0;
        c->wcnt[i] = 0;
        out[i] = 0;
        if (b[i].size) {
            c->pool[m++] = (uint32_t)i;
            for (uint32_t k = c->sl[i]; k + 1 < c->sh[i]; k++)
                c->cuts[k]++;
        }
    }
    preorder(c, c->pool, m, heuristic, seed);
    /* twin_prev: the previous buffer of the same class in the preorder. */
    for (size_t i = 0; i < n; i++)
        c->order[i] = NONE; /* last seen buffer per class (classes < n) */
    for (size_t k = 0; k < m; k++) {
        uint32_t x = c->pool[k];
        c->rank[x] = (uint32_t)k;
        c->upos[x] = (uint32_t)k;
        c->twin_prev[x] = c->order[c->twin_key[x]];
        c->order[c->twin_key[x]] = x;
    }
    c->npool = m;
    for (size_t s = 0; s < c->ns; s++) {
        c->total[s] = c->total0[s];
        c->nun_s[s] = (uint32_t)(c->soff[s + 1] - c->soff[s]);
        for (size_t q = c->soff[s]; q < c->soff[s + 1]; q++) {
            uint32_t y = c->smem[q];
            c->mpos[c->mbase[y] + (s - c->sl[y])] = (uint32_t)(q - c->soff[s]);
        }
        c->wit[s] = NONE;
        if (c->total[s] > capacity)
            return 0;
        if (c->soff[s + 1] > c->soff[s]) {
            c->wit[s] = c->smem[c->soff[s]];
            c->wcnt[c->wit[s]]++;
        }
    }
    part root = {.base = 0, .nun = m, .s0 = 0, .s1 = (uint32_t)c->ns};
    for (size_t k = 0; k < m; k++)
        if (b[c->pool[k]].size > capacity)
            return 0;
    /* Time stretches that no buffer crosses are independent from the start. */
    size_t nz = 0;
    for (uint32_t k = 0; k + 1 < c->ns; k++)
        if (c->cuts[k] == 0)
            nz++;
    int r;
    if (nz) {
        if (nz > c->zerocap) {
            uint32_t *nzp = realloc(c->zero, nz * sizeof(*nzp));
            if (!nzp)
                return -ENOMEM;
            c->zero = nzp;
            c->zerocap = nz;
        }
        for (uint32_t k = 0; k + 1 < c->ns; k++)
            if (c->cuts[k] == 0)
                c->zero[c->nzero++] = k;
        r = decompose(c, &root, 0, nz);
    } else {
        r = rec(c, &root, 0, -1);
    }
    if (c->oom)
        return -ENOMEM;
    if (r == S_FOUND)
        return 1;
    return r == S_ABORT || c->cut ? -EAGAIN : 0;
}

uint64_t plan_search_nodes(const plan_search_ctx *c)
{
    return c->nodes;
}

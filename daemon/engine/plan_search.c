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
 *  - section inference: in every time section, max(floor, current offset) plus the
 *    sizes still to place there must fit under the capacity;
 *  - "hatless" placements (nothing unplaced overlaps the buffer) need no alternative.
 * Sections are the intervals between consecutive distinct lifetime endpoints.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/plan_internal.h"

enum { S_NOTFOUND = 0, S_FOUND = 1, S_ABORT = 2 };

typedef struct trail_ent {
    uint32_t i;
    uint64_t v;
} trail_ent;

typedef struct trail {
    trail_ent *e;
    size_t n, cap;
} trail;

struct plan_search_ctx {
    const memd_plan_buffer *b;
    size_t n;
    const plan_graph *g;
    /* sections */
    size_t ns;
    uint32_t *sl, *sh;    /* buffer -> [first, last+1) section */
    size_t *soff;         /* section -> members CSR */
    uint32_t *smem;
    uint64_t *total0;     /* initial unplaced size per section */
    /* heuristic keys */
    uint64_t *k_width, *k_area, *k_total;
    /* per run */
    uint64_t cap;
    uint64_t *floor, *total, *minoff, *off, *out;
    uint8_t *placed;
    uint32_t *rank;
    uint32_t *pool;       /* partition lists (unplaced buffers), stacked */
    size_t npool, poolcap;
    uint32_t *upos;       /* position of a buffer in its partition's list */
    uint32_t *cuts;       /* boundary k (sections k|k+1): unplaced buffers across it */
    uint32_t *zero;       /* stack of boundaries whose cut count reached zero */
    size_t nzero, zerocap;
    trail tmin, tfloor;
    uint32_t *cand;
    size_t ncand, candcap;
    uint32_t *mark;
    uint32_t stamp;
    uint32_t *aff;
    uint64_t nodes, node_limit;
    plan_budget *bu;
    bool oom;
};

static int trail_push(plan_search_ctx *c, trail *t, uint32_t i, uint64_t v)
{
    if (t->n == t->cap) {
        size_t nc = t->cap ? 2 * t->cap : 1024;
        trail_ent *e = realloc(t->e, nc * sizeof(*e));
        if (!e) {
            c->oom = true;
            return -ENOMEM;
        }
        t->e = e;
        t->cap = nc;
    }
    t->e[t->n].i = i;
    t->e[t->n].v = v;
    t->n++;
    return 0;
}

static int cmp_time(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

static uint32_t find_time(const uint64_t *t, size_t k, uint64_t v)
{
    size_t lo = 0, hi = k;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (uint32_t)lo;
}

void plan_search_free(plan_search_ctx *c)
{
    if (!c)
        return;
    free(c->sl);
    free(c->sh);
    free(c->soff);
    free(c->smem);
    free(c->total0);
    free(c->k_width);
    free(c->k_area);
    free(c->k_total);
    free(c->floor);
    free(c->total);
    free(c->minoff);
    free(c->off);
    free(c->placed);
    free(c->rank);
    free(c->pool);
    free(c->upos);
    free(c->cuts);
    free(c->zero);
    free(c->tmin.e);
    free(c->tfloor.e);
    free(c->cand);
    free(c->mark);
    free(c->aff);
    free(c);
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
    uint64_t *times = malloc(2 * nn * sizeof(*times));
    c->sl = calloc(nn, sizeof(*c->sl));
    c->sh = calloc(nn, sizeof(*c->sh));
    if (!times || !c->sl || !c->sh)
        goto oom;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (b[i].size) {
            times[k++] = b[i].lower;
            times[k++] = b[i].upper;
        }
    qsort(times, k, sizeof(*times), cmp_time);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (u == 0 || times[u - 1] != times[i])
            times[u++] = times[i];
    c->ns = u ? u - 1 : 0;
    uint64_t members = 0;
    for (size_t i = 0; i < n; i++)
        if (b[i].size) {
            c->sl[i] = find_time(times, u, b[i].lower);
            c->sh[i] = find_time(times, u, b[i].upper);
            members += c->sh[i] - c->sl[i];
        }
    free(times);
    times = NULL;
    if (members > max_members) {
        plan_search_free(c);
        return -E2BIG;
    }
    size_t ns = c->ns ? c->ns : 1;
    c->soff = calloc(ns + 1, sizeof(*c->soff));
    c->smem = malloc((members ? members : 1) * sizeof(*c->smem));
    c->total0 = calloc(ns, sizeof(*c->total0));
    c->floor = calloc(ns, sizeof(*c->floor));
    c->total = calloc(ns, sizeof(*c->total));
    c->mark = calloc(ns, sizeof(*c->mark));
    c->aff = malloc(ns * sizeof(*c->aff));
    c->k_width = malloc(nn * sizeof(uint64_t));
    c->k_area = malloc(nn * sizeof(uint64_t));
    c->k_total = malloc(nn * sizeof(uint64_t));
    c->minoff = malloc(nn * sizeof(uint64_t));
    c->off = malloc(nn * sizeof(uint64_t));
    c->placed = malloc(nn);
    c->rank = malloc(nn * sizeof(uint32_t));
    c->poolcap = 4 * nn;
    c->pool = malloc(c->poolcap * sizeof(uint32_t));
    c->upos = malloc(nn * sizeof(uint32_t));
    c->cuts = calloc(ns, sizeof(uint32_t));
    c->zero = malloc(ns * sizeof(uint32_t));
    c->zerocap = ns;
    if (!c->soff || !c->smem || !c->total0 || !c->floor || !c->total || !c->mark || !c->aff ||
        !c->k_width || !c->k_area || !c->k_total || !c->minoff || !c->off || !c->placed ||
        !c->rank || !c->pool || !c->upos || !c->cuts || !c->zero)
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
    for (size_t i = 0; i < n; i++)
        for (uint32_t s = c->sl[i]; b[i].size && s < c->sh[i]; s++)
            c->smem[fill[s]++] = (uint32_t)i;
    free(fill);
    for (size_t i = 0; i < n; i++) {
        uint64_t len = b[i].upper - b[i].lower, sz = b[i].size;
        c->k_width[i] = c->sh[i] - c->sl[i];
        c->k_area[i] = len && sz > UINT64_MAX / len ? UINT64_MAX : sz * len;
        uint64_t t = 0;
        for (uint32_t s = c->sl[i]; b[i].size && s < c->sh[i]; s++)
            if (c->total0[s] > t)
                t = c->total0[s];
        c->k_total[i] = t;
    }
    *out = c;
    return 0;
oom:
    free(times);
    plan_search_free(c);
    return -ENOMEM;
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

static int cmp_cand(const void *x, const void *y, void *ctx)
{
    const plan_search_ctx *c = ctx;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    if (c->minoff[a] != c->minoff[b])
        return c->minoff[a] < c->minoff[b] ? -1 : 1;
    return (c->rank[a] > c->rank[b]) - (c->rank[a] < c->rank[b]);
}

/* A partition: unplaced buffers confined to sections [s0, s1) that no unplaced buffer
 * outside it overlaps in time, so it can be solved on its own. Its list lives in the
 * pool at [base, base + nun). */
typedef struct part {
    size_t base, nun;
    uint32_t s0, s1;
} part;

static void unpl_remove(plan_search_ctx *c, part *pt, uint32_t x)
{
    uint32_t *l = c->pool + pt->base;
    uint32_t p = c->upos[x], last = l[--pt->nun];
    l[p] = last;
    c->upos[last] = p;
    l[pt->nun] = x; /* parked at the end so undo can swap back */
    c->upos[x] = (uint32_t)pt->nun;
}

static void unpl_restore(plan_search_ctx *c, part *pt, uint32_t x, uint32_t p)
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

/* Places x at o; records undo information. Returns whether nothing unplaced overlaps x,
 * or -ENOMEM. */
static int place(plan_search_ctx *c, part *pt, uint32_t x, uint64_t o)
{
    const memd_plan_buffer *b = c->b;
    const plan_graph *g = c->g;
    uint64_t top = o + b[x].size;
    c->off[x] = o;
    c->placed[x] = 1;
    unpl_remove(c, pt, x);
    int hatless = 1;
    size_t naff = 0;
    if (++c->stamp == 0) {
        memset(c->mark, 0, (c->ns ? c->ns : 1) * sizeof(*c->mark));
        c->stamp = 1;
    }
    for (size_t e = g->off[x]; e < g->off[x + 1]; e++) {
        uint32_t y = g->adj[e];
        if (c->placed[y])
            continue;
        hatless = 0;
        uint64_t h = plan_align_up(top, b[y].align ? b[y].align : 1);
        if (c->minoff[y] >= h)
            continue;
        if (trail_push(c, &c->tmin, y, c->minoff[y]))
            return -ENOMEM;
        c->minoff[y] = h;
        for (uint32_t s = c->sl[y]; s < c->sh[y]; s++)
            if (c->mark[s] != c->stamp) {
                c->mark[s] = c->stamp;
                c->aff[naff++] = s;
            }
    }
    for (uint32_t s = c->sl[x]; s < c->sh[x]; s++) {
        if (trail_push(c, &c->tfloor, s, c->floor[s]))
            return -ENOMEM;
        if (top > c->floor[s])
            c->floor[s] = top;
        c->total[s] -= b[x].size;
    }
    /* A section's floor is at least the lowest offset any of its unplaced buffers can
     * still take. */
    for (size_t k = 0; k < naff; k++) {
        uint32_t s = c->aff[k];
        uint64_t lo = UINT64_MAX, f = c->floor[s];
        for (size_t m = c->soff[s]; m < c->soff[s + 1]; m++) {
            uint32_t y = c->smem[m];
            if (c->placed[y])
                continue;
            if (c->minoff[y] <= f) { /* the floor cannot rise: stop looking */
                lo = UINT64_MAX;
                break;
            }
            if (c->minoff[y] < lo)
                lo = c->minoff[y];
        }
        if (lo != UINT64_MAX && c->floor[s] < lo) {
            if (trail_push(c, &c->tfloor, s, c->floor[s]))
                return -ENOMEM;
            c->floor[s] = lo;
        }
    }
    return hatless;
}

static void unplace(plan_search_ctx *c, part *pt, uint32_t x, uint32_t upos, size_t tm,
                    size_t tf)
{
    while (c->tfloor.n > tf) {
        trail_ent *e = &c->tfloor.e[--c->tfloor.n];
        c->floor[e->i] = e->v;
    }
    while (c->tmin.n > tm) {
        trail_ent *e = &c->tmin.e[--c->tmin.n];
        c->minoff[e->i] = e->v;
    }
    for (uint32_t s = c->sl[x]; s < c->sh[x]; s++)
        c->total[s] += c->b[x].size;
    c->placed[x] = 0;
    unpl_restore(c, pt, x, upos);
}

static bool sections_fit(const plan_search_ctx *c, const part *pt, uint64_t o)
{
    for (size_t s = pt->s0; s < pt->s1; s++) {
        if (!c->total[s])
            continue;
        uint64_t f = c->floor[s] > o ? c->floor[s] : o;
        if (f > c->cap || c->total[s] > c->cap - f)
            return false;
    }
    return true;
}

static int rec(plan_search_ctx *c, part *pt, uint64_t last_off, int64_t last_rank);

/* Solves the pieces of pt between the boundaries zero[0..nz) (sorted) one after the
 * other (c->zero[zb..zb+nz), indices because the stack may move): they share no unplaced buffer and no time, so a failure in one piece needs no
 * retry of another (MiniMalloc's dynamic decomposition). */
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
    uint64_t min_h = UINT64_MAX;
    for (size_t k = 0; k < pt->nun; k++) {
        uint32_t x = c->pool[pt->base + k];
        uint64_t h = c->minoff[x] + b[x].size;
        if (h < min_h)
            min_h = h;
    }
    size_t base = c->ncand;
    for (size_t k = 0; k < pt->nun; k++) {
        uint32_t x = c->pool[pt->base + k];
        uint64_t mo = c->minoff[x];
        if (mo >= min_h || mo < last_off || (mo == last_off && (int64_t)c->rank[x] <= last_rank))
            continue;
        if (c->ncand == c->candcap) {
            size_t nc = c->candcap ? 2 * c->candcap : 1024;
            uint32_t *nca = realloc(c->cand, nc * sizeof(*nca));
            if (!nca) {
                c->oom = true;
                return S_ABORT;
            }
            c->cand = nca;
            c->candcap = nc;
        }
        c->cand[c->ncand++] = x;
    }
    size_t end = c->ncand;
    qsort_r(c->cand + base, end - base, sizeof(*c->cand), cmp_cand, c);
    int res = S_NOTFOUND;
    for (size_t ci = base; ci < end; ci++) {
        uint32_t x = c->cand[ci];
        uint64_t o = c->minoff[x];
        uint32_t up = c->upos[x];
        size_t tm = c->tmin.n, tf = c->tfloor.n;
        int hatless = place(c, pt, x, o);
        if (hatless < 0) {
            unplace(c, pt, x, up, tm, tf);
            res = S_ABORT;
            break;
        }
        /* Boundaries inside pt that x was the last unplaced buffer across. */
        size_t nz = 0;
        for (uint32_t k = c->sl[x]; k + 1 < c->sh[x]; k++)
            if (--c->cuts[k] == 0 && k >= pt->s0 && k + 1 < pt->s1)
                nz++;
        if (sections_fit(c, pt, o)) {
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
        unplace(c, pt, x, up, tm, tf);
        if (res != S_NOTFOUND || hatless)
            break;
    }
    c->ncand = base;
    return res;
}

int plan_search_run(plan_search_ctx *c, uint64_t capacity, int heuristic, uint64_t node_limit,
                    plan_budget *bu, uint64_t *out)
{
    const memd_plan_buffer *b = c->b;
    size_t n = c->n;
    c->cap = capacity;
    c->out = out;
    c->bu = bu;
    c->nodes = 0;
    c->node_limit = node_limit ? node_limit : UINT64_MAX;
    c->oom = false;
    c->tmin.n = c->tfloor.n = 0;
    c->ncand = 0;
    c->nzero = 0;
    /* Preorders from MiniMalloc's defaults: W(idth in sections), A(rea), T(otal of the
     * busiest section the buffer spans), in three priorities. */
    static const int orders[3][3] = {{0, 1, 2}, {2, 1, 0}, {2, 0, 1}};
    const uint64_t *keys[3] = {c->k_width, c->k_area, c->k_total};
    const int *o = orders[(unsigned)heuristic % 3];
    pre_keys pk = {.k = {keys[o[0]], keys[o[1]], keys[o[2]]}};
    size_t m = 0;
    for (size_t s = 0; s + 1 < c->ns; s++)
        c->cuts[s] = 0;
    for (size_t i = 0; i < n; i++) {
        c->placed[i] = b[i].size == 0; /* empty buffers take offset 0 and never conflict */
        c->minoff[i] = 0;
        out[i] = 0;
        if (b[i].size) {
            c->pool[m++] = (uint32_t)i;
            for (uint32_t k = c->sl[i]; k + 1 < c->sh[i]; k++)
                c->cuts[k]++;
        }
    }
    qsort_r(c->pool, m, sizeof(*c->pool), cmp_pre, &pk);
    for (size_t k = 0; k < m; k++) {
        c->rank[c->pool[k]] = (uint32_t)k;
        c->upos[c->pool[k]] = (uint32_t)k;
    }
    c->npool = m;
    for (size_t s = 0; s < c->ns; s++) {
        c->floor[s] = 0;
        c->total[s] = c->total0[s];
    }
    part root = {.base = 0, .nun = m, .s0 = 0, .s1 = (uint32_t)c->ns};
    if (!sections_fit(c, &root, 0))
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
    return r == S_ABORT ? -EAGAIN : 0;
}

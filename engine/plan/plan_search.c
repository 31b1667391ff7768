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

#include "plan_search_internal.h"

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
    uint64_t *mx = memd_plan_search_grow(c, c->mx, &c->mxcap, c->nmx + 2 * w, sizeof(*mx));
    if (!mx)
        return NULL;
    c->mx = mx;
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
    uint32_t *pool =
        memd_plan_search_grow(c, c->pool, &c->poolcap, c->npool + pt->nun, sizeof(*pool));
    if (!pool)
        return S_ABORT;
    c->pool = pool;
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

/* Pushes onto c->zero the boundaries k (between sections k and k + 1) with s_lo <= k
 * and k + 1 < s_hi, inside pt, that no unplaced buffer crosses any more; in order, so
 * decompose gets them sorted. false when the stack cannot grow (c->oom is set). */
static bool push_free_cuts(plan_search_ctx *c, const part *pt, uint32_t s_lo, uint32_t s_hi)
{
    size_t nz = 0;
    for (uint32_t k = s_lo; k + 1 < s_hi; k++)
        nz += c->cuts[k] == 0 && k >= pt->s0 && k + 1 < pt->s1;
    uint32_t *zero = memd_plan_search_grow(c, c->zero, &c->zerocap, c->nzero + nz, sizeof(*zero));
    if (!zero)
        return false;
    c->zero = zero;
    for (uint32_t k = s_lo; k + 1 < s_hi; k++)
        if (c->cuts[k] == 0 && k >= pt->s0 && k + 1 < pt->s1)
            c->zero[c->nzero++] = k;
    return true;
}

/* Solves pt, in pieces where the boundaries of sections [s_lo, s_hi) left none
 * crossing: last_off and last_rank order the placements of an undivided pt. */
static int solve_part(plan_search_ctx *c, part *pt, uint32_t s_lo, uint32_t s_hi,
                      uint64_t last_off, int64_t last_rank)
{
    size_t zb = c->nzero;
    if (!push_free_cuts(c, pt, s_lo, s_hi))
        return S_ABORT;
    if (c->nzero == zb)
        return rec(c, pt, last_off, last_rank);
    int res = decompose(c, pt, zb, c->nzero - zb);
    c->nzero = zb;
    return res;
}

/* A leaf: every buffer is placed; the plan goes out. */
static int record_plan(plan_search_ctx *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->placed[i])
            c->out[i] = c->off[i];
    return S_FOUND;
}

/* Stacks the node's candidates on c->cand: unplaced buffers at their lowest offset
 * that monotonicity, dominance and symmetry allow (see the top of this file). false
 * when the stack cannot grow (c->oom is set). */
static bool push_candidates(plan_search_ctx *c, const part *pt, uint64_t last_off,
                            int64_t last_rank)
{
    const uint32_t *l = c->pool + pt->base;
    uint64_t min_h = UINT64_MAX;
    for (size_t k = 0; k < pt->nun; k++) {
        uint32_t x = l[k];
        uint64_t h = c->minoff[x] + c->sz[x];
        if (h < min_h)
            min_h = h;
    }
    uint32_t *cand =
        memd_plan_search_grow(c, c->cand, &c->candcap, c->ncand + pt->nun, sizeof(*cand));
    if (!cand)
        return false;
    c->cand = cand;
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
    return true;
}

/* What the children of one node share for offset_fits. */
typedef struct node_bounds {
    uint64_t max;  /* largest unplaced section total of the partition */
    size_t mxmark; /* where the node's maxima table goes on c->mx */
    bool have_pre; /* the table is there */
} node_bounds;

/* One child: x placed at its lowest offset, then the rest of pt solved. *stop tells
 * that no sibling needs trying (x was placed hatless). */
static int branch(plan_search_ctx *c, part *pt, node_bounds *nb, uint32_t x, uint64_t last_off,
                  bool *stop)
{
    uint64_t o = c->minoff[x];
    *stop = false;
    if (o != last_off) {
        if (!nb->have_pre && (o > c->cap || nb->max > c->cap - o)) {
            if (!node_maxima(c, pt))
                return S_ABORT;
            nb->have_pre = true;
        }
        /* No table yet (c->mx may be NULL): offset_fits then decides on nb->max alone. */
        const uint64_t *pre = nb->have_pre ? c->mx + nb->mxmark : NULL;
        if (!offset_fits(c, pt, x, o, nb->max, pre))
            return S_NOTFOUND;
    }
    uint32_t up = c->upos[x];
    size_t tr = c->ntr;
    bool hatless;
    int ok = memd_plan_search_place(c, pt, x, o, &hatless);
    if (c->oom) {
        memd_plan_search_unplace(c, pt, x, up, tr);
        return S_ABORT;
    }
    int res = S_NOTFOUND;
    for (uint32_t k = c->sl[x]; k + 1 < c->sh[x]; k++)
        c->cuts[k]--;
    if (ok && pt->nun == 0) /* nothing left: the leaf records the plan */
        res = rec(c, pt, o, c->rank[x]);
    else if (ok) /* boundaries that x was the last unplaced buffer across split pt */
        res = solve_part(c, pt, c->sl[x], c->sh[x], o, c->rank[x]);
    for (uint32_t k = c->sl[x]; k + 1 < c->sh[x]; k++)
        c->cuts[k]++;
    memd_plan_search_unplace(c, pt, x, up, tr);
    *stop = hatless && ok;
    return res;
}

/* One node: its candidates in (lowest offset, rank) order, each the root of a child,
 * until one finds a plan, the budget or the discrepancies run out, or a hatless child
 * failed (no other order can do better). */
static int rec(plan_search_ctx *c, part *pt, uint64_t last_off, int64_t last_rank)
{
    if (pt->nun == 0)
        return record_plan(c);
    if (c->nodes >= c->node_limit || memd_plan_budget_spend(c->bu))
        return S_ABORT;
    c->nodes++;
    size_t base = c->ncand;
    if (!push_candidates(c, pt, last_off, last_rank))
        return S_ABORT;
    size_t end = c->ncand;
    node_bounds nb = {.max = end > base ? max_total(c, pt) : 0, .mxmark = c->nmx};
    sort_cand(c, c->cand + base, end - base, c->raised);
    int res = S_NOTFOUND;
    for (size_t ci = base; ci < end; ci++) {
        /* Taking the k-th best candidate costs k discrepancies. */
        uint32_t cost = (uint32_t)(ci - base < UINT32_MAX ? ci - base : UINT32_MAX);
        if (cost > c->disc) {
            c->cut = true;
            break;
        }
        c->disc -= cost;
        bool stop;
        res = branch(c, pt, &nb, c->cand[ci], last_off, &stop);
        c->disc += cost;
        if (res != S_NOTFOUND || stop)
            break;
    }
    c->ncand = base;
    c->nmx = nb.mxmark;
    return res;
}

/* Fresh per-run state: nothing placed, the pool in the run's preorder, twin links,
 * section totals and first witnesses. Returns the number of buffers to place. */
static size_t start_run(plan_search_ctx *c, int heuristic, uint64_t seed)
{
    const memd_plan_buffer *b = c->b;
    size_t n = c->n, m = 0;
    c->ntr = 0;
    c->ncand = 0;
    c->nmx = 0;
    c->nzero = 0;
    for (size_t s = 0; s < c->ns; s++)
        c->cuts[s] = 0;
    for (size_t i = 0; i < n; i++) {
        c->placed[i] = b[i].size == 0; /* empty buffers take offset 0 and never conflict */
        c->off[i] = 0;
        c->minoff[i] = 0;
        c->wcnt[i] = 0;
        c->out[i] = 0;
        if (b[i].size) {
            c->pool[m++] = (uint32_t)i;
            for (uint32_t k = c->sl[i]; k + 1 < c->sh[i]; k++)
                c->cuts[k]++;
        }
    }
    memd_plan_search_preorder(c, c->pool, m, heuristic, seed);
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
        if (c->soff[s + 1] > c->soff[s]) {
            c->wit[s] = c->smem[c->soff[s]];
            c->wcnt[c->wit[s]]++;
        }
    }
    return m;
}

int memd_plan_search_run(plan_search_ctx *c, uint64_t capacity, int heuristic, uint64_t seed,
                         uint32_t max_disc, uint64_t node_limit, plan_budget *bu, uint64_t *out)
{
    c->cap = capacity;
    c->out = out;
    c->bu = bu;
    c->nodes = 0;
    c->node_limit = node_limit ? node_limit : UINT64_MAX;
    c->oom = false;
    c->disc = max_disc;
    c->cut = false;
    size_t m = start_run(c, heuristic, seed);
    for (size_t s = 0; s < c->ns; s++)
        if (c->total[s] > capacity)
            return 0;
    for (size_t k = 0; k < m; k++)
        if (c->b[c->pool[k]].size > capacity)
            return 0;
    /* Time stretches that no buffer crosses are independent from the start. */
    part root = {.base = 0, .nun = m, .s0 = 0, .s1 = (uint32_t)c->ns};
    int r = solve_part(c, &root, 0, (uint32_t)c->ns, 0, -1);
    if (c->oom)
        return -ENOMEM;
    if (r == S_FOUND)
        return 1;
    return r == S_ABORT || c->cut ? -EAGAIN : 0;
}

uint64_t memd_plan_search_nodes(const plan_search_ctx *c)
{
    return c->nodes;
}

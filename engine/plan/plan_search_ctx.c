/* memd engine — the exact plan search's context: what every run shares. Sections are
 * the maximal cliques of the lifetimes (the live set just before each distinct end
 * time), kept as a CSR of their members; the heuristic keys the preorders sort by; and
 * the twin classes of identical buffers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "plan_search_internal.h"

void *memd_plan_search_grow(plan_search_ctx *c, void *a, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return a;
    void *p = realloc(a, 2 * need * size);
    if (!p) {
        c->oom = true;
        return NULL;
    }
    *cap = 2 * need;
    return p;
}

void memd_plan_search_free(plan_search_ctx *c)
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

/* Sections are the live sets just before each distinct end time of a non-empty buffer
 * (ends[k]): x is in section k iff lower < ends[k] <= upper, so it spans [sl, sh).
 * *members counts the memberships. -ENOMEM. */
static int find_sections(plan_search_ctx *c, uint64_t *members)
{
    const memd_plan_buffer *b = c->b;
    size_t n = c->n, nn = n ? n : 1;
    uint64_t *ends = malloc(nn * sizeof(*ends));
    c->sl = calloc(nn, sizeof(*c->sl));
    c->sh = calloc(nn, sizeof(*c->sh));
    if (!ends || !c->sl || !c->sh) {
        free(ends);
        return -ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (b[i].size)
            ends[k++] = b[i].upper;
    qsort(ends, k, sizeof(*ends), memd_plan_cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (u == 0 || ends[u - 1] != ends[i])
            ends[u++] = ends[i];
    c->ns = u;
    *members = 0;
    for (size_t i = 0; i < n; i++)
        if (b[i].size) {
            c->sl[i] = (uint32_t)memd_lower_bound_u64(ends, u, b[i].lower + 1);
            c->sh[i] = (uint32_t)memd_lower_bound_u64(ends, u, b[i].upper) + 1;
            *members += c->sh[i] - c->sl[i];
        }
    free(ends);
    return 0;
}

static int alloc_arrays(plan_search_ctx *c, uint64_t members)
{
    size_t n = c->n, nn = n ? n : 1, ns = c->ns ? c->ns : 1;
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
    c->trcap = 2 * (c->g->off[n] + ns) + 1024;
    c->tr = malloc(c->trcap * sizeof(*c->tr));
    if (!c->soff || !c->smem || !c->mpos || !c->mbase || !c->nun_s || !c->total0 ||
        !c->total || !c->wit || !c->k_width || !c->k_area || !c->k_total || !c->k_size ||
        !c->k_len || !c->k_guide || !c->twin_key || !c->sz || !c->amask || !c->twin_prev ||
        !c->minoff || !c->off || !c->placed || !c->rank || !c->wcnt || !c->pool ||
        !c->upos || !c->cuts || !c->zero || !c->raised || !c->order || !c->cand || !c->tr)
        return -ENOMEM;
    return 0;
}

/* Section member rows (CSR, buffers in index order) and section totals. -ENOMEM. */
static int fill_members(plan_search_ctx *c)
{
    const memd_plan_buffer *b = c->b;
    size_t n = c->n, ns = c->ns ? c->ns : 1;
    for (size_t i = 0; i < n; i++)
        for (uint32_t s = c->sl[i]; b[i].size && s < c->sh[i]; s++) {
            c->soff[s + 1]++;
            c->total0[s] += b[i].size; /* bounded: memd_plan_check summed all sizes */
        }
    for (size_t s = 0; s < c->ns; s++)
        c->soff[s + 1] += c->soff[s];
    size_t *fill = malloc(ns * sizeof(*fill));
    if (!fill)
        return -ENOMEM;
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
    return 0;
}

/* The keys the preorders sort by, and compact sizes and alignment masks. */
static void fill_keys(plan_search_ctx *c)
{
    const memd_plan_buffer *b = c->b;
    for (size_t i = 0; i < c->n; i++) {
        uint64_t len = b[i].upper - b[i].lower, sz = b[i].size;
        c->k_width[i] = c->sh[i] - c->sl[i];
        c->k_area[i] = plan_sat_mul(sz, len);
        c->k_size[i] = sz;
        c->k_len[i] = len;
        uint64_t t = 0;
        for (uint32_t s = c->sl[i]; b[i].size && s < c->sh[i]; s++)
            if (c->total0[s] > t)
                t = c->total0[s];
        c->k_total[i] = t;
        c->sz[i] = sz;
        c->amask[i] = (b[i].align ? b[i].align : 1) - 1;
    }
}

int memd_plan_search_new(const memd_plan_buffer *b, size_t n, const plan_graph *g,
                         uint64_t max_members, plan_search_ctx **out)
{
    *out = NULL;
    plan_search_ctx *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->b = b;
    c->n = n;
    c->g = g;
    uint64_t members = 0;
    int rc = find_sections(c, &members);
    if (rc == 0 && members > max_members)
        rc = -E2BIG;
    if (rc == 0)
        rc = alloc_arrays(c, members);
    if (rc == 0)
        rc = fill_members(c);
    if (rc) {
        memd_plan_search_free(c);
        return rc;
    }
    fill_keys(c);
    twin_classes(c, c->order);
    *out = c;
    return 0;
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
 * PLAN_HEUR_GUIDED follows the offsets given to memd_plan_search_guide (bottom first), so
 * the search starts next to a known plan and backtracks over its upper layers first.
 * A non-zero seed perturbs the order (short random swaps), so restarts explore
 * different trees. */
void memd_plan_search_preorder(plan_search_ctx *c, uint32_t *ord, size_t m, int heuristic,
                               uint64_t seed)
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

void memd_plan_search_guide(plan_search_ctx *c, const uint64_t *offsets)
{
    for (size_t i = 0; i < c->n; i++)
        c->k_guide[i] = UINT64_MAX - offsets[i];
}

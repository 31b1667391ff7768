/* memd engine — planner helpers: budget, sorting, conflict graph. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

static void watch_call(plan_watch *w, uint64_t now, uint64_t iterations)
{
    /* Phases count on copies of the budget: report the furthest count seen. */
    if (iterations > w->iterations)
        w->iterations = iterations;
    memd_plan_progress pr = {.arena = w->arena, .lower_bound = w->lb,
                             .elapsed_ns = w->clock ? now - w->t0 : 0,
                             .iterations = w->iterations, .have_plan = w->have};
    w->last_ns = now;
    /* Before the first plan exists a cancel is only remembered: there is nothing to
     * return yet, and the first greedy run always ends. */
    if (w->fn(w->ctx, &pr))
        atomic_store(&w->cancelled, true);
}

void memd_plan_watch_best(plan_watch *w, uint64_t arena, uint64_t iterations)
{
    if (!w || (w->have && arena >= w->arena))
        return;
    w->have = true;
    w->arena = arena;
    if (w->fn)
        watch_call(w, w->clock ? w->clock(w->clock_ctx) : 0, iterations);
}

bool memd_plan_watch_poll(plan_watch *w, uint64_t iterations)
{
    if (!w || !w->fn)
        return false;
    if (atomic_load_explicit(&w->cancelled, memory_order_relaxed))
        return true;
    if (w->clock) {
        uint64_t now = w->clock(w->clock_ctx);
        if (now - w->last_ns >= w->period_ns)
            watch_call(w, now, iterations);
    } else if ((++w->polls & 4095) == 0) {
        watch_call(w, 0, iterations);
    }
    return atomic_load_explicit(&w->cancelled, memory_order_relaxed);
}

bool memd_plan_budget_cancelled(const plan_budget *bu)
{
    return (bu->cancel && atomic_load_explicit(bu->cancel, memory_order_relaxed)) ||
           (bu->watch && atomic_load_explicit(&bu->watch->cancelled, memory_order_relaxed));
}

/* Here, not in plan.c: every phase (exact search, lanes) reports through it, and the
 * phases' files must not call back into the solver's. */
void memd_plan_best_take(plan_best *bp, uint64_t arena, const uint64_t *off, size_t n,
                         const char *name)
{
    if (!bp->have && bp->clock && bp->clock->clock)
        bp->first_ns = bp->clock->clock(bp->clock->clock_ctx) - bp->t0;
    if (!bp->have || arena < bp->arena) {
        bp->have = true;
        bp->arena = arena;
        memcpy(bp->off, off, n * sizeof(*off));
        bp->strategy = name;
        if (bp->clock)
            memd_plan_watch_best(bp->clock->watch, arena, bp->clock->used);
    }
}

bool memd_plan_budget_stop_now(const plan_budget *bu)
{
    return (bu->clock && bu->clock(bu->clock_ctx) >= bu->deadline_ns) ||
           memd_plan_watch_poll(bu->watch, bu->used) ||
           (bu->cancel && atomic_load_explicit(bu->cancel, memory_order_relaxed));
}

bool memd_plan_budget_spend_n(plan_budget *bu, uint64_t k)
{
    if (!bu->expired && k > 1) {
        uint64_t room = bu->limit && bu->limit > bu->used ? bu->limit - bu->used : 0;
        bu->used += bu->limit && k - 1 > room ? room : k - 1;
    }
    return memd_plan_budget_spend(bu);
}

bool memd_plan_budget_spend(plan_budget *bu)
{
    if (bu->expired)
        return true;
    if (bu->cancel && atomic_load_explicit(bu->cancel, memory_order_relaxed)) {
        bu->expired = true;
        return true;
    }
    /* Polled every step: without a callback it is one test; with one, the clock is read
     * only at the clock_mask steps below, plus the poll's own reading. */
    if (bu->watch && bu->watch->fn && (bu->watch->clock ? (bu->tick & bu->clock_mask) == 0 : true) &&
        memd_plan_watch_poll(bu->watch, bu->used)) {
        bu->expired = true;
        return true;
    }
    if (bu->limit && bu->used >= bu->limit) {
        bu->expired = true;
        return true;
    }
    bu->used++;
    /* Reading the clock is cheap but not free: phases with tiny steps (search nodes)
     * read it every clock_mask + 1 steps, phases with big steps (placer runs) every
     * step, so the overshoot stays far below a millisecond. */
    if (bu->clock && (++bu->tick & bu->clock_mask) == 0 && bu->clock(bu->clock_ctx) >= bu->deadline_ns)
        bu->expired = true;
    return bu->expired;
}

/* Sorting index arrays by a key through qsort_r: ties by index, so the order is a
 * total order and every platform's qsort gives the same result. */
static int cmp_desc(const void *x, const void *y, void *ctx)
{
    const uint64_t *key = ctx;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    if (key[a] != key[b])
        return key[a] > key[b] ? -1 : 1;
    return (a > b) - (a < b);
}

static int cmp_asc(const void *x, const void *y, void *ctx)
{
    const uint64_t *key = ctx;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    if (key[a] != key[b])
        return key[a] < key[b] ? -1 : 1;
    return (a > b) - (a < b);
}

/* LSD radix sort of key ^ flip (ascending) over indices already in ascending order:
 * stable, so ties stay by index. 8-bit digits; a digit all keys share costs one
 * counting pass. flip ~0: key descending. */
static void radix(uint32_t *idx, size_t n, const uint64_t *key, uint64_t flip, uint64_t *k,
                  uint64_t *k2, uint32_t *i2)
{
    for (size_t i = 0; i < n; i++)
        k[i] = key[idx[i]] ^ flip;
    uint32_t *si = idx, *di = i2;
    uint64_t *sk = k, *dk = k2;
    for (unsigned shift = 0; shift < 64; shift += 8) {
        size_t pos[256] = {0};
        for (size_t i = 0; i < n; i++)
            pos[(sk[i] >> shift) & 255]++;
        if (pos[(sk[0] >> shift) & 255] == n)
            continue;
        size_t sum = 0;
        for (unsigned d = 0; d < 256; d++) {
            size_t c = pos[d];
            pos[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            size_t p = pos[(sk[i] >> shift) & 255]++;
            dk[p] = sk[i];
            di[p] = si[i];
        }
        uint64_t *tk = sk;
        sk = dk;
        dk = tk;
        uint32_t *ti = si;
        si = di;
        di = ti;
    }
    if (si != idx)
        memcpy(idx, si, n * sizeof(*idx));
}

static int sort_idx(uint32_t *idx, size_t n, const uint64_t *key, uint64_t flip)
{
    /* Greedy runs sort every buffer once a run: a radix sort when the indices come in
     * ascending order (they always do here) and scratch is there, else qsort (ties by
     * index either way, ties of the flipped ascending key are ties of the key). */
    if (n < 2)
        return 0;
    bool ascending = true;
    for (size_t i = 1; i < n && ascending; i++)
        ascending = idx[i - 1] < idx[i];
    uint64_t *k = NULL, *k2 = NULL;
    uint32_t *i2 = NULL;
    if (ascending && n >= 64) {
        k = malloc(n * sizeof(*k));
        k2 = malloc(n * sizeof(*k2));
        i2 = malloc(n * sizeof(*i2));
    }
    if (k && k2 && i2)
        radix(idx, n, key, flip, k, k2, i2);
    else
        qsort_r(idx, n, sizeof(*idx), flip ? cmp_desc : cmp_asc, (void *)key);
    free(k);
    free(k2);
    free(i2);
    return 0;
}

int memd_plan_sort_desc_clobber(uint32_t *idx, size_t n, uint64_t *key, uint64_t *scratch,
                                uint32_t *iscratch)
{
    /* idx is 0..n-1, so the radix sort's key copy is key itself: only the index
     * scratch is needed. */
    uint32_t *i2 = iscratch ? iscratch : n >= 64 ? malloc(n * sizeof(*i2)) : NULL;
    if (!i2 || n < 2)
        return memd_plan_sort_desc(idx, n, key);
    radix(idx, n, key, ~(uint64_t)0, key, scratch, i2);
    if (i2 != iscratch)
        free(i2);
    return 0;
}

int memd_plan_sort_desc(uint32_t *idx, size_t n, const uint64_t *key)
{
    return sort_idx(idx, n, key, ~(uint64_t)0);
}

int memd_plan_sort_asc(uint32_t *idx, size_t n, const uint64_t *key)
{
    return sort_idx(idx, n, key, 0);
}

int memd_plan_cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

bool memd_plan_off_at_or_below(const void *elem, const void *key)
{
    const plan_off_key *q = key;
    return q->off[*(const uint32_t *)elem] <= q->o;
}

/* Indices of the non-empty buffers, by (lower, index). */
static uint32_t *by_lower(const memd_plan_buffer *b, size_t n, size_t *m)
{
    uint32_t *idx = malloc((n ? n : 1) * sizeof(*idx));
    uint64_t *lo = malloc((n ? n : 1) * sizeof(*lo));
    if (!idx || !lo) {
        free(idx);
        free(lo);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        lo[i] = b[i].lower;
        if (b[i].size)
            idx[k++] = (uint32_t)i;
    }
    memd_plan_sort_asc(idx, k, lo);
    free(lo);
    *m = k;
    return idx;
}

/* The sweep both passes share: for each buffer in start order, the active list holds
 * exactly the earlier-started buffers still live at its start, i.e. its conflicts
 * with earlier-started buffers. fn is called once per unordered pair. Returns the
 * number of pairs, or stops early (returning > cap) once above cap. */
typedef void (*edge_fn)(void *ctx, uint32_t x, uint32_t y);

static uint64_t sweep_edges(const memd_plan_buffer *b, const uint32_t *idx, size_t m,
                            uint32_t *active, uint64_t cap, edge_fn fn, void *ctx)
{
    size_t na = 0;
    uint64_t edges = 0;
    for (size_t k = 0; k < m; k++) {
        uint32_t x = idx[k];
        size_t w = 0;
        for (size_t r = 0; r < na; r++)
            if (b[active[r]].upper > b[x].lower)
                active[w++] = active[r];
        na = w;
        edges += na;
        if (edges > cap)
            return edges;
        if (fn)
            for (size_t r = 0; r < na; r++)
                fn(ctx, active[r], x);
        active[na++] = x;
    }
    return edges;
}

int memd_plan_count_edges(const memd_plan_buffer *b, size_t n, uint64_t cap, uint64_t *edges)
{
    size_t m = 0;
    uint32_t *idx = by_lower(b, n, &m);
    uint32_t *active = malloc((n ? n : 1) * sizeof(*active));
    if (!idx || !active) {
        free(idx);
        free(active);
        return -ENOMEM;
    }
    *edges = sweep_edges(b, idx, m, active, cap, NULL, NULL);
    free(idx);
    free(active);
    return 0;
}

typedef struct fill_ctx {
    size_t *fill;
    uint32_t *adj;
    size_t *deg;
} fill_ctx;

static void count_deg(void *ctx, uint32_t x, uint32_t y)
{
    fill_ctx *c = ctx;
    c->deg[x]++;
    c->deg[y]++;
}

static void add_edge(void *ctx, uint32_t x, uint32_t y)
{
    fill_ctx *c = ctx;
    c->adj[c->fill[x]++] = y;
    c->adj[c->fill[y]++] = x;
}

int memd_plan_graph_build(const memd_plan_buffer *b, size_t n, plan_graph *g)
{
    memset(g, 0, sizeof(*g));
    size_t m = 0;
    uint32_t *idx = by_lower(b, n, &m);
    uint32_t *active = malloc((n ? n : 1) * sizeof(*active));
    size_t *deg = calloc(n + 1, sizeof(*deg));
    size_t *fill = malloc((n + 1) * sizeof(*fill));
    g->off = malloc((n + 1) * sizeof(*g->off));
    int rc = -ENOMEM;
    if (!idx || !active || !deg || !fill || !g->off)
        goto out;
    fill_ctx c = {.fill = fill, .deg = deg};
    sweep_edges(b, idx, m, active, UINT64_MAX, count_deg, &c);
    g->off[0] = 0;
    for (size_t i = 0; i < n; i++)
        g->off[i + 1] = g->off[i] + deg[i];
    g->adj = malloc((g->off[n] ? g->off[n] : 1) * sizeof(*g->adj));
    if (!g->adj)
        goto out;
    memcpy(fill, g->off, (n + 1) * sizeof(*fill));
    c.adj = g->adj;
    sweep_edges(b, idx, m, active, UINT64_MAX, add_edge, &c);
    g->n = n;
    rc = 0;
out:
    free(idx);
    free(active);
    free(deg);
    free(fill);
    if (rc)
        memd_plan_graph_free(g);
    return rc;
}

void memd_plan_graph_free(plan_graph *g)
{
    free(g->off);
    free(g->adj);
    memset(g, 0, sizeof(*g));
}

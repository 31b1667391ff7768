/* memd engine — time blocks for the greedy placers on problems too dense for a conflict
 * graph: each block of time keeps the placed buffers live in it sorted by offset, so a
 * placement reads only buffers live near its own lifetime, mostly already in order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "plan_internal.h"

typedef struct entry {
    uint32_t id;     /* first: memd_plan_off_at_or_below reads it */
    uint32_t lo, hi; /* lifetime as time ranks [lo, hi) */
} entry;

struct plan_blocks {
    size_t n, nblk, width;
    uint32_t *lo, *hi;  /* per buffer: time ranks */
    size_t *base;       /* per block: start of its slice in ent */
    uint32_t *cnt;      /* per block: current length */
    entry *ent;
    uint32_t *mark;     /* per buffer: dedupe stamps */
    uint32_t *ids, *tmp; /* query results, merge scratch */
    size_t *run;         /* query: starts of the blocks' sorted runs in ids */
    uint32_t stamp;
};

static size_t first_blk(const plan_blocks *t, uint32_t x)
{
    return t->lo[x] / t->width;
}

static size_t last_blk(const plan_blocks *t, uint32_t x)
{
    return (t->hi[x] - 1) / t->width;
}

/* Ranks keep the overlap relation; the block width is the mean lifetime in ranks, so a
 * block holds about twice the mean number of live buffers. */
static int rank_times(plan_blocks *t, const memd_plan_buffer *b, size_t n)
{
    uint64_t *times = malloc(2 * (n ? n : 1) * sizeof(*times));
    if (!times)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        times[2 * i] = b[i].lower;
        times[2 * i + 1] = b[i].upper;
    }
    qsort(times, 2 * n, sizeof(*times), memd_plan_cmp_u64);
    uint64_t sum = 0, m = 0;
    for (size_t i = 0; i < n; i++) {
        t->lo[i] = (uint32_t)memd_lower_bound_u64(times, 2 * n, b[i].lower);
        t->hi[i] = b[i].size ? (uint32_t)memd_lower_bound_u64(times, 2 * n, b[i].upper)
                             : t->lo[i]; /* empty buffers are never listed */
        if (t->hi[i] > t->lo[i]) {
            sum += t->hi[i] - t->lo[i];
            m++;
        }
    }
    free(times);
    t->width = m && sum / m ? (size_t)(sum / m) : 1;
    t->nblk = 2 * n / t->width + 1;
    return 0;
}

int memd_plan_blocks_new(const memd_plan_buffer *b, size_t n, plan_blocks **out)
{
    plan_blocks *t = calloc(1, sizeof(*t));
    if (!t)
        return -ENOMEM;
    t->n = n;
    t->lo = malloc((n ? n : 1) * sizeof(*t->lo));
    t->hi = malloc((n ? n : 1) * sizeof(*t->hi));
    t->mark = calloc(n ? n : 1, sizeof(*t->mark));
    t->ids = malloc((n ? n : 1) * sizeof(*t->ids));
    t->tmp = malloc((n ? n : 1) * sizeof(*t->tmp));
    if (!t->lo || !t->hi || !t->mark || !t->ids || !t->tmp || rank_times(t, b, n))
        goto fail;
    t->base = calloc(t->nblk + 1, sizeof(*t->base));
    t->cnt = calloc(t->nblk, sizeof(*t->cnt));
    t->run = malloc((t->nblk + 1) * sizeof(*t->run));
    if (!t->base || !t->cnt || !t->run)
        goto fail;
    for (size_t i = 0; i < n; i++)
        if (t->hi[i] > t->lo[i])
            for (size_t k = first_blk(t, (uint32_t)i); k <= last_blk(t, (uint32_t)i); k++)
                t->base[k + 1]++;
    for (size_t k = 0; k < t->nblk; k++)
        t->base[k + 1] += t->base[k];
    t->ent = malloc((t->base[t->nblk] ? t->base[t->nblk] : 1) * sizeof(*t->ent));
    if (!t->ent)
        goto fail;
    *out = t;
    return 0;
fail:
    memd_plan_blocks_free(t);
    return -ENOMEM;
}

void memd_plan_blocks_free(plan_blocks *t)
{
    if (!t)
        return;
    free(t->lo);
    free(t->hi);
    free(t->base);
    free(t->cnt);
    free(t->ent);
    free(t->mark);
    free(t->ids);
    free(t->tmp);
    free(t->run);
    free(t);
}

void memd_plan_blocks_clear(plan_blocks *t)
{
    memset(t->cnt, 0, t->nblk * sizeof(*t->cnt));
}

void memd_plan_blocks_insert(plan_blocks *t, uint32_t x, const uint64_t *off)
{
    if (t->hi[x] <= t->lo[x])
        return;
    entry nx = {x, t->lo[x], t->hi[x]};
    for (size_t k = first_blk(t, x); k <= last_blk(t, x); k++) {
        entry *e = t->ent + t->base[k];
        size_t m = t->cnt[k];
        plan_off_key q = {off, off[x]};
        size_t l = memd_partition_point(e, m, sizeof(*e), memd_plan_off_at_or_below, &q);
        memmove(e + l + 1, e + l, (m - l) * sizeof(*e));
        e[l] = nx;
        t->cnt[k]++;
    }
}

/* Appends to out the entries of block k overlapping [lo, hi) not seen yet. */
static size_t take(plan_blocks *t, size_t k, uint32_t lo, uint32_t hi, uint32_t *out)
{
    const entry *e = t->ent + t->base[k];
    size_t m = 0;
    for (size_t i = 0; i < t->cnt[k]; i++)
        if (e[i].lo < hi && lo < e[i].hi && t->mark[e[i].id] != t->stamp) {
            t->mark[e[i].id] = t->stamp;
            out[m++] = e[i].id;
        }
    return m;
}

/* Merges the offset-sorted a[0..na) and b[0..nb) into out. */
static void merge(const uint32_t *a, size_t na, const uint32_t *b, size_t nb,
                  const uint64_t *off, uint32_t *out)
{
    size_t i = 0, j = 0, k = 0;
    while (i < na && j < nb)
        out[k++] = off[b[j]] < off[a[i]] ? b[j++] : a[i++];
    memcpy(out + k, a + i, (na - i) * sizeof(*a));
    memcpy(out + k + na - i, b + j, (nb - j) * sizeof(*b));
}

/* Merges the sorted runs ids[run[i] .. run[i + 1]) (i < nrun) pairwise until one is
 * left: m log(runs) steps. Returns the array holding the result. */
static uint32_t *merge_runs(plan_blocks *t, size_t nrun, const uint64_t *off)
{
    uint32_t *ids = t->ids, *tmp = t->tmp;
    size_t *run = t->run;
    while (nrun > 1) {
        size_t w = 0;
        for (size_t i = 0; i < nrun; i += 2, w++) {
            size_t a = run[i], b = run[i + 1]; /* run[nrun] is the end */
            size_t e = i + 1 < nrun ? run[i + 2] : b;
            merge(ids + a, b - a, ids + b, e - b, off, tmp + a);
            run[w] = a;
        }
        run[w] = run[nrun];
        nrun = w;
        uint32_t *sw = ids;
        ids = tmp;
        tmp = sw;
    }
    t->ids = ids;
    t->tmp = tmp;
    return ids;
}

const uint32_t *memd_plan_blocks_overlapping(plan_blocks *t, uint32_t x, const uint64_t *off,
                                             size_t *count)
{
    size_t k0 = first_blk(t, x), k1 = last_blk(t, x), m = 0, nrun = 0;
    uint32_t lo = t->lo[x], hi = t->hi[x];
    *count = 0;
    if (hi <= lo)
        return t->ids;
    if (++t->stamp == UINT32_MAX) { /* wrapped: clear and restart */
        memset(t->mark, 0, t->n * sizeof(*t->mark));
        t->stamp = 1;
    }
    for (size_t k = k0; k <= k1; k++) {
        size_t c = take(t, k, lo, hi, t->ids + m);
        if (c)
            t->run[nrun++] = m;
        m += c;
    }
    t->run[nrun] = m;
    *count = m;
    return merge_runs(t, nrun, off);
}

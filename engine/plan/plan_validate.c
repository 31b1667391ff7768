/* memd engine — plan problem checks, the lower bound, and the plan validator. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

const char *memd_plan_issue_name(memd_plan_issue issue)
{
    switch (issue) {
    case MEMD_PLAN_VALID: return "valid";
    case MEMD_PLAN_OVERLAP: return "overlap";
    case MEMD_PLAN_MISALIGNED: return "misaligned";
    case MEMD_PLAN_PIN_MOVED: return "pin-moved";
    case MEMD_PLAN_OUT_OF_RANGE: return "out-of-range";
    case MEMD_PLAN_BAD_LIFETIME: return "bad-lifetime";
    case MEMD_PLAN_BAD_ALIGN: return "bad-alignment";
    case MEMD_PLAN_PIN_CONFLICT: return "pin-conflict";
    }
    return "unknown";
}

const char *memd_plan_issue_reason(memd_plan_issue issue)
{
    switch (issue) {
    case MEMD_PLAN_VALID: return "valid";
    case MEMD_PLAN_OVERLAP: return "two buffers live at the same time share bytes";
    case MEMD_PLAN_MISALIGNED: return "offset not a multiple of the alignment";
    case MEMD_PLAN_PIN_MOVED: return "a pinned buffer is not at its pin";
    case MEMD_PLAN_OUT_OF_RANGE: return "offset + size overflows 64 bits";
    case MEMD_PLAN_BAD_LIFETIME: return "lower must be less than upper";
    case MEMD_PLAN_BAD_ALIGN: return "alignment is not a power of two";
    case MEMD_PLAN_PIN_CONFLICT: return "two pinned buffers overlap: no plan can exist";
    }
    return "invalid";
}

static void set_v(memd_plan_violation *v, memd_plan_issue issue, size_t a, size_t b)
{
    if (v) {
        v->issue = issue;
        v->a = a;
        v->b = b;
    }
}

static uint64_t eff_align(const memd_plan_buffer *b)
{
    return b->align ? b->align : 1;
}

/* What is wrong with a buffer on its own, before any offset: its lifetime or its
 * alignment (MEMD_PLAN_VALID: nothing). */
static memd_plan_issue shape_issue(const memd_plan_buffer *b)
{
    uint64_t a = eff_align(b);
    if (b->lower >= b->upper)
        return MEMD_PLAN_BAD_LIFETIME;
    return a & (a - 1) ? MEMD_PLAN_BAD_ALIGN : MEMD_PLAN_VALID;
}

/* ... and once placed at off: moved from its pin, misaligned, or past 2^64. */
static memd_plan_issue placed_issue(const memd_plan_buffer *b, uint64_t off)
{
    memd_plan_issue bad = shape_issue(b);
    if (bad != MEMD_PLAN_VALID)
        return bad;
    if (b->pinned && off != b->offset)
        return MEMD_PLAN_PIN_MOVED;
    if (off % eff_align(b))
        return MEMD_PLAN_MISALIGNED;
    return b->size > UINT64_MAX - off ? MEMD_PLAN_OUT_OF_RANGE : MEMD_PLAN_VALID;
}

/* ---- ordered set of live buffers keyed by offset: a treap over buffer indices ---- */

typedef struct treap {
    uint32_t *l, *r; /* children, UINT32_MAX = none */
    const uint64_t *key;
    uint32_t root;
} treap;

#define NIL UINT32_MAX

static uint32_t prio(uint32_t x)
{
    uint64_t s = x;
    return (uint32_t)plan_splitmix(&s);
}

/* Splits t into keys < k (and equal keys go left when left_eq) and the rest. */
static void t_split(treap *t, uint32_t node, uint64_t k, uint32_t *a, uint32_t *b)
{
    if (node == NIL) {
        *a = *b = NIL;
        return;
    }
    if (t->key[node] < k) {
        t_split(t, t->r[node], k, &t->r[node], b);
        *a = node;
    } else {
        t_split(t, t->l[node], k, a, &t->l[node]);
        *b = node;
    }
}

static uint32_t t_merge(treap *t, uint32_t a, uint32_t b)
{
    if (a == NIL)
        return b;
    if (b == NIL)
        return a;
    if (prio(a) > prio(b)) {
        t->r[a] = t_merge(t, t->r[a], b);
        return a;
    }
    t->l[b] = t_merge(t, a, t->l[b]);
    return b;
}

static void t_insert(treap *t, uint32_t x)
{
    uint32_t a, b;
    t_split(t, t->root, t->key[x], &a, &b);
    t->l[x] = t->r[x] = NIL;
    t->root = t_merge(t, t_merge(t, a, x), b);
}

/* Keys are unique in the set (the sweep stops at the first overlap), so erase by key. */
static uint32_t t_erase_rec(treap *t, uint32_t node, uint32_t x)
{
    if (node == NIL)
        return NIL;
    if (node == x)
        return t_merge(t, t->l[node], t->r[node]);
    if (t->key[x] < t->key[node])
        t->l[node] = t_erase_rec(t, t->l[node], x);
    else
        t->r[node] = t_erase_rec(t, t->r[node], x);
    return node;
}

/* Greatest key <= k, and smallest key > k. */
static void t_neighbours(const treap *t, uint64_t k, uint32_t *pred, uint32_t *succ)
{
    *pred = *succ = NIL;
    uint32_t node = t->root;
    while (node != NIL) {
        if (t->key[node] <= k) {
            *pred = node;
            node = t->r[node];
        } else {
            *succ = node;
            node = t->l[node];
        }
    }
}

/* The overlap sweep over the buffers listed in idx (non-empty ones only), with offsets
 * off[]. Returns 1 and the pair when two overlap, 0 when none do, -ENOMEM. */
static int sweep_overlap(const memd_plan_buffer *b, size_t n, const uint32_t *sel, size_t m,
                         const uint64_t *off, size_t *pa, size_t *pb)
{
    uint32_t *starts = malloc((m ? m : 1) * sizeof(*starts));
    uint32_t *ends = malloc((m ? m : 1) * sizeof(*ends));
    uint64_t *lo = malloc((n ? n : 1) * sizeof(*lo));
    uint64_t *up = malloc((n ? n : 1) * sizeof(*up));
    treap t = {.l = malloc((n ? n : 1) * sizeof(uint32_t)),
               .r = malloc((n ? n : 1) * sizeof(uint32_t)), .key = off, .root = NIL};
    int rc = -ENOMEM;
    if (!starts || !ends || !lo || !up || !t.l || !t.r)
        goto out;
    for (size_t i = 0; i < n; i++) {
        lo[i] = b[i].lower;
        up[i] = b[i].upper;
    }
    memcpy(starts, sel, m * sizeof(*sel));
    memcpy(ends, sel, m * sizeof(*sel));
    memd_plan_sort_asc(starts, m, lo); /* sel is ascending: a radix sort */
    memd_plan_sort_asc(ends, m, up);
    rc = 0;
    size_t e = 0;
    for (size_t k = 0; k < m; k++) {
        uint32_t x = starts[k];
        /* Half-open lifetimes: whatever ends at or before x starts is gone. */
        while (e < m && b[ends[e]].upper <= b[x].lower)
            t.root = t_erase_rec(&t, t.root, ends[e++]);
        uint32_t p, s;
        t_neighbours(&t, off[x], &p, &s);
        if (p != NIL && off[p] + b[p].size > off[x]) {
            *pa = x;
            *pb = p;
            rc = 1;
            break;
        }
        if (s != NIL && off[s] < off[x] + b[x].size) {
            *pa = x;
            *pb = s;
            rc = 1;
            break;
        }
        t_insert(&t, x);
    }
out:
    free(starts);
    free(ends);
    free(lo);
    free(up);
    free(t.l);
    free(t.r);
    return rc;
}

int memd_plan_check(const memd_plan_buffer *bufs, size_t n, memd_plan_violation *v)
{
    set_v(v, MEMD_PLAN_VALID, 0, 0);
    if (n && !bufs)
        return -EINVAL;
    /* Indices are stored as uint32_t inside the planner. */
    if (n >= UINT32_MAX)
        return -E2BIG;
    uint64_t pin_top = 0, worst = 0;
    size_t npinned = 0;
    for (size_t i = 0; i < n; i++) {
        const memd_plan_buffer *b = &bufs[i];
        uint64_t a = eff_align(b);
        memd_plan_issue bad = shape_issue(b);
        if (bad != MEMD_PLAN_VALID) {
            set_v(v, bad, i, i);
            return -EINVAL;
        }
        if (b->pinned) {
            if (b->offset % a) {
                set_v(v, MEMD_PLAN_MISALIGNED, i, i);
                return -EINVAL;
            }
            if (b->size > UINT64_MAX - b->offset) {
                set_v(v, MEMD_PLAN_OUT_OF_RANGE, i, i);
                return -EOVERFLOW;
            }
            if (b->offset + b->size > pin_top)
                pin_top = b->offset + b->size;
            npinned++;
        }
        /* Any placer puts a buffer at most at the sum of everything below it plus
         * alignment padding, above the pins at worst: bound that sum once here so the
         * placers never need overflow checks. */
        uint64_t need = b->size + (a - 1);
        if (b->size > UINT64_MAX - (a - 1) || need > UINT64_MAX - worst) {
            set_v(v, MEMD_PLAN_OUT_OF_RANGE, i, i);
            return -EOVERFLOW;
        }
        worst += need;
    }
    if (worst > UINT64_MAX - pin_top) {
        set_v(v, MEMD_PLAN_OUT_OF_RANGE, n ? n - 1 : 0, n ? n - 1 : 0);
        return -EOVERFLOW;
    }
    if (npinned > 1) {
        uint32_t *sel = malloc(npinned * sizeof(*sel));
        uint64_t *off = calloc(n, sizeof(*off));
        if (!sel || !off) {
            free(sel);
            free(off);
            return -ENOMEM;
        }
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            off[i] = bufs[i].offset;
            if (bufs[i].pinned && bufs[i].size)
                sel[m++] = (uint32_t)i;
        }
        size_t pa = 0, pb = 0;
        int rc = sweep_overlap(bufs, n, sel, m, off, &pa, &pb);
        free(sel);
        free(off);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            set_v(v, MEMD_PLAN_PIN_CONFLICT, pa, pb);
            return -EINVAL;
        }
    }
    return 0;
}

int memd_plan_lower_bound(const memd_plan_buffer *bufs, size_t n, uint64_t *lb)
{
    *lb = 0;
    if (n && !bufs)
        return -EINVAL;
    if (n >= UINT32_MAX)
        return -E2BIG;
    for (size_t i = 0; i < n; i++)
        if (bufs[i].lower >= bufs[i].upper)
            return -EINVAL;
    if (n == 0)
        return 0;
    uint32_t *s = malloc(n * sizeof(*s));
    uint32_t *e = malloc(n * sizeof(*e));
    uint64_t *lo = malloc(n * sizeof(*lo));
    uint64_t *up = malloc(n * sizeof(*up));
    if (!s || !e || !lo || !up) {
        free(s);
        free(e);
        free(lo);
        free(up);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        s[i] = e[i] = (uint32_t)i;
        lo[i] = bufs[i].lower;
        up[i] = bufs[i].upper;
    }
    memd_plan_sort_asc(s, n, lo);
    memd_plan_sort_asc(e, n, up);
    /* Merge starts and ends; at equal times ends go first (half-open lifetimes). The
     * maximum is reached right after some start, so it is checked there. */
    uint64_t cur = 0, best = 0;
    int rc = 0;
    for (size_t i = 0, j = 0; i < n;) {
        if (j < n && up[e[j]] <= lo[s[i]]) {
            cur -= bufs[e[j++]].size;
            continue;
        }
        uint64_t sz = bufs[s[i++]].size;
        if (sz > UINT64_MAX - cur) {
            rc = -EOVERFLOW;
            break;
        }
        cur += sz;
        if (cur > best)
            best = cur;
    }
    free(s);
    free(e);
    free(lo);
    free(up);
    if (rc == 0)
        *lb = best;
    return rc;
}

int memd_plan_validate(const memd_plan_buffer *bufs, size_t n, const uint64_t *offsets,
                       memd_plan_violation *v, uint64_t *arena)
{
    set_v(v, MEMD_PLAN_VALID, 0, 0);
    if (n >= UINT32_MAX)
        return -E2BIG;
    uint64_t top = 0;
    for (size_t i = 0; i < n; i++) {
        const memd_plan_buffer *b = &bufs[i];
        memd_plan_issue bad = placed_issue(b, offsets[i]);
        if (bad != MEMD_PLAN_VALID) {
            set_v(v, bad, i, i);
            return 1;
        }
        if (offsets[i] + b->size > top)
            top = offsets[i] + b->size;
    }
    uint32_t *sel = malloc((n ? n : 1) * sizeof(*sel));
    if (!sel)
        return -ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (bufs[i].size)
            sel[m++] = (uint32_t)i;
    size_t pa = 0, pb = 0;
    int rc = sweep_overlap(bufs, n, sel, m, offsets, &pa, &pb);
    free(sel);
    if (rc < 0)
        return rc;
    if (rc == 1) {
        set_v(v, MEMD_PLAN_OVERLAP, pa, pb);
        return 1;
    }
    if (arena)
        *arena = top;
    return 0;
}

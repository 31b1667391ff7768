/* memd engine — plan problem checks, the lower bound, and the plan validator. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"
#include "plan_live.h"

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

/* The overlap sweep over the buffers listed in sel (non-empty ones only), with offsets
 * off[], in start order through the live set of plan_live.h. Returns 1 and the pair
 * when two overlap, 0 when none do, -ENOMEM. */
static int sweep_overlap(const memd_plan_buffer *b, size_t n, const uint32_t *sel, size_t m,
                         const uint64_t *off, size_t *pa, size_t *pb)
{
    uint32_t *starts = malloc((m ? m : 1) * sizeof(*starts));
    uint64_t *lo = malloc((n ? n : 1) * sizeof(*lo));
    plan_live w = {0};
    int rc = -ENOMEM;
    if (!starts || !lo)
        goto out;
    for (size_t i = 0; i < n; i++)
        lo[i] = b[i].lower;
    memcpy(starts, sel, m * sizeof(*sel));
    memd_plan_sort_asc(starts, m, lo); /* sel is ascending: a radix sort */
    rc = 0;
    for (size_t k = 0; k < m && rc == 0; k++) {
        uint32_t x = starts[k], y;
        plan_live_expire(&w, b[x].lower);
        rc = plan_live_add(&w, off[x], off[x] + b[x].size, b[x].upper, x, &y);
        if (rc == 1) {
            *pa = x;
            *pb = y;
        }
    }
out:
    plan_live_free(&w);
    free(starts);
    free(lo);
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

int memd_plan_validate_placed(const memd_plan_buffer *bufs, size_t n, const uint64_t *offsets,
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
    if (arena)
        *arena = top;
    return 0;
}

int memd_plan_validate(const memd_plan_buffer *bufs, size_t n, const uint64_t *offsets,
                       memd_plan_violation *v, uint64_t *arena)
{
    uint64_t top = 0;
    int rc = memd_plan_validate_placed(bufs, n, offsets, v, &top);
    if (rc)
        return rc;
    uint32_t *sel = malloc((n ? n : 1) * sizeof(*sel));
    if (!sel)
        return -ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (bufs[i].size)
            sel[m++] = (uint32_t)i;
    size_t pa = 0, pb = 0;
    rc = sweep_overlap(bufs, n, sel, m, offsets, &pa, &pb);
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

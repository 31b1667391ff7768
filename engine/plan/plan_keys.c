/* memd engine — the greedy portfolio's priority orders: keys and placement orders. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

_Static_assert(PLAN_ORD_COUNT == MEMD_PLAN_GREEDY_ORDERS, "one greedy order list");

static const char *const greedy_names[PLAN_ORD_COUNT][2] = {
    {"greedy-size-first", "greedy-size-best"},
    {"greedy-area-first", "greedy-area-best"},
    {"greedy-length-first", "greedy-length-best"},
    {"greedy-load-first", "greedy-load-best"},
    {"greedy-start-first", "greedy-start-best"},
};

const char *memd_plan_greedy_name(int ord, bool best_fit)
{
    return greedy_names[ord][best_fit];
}

/* load[i] = sum of the sizes of every buffer whose lifetime overlaps i's (i included):
 * those starting before i ends minus those ending before (or as) i starts. Starts and
 * ends sorted, with prefix sums: O(n log n), no graph. Sums are bounded by the total
 * size, which memd_plan_check bounded. */
int memd_plan_load_keys(const memd_plan_buffer *b, size_t n, uint64_t *load)
{
    if (n == 0)
        return 0;
    uint32_t *is = malloc(n * sizeof(*is)), *ie = malloc(n * sizeof(*ie));
    uint64_t *plo = malloc((n + 1) * sizeof(*plo));
    uint64_t *pup = malloc((n + 1) * sizeof(*pup));
    uint64_t *tl = calloc(n, sizeof(*tl)); /* calloc: gcc cannot see the fill below */
    uint64_t *tu = calloc(n, sizeof(*tu));
    int rc = -ENOMEM;
    if (!is || !ie || !plo || !pup || !tl || !tu)
        goto out;
    for (size_t i = 0; i < n; i++) {
        is[i] = ie[i] = (uint32_t)i;
        tl[i] = b[i].lower;
        tu[i] = b[i].upper;
    }
    memd_plan_sort_asc(is, n, tl); /* radix sorts of the indices by start and by end */
    memd_plan_sort_asc(ie, n, tu);
    plo[0] = pup[0] = 0;
    for (size_t i = 0; i < n; i++) {
        tl[i] = b[is[i]].lower;
        tu[i] = b[ie[i]].upper;
        plo[i + 1] = plo[i] + b[is[i]].size;
        pup[i + 1] = pup[i] + b[ie[i]].size;
    }
    /* Merges instead of a binary search a buffer (at a million buffers those are cache
     * misses): in end order, the starts below each end; in start order, the ends at or
     * below each start. */
    for (size_t k = 0, p = 0; k < n; k++) {
        uint64_t up = tu[k];
        while (p < n && tl[p] < up)
            p++;
        load[ie[k]] = plo[p];
    }
    for (size_t k = 0, q = 0; k < n; k++) {
        uint64_t lo = tl[k];
        while (q < n && tu[q] <= lo)
            q++;
        load[is[k]] -= pup[q];
    }
    rc = 0;
out:
    free(is);
    free(ie);
    free(plo);
    free(pup);
    free(tl);
    free(tu);
    return rc;
}

/* Priority keys (sorted descending). */
void memd_plan_order_keys(const memd_plan_buffer *b, size_t n, const uint64_t *load, int ord,
                          uint64_t *key)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t len = b[i].upper - b[i].lower;
        switch (ord) {
        case PLAN_ORD_SIZE: key[i] = b[i].size; break;
        case PLAN_ORD_AREA: key[i] = plan_sat_mul(b[i].size, len); break;
        case PLAN_ORD_LENGTH: key[i] = len; break;
        case PLAN_ORD_LOAD: key[i] = load[i]; break;
        default: key[i] = UINT64_MAX - b[i].lower; break;
        }
    }
}

/* Pinned buffers first (they are fixed obstacles), then the rest by key. */
size_t memd_plan_build_order(const memd_plan_buffer *b, size_t n, const uint64_t *key,
                             uint32_t *order)
{
    size_t np = 0, k;
    for (size_t i = 0; i < n; i++)
        if (b[i].pinned)
            order[np++] = (uint32_t)i;
    k = np;
    for (size_t i = 0; i < n; i++)
        if (!b[i].pinned)
            order[k++] = (uint32_t)i;
    memd_plan_sort_desc(order + np, n - np, key);
    return np;
}

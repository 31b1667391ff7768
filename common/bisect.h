/* memd engine — binary search, the one every layer uses (range tree nodes, planner
 * sweeps, memctl's dump). */
#ifndef MEMD_ENGINE_BISECT_H
#define MEMD_ENGINE_BISECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The index of the first of the n elements of size bytes at base for which
 * below(element, key) is false, or n; below must be true on a prefix of them and false
 * after it (as bsearch, but a lower bound). O(log n) calls, and no branch on their
 * results (in the range allocator's tree nodes they are unpredictable). Inline, so a
 * caller's static below is inlined into the loop, which then walks a pointer as a
 * hand-written search would (an index costs the range allocator 5 % per operation at
 * 100k blocks). */
static inline size_t memd_partition_point(const void *base, size_t n, size_t size,
                                          bool (*below)(const void *elem, const void *key),
                                          const void *key)
{
    if (n == 0)
        return 0;
    const char *p = base;
    while (n > 1) {
        size_t half = n / 2;
        p = below(p + half * size, key) ? p + half * size : p;
        n -= half;
    }
    return (size_t)(p - (const char *)base) / size + below(p, key);
}

static inline bool memd_u64_below(const void *elem, const void *key)
{
    return *(const uint64_t *)elem < *(const uint64_t *)key;
}

/* How many of the sorted a[0..n) are < k: the index of the first one >= k. */
static inline size_t memd_lower_bound_u64(const uint64_t *a, size_t n, uint64_t k)
{
    return memd_partition_point(a, n, sizeof(*a), memd_u64_below, &k);
}

#endif

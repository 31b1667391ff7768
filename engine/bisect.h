/* memd engine — binary search, the one every layer uses (range tree nodes, planner
 * sweeps, memctl's dump). */
#ifndef MEMD_ENGINE_BISECT_H
#define MEMD_ENGINE_BISECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The first i in [0, n) for which below(ctx, i) is false, or n. below must be true on
 * a prefix of [0, n) and false after it. O(log n) calls, and no branch on their
 * results (in the range allocator's tree nodes they are unpredictable). Inline, so a
 * caller's static below is inlined into the loop. */
static inline size_t memd_partition_point(size_t n, bool (*below)(const void *ctx, size_t i),
                                          const void *ctx)
{
    if (n == 0)
        return 0;
    size_t base = 0;
    while (n > 1) {
        size_t half = n / 2;
        base = below(ctx, base + half) ? base + half : base;
        n -= half;
    }
    return base + below(ctx, base);
}

typedef struct memd_u64_key {
    const uint64_t *a;
    uint64_t k;
} memd_u64_key;

static inline bool memd_u64_below(const void *ctx, size_t i)
{
    const memd_u64_key *q = ctx;
    return q->a[i] < q->k;
}

/* How many of the sorted a[0..n) are < k: the index of the first one >= k. */
static inline size_t memd_lower_bound_u64(const uint64_t *a, size_t n, uint64_t k)
{
    memd_u64_key q = {a, k};
    return memd_partition_point(n, memd_u64_below, &q);
}

#endif

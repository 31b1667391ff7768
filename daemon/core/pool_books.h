/* memd daemon — the books of client pools: the sub-allocations a session reported for
 * its pool allocations (POOL_REPORT), validated against an engine range allocator over
 * each pool, so a report can never place anything outside a pool, over a live
 * sub-allocation, or free what is not there.
 *
 * Visibility only: the device map is the pool allocations themselves; these books are
 * not in the state store (a daemon restart starts them empty and libmemclient reports
 * every live sub-allocation again when it reclaims its session). */
#ifndef MEMD_DAEMON_POOL_BOOKS_H
#define MEMD_DAEMON_POOL_BOOKS_H

#include "range.h"
#include "state.h"

typedef struct memd_suballoc {
    uint64_t offset, size;
    char name[MEMD_NAME_MAX];
} memd_suballoc;

typedef struct memd_pool_books {
    memd_range *range;             /* [0, pool size per bank), min_align 1 */
    memd_map subs;                 /* offset + 1 -> memd_suballoc * */
    uint64_t as_of_ns;             /* last report applied */
    uint64_t pooled;               /* bytes in live sub-allocations */
    uint64_t reports;
    uint64_t mark;                 /* the last report that touched it */
    uint32_t added, removed;       /* sub-allocations that report added and removed */
    memd_peak peak;                /* of pooled (peak.h), kept through a RESET */
} memd_pool_books;

/* One op of a pool report (the handlers decode it from the wire). */
typedef enum memd_pool_verb {
    MEMD_POOL_SUB_ALLOC = 1,       /* a sub-allocation [offset, +size) named name */
    MEMD_POOL_SUB_FREE = 2,        /* the one at offset, of size bytes */
    MEMD_POOL_RESET = 3            /* the pool starts empty (offset and size 0) */
} memd_pool_verb;

typedef struct memd_pool_op {
    uint64_t pool;                 /* handle of the pool allocation */
    uint64_t offset;               /* from the pool's address */
    uint64_t size;                 /* bytes of each bank */
    memd_pool_verb verb;
    char name[MEMD_NAME_MAX];      /* SUB_ALLOC: "" = anonymous */
} memd_pool_op;

/* Applies ops[0..n) of s's report, in order, all or nothing; pools[i] is the pool
 * allocation ops[i] names, which the caller checked is a pool of s. The recorder gets one
 * record per pool changed.
 * 0, or a negative errno with err naming the op that lies (protocol.h, "Client pools"). */
int memd_pool_report(memd_state *st, memd_session *s, memd_alloc *const *pools,
                     const memd_pool_op *ops, uint32_t n, memd_error *err);

/* The books of pool allocation a (NULL until its first report). */
static inline const memd_pool_books *memd_pool_books_of(const memd_alloc *a)
{
    return a->ext ? a->ext->books : NULL;
}

/* The sub-allocation at offset, or NULL. */
const memd_suballoc *memd_pool_books_find(const memd_pool_books *b, uint64_t offset);

/* With the pool allocation (alloc.c). */
void memd_pool_books_free(memd_pool_books *b);

#endif

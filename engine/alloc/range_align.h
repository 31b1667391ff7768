/* memd engine — aligned first-fit indexes for the range allocator (range.c).
 *
 * A free block [a, a + s) holds n bytes aligned to al exactly when its room for al,
 * s minus the distance from a up to the next multiple of al, is at least n (in both
 * directions: range.h). Size alone cannot find such a block in O(log n): a block of
 * size >= n whose aligned start comes too late is passed over, and 64-byte buffers in a
 * 4 KiB-aligned class leave one such block behind every live buffer.
 *
 * An index for alignment al is a B+tree (range_bt.h) of the free blocks as
 * (addr, room): its per-child maxima make "the first / last block with room >= n" one
 * descent, the same placement as walking the blocks in address order. The range builds
 * an index the first time a first-fit search for an alignment passes over
 * MEMD_RANGE_AIDX_WALK blocks, keeps at most MEMD_RANGE_AIDX_MAX of them (the
 * alignments come from the device's classes: a handful), and mirrors every free-block
 * change into each. When all are taken, a new alignment replaces the least recently
 * searched index only if that one went unused for MEMD_RANGE_AIDX_IDLE searches: odd
 * alignments a client asks for now and then cannot push out the classes' indexes, and
 * an index nobody uses any more stops costing updates. An alignment without an index
 * keeps the walk.
 */
#ifndef MEMD_ENGINE_RANGE_ALIGN_H
#define MEMD_ENGINE_RANGE_ALIGN_H

#include <stdbool.h>
#include <stdint.h>

#include "range_bt.h"

#define MEMD_RANGE_AIDX_MAX 4
/* Blocks a search may pass over before its alignment earns an index: below this the
 * walk is cheaper than mirroring every free-block change. */
#define MEMD_RANGE_AIDX_WALK 16
/* Aligned first-fit searches an index must go unused before another alignment may take
 * its place. */
#define MEMD_RANGE_AIDX_IDLE 1024

typedef struct memd_range_aidx {
    unsigned n;                          /* indexes in use: al[0..n) */
    uint64_t tick;                       /* aligned first-fit searches so far */
    uint64_t used[MEMD_RANGE_AIDX_MAX];  /* tick of each index's last search */
    uint64_t al[MEMD_RANGE_AIDX_MAX];
    memd_bt t[MEMD_RANGE_AIDX_MAX];      /* free blocks as (addr, room for al[i]) */
} memd_range_aidx;

void memd_range_aidx_fini(memd_range_aidx *x);

/* Bytes of [a, a + s) from its first al-aligned address on; 0 if it has none. */
static inline uint64_t memd_range_room(uint64_t a, uint64_t s, uint64_t al)
{
    uint64_t pad = (al - (a & (al - 1))) & (al - 1);
    return s > pad ? s - pad : 0;
}

/* The index for al, or NULL; counts one aligned search. */
memd_bt *memd_range_aidx_get(memd_range_aidx *x, uint64_t al);

/* Index every free block of by_addr ((addr, size) entries) for al, in a free slot or
 * in place of an idle index, with room held for `entries` free blocks (memd_bt_hold).
 * false if there is no such slot or memory is short; nothing changes then. */
bool memd_range_aidx_build(memd_range_aidx *x, uint64_t al, const memd_bt *by_addr,
                           uint64_t entries);

/* Room in every index for any tree of `entries` entries (memd_bt_hold). 0 or -ENOMEM. */
int memd_range_aidx_hold(memd_range_aidx *x, uint64_t entries);

/* Room in every index for `inserts` inserts before a change. 0 or -ENOMEM. */
int memd_range_aidx_reserve(memd_range_aidx *x, unsigned inserts);

/* Mirror one free-block change: the block at old_a (UINT64_MAX: none, an insert) now
 * starts at new_a with size new_s (0: it is gone). new_a must keep old_a's place in
 * address order. */
void memd_range_aidx_change(memd_range_aidx *x, uint64_t old_a, uint64_t new_a,
                            uint64_t new_s);

/* The index agrees with by_addr entry by entry, and its tree is sound. 0 or -EFAULT. */
int memd_range_aidx_check(const memd_range_aidx *x, const memd_bt *by_addr);

#endif

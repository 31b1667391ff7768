/* memd engine — range allocator over one address range [base, base + size).
 *
 * Exact first-fit in both directions, or best fit, with alignment, alloc-at and
 * coalescing free, all O(log n) in the number of blocks. No I/O, no globals; node
 * storage is pooled so steady-state operations do not call malloc.
 *
 * Placement semantics (the contract tests and the benchmark check):
 *  - bottom-up first fit: the lowest-addressed free block that can hold the request once
 *    its start is aligned up; the buffer starts at that aligned address.
 *  - top-down first fit: the highest-addressed free block that can hold the request with
 *    its start aligned down from (block end - size); the buffer ends as high as possible.
 *  - best fit: among blocks that can hold the aligned request, the smallest; ties go to
 *    the lowest address (bottom-up) or the highest (top-down). Placement inside the
 *    chosen block is as for first fit in that direction.
 *  - size is rounded up to the arena's minimum alignment; the effective alignment is
 *    max(align, min_align); align 0 means min_align.
 */
#ifndef MEMD_ENGINE_RANGE_H
#define MEMD_ENGINE_RANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memd/types.h"

typedef struct memd_range memd_range;

typedef struct memd_range_stats {
    uint64_t total;             /* size of the range, without the unaligned edges
                                   [base, align_up(base)) and [align_down(end), end) */
    uint64_t allocated;         /* bytes in live allocations */
    uint64_t free;              /* total - allocated */
    uint64_t largest_free;      /* size of the largest free block (0 if none) */
    uint64_t largest_free_addr; /* lowest address of a free block of that size */
    uint64_t free_blocks;
    uint64_t allocations;
} memd_range_stats;

/* base and size: the managed range; min_align: power of two >= 1; base and size need
 * not be aligned (addresses handed out always are). -EINVAL on bad arguments, base + size
 * overflow or a range without one whole min_align unit, -ENOMEM if memory for the
 * allocator itself is short. */
int memd_range_create(uint64_t base, uint64_t size, uint64_t min_align, memd_range **out);
void memd_range_destroy(memd_range *r);

/* MEMD_RANGE_F_CALLER_SIZES: the caller keeps every allocation's address and size (a
 * client pool's records, a daemon's allocation records), so the range keeps no map of
 * its own: allocation and free skip a hash insert and remove. Free with
 * memd_range_free_sized; memd_range_free and memd_range_lookup answer -EINVAL, and
 * memd_range_foreach reports each allocated span between free blocks as one block. */
enum { MEMD_RANGE_F_CALLER_SIZES = 1u << 0 };
int memd_range_create_flags(uint64_t base, uint64_t size, uint64_t min_align, unsigned flags,
                            memd_range **out);

/* Release every allocation; the range becomes one free block. */
void memd_range_reset(memd_range *r);

/* -EINVAL: size 0, align not 0 and not a power of two, bad dir/fit; -ENOMEM: no block
 * fits; -ENOBUFS: the allocator's own memory is short (nothing changed; an allocation
 * also holds the room its free will need); -EOVERFLOW: size rounding overflows. On success *addr is the buffer's start and
 * the allocated size is size rounded up to min_align. */
int memd_range_alloc(memd_range *r, uint64_t size, uint64_t align, memd_dir dir,
                     memd_fit fit, uint64_t *addr);

/* Room for one allocation: after 0, the next memd_range_alloc_at on r cannot fail with
 * -ENOBUFS. Lets a caller changing several ranges at once (a buffer's pieces in several
 * banks) reserve everywhere before it changes anything. -ENOBUFS leaves the range
 * unchanged. Frees need no reserve: they never allocate. */
int memd_range_reserve(memd_range *r);

/* Reserve exactly [addr, addr + round_up(size, min_align)). -EINVAL: size 0, addr not
 * min_align-aligned, or the range leaves the arena; -EBUSY: any byte is not free;
 * -ENOBUFS as memd_range_alloc. */
int memd_range_alloc_at(memd_range *r, uint64_t addr, uint64_t size);

/* Anchored first fit, no state change: where memd_range_alloc(size, align, dir, first
 * fit) would place the buffer if every free byte before `from` in direction dir were
 * taken. Bottom-up: the lowest aligned start >= from; top-down: the highest aligned
 * start <= from. *blk and *blk_size give the whole free block holding it. false if
 * there is none (or the arguments are bad). O((1 + k) log n) as memd_range_alloc.
 * Bank-subset placement intersects several ranges with it (engine/alloc/device_banks.c). */
bool memd_range_fit_from(const memd_range *r, uint64_t size, uint64_t align, memd_dir dir,
                         uint64_t from, uint64_t *at, uint64_t *blk, uint64_t *blk_size);

/* Free the allocation starting at addr, coalescing with both free neighbours.
 * -ENOENT if addr is not the start of a live allocation. size_out may be NULL. Never
 * fails otherwise and never allocates (its allocation held the room); a range left
 * empty gives the memory its indexes grew back. */
int memd_range_free(memd_range *r, uint64_t addr, uint64_t *size_out);

/* The free for MEMD_RANGE_F_CALLER_SIZES: [addr, addr + size rounded up to min_align)
 * becomes free. -ENOENT if any byte of it is free already or it leaves the range (it
 * cannot tell one allocation from two adjacent ones: the caller's records do);
 * -EINVAL for a range with a map or size 0; never fails otherwise, as memd_range_free. */
int memd_range_free_sized(memd_range *r, uint64_t addr, uint64_t size);

/* Size of the live allocation starting at addr, or -ENOENT. */
int memd_range_lookup(const memd_range *r, uint64_t addr, uint64_t *size_out);

void memd_range_stats_get(const memd_range *r, memd_range_stats *st);

/* The (at most n, n <= 32) largest free blocks, largest first: addr[i], size[i].
 * Returns how many. O(n^2 log m) in the m free blocks: no walk. */
size_t memd_range_largest_free(const memd_range *r, size_t n, uint64_t *addr, uint64_t *size);

/* Visit every block, free and allocated, in address order. A non-zero return from fn
 * stops the walk and is returned. fn must not modify the range. */
typedef int (*memd_range_visit_fn)(void *ctx, uint64_t addr, uint64_t size, bool allocated);
int memd_range_foreach(const memd_range *r, memd_range_visit_fn fn, void *ctx);
/* The same from the block starting at from (an allocation's or a free block's start),
 * O(log n) to get there: a walk in several parts (a paged dump). -ENOENT if no block
 * starts at from; -EINVAL for a range without a map (MEMD_RANGE_F_CALLER_SIZES). */
int memd_range_foreach_from(const memd_range *r, uint64_t from, memd_range_visit_fn fn,
                            void *ctx);

/* Verify the internal invariants (index order and maxima, coalescing, allocations and
 * free blocks tiling the range exactly, counters); O(n log n). 0 or -EFAULT. */
int memd_range_check(const memd_range *r);

/* Bytes in live allocations (memd_range_stats' allocated), O(1). */
uint64_t memd_range_allocated(const memd_range *r);
/* The lowest address an allocation occupies: false when there is none. O(log n). */
bool memd_range_lowest(const memd_range *r, uint64_t *addr);

uint64_t memd_range_base(const memd_range *r);
uint64_t memd_range_size(const memd_range *r);
uint64_t memd_range_min_align(const memd_range *r);

/* Free blocks (or index descents) first-fit searches have examined since the range was
 * created: the cost measure tests bound (an aligned first fit examines O(1) blocks once
 * its alignment is indexed, range.c). */
uint64_t memd_range_probes(const memd_range *r);

#endif

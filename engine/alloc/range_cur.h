/* memd engine — anchored searches that remember where they were (range.c).
 *
 * Bank-subset placement (device_banks.c) intersects several ranges by asking each, over
 * and over, for its first fitting start at or beyond a candidate that only moves one
 * way. memd_range_fit_from seeks every such question from the root of the range's
 * tree; with a cursor, each question starts from the block the previous one ended on
 * and climbs only as far as the new candidate needs (memd_bt_seek_k_near): a walk over
 * m candidates costs O(log n + m) leaf searches instead of O(m log n) descents.
 * Engine-private: the cursor holds a tree path (range_bt.h). */
#ifndef MEMD_ENGINE_RANGE_CUR_H
#define MEMD_ENGINE_RANGE_CUR_H

#include "range.h"
#include "range_bt.h"

typedef struct memd_range_cur {
    memd_bt_path p; /* the block the last search ended on, when set */
    bool set;
} memd_range_cur;

/* A cursor that has not searched yet: the first search seeks from the root. */
#define MEMD_RANGE_CUR_INIT ((memd_range_cur){.set = false})

/* memd_range_fit_from through cursor c. Consecutive calls on one cursor must give
 * `from` values that move in dir's direction only (non-decreasing bottom-up,
 * non-increasing top-down), with r unchanged in between; any other use needs a fresh
 * cursor. Results are memd_range_fit_from's. */
bool memd_range_fit_from_cur(const memd_range *r, memd_range_cur *c, uint64_t size,
                             uint64_t align, memd_dir dir, uint64_t from, uint64_t *at,
                             uint64_t *blk, uint64_t *blk_size);

/* First or best fit of size bytes aligned to align (range.h's rules) over the space
 * free in both r1 and r2, which must have the same min_align (-EINVAL otherwise). The
 * two lists of free blocks are merged in placement order, each stepping through its
 * cursor to its next block large enough (blocks smaller than the request are skipped
 * through the trees' maxima), and every overlap is a free block of the intersection:
 * O(log n + m), m the blocks passed over, with one step in a leaf each. It is the
 * leapfrog of two members (device_banks.c) without its per-question overhead. On
 * success c1 and c2 are on the blocks holding the placement (memd_range_alloc_at_cur);
 * -ENOMEM when no overlap holds it. */
int memd_range_fit_both(const memd_range *r1, memd_range_cur *c1, const memd_range *r2,
                        memd_range_cur *c2, uint64_t size, uint64_t align, memd_dir dir,
                        memd_fit fit, uint64_t *addr);

/* memd_range_fit_both for first fit from a bound: bottom-up only starts at or above
 * from are considered, top-down only starts at or below it (the search passes no block
 * before it). from == 0 bottom-up or UINT64_MAX top-down is no bound; best fit takes no
 * bound (-EINVAL). The answer is the first fit among those starts: the unbounded
 * search's whenever no fit starts before the bound (bank_hints.h keeps such bounds).
 * *walked (unless NULL) gets the number of blocks the merge looked at, found or not. */
int memd_range_fit_both_from(const memd_range *r1, memd_range_cur *c1, const memd_range *r2,
                             memd_range_cur *c2, uint64_t size, uint64_t align, memd_dir dir,
                             memd_fit fit, uint64_t from, uint64_t *addr, uint64_t *walked);

/* memd_range_free, also giving the free block [*blk_lo, *blk_hi) the span became part
 * of (merged with its free neighbours). */
int memd_range_free_block(memd_range *r, uint64_t addr, uint64_t *size_out, uint64_t *blk_lo,
                          uint64_t *blk_hi);

/* Where memd_range_alloc would place the buffer, without allocating it (the range may
 * build the search indexes such a request builds), leaving c on the chosen block (for
 * memd_range_alloc_at_cur). Errors as memd_range_alloc. */
int memd_range_fit_cur(memd_range *r, uint64_t size, uint64_t align, memd_dir dir, memd_fit fit,
                       uint64_t *addr, memd_range_cur *c);

/* memd_range_alloc_at, carving the block at c when c is set and that block holds the
 * span (c from a search on r, r unchanged since except for memd_range_reserve: the
 * allocation then costs no descent); otherwise, or with c NULL, exactly
 * memd_range_alloc_at. */
int memd_range_alloc_at_cur(memd_range *r, const memd_range_cur *c, uint64_t addr, uint64_t size);

#endif

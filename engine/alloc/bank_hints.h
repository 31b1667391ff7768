/* memd engine — first-fit lower bounds for per-bank searches in a split region.
 *
 * A per-bank piece goes where its bank's own map (its pieces) and the shared map (the
 * lockstep buffers) are both free: device_banks.c merges the two free-block lists
 * (memd_range_fit_both), passing every block the two disagree on before the answer. A
 * first-fit answer a for s bytes (bottom-up) proves that no s-byte fit starts below a
 * in that intersection, nor one of any larger size; allocations only shrink the
 * intersection, so that stays true until something is freed. The next search of at
 * least that size may then start at a (memd_range_fit_both_from) and pass only the
 * blocks above it. Top-down, an answer a proves that no fit of s bytes or more ends
 * above a + s (a larger fit holds an s-byte one at its top, which starts at or below
 * a): the bound is kept on ends, and a search of s' bytes starts at end - s'.
 *
 * Bounds are kept per bank, per direction and per size class (class c holds requests
 * of at least its floor: 1 unit, then two classes an octave: 2, 3, 4, 6, 8, 12, ...).
 * A free of [x, x + n) in either map turns it into part of that map's free block
 * [lo, hi) (merged with its free neighbours). Any fit that is new afterwards overlaps
 * the freed span and lies inside the free space of both maps, so inside [lo, hi): it
 * starts at lo or above and ends at hi or below, and is no longer than hi - lo. So each
 * class whose floor fits in hi - lo lowers its bottom-up bound to lo (if above) and
 * raises its top-down end bound to hi (if below). Those are O(classes) stores with no
 * search of the other map: bounds may get looser than the exact first fit, never
 * tighter, so every search gives the same placement as without them.
 *
 * A bank's own frees are applied at once. A shared-map free concerns every bank: it is
 * logged once in a ring (O(1)) and each bank applies the entries it has not seen when it
 * next asks for a bound; a bank that fell a whole ring behind forgets its bounds (back
 * to "no bound": a search from the region's end). Only searches of the map's unit
 * alignment set bounds (a bound for alignment u holds for any multiple of u); any
 * alignment may use them. */
#ifndef MEMD_ENGINE_BANK_HINTS_H
#define MEMD_ENGINE_BANK_HINTS_H

#include <stdint.h>

#include "range.h"

typedef struct memd_hints memd_hints;

/* Bounds for banks [0, banks) of a region of `unit`-byte units (a power of two), with no
 * bound yet. -ENOMEM, -EINVAL. */
int memd_hints_create(uint32_t banks, uint64_t unit, memd_hints **out);
void memd_hints_destroy(memd_hints *h);

/* A free in the shared map made [lo, hi) one of its free blocks. O(1). */
void memd_hints_shared_freed(memd_hints *h, uint64_t lo, uint64_t hi);
/* A free in bank's own map made [lo, hi) one of its free blocks. O(classes). */
void memd_hints_own_freed(memd_hints *h, uint32_t bank, uint64_t lo, uint64_t hi);

/* Where a first-fit search of sz bytes (a multiple of the unit) in bank may start:
 * bottom-up no fit starts below it (0: none known), top-down none starts above it
 * (UINT64_MAX: none known). Applies the shared frees bank has not seen first. */
uint64_t memd_hints_start(memd_hints *h, uint32_t bank, memd_dir dir, uint64_t sz);

/* A first-fit search of sz bytes at the unit alignment in bank, in direction dir, with
 * nothing freed since its memd_hints_start, answered addr. O(classes). */
void memd_hints_found(memd_hints *h, uint32_t bank, memd_dir dir, uint64_t sz, uint64_t addr);

#endif

/* memd engine — coverage map: how many occupants cover each unit of an address range,
 * and where the uncovered runs are.
 *
 * A region split by bank-set buffers (device_banks.c) keeps one: every lockstep buffer
 * and every bank-set piece (of any bank) is an occupant. A unit with coverage 0 is free
 * in every bank at once, so the uncovered runs are exactly the free blocks of the
 * intersection of all banks' maps, and a lockstep buffer is placed by searching them
 * instead of intersecting B per-bank allocators.
 *
 * Structure: a sparse segment tree over the range in units of min_align, down to leaves
 * of at most 64 units. Each node keeps how many occupants cover its whole span at that
 * node (the canonical nodes of an interval; counts are never pushed down) and, for its
 * span, the uncovered prefix, suffix and longest uncovered run; a leaf covered in part
 * keeps a chunk of per-unit counts for the spans covering part of it and a mask of its
 * counted units, from which its summary comes. An absent child is wholly uncovered; a
 * node (chunk) exists only while something in its subtree (leaf) is covered, and goes
 * back to its pool when that empties, so memory is O(live intervals * log U) for U
 * units. Nodes and chunks come from pools grown before an operation mutates anything
 * (memd_cover_reserve) and compacted when mostly unused: add and remove are O(log U)
 * and never call malloc in between.
 *
 * Searches follow range.h's placement contract over the uncovered runs (the "free
 * blocks"): first fit bottom-up (lowest run holding the aligned request, start aligned
 * up), top-down (highest run, start aligned down from run end - size), best fit
 * (smallest such run, ties to the lowest / highest). Each run of length >= size visited
 * costs O(log U): first fit visits the runs that are long enough but fail alignment
 * (as range.c's walk without an alignment index); best fit visits every run long enough
 * (stopping early at one of exactly the request's size). Pure: no I/O, no globals. */
#ifndef MEMD_ENGINE_COVER_H
#define MEMD_ENGINE_COVER_H

#include <stdbool.h>
#include <stdint.h>

#include "memd/types.h"

typedef struct memd_cover memd_cover;

/* The range [base, base + units * unit); unit a power of two, base a multiple of it,
 * units >= 1 and the range not wrapping. -EINVAL, -ENOMEM. */
int memd_cover_create(uint64_t base, uint64_t unit, uint64_t units, memd_cover **out);
void memd_cover_destroy(memd_cover *c);

/* Room for `adds` more memd_cover_add calls: after 0 they cannot fail with -ENOMEM.
 * -ENOMEM leaves the map unchanged. */
int memd_cover_reserve(memd_cover *c, unsigned adds);

/* n more occupants (n >= 1) over [addr, addr + size rounded up to unit): a range
 * lockstep buffer is one span in each bank of its set. -EINVAL: n 0, addr not a multiple
 * of unit, size 0, or the span leaves the range; -ENOMEM (unchanged) unless reserved. */
int memd_cover_add(memd_cover *c, uint64_t addr, uint64_t size, uint32_t n);

/* Remove n occupants added with the same span (the caller's records say which spans it
 * added; a part of one is not told apart from a whole). -ENOENT (unchanged) if the span
 * is not covered n times by occupants added over it; never fails otherwise (a mostly
 * unused pool is compacted when memory allows). */
int memd_cover_remove(memd_cover *c, uint64_t addr, uint64_t size, uint32_t n);

/* memd_cover_remove without the check, for a span the caller's own records say it added
 * (one descent instead of two). Removing anything else corrupts the map. */
void memd_cover_drop(memd_cover *c, uint64_t addr, uint64_t size, uint32_t n);

/* Units covered, counted once per occupant: the sum of every live span's length times
 * its occupants (a consistency check for the owner's own records). */
uint64_t memd_cover_weight(const memd_cover *c);

/* Placement of size bytes aligned to align (power of two; 0: unit) in the uncovered
 * runs, per the contract above. No state change. -EINVAL on bad arguments, -ENOMEM
 * when no run holds it; *blk / *blk_size (may be NULL) give the chosen run. */
int memd_cover_fit(const memd_cover *c, uint64_t size, uint64_t align, memd_dir dir,
                   memd_fit fit, uint64_t *addr, uint64_t *blk, uint64_t *blk_size);

/* Whether [addr, addr + size rounded up to unit) is wholly uncovered: 0, -EBUSY if a
 * unit of it is covered, -EINVAL if it is not a span of the range. O(log U). */
int memd_cover_probe(const memd_cover *c, uint64_t addr, uint64_t size);

/* The first uncovered byte at or above addr (aligned down to unit), or false. */
bool memd_cover_next_free(const memd_cover *c, uint64_t addr, uint64_t *free_addr);

/* How many occupants cover the unit holding addr (0 outside the range). O(log U). */
uint32_t memd_cover_count(const memd_cover *c, uint64_t addr);

/* Tree nodes and leaf chunks in use, and the bytes the pools hold (the memory bounds
 * tests check). */
uint64_t memd_cover_nodes(const memd_cover *c);
uint64_t memd_cover_bytes(const memd_cover *c);

/* Verify every node's summary against its children and that no empty subtree is kept;
 * O(nodes). 0 or -EFAULT. */
int memd_cover_check(const memd_cover *c);

#endif

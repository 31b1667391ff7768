/* memd tests — a deliberately simple reference model of the range allocator.
 *
 * Same contract and return codes as engine/alloc/range.h, implemented the obvious way:
 * free blocks in one address-sorted array scanned linearly (an O(n) first-fit free list,
 * like tt-metal's), allocations in a plain hash table keyed by address. The randomized
 * test compares memd_range against it after every operation; the benchmark runs it on
 * the same sequence as a same-run baseline.
 */
#ifndef MEMD_TESTS_REF_RANGE_H
#define MEMD_TESTS_REF_RANGE_H

#include <stdbool.h>
#include <stdint.h>

#include "range.h"

typedef struct ref_range ref_range;

int ref_range_create(uint64_t base, uint64_t size, uint64_t min_align, ref_range **out);
void ref_range_destroy(ref_range *r);
void ref_range_reset(ref_range *r);
int ref_range_alloc(ref_range *r, uint64_t size, uint64_t align, memd_dir dir, memd_fit fit,
                    uint64_t *addr);
int ref_range_alloc_at(ref_range *r, uint64_t addr, uint64_t size);
int ref_range_free(ref_range *r, uint64_t addr, uint64_t *size_out);
int ref_range_lookup(const ref_range *r, uint64_t addr, uint64_t *size_out);
void ref_range_stats_get(const ref_range *r, memd_range_stats *st);
/* Visits blocks in address order; -ENOMEM if it cannot sort the allocations. */
int ref_range_foreach(const ref_range *r, memd_range_visit_fn fn, void *ctx);

#endif

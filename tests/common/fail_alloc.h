/* memd tests — allocation failure injection for engine tests.
 *
 * A test executable linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,
 * --wrap=aligned_alloc (and fail_alloc.c) sends the allocations of its own objects and
 * of the static engine library through these wrappers (shared libraries such as Check
 * keep the real ones). Off by default. */
#ifndef MEMD_TESTS_FAIL_ALLOC_H
#define MEMD_TESTS_FAIL_ALLOC_H

#include <stddef.h>

/* After n more successful allocations, every allocation fails until called with -1. */
void memd_test_fail_allocs_after(long n);
/* Allocations refused so far. */
unsigned long memd_test_failed_allocs(void);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);

#endif

/* memd tests — allocation failure injection (fail_alloc.h). Test code, so a static
 * countdown is fine here; the engine itself keeps no globals. */
#include "fail_alloc.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);

static long countdown = -1; /* successes left before failing; -1: never fail */
static unsigned long failed;

void memd_test_fail_allocs_after(long n)
{
    countdown = n;
}

unsigned long memd_test_failed_allocs(void)
{
    return failed;
}

static int fail_now(void)
{
    if (countdown < 0)
        return 0;
    if (countdown > 0) {
        countdown--;
        return 0;
    }
    failed++;
    return 1;
}

void *__wrap_malloc(size_t n)
{
    return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fail_now() ? NULL : __real_realloc(p, n);
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
    return fail_now() ? NULL : __real_aligned_alloc(align, n);
}

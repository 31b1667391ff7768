#include "plan_bound_check.h"

#include <check.h>
#include <string.h>

void memd_test_placer_bound(plan_placer *p, const memd_plan_buffer *b, size_t n,
                            const uint32_t *order, bool best_fit, const uint64_t *full,
                            uint64_t arena, uint64_t *o)
{
    plan_bound bd;
    atomic_init(&bd, arena);
    p->bound = &bd;
    ck_assert_uint_eq(memd_plan_place_range(p, order, 0, best_fit, o), arena);
    ck_assert(!p->beaten);
    ck_assert_mem_eq(o, full, n * sizeof(*o));
    atomic_store(&bd, arena - 1);
    memset(o, 0xA5, n * sizeof(*o));
    ck_assert_uint_eq(memd_plan_place_range(p, order, 0, best_fit, o), UINT64_MAX);
    ck_assert(p->beaten && !p->failed);
    /* The stop: the first placement whose end passes arena - 1. */
    size_t k = 0;
    for (; full[order[k]] + b[order[k]].size < arena; k++)
        ck_assert_uint_eq(o[order[k]], full[order[k]]);
    ck_assert_uint_eq(o[order[k]], full[order[k]]);
    for (k++; k < n; k++)
        ck_assert_uint_eq(o[order[k]], 0xA5A5A5A5A5A5A5A5u);
    p->bound = NULL;
    ck_assert_uint_eq(memd_plan_place_range(p, order, 0, best_fit, o), arena);
    ck_assert(!p->beaten);
}

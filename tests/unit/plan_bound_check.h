/* The placers' bound, checked the same way by the plan suites (every placer mode). */
#ifndef MEMD_TESTS_PLAN_BOUND_CHECK_H
#define MEMD_TESTS_PLAN_BOUND_CHECK_H

#include <stdbool.h>

#include "plan_internal.h"

/* p placed order[0..n) with best_fit into full[], arena `arena` (> 0), with no bound.
 * With the arena as its bound the run ends the same (offsets full[]); with one byte less
 * it stops, beaten, at the placement that passes it: the placements before and that one
 * as in full[], the rest untouched. Without a bound again the run is whole. o: n
 * offsets of scratch. Leaves p->bound NULL. */
void memd_test_placer_bound(plan_placer *p, const memd_plan_buffer *b, size_t n,
                            const uint32_t *order, bool best_fit, const uint64_t *full,
                            uint64_t arena, uint64_t *o);

#endif

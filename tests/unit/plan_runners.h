/* Runners for the planner's lanes (memd_plan_opts.runner) the plan tests share: the
 * plan must not depend on which one ran the lanes. */
#ifndef MEMD_TESTS_PLAN_RUNNERS_H
#define MEMD_TESTS_PLAN_RUNNERS_H

#include "plan.h"

/* Runs the lanes last to first, on this thread. */
void memd_test_runner_reversed(void *ctx, unsigned lanes, memd_plan_lane_fn fn, void *arg);
/* One thread per lane (at most 8 lanes). */
void memd_test_runner_threaded(void *ctx, unsigned lanes, memd_plan_lane_fn fn, void *arg);

#endif

/* Lane runners for the plan tests (see plan_runners.h). */
#include <check.h>
#include <pthread.h>

#include "plan_runners.h"

void memd_test_runner_reversed(void *ctx, unsigned lanes, memd_plan_lane_fn fn, void *arg)
{
    (void)ctx;
    for (unsigned i = lanes; i-- > 0;)
        fn(arg, i);
}

typedef struct th_arg {
    memd_plan_lane_fn fn;
    void *arg;
    unsigned lane;
} th_arg;

static void *th_main(void *p)
{
    th_arg *a = p;
    a->fn(a->arg, a->lane);
    return NULL;
}

void memd_test_runner_threaded(void *ctx, unsigned lanes, memd_plan_lane_fn fn, void *arg)
{
    (void)ctx;
    pthread_t th[8];
    th_arg ta[8];
    ck_assert_uint_le(lanes, 8);
    for (unsigned i = 0; i < lanes; i++) {
        ta[i] = (th_arg){fn, arg, i};
        ck_assert_int_eq(pthread_create(&th[i], NULL, th_main, &ta[i]), 0);
    }
    for (unsigned i = 0; i < lanes; i++)
        pthread_join(th[i], NULL);
}

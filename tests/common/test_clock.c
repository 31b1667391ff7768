
#include "test_clock.h"
/* memd tests — clocks and sleeps (see test_clock.h). */

uint64_t memd_test_clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t memd_test_now_ns(void)
{
    return memd_test_clock_ns(CLOCK_MONOTONIC);
}

long memd_test_now_ms(void)
{
    return (long)(memd_test_now_ns() / 1000000u);
}

void memd_test_sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L};
    nanosleep(&ts, NULL);
}

uint64_t memd_test_fake_ms(void *ctx)
{
    uint64_t *t = ctx;
    return *t += 1000000;
}

uint64_t memd_test_fake_us(void *ctx)
{
    uint64_t *t = ctx;
    return *t += 1000;
}

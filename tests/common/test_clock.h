/* memd tests — clocks and sleeps for deadlines, polls and benchmark timings. */
#ifndef MEMD_TESTS_TEST_CLOCK_H
#define MEMD_TESTS_TEST_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Clock id (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID, ...) in nanoseconds. */
uint64_t memd_test_clock_ns(clockid_t id);
/* CLOCK_MONOTONIC in nanoseconds and in milliseconds. */
uint64_t memd_test_now_ns(void);
long memd_test_now_ms(void);
/* Sleeps ms milliseconds (a signal may end it early, as with usleep). */
void memd_test_sleep_ms(long ms);
/* Fake clocks for code that takes a clock function and its context (the planner's
 * budgets): each reading advances the uint64_t at ctx by 1 ms, or by 1 us, and returns it,
 * so a deadline passes after a known number of readings. */
uint64_t memd_test_fake_ms(void *ctx);
uint64_t memd_test_fake_us(void *ctx);

#endif

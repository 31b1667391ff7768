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

#endif

/* memd tests — the generators randomized tests and benchmarks draw from.
 *
 * Each suite's stream is part of its reproducibility (a failure is replayed from the
 * seed it printed), so each generator here is the exact one its suites always used:
 * splitmix64 for the Check suites and benchmarks (the planner's plan_splitmix is the
 * same function), xorshift64 for the daemon-killing and concurrency programs, the
 * 64-bit LCG (Knuth's MMIX constants) for the suites that read its high bits. */
#ifndef MEMD_TESTS_TEST_RAND_H
#define MEMD_TESTS_TEST_RAND_H

#include <stddef.h>
#include <stdint.h>

/* splitmix64: the next value of the stream at *state. */
uint64_t memd_test_rand(uint64_t *state);
/* memd_test_rand(state) % n (n > 0). */
uint64_t memd_test_below(uint64_t *state, uint64_t n);
/* order[0..n) = 0..n-1 shuffled by Fisher-Yates from the top, one memd_test_below(state,
 * i + 1) per position i = n-1 down to 1. */
void memd_test_shuffled(uint64_t *state, uint32_t *order, size_t n);
/* xorshift64 (13, 7, 17): the next state, which is also the value (*state != 0). */
uint64_t memd_test_xorshift(uint64_t *state);
/* LCG x' = x * 6364136223846793005 + 1442695040888963407: the next state, which is
 * also the value (use its high bits). */
uint64_t memd_test_lcg(uint64_t *state);

#endif

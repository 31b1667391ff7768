/* memd tests — the seeded random numbers randomized tests share: splitmix64, a bounded
 * draw, and the seed from MEMD_TEST_SEED, else DEFAULT_SEED, which the including test
 * defines before including this. */
#ifndef MEMD_TESTS_SEEDED_H
#define MEMD_TESTS_SEEDED_H

#include <stdint.h>
#include <stdlib.h>

static inline uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint64_t below(uint64_t *s, uint64_t n)
{
    return next_u64(s) % n;
}

static inline uint64_t seed_from_env(void)
{
    const char *e = getenv("MEMD_TEST_SEED");
    return e && *e ? strtoull(e, NULL, 0) : DEFAULT_SEED;
}

#endif

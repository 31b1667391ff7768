
#include "test_rand.h"
/* memd tests — seeded generators (see test_rand.h). */

uint64_t memd_test_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t memd_test_below(uint64_t *state, uint64_t n)
{
    return memd_test_rand(state) % n;
}

uint64_t memd_test_xorshift(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

uint64_t memd_test_lcg(uint64_t *state)
{
    return *state = *state * 6364136223846793005ull + 1442695040888963407ull;
}

void memd_test_shuffled(uint64_t *state, uint32_t *order, size_t n)
{
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    for (size_t i = n - 1; n && i > 0; i--) {
        size_t j = memd_test_below(state, i + 1);
        uint32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

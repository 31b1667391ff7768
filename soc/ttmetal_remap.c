/* memd soc — tt-metal's default L1 bank id remap, as libstdc++ computes it (see ttmetal.h;
 * memd.yaml: tt_metal.l1_bank_remap: default, or libstdc++).
 *
 * tt-metal's L1 allocator numbers its banks in a row-major scan of the worker grid and
 * then, unless the device was opened with an explicit l1_bank_remap, gives the bank at
 * scan position i the id shuffled[i], where shuffled is 0..n-1 put through
 *     std::shuffle(begin, end, std::default_random_engine(0))
 * (tt_metal/impl/allocator/l1_banking_allocator.cpp). The permutation is that of
 * libstdc++ (GCC's standard library, which tt-metal's gcc-12 and clang-*-libstdcpp
 * toolchains use): default_random_engine is minstd_rand0, seed 0 starts its state at 1,
 * uniform_int_distribution downscales by rejection, and std::shuffle draws two swap
 * positions from one number while the engine's range allows. Reproduced step by step
 * here. A build of tt-metal against libc++ shuffles differently (minstd_rand, another
 * distribution, one draw per position): that permutation is ttmetal_remap_libcxx.c's
 * (l1_bank_remap: libc++). Both were checked against the C++ libraries themselves with
 * tests/unit/ttmetal_shuffle_ref.cpp. */
#include "ttmetal.h"

#include <stdint.h>

typedef struct minstd0 {
    uint64_t x;
} minstd0;

#define MINSTD_M 2147483647u /* 2^31 - 1 */
#define MINSTD_MIN 1u
#define MINSTD_MAX (MINSTD_M - 1u)

static uint64_t minstd_next(minstd0 *g)
{
    g->x = g->x * 16807u % MINSTD_M;
    return g->x;
}

/* uniform_int_distribution<unsigned long>{a, b}(g), libstdc++'s downscaling case (the
 * engine's range, 2^31 - 3, is neither 2^32 - 1 nor 2^64 - 1, so the two-division
 * fallback). b - a is always below the engine's range here. */
static uint64_t uniform(minstd0 *g, uint64_t a, uint64_t b)
{
    const uint64_t urngrange = MINSTD_MAX - MINSTD_MIN, uerange = b - a + 1;
    const uint64_t scaling = urngrange / uerange, past = uerange * scaling;
    uint64_t r;
    do
        r = minstd_next(g) - MINSTD_MIN;
    while (r >= past);
    return a + r / scaling;
}

static void swap_ids(uint32_t *v, uint64_t i, uint64_t j)
{
    uint32_t t = v[i];
    v[i] = v[j];
    v[j] = t;
}

void memd_ttmetal_default_remap(uint32_t *ids, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        ids[i] = i;
    if (n < 2)
        return;
    minstd0 g = {1}; /* seed 0: 0 mod m is 0 and the increment is 0, so the state is 1 */
    const uint64_t urngrange = MINSTD_MAX - MINSTD_MIN, urange = n;
    if (urngrange / urange >= urange) {
        /* Two positions per draw: x in [0, r (r + 1)) gives x / (r + 1) and x % (r + 1). */
        uint64_t i = 1;
        if (n % 2 == 0)
            swap_ids(ids, i++, uniform(&g, 0, 1));
        while (i != n) {
            const uint64_t r = i + 1;
            const uint64_t x = uniform(&g, 0, r * (r + 1) - 1);
            swap_ids(ids, i++, x / (r + 1));
            swap_ids(ids, i++, x % (r + 1));
        }
        return;
    }
    for (uint64_t i = 1; i < n; i++)
        swap_ids(ids, i, uniform(&g, 0, i));
}

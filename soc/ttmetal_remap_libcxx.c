/* memd soc — tt-metal's default L1 bank id remap as a libc++ build of tt-metal computes it
 * (memd.yaml: tt_metal.l1_bank_remap: libc++; see ttmetal.h and ttmetal_remap.c).
 *
 * tt-metal's L1 allocator gives scan position i the id shuffled[i], where shuffled is
 * 0..n-1 put through std::shuffle(begin, end, std::default_random_engine(0)). The C++
 * standard fixes minstd_rand's sequence but leaves default_random_engine, the algorithm of
 * uniform_int_distribution and that of shuffle to the library, so a tt-metal built against
 * libc++ (LLVM's standard library) numbers its banks differently from one built against
 * libstdc++. This is libc++'s computation, step by step, as read in its 14.0 headers
 * (Debian libc++-14-dev, /usr/lib/llvm-14/include/c++/v1):
 *   __random/default_random_engine.h   default_random_engine is minstd_rand
 *   __random/linear_congruential_engine.h   minstd_rand, its seeding, min() and max()
 *   __random/log2.h                    __log2, the engine's whole bits
 *   __random/uniform_int_distribution.h   __independent_bits_engine, uniform_int_distribution
 *   __algorithm/shuffle.h              std::shuffle
 * LLVM's later sources (llvm-project main, read in 2026, not run) restructure
 * __independent_bits_engine and uniform_int_distribution (a power-of-two range skips the
 * outer rejection) but compute the same values for this engine. On x86_64 Linux,
 * uint_fast32_t (the engine's result type) and ptrdiff_t (the distribution's) are both
 * 64 bits wide, which decides the word types below. Checked against libc++ 14 itself
 * (tests/unit/ttmetal_shuffle_ref.cpp says how and for which n). */
#include "ttmetal.h"

#include <stdint.h>

/* linear_congruential_engine<uint_fast32_t, 48271, 0, 2147483647> (minstd_rand). Its
 * increment is 0, so min() is 1 (0 would be a fixed point) and max() is m - 1. seed(0):
 * with c == 0 a seed that is 0 mod m would stick at 0, so libc++ stores 1 instead. next()
 * uses Schrage's method to stay inside the result type; it gives exactly 48271 x mod m,
 * which 64-bit arithmetic computes directly (x < 2^31). */
#define LCG_A 48271u
#define LCG_M 2147483647u /* 2^31 - 1 */
#define LCG_MIN 1u
#define LCG_MAX (LCG_M - 1u)
/* __independent_bits_engine's _Rp (the number of values the engine gives, 2^31 - 2) and
 * __m = __log2<_Rp>: the whole bits one engine call is trusted for (30). */
#define LCG_RANGE ((uint64_t)LCG_MAX - LCG_MIN + 1u)
#define LCG_BITS 30u

typedef struct minstd {
    uint64_t x;
} minstd;

static uint64_t minstd_next(minstd *g)
{
    g->x = g->x * LCG_A % LCG_M;
    return g->x;
}

/* __independent_bits_engine<minstd_rand, unsigned long>(e, w): w random bits built from
 * n engine calls, n0 of them giving w0 bits and the rest w0 + 1, each call rejected while
 * its value (minus min()) is at or above the largest multiple of 2^bits the engine's
 * range holds (y0, y1), so every kept call's low bits are uniform. Its working type is
 * unsigned long (64 bits) since the engine's result type is no wider. w is at most 32
 * here (ranges below 2^32), so w0 + 1 < 64 and libc++'s guards for 64-bit words (w0 >=
 * 64: y0 = 0, the whole word as mask) never apply. */
typedef struct bits_engine {
    minstd *e;
    uint64_t n, n0, w0, y0, y1, mask0, mask1;
} bits_engine;

static void bits_init(bits_engine *b, minstd *e, uint64_t w)
{
    b->e = e;
    /* As many calls as w needs at 30 bits each ... */
    b->n = w / LCG_BITS + (w % LCG_BITS != 0);
    b->w0 = w / b->n;
    b->y0 = (LCG_RANGE >> b->w0) << b->w0;
    /* ... plus one when the rejection zone would be larger than y0 / n (too many
     * rejections): more calls, fewer bits each. */
    if (LCG_RANGE - b->y0 > b->y0 / b->n) {
        b->n++;
        b->w0 = w / b->n;
        b->y0 = (LCG_RANGE >> b->w0) << b->w0;
    }
    /* The first n0 calls give w0 bits, the last w % n give w0 + 1. */
    b->n0 = b->n - w % b->n;
    b->y1 = (LCG_RANGE >> (b->w0 + 1)) << (b->w0 + 1);
    b->mask0 = ~UINT64_C(0) >> (64 - b->w0);
    b->mask1 = ~UINT64_C(0) >> (64 - (b->w0 + 1));
}

/* __eval(true_type): _Rp is not 0 (the engine does not cover a whole word). The bits are
 * shifted in from the high end: the first call's bits end up highest. */
static uint64_t bits_next(const bits_engine *b)
{
    uint64_t s = 0, u;
    for (uint64_t k = 0; k < b->n0; k++) {
        do
            u = minstd_next(b->e) - LCG_MIN;
        while (u >= b->y0);
        s = (s << b->w0) + (u & b->mask0);
    }
    for (uint64_t k = b->n0; k < b->n; k++) {
        do
            u = minstd_next(b->e) - LCG_MIN;
        while (u >= b->y1);
        s = (s << (b->w0 + 1)) + (u & b->mask1);
    }
    return s;
}

/* uniform_int_distribution<ptrdiff_t>{0, d}(g): _UIntType is unsigned long (ptrdiff_t
 * is wider than 32 bits). A range of one value takes no engine call at all. Otherwise
 * w = ceil(log2(range)) bits (floor, plus one unless the range is a power of two), drawn
 * from a fresh __independent_bits_engine each time and rejected while at or above the
 * range. d < 2^32 here (n is a uint32_t), so the range is never 0 (a whole word). */
static uint64_t uniform(minstd *g, uint64_t d)
{
    const uint64_t range = d + 1;
    if (range == 1)
        return 0;
    uint64_t w = 0;
    while (range >> (w + 1))
        w++; /* floor(log2(range)): 63 - countl_zero(range) */
    if (range & (~UINT64_C(0) >> (64 - w)))
        w++;
    bits_engine b;
    bits_init(&b, g, w);
    uint64_t u;
    do
        u = bits_next(&b);
    while (u >= range);
    return u;
}

void memd_ttmetal_libcxx_remap(uint32_t *ids, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        ids[i] = i;
    minstd g = {1}; /* seed 0 -> state 1 (see above) */
    /* std::shuffle: a forward Fisher-Yates. Position i (0 to n - 2) swaps with i + j, j
     * uniform in [0, n - 1 - i]; j == 0 is no swap (but the draw happened). The last
     * position draws nothing. */
    if (n < 2)
        return;
    for (uint64_t i = 0, d = n - 1u; d > 0; i++, d--) {
        uint64_t j = uniform(&g, d);
        if (j) {
            uint32_t t = ids[i];
            ids[i] = ids[i + j];
            ids[i + j] = t;
        }
    }
}

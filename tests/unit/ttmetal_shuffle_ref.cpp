// Reference for memd's tt-metal L1 bank remaps (soc/ttmetal_remap.c, ttmetal_remap_libcxx.c):
// prints what tt-metal's L1 allocator computes, with the C++ standard library it is built
// against, for each bank count given:
//     std::vector<uint32_t> shuffled(n);  std::iota(..., 0);
//     std::shuffle(shuffled.begin(), shuffled.end(), std::default_random_engine(0));
// NOT BUILT by meson and not needed by any test (memd has no C++ in its build): it is
// the tool the expected values in test_banks_ttmetal.c were printed with, kept to check
// memd again against a standard library. Build and run by hand:
//     clang++ -std=c++17 -O1 -stdlib=libc++ tests/unit/ttmetal_shuffle_ref.cpp -o /tmp/ref-libcxx
//     clang++ -std=c++17 -O1 -stdlib=libstdc++ tests/unit/ttmetal_shuffle_ref.cpp -o /tmp/ref-libstdcxx
//     /tmp/ref-libcxx 64 56 128 124 94 92 1-256
// (-stdlib=libc++ needs Debian's libc++-dev and libc++abi-dev; memd does not depend on
// them.) Arguments: bank counts N or ranges A-B. Output: one line per count,
// "N: id id ...", id i being the bank id of scan position i. ttmetal_shuffle_memd.c
// prints memd's remaps in the same format; the check is a diff of the two outputs:
//     diff <(/tmp/ref-libcxx 1-256) <(/tmp/memd-remap libc++ 1-256)
//     diff <(/tmp/ref-libstdcxx 1-256) <(/tmp/memd-remap libstdc++ 1-256)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

static void print(unsigned long n)
{
    std::vector<uint32_t> shuffled(n);
    std::iota(shuffled.begin(), shuffled.end(), 0);
    std::shuffle(shuffled.begin(), shuffled.end(), std::default_random_engine(0));
    std::printf("%lu:", n);
    for (uint32_t id : shuffled)
        std::printf(" %u", id);
    std::printf("\n");
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        char *end;
        unsigned long a = std::strtoul(argv[i], &end, 10), b = a;
        if (*end == '-')
            b = std::strtoul(end + 1, &end, 10);
        if (*end || a == 0 || b < a) {
            std::fprintf(stderr, "usage: %s N|A-B ... (bank counts, from 1)\n", argv[0]);
            return 2;
        }
        for (unsigned long n = a; n <= b; n++)
            print(n);
    }
    return 0;
}

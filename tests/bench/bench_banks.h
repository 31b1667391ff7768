/* memd-bench-alloc --banks MODE: placement modes on a 64-bank L1 group (bench_banks.c). */
#ifndef MEMD_BENCH_BANKS_H
#define MEMD_BENCH_BANKS_H

#include <stdint.h>

/* Prints one JSON line; 0, or -1 after an error message. */
int memd_bench_banks(const char *mode, uint64_t live, uint64_t pairs, uint64_t seed, uint64_t repeat);

#endif

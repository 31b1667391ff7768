/* memd tests — tt-metal's L1 bank ids of the Wormhole galaxy (8 x 8 worker grid, 64
 * banks): the worker at scan position i (logical row i / 8, column i % 8) has bank id
 * memd_test_galaxy_l1_ids[i]. tt-metal computes them with std::shuffle(0..63,
 * std::default_random_engine(0)); these were printed by that very C++ (g++ 12, libstdc++;
 * tests/unit/ttmetal_shuffle_ref.cpp), not by memd. */
#ifndef MEMD_TESTS_TTMETAL_GALAXY_IDS_H
#define MEMD_TESTS_TTMETAL_GALAXY_IDS_H

#include <stdint.h>

static const uint32_t memd_test_galaxy_l1_ids[64] = {
    34, 63, 38, 6,  52, 33, 4,  37, 20, 35, 14, 22, 2,  31, 36, 19, 30, 40, 3,  10, 25, 7,
    59, 56, 39, 24, 50, 12, 21, 42, 29, 5,  61, 0,  26, 54, 1,  9,  15, 13, 18, 58, 8,  46,
    27, 51, 16, 53, 62, 45, 44, 43, 41, 17, 55, 60, 49, 48, 57, 32, 47, 23, 11, 28};

#endif

/* Bank subsets on tt-metal devices, built from tt-metal's own Wormhole and Grayskull
 * descriptors (../shared/data/soc/tt-metal, MEMD_SHARED_DATA): bank ids in tt-metal's
 * allocator order with their logical and NOC cores, and sharded tensors placed on shard
 * grids of cores (per core, and range lockstep over the grid) beside interleaved
 * (lockstep) buffers. Worked out by hand from the files:
 *   Wormhole functional_workers: NOC x 1-4, 6-9; NOC y 1-5, 7-11 -> logical (x, y) is
 *   NOC (x < 4 ? x + 1 : x + 2, y < 5 ? y + 1 : y + 2); galaxy/1 grid 8 x 8 = 64 banks,
 *   bank id y * 8 + x. DRAM entry 4 starts at 5-0.
 *   Grayskull E150/1: grid 12 x 9 = 108 compute banks, then 10 storage cores x 2 banks;
 *   storage core [1, -1] is logical (1, 9) (10 worker rows), NOC (2, 11).
 * Bank ids: tt-metal scans the worker grid row by row and gives scan position i the id
 * remap[i]; without a remap from the runtime, remap is 0..n-1 after
 * std::shuffle(..., std::default_random_engine(0)), which depends on the C++ library
 * (libc++'s further down). The expected ids below were printed by that very C++ (g++ 12,
 * libstdc++), not by memd:
 *   n = 64: 34,63,38,6,52,33,4,37,20,35,14,22,2,31,36,19,30,40,3,10,25,7,59,56,39,24,
 *           50,12,21,42,29,5,61,0,26,54,1,9,15,13,18,58,8,46,27,51,16,53,62,45,44,43,
 *           41,17,55,60,49,48,57,32,47,23,11,28
 *   n = 128: position 0 -> 81, 33 -> 0, 85 -> 1, 108 -> 13, 109 -> 120, 126 -> 18,
 *           127 -> 65
 * so Wormhole bank 0 is scan position 33 = logical (1, 4), NOC (2, 5); bank 63 is
 * position 1 = (1, 0), NOC (2, 1); Grayskull bank 13 and 120 are the two banks of
 * storage core (1, 9) (bank 13 the lower one, at L1 offset 0; 120 at 512 KiB). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ttmetal_galaxy_ids.h"
#include "check_main.h"
#include "device.h"
#include "test_run.h"
#include "ttmetal.h"

static char *slurp(const char *name, size_t *len)
{
    const char *dir = getenv("MEMD_SHARED_DATA");
    ck_assert_ptr_nonnull(dir);
    char path[4096];
    snprintf(path, sizeof path, "%s/soc/tt-metal/%s", dir, name);
    char *b = memd_test_slurp(path, len);
    ck_assert_msg(b != NULL, "cannot open %s", path);
    return b;
}

static memd_device *load_remap(const char *arch, const char *product, int remap,
                               const uint32_t *list, uint32_t nlist, memd_device_spec *spec)
{
    char sn[128], cn[128];
    snprintf(sn, sizeof sn, "soc_%s_arch.yaml", arch);
    snprintf(cn, sizeof cn, "core_%s_arch.yaml", arch);
    size_t sl, cl;
    char *s = slurp(sn, &sl), *c = slurp(cn, &cl);
    memd_ttmetal_opts o = {.product = product, .hw_cqs = 1, .sram_reserved = 160 * 1024,
                           .remap = remap, .remap_list = list, .nremap = nlist};
    memd_error err;
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(memd_ttmetal_device(sn, s, sl, cn, c, cl, &o, spec, &err), 0);
    free(s);
    free(c);
    memd_device *d;
    ck_assert_msg(memd_device_create(spec, &d, &err) == 0, "%s", err.msg);
    return d;
}

/* Bank ids as the scan order gives them (tt_metal.l1_bank_remap: identity): the shard
 * grid tests below name cores by these. */
static memd_device *load(const char *arch, const char *product, memd_device_spec *spec)
{
    return load_remap(arch, product, MEMD_TTMETAL_REMAP_IDENTITY, NULL, 0, spec);
}

static void core_is(const memd_bank_group_spec *g, uint32_t bank, int lx, int ly, int nx, int ny)
{
    ck_assert_ptr_nonnull(g->cores);
    const memd_bank_core *c = &g->cores[bank];
    ck_assert_msg(c->logical_x == lx && c->logical_y == ly && c->noc_x == nx && c->noc_y == ny,
                  "bank %u: logical %u,%u noc %u,%u; expected %d,%d %d,%d", bank, c->logical_x,
                  c->logical_y, c->noc_x, c->noc_y, lx, ly, nx, ny);
}

START_TEST(wormhole_bank_ids_and_cores)
{
    memd_device_spec spec;
    memd_device *d = load("wormhole_b0_80", "galaxy", &spec);
    const memd_bank_group_spec *l1 = &memd_device_spec_of(d)->groups[MEMD_KIND_SRAM];
    ck_assert_uint_eq(l1->banks, 64);
    core_is(l1, 0, 0, 0, 1, 1);
    core_is(l1, 1, 1, 0, 2, 1);
    core_is(l1, 4, 4, 0, 6, 1);
    core_is(l1, 8, 0, 1, 1, 2);
    core_is(l1, 40, 0, 5, 1, 7);
    core_is(l1, 63, 7, 7, 9, 9);
    const memd_bank_group_spec *dram = &memd_device_spec_of(d)->groups[MEMD_KIND_DRAM];
    core_is(dram, 0, 0, 0, 0, 0);
    core_is(dram, 4, 4, 0, 5, 0);
    core_is(dram, 11, 11, 0, 5, 5);
    memd_device_destroy(d);
    memd_device_spec_free(&spec);
}
END_TEST

START_TEST(grayskull_storage_cores)
{
    memd_device_spec spec;
    memd_device *d = load("grayskull_120", "E150", &spec);
    const memd_bank_group_spec *l1 = &memd_device_spec_of(d)->groups[MEMD_KIND_SRAM];
    ck_assert_uint_eq(l1->banks, 128);
    core_is(l1, 0, 0, 0, 1, 1);
    core_is(l1, 11, 11, 0, 12, 1);
    core_is(l1, 107, 11, 8, 12, 10);
    core_is(l1, 108, 1, 9, 2, 11); /* both banks of storage core [1, -1] */
    core_is(l1, 109, 1, 9, 2, 11);
    core_is(l1, 127, 11, 9, 12, 11);
    /* Per bank on one storage core's two banks: independent addresses in one core. */
    uint32_t set[] = {108, 109};
    memd_alloc_req r = {.cls = MEMD_CLASS_CONSTANT, .scope = MEMD_SCOPE_SRAM, .bytes = 4096,
                        .bank_set = set, .nbank_set = 2, .per_bank = true};
    memd_placement p;
    ck_assert_int_eq(memd_device_alloc(d, &r, &p), 0);
    ck_assert_uint_eq(p.nset, 2);
    memd_placement_fini(&p);
    memd_device_destroy(d);
    memd_device_spec_free(&spec);
}
END_TEST

/* Bank ids of the cores of grid [x0, x1] x [y0, y1] (by their cores, not by formula). */
static uint32_t grid(const memd_bank_group_spec *g, int x0, int x1, int y0, int y1, uint32_t *ids)
{
    uint32_t n = 0;
    for (uint32_t b = 0; b < g->banks; b++)
        if (g->cores[b].logical_x >= x0 && g->cores[b].logical_x <= x1 &&
            g->cores[b].logical_y >= y0 && g->cores[b].logical_y <= y1)
            ids[n++] = b;
    return n;
}

static bool in(const uint32_t *ids, uint32_t n, uint32_t b)
{
    for (uint32_t i = 0; i < n; i++)
        if (ids[i] == b)
            return true;
    return false;
}

/* A height-sharded tensor per core on rows 0-3, a block-sharded one in range lockstep
 * on cores (2..5, 2..5), interleaved buffers beside them; every bank's map stays valid
 * and only the grids' banks hold the shards. */
/* tt-metal's default: the shuffled ids (hand values in the header, from C++ itself). */
START_TEST(wormhole_default_remap)
{
    uint32_t got[64];
    memd_ttmetal_default_remap(got, 64);
    for (int i = 0; i < 64; i++)
        ck_assert_uint_eq(got[i], memd_test_galaxy_l1_ids[i]);
    memd_device_spec spec;
    memd_device *d = load_remap("wormhole_b0_80", "galaxy", MEMD_TTMETAL_REMAP_DEFAULT, NULL, 0,
                                &spec);
    const memd_bank_group_spec *l1 = &memd_device_spec_of(d)->groups[MEMD_KIND_SRAM];
    core_is(l1, 0, 1, 4, 2, 5);
    core_is(l1, 63, 1, 0, 2, 1);
    core_is(l1, 34, 0, 0, 1, 1);
    core_is(l1, 5, 7, 3, 9, 4);
    core_is(l1, 28, 7, 7, 9, 9);
    memd_device_destroy(d);
    memd_device_spec_free(&spec);
}
END_TEST

START_TEST(grayskull_default_remap)
{
    uint32_t got[128];
    memd_ttmetal_default_remap(got, 128);
    ck_assert_uint_eq(got[0], 81);
    ck_assert_uint_eq(got[33], 0);
    ck_assert_uint_eq(got[85], 1);
    ck_assert_uint_eq(got[127], 65);
    /* Small sizes, both shuffle paths' first steps (n = 2: one swap; 3: one pair). */
    uint32_t two[2], three[3], eight[8];
    memd_ttmetal_default_remap(two, 2);
    memd_ttmetal_default_remap(three, 3);
    memd_ttmetal_default_remap(eight, 8);
    ck_assert(two[0] == 1 && two[1] == 0);
    ck_assert(three[0] == 2 && three[1] == 0 && three[2] == 1);
    static const uint32_t e[8] = {2, 7, 1, 6, 5, 0, 4, 3};
    for (int i = 0; i < 8; i++)
        ck_assert_uint_eq(eight[i], e[i]);
    memd_device_spec spec;
    memd_device *d = load_remap("grayskull_120", "E150", MEMD_TTMETAL_REMAP_DEFAULT, NULL, 0,
                                &spec);
    const memd_bank_group_spec *l1 = &memd_device_spec_of(d)->groups[MEMD_KIND_SRAM];
    core_is(l1, 0, 9, 2, 10, 3);
    core_is(l1, 1, 1, 7, 2, 9);
    core_is(l1, 13, 1, 9, 2, 11); /* storage core (1, 9): its lower bank ... */
    core_is(l1, 120, 1, 9, 2, 11); /* ... and its upper one */
    core_is(l1, 18, 11, 9, 12, 11);
    core_is(l1, 65, 11, 9, 12, 11);
    ck_assert_int_eq(l1->bank_offsets[13], 0);
    ck_assert_int_eq(l1->bank_offsets[120], 512 * 1024);
    ck_assert_int_eq(l1->bank_offsets[0], 512 * 1024); /* a compute core: the top 512 KiB */
    memd_device_destroy(d);
    memd_device_spec_free(&spec);
}
END_TEST

/* A tt-metal built against libc++ (tt_metal.l1_bank_remap: libc++): LLVM's shuffle
 * (soc/ttmetal_remap_libcxx.c). The vectors below were printed by libc++ 14 itself
 * (Debian 12's libc++-14-dev), not by memd: tests/unit/ttmetal_shuffle_ref.cpp built with
 * `clang++ -std=c++17 -stdlib=libc++` and run as
 * `ttmetal_shuffle_ref 64 56 128 124 94 92 126`, the L1 bank counts of the Wormhole
 * (galaxy / nebula_x1; nebula_x2) and Grayskull (E150/1, E150/2, E75/1, E75/2) grids, and
 * of Blackhole's (tt-metal's blackhole_140_arch.yaml: compute grid [0, 0]-[13, 8], no
 * storage cores; that descriptor is not in ../shared/data). memd was compared with the
 * same tool for every n from 1 to 2048 and more (ttmetal_shuffle_memd.c); these keep
 * the result. */
static const uint32_t libcxx_64[64] = {
    14, 34, 7, 63, 52, 39, 22, 31, 10, 43, 56, 53, 24, 11, 16, 55, 30, 2, 13, 51, 23, 9, 41, 6,
    50, 29, 45, 18, 12, 32, 25, 3, 27, 54, 44, 19, 35, 21, 40, 33, 48, 61, 1, 49, 47, 42, 58,
    17, 5, 26, 0, 37, 28, 59, 38, 46, 20, 36, 62, 8, 57, 60, 4, 15};
static const uint32_t libcxx_56[56] = {
    14, 34, 7, 51, 38, 21, 30, 9, 42, 55, 52, 23, 10, 15, 54, 29, 6, 12, 50, 22, 8, 40, 5, 49,
    28, 44, 17, 18, 27, 32, 20, 33, 13, 0, 2, 45, 26, 36, 25, 41, 1, 53, 39, 3, 19, 11, 48, 16,
    43, 46, 37, 4, 47, 24, 31, 35};
static const uint32_t libcxx_128[128] = {
    14, 98, 71, 127, 116, 39, 86, 95, 74, 43, 120, 53, 88, 11, 16, 55, 65, 31, 96, 118, 4, 24,
    108, 79, 107, 82, 44, 13, 32, 112, 56, 92, 87, 119, 37, 23, 102, 69, 59, 17, 25, 57, 121,
    49, 78, 60, 8, 15, 68, 51, 30, 6, 54, 0, 5, 46, 84, 47, 58, 73, 94, 76, 26, 122, 9, 66, 38,
    62, 61, 83, 33, 104, 90, 41, 42, 22, 1, 48, 109, 97, 114, 115, 100, 111, 29, 10, 27, 101,
    85, 28, 124, 105, 21, 113, 117, 12, 93, 75, 50, 19, 123, 70, 91, 63, 40, 36, 125, 20, 45, 7,
    18, 64, 80, 81, 110, 72, 35, 126, 103, 77, 34, 99, 2, 106, 52, 3, 89, 67};
static const uint32_t libcxx_124[124] = {
    14, 98, 71, 115, 38, 85, 94, 73, 42, 119, 52, 87, 10, 15, 54, 64, 30, 95, 117, 3, 23, 107,
    78, 106, 81, 43, 12, 31, 111, 55, 91, 86, 118, 36, 22, 101, 68, 58, 16, 24, 56, 120, 48, 77,
    59, 7, 0, 67, 50, 29, 5, 53, 13, 4, 45, 83, 46, 57, 72, 93, 75, 21, 123, 79, 62, 11, 47, 74,
    63, 25, 84, 41, 105, 51, 60, 122, 109, 99, 69, 110, 1, 19, 116, 35, 112, 113, 121, 66, 102,
    27, 88, 37, 61, 92, 114, 32, 20, 65, 39, 33, 6, 2, 49, 96, 26, 40, 80, 82, 9, 70, 104, 89,
    100, 103, 8, 44, 18, 97, 76, 90, 28, 17, 108, 34};
static const uint32_t libcxx_94[94] = {
    14, 70, 36, 83, 92, 71, 40, 49, 84, 7, 12, 51, 61, 27, 4, 18, 72, 74, 2, 45, 24, 47, 3, 78,
    13, 69, 0, 59, 9, 82, 16, 21, 31, 39, 68, 50, 64, 15, 46, 66, 60, 43, 73, 28, 79, 5, 48, 20,
    77, 65, 88, 1, 80, 11, 76, 55, 22, 26, 30, 93, 75, 38, 89, 85, 41, 58, 10, 6, 29, 86, 19,
    62, 42, 35, 67, 32, 23, 44, 52, 91, 57, 8, 63, 56, 37, 17, 90, 53, 54, 33, 87, 81, 34, 25};
static const uint32_t libcxx_92[92] = {
    14, 70, 36, 83, 1, 39, 48, 3, 6, 11, 50, 60, 26, 91, 17, 71, 73, 35, 44, 23, 46, 82, 77, 12,
    68, 13, 58, 8, 81, 15, 20, 30, 38, 67, 49, 63, 0, 45, 65, 59, 42, 72, 27, 78, 4, 47, 19, 76,
    64, 87, 69, 79, 10, 75, 54, 21, 25, 29, 16, 53, 34, 7, 2, 18, 5, 31, 80, 84, 52, 9, 57, 86,
    32, 56, 37, 22, 43, 89, 90, 55, 61, 28, 62, 41, 88, 24, 74, 40, 85, 51, 66, 33};
static const uint32_t libcxx_126[126] = {
    14, 98, 71, 115, 38, 85, 94, 73, 42, 119, 52, 87, 10, 15, 54, 64, 30, 95, 117, 3, 23, 107,
    78, 106, 81, 43, 12, 31, 111, 55, 91, 86, 118, 36, 22, 101, 68, 58, 16, 24, 56, 120, 48, 77,
    59, 7, 0, 67, 50, 29, 5, 53, 13, 4, 45, 83, 46, 57, 72, 93, 75, 25, 121, 8, 65, 37, 61, 60,
    82, 32, 103, 89, 40, 41, 21, 97, 47, 108, 96, 113, 114, 99, 110, 28, 9, 26, 100, 84, 27,
    123, 104, 20, 112, 116, 90, 63, 79, 66, 92, 69, 2, 11, 105, 122, 88, 102, 125, 44, 18, 17,
    34, 124, 70, 19, 74, 80, 51, 39, 35, 49, 76, 1, 6, 109, 62, 33};

static const struct {
    uint32_t n;
    const uint32_t *ids;
} libcxx_grids[] = {{64, libcxx_64},   {56, libcxx_56}, {128, libcxx_128}, {124, libcxx_124},
                    {94, libcxx_94},   {92, libcxx_92}, {126, libcxx_126}};

START_TEST(libcxx_remap_vectors)
{
    uint32_t got[128];
    for (size_t g = 0; g < sizeof libcxx_grids / sizeof *libcxx_grids; g++) {
        memd_ttmetal_libcxx_remap(got, libcxx_grids[g].n);
        for (uint32_t i = 0; i < libcxx_grids[g].n; i++)
            ck_assert_msg(got[i] == libcxx_grids[g].ids[i], "n = %u, position %u: %u, libc++ %u",
                          libcxx_grids[g].n, i, got[i], libcxx_grids[g].ids[i]);
    }
    /* Small sizes (libc++ 14 too): n = 1 draws nothing; n = 2 draws 0, so no swap, where
     * libstdc++ swaps; libc++'s n = 8 also differs from libstdc++'s {2, 7, 1, 6, ...}. */
    memd_ttmetal_libcxx_remap(got, 1);
    ck_assert_uint_eq(got[0], 0);
    memd_ttmetal_libcxx_remap(got, 2);
    ck_assert(got[0] == 0 && got[1] == 1);
    memd_ttmetal_libcxx_remap(got, 3);
    ck_assert(got[0] == 2 && got[1] == 0 && got[2] == 1);
    static const uint32_t e[8] = {6, 2, 7, 1, 4, 3, 0, 5};
    memd_ttmetal_libcxx_remap(got, 8);
    for (int i = 0; i < 8; i++)
        ck_assert_uint_eq(got[i], e[i]);
}
END_TEST

/* The device side: bank id libcxx_N[i] is the core at scan position i. Wormhole galaxy:
 * bank 0 is position 50 = logical (2, 6), NOC (3, 8); bank 14 position 0; bank 15 the
 * last. Grayskull E150: storage core (1, 9) (positions 108, 109) is banks 45 (lower, L1
 * offset 0) and 7 (upper); (11, 9) is banks 89 and 67; bank 0 is position 53 = (5, 4). */
START_TEST(libcxx_remap_devices)
{
    memd_device_spec spec;
    memd_device *d = load_remap("wormhole_b0_80", "galaxy", MEMD_TTMETAL_REMAP_LIBCXX, NULL, 0,
                                &spec);
    const memd_bank_group_spec *l1 = &memd_device_spec_of(d)->groups[MEMD_KIND_SRAM];
    ck_assert_uint_eq(l1->banks, 64);
    for (int i = 0; i < 64; i++) {
        int x = i % 8, y = i / 8; /* scan position i; NOC as worked out at the top */
        core_is(l1, libcxx_64[i], x, y, x < 4 ? x + 1 : x + 2, y < 5 ? y + 1 : y + 2);
    }
    core_is(l1, 0, 2, 6, 3, 8);
    core_is(l1, 14, 0, 0, 1, 1);
    core_is(l1, 15, 7, 7, 9, 9);
    memd_device_destroy(d);
    memd_device_spec_free(&spec);
    d = load_remap("grayskull_120", "E150", MEMD_TTMETAL_REMAP_LIBCXX, NULL, 0, &spec);
    l1 = &memd_device_spec_of(d)->groups[MEMD_KIND_SRAM];
    ck_assert_uint_eq(l1->banks, 128);
    core_is(l1, 0, 5, 4, 6, 5);
    core_is(l1, 45, 1, 9, 2, 11);
    core_is(l1, 7, 1, 9, 2, 11);
    core_is(l1, 89, 11, 9, 12, 11);
    core_is(l1, 67, 11, 9, 12, 11);
    ck_assert_int_eq(l1->bank_offsets[45], 0);
    ck_assert_int_eq(l1->bank_offsets[7], 512 * 1024);
    memd_device_destroy(d);
    memd_device_spec_free(&spec);
}
END_TEST

/* The scan is row by row over the whole grid: E75's storage cores (11, y) sit at the end
 * of their rows, between compute rows. And a runtime's own remap list. */
START_TEST(scan_order_and_given_remap)
{
    memd_device_spec spec;
    memd_device *d = load("grayskull_120", "E75", &spec);
    const memd_bank_group_spec *l1 = &memd_device_spec_of(d)->groups[MEMD_KIND_SRAM];
    ck_assert_uint_eq(l1->banks, 88 + 6); /* 11 x 8 compute, 6 storage cores of 1 bank */
    ck_assert_uint_eq(l1->cores[10].logical_x, 10);
    ck_assert_uint_eq(l1->cores[10].logical_y, 0);
    ck_assert_uint_eq(l1->cores[22].logical_x, 11); /* storage (11, 1) ends row 1 */
    ck_assert_uint_eq(l1->cores[22].logical_y, 1);
    ck_assert_uint_eq(l1->cores[23].logical_x, 0);
    ck_assert_uint_eq(l1->cores[23].logical_y, 2);
    ck_assert_uint_eq(l1->cores[93].logical_x, 11); /* (11, 7) last */
    ck_assert_uint_eq(l1->cores[93].logical_y, 7);
    memd_device_destroy(d);
    memd_device_spec_free(&spec);
    /* Reversed ids: scan position 0, core (0, 0), is bank 63. */
    uint32_t rev[64];
    for (uint32_t i = 0; i < 64; i++)
        rev[i] = 63 - i;
    d = load_remap("wormhole_b0_80", "galaxy", MEMD_TTMETAL_REMAP_LIST, rev, 64, &spec);
    l1 = &memd_device_spec_of(d)->groups[MEMD_KIND_SRAM];
    core_is(l1, 63, 0, 0, 1, 1);
    core_is(l1, 0, 7, 7, 9, 9);
    memd_device_destroy(d);
    memd_device_spec_free(&spec);
    /* A list that is not a permutation of the 64 banks is refused, with the reason. */
    char sn[] = "soc_wormhole_b0_80_arch.yaml", cn[] = "core_wormhole_b0_80_arch.yaml";
    size_t sl, cl;
    char *sb = slurp(sn, &sl), *cb = slurp(cn, &cl);
    memd_error err;
    rev[5] = rev[6];
    memd_ttmetal_opts o = {.product = "galaxy", .hw_cqs = 1, .sram_reserved = 160 * 1024,
                           .remap = MEMD_TTMETAL_REMAP_LIST, .remap_list = rev, .nremap = 64};
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(memd_ttmetal_device(sn, sb, sl, cn, cb, cl, &o, &spec, &err), -EINVAL);
    ck_assert_msg(strstr(err.msg, "entry 6 (57) is given twice"), "%s", err.msg);
    o.nremap = 63;
    ck_assert_int_eq(memd_ttmetal_device(sn, sb, sl, cn, cb, cl, &o, &spec, &err), -EINVAL);
    ck_assert_msg(strstr(err.msg, "has 63 bank ids; this device has 64"), "%s", err.msg);
    free(sb);
    free(cb);
}
END_TEST

START_TEST(wormhole_shard_grids)
{
    memd_device_spec spec;
    memd_device *d = load("wormhole_b0_80", "galaxy", &spec);
    const memd_bank_group_spec *l1 = &memd_device_spec_of(d)->groups[MEMD_KIND_SRAM];
    uint8_t reg = (uint8_t)memd_region_find(l1, "buffers");
    uint32_t rows[64], block[64];
    uint32_t nrows = grid(l1, 0, 7, 0, 3, rows), nblock = grid(l1, 2, 5, 2, 5, block);
    ck_assert_uint_eq(nrows, 32);
    ck_assert_uint_eq(nblock, 16);

    memd_alloc_req il = {.cls = MEMD_CLASS_CONSTANT, .scope = MEMD_SCOPE_SRAM,
                         .bytes = 64 * 2048, .page_size = 2048};
    memd_placement a, b, c, e;
    ck_assert_int_eq(memd_device_alloc(d, &il, &a), 0); /* interleaved: 1 page per bank */
    /* Height sharded: 32 shards of 32 x 1024 bf16 = 64 KiB, one per core. */
    memd_alloc_req hs = {.cls = MEMD_CLASS_CONSTANT, .scope = MEMD_SCOPE_SRAM,
                         .bytes = 32ull * 65536, .page_size = 65536, .bank_set = rows,
                         .nbank_set = nrows, .per_bank = true};
    ck_assert_int_eq(memd_device_alloc(d, &hs, &b), 0);
    ck_assert_uint_eq(b.size_per_bank, 65536);
    /* Block sharded in range lockstep: one address on the 16 cores. */
    memd_alloc_req bs = {.cls = MEMD_CLASS_CONSTANT, .scope = MEMD_SCOPE_SRAM,
                         .bytes = 16ull * 131072, .page_size = 131072, .bank_set = block,
                         .nbank_set = nblock};
    ck_assert_int_eq(memd_device_alloc(d, &bs, &c), 0);
    ck_assert_int_eq(c.mode, MEMD_BANKS_RANGE);
    ck_assert_uint_eq(c.size_per_bank, 131072);
    /* Rows 2-3 of the block hold the height shard too: the range goes below it there,
     * so also below it in rows 4-5, where that space stays free. */
    uint64_t hs_addr;
    ck_assert_int_eq(memd_placement_bank_addr(&b, block[0], &hs_addr), 0);
    ck_assert_uint_le(c.address + c.size_per_bank, hs_addr);
    ck_assert_int_eq(memd_device_alloc(d, &il, &e), 0); /* interleaved under everything */
    ck_assert_uint_le(e.address + e.size_per_bank, c.address);
    ck_assert_int_eq(memd_device_check(d), 0);
    for (uint32_t bank = 0; bank < 64; bank++) {
        memd_range_stats st;
        ck_assert_int_eq(memd_device_bank_stats(d, MEMD_KIND_SRAM, reg, bank, &st), 0);
        uint64_t want = 2 * a.size_per_bank + (in(rows, nrows, bank) ? 65536 : 0) +
                        (in(block, nblock, bank) ? 131072 : 0);
        ck_assert_msg(st.allocated == want, "bank %u: %llu allocated, expected %llu", bank,
                      (unsigned long long)st.allocated, (unsigned long long)want);
    }
    /* One core full: per-core shards on its row fail naming it, by its bank id. */
    uint32_t one = rows[5];
    memd_range_stats st;
    memd_placement x[8], y;
    int nx = 0;
    for (;;) { /* every free block of that core taken */
        memd_device_bank_stats(d, MEMD_KIND_SRAM, reg, one, &st);
        if (st.largest_free == 0)
            break;
        ck_assert_int_lt(nx, 8);
        memd_alloc_req fill = {.cls = MEMD_CLASS_CONSTANT, .scope = MEMD_SCOPE_SRAM,
                               .bytes = st.largest_free, .bank_set = &one, .nbank_set = 1};
        ck_assert_int_eq(memd_device_alloc(d, &fill, &x[nx++]), 0);
    }
    hs.bytes = 32ull * 1024;
    hs.page_size = 1024;
    ck_assert_int_eq(memd_device_alloc(d, &hs, &y), -ENOMEM);
    ck_assert_uint_eq(memd_device_oom_bank(d), one);
    memd_placement *all[] = {&a, &b, &c, &e};
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(memd_device_release(d, all[i]), 0);
        memd_placement_fini(all[i]);
    }
    for (int i = 0; i < nx; i++) {
        ck_assert_int_eq(memd_device_release(d, &x[i]), 0);
        memd_placement_fini(&x[i]);
    }
    for (uint32_t bank = 0; bank < 64; bank++) {
        memd_device_bank_stats(d, MEMD_KIND_SRAM, reg, bank, &st);
        ck_assert_uint_eq(st.allocations, 0);
    }
    memd_device_destroy(d);
    memd_device_spec_free(&spec);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("banks-ttmetal");
    TCase *t = tcase_create("ttmetal");
    tcase_add_test(t, wormhole_bank_ids_and_cores);
    tcase_add_test(t, grayskull_storage_cores);
    tcase_add_test(t, wormhole_shard_grids);
    tcase_add_test(t, wormhole_default_remap);
    tcase_add_test(t, grayskull_default_remap);
    tcase_add_test(t, scan_order_and_given_remap);
    tcase_add_test(t, libcxx_remap_vectors);
    tcase_add_test(t, libcxx_remap_devices);
    suite_add_tcase(s, t);
    return s;
}

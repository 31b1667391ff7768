/* tt-metal SoC + core descriptor pairs -> bank groups. The exact numbers below are worked
 * out by hand from ../shared/data/soc/tt-metal/ (MEMD_SHARED_DATA):
 *
 * soc_wormhole_b0_80_arch.yaml: 12 `dram` entries, dram_bank_size 1073741824,
 *   dram_address_offsets 0, 1 GiB alternating, worker_l1_size 1499136 (1464 KiB).
 * core_wormhole_b0_80_arch.yaml: no l1_bank_size, storage_cores empty everywhere;
 *   galaxy/1, galaxy/2, nebula_x1/1, nebula_x1/2: grid [0,0]..[7,7] = 64 cores;
 *   nebula_x2/1, nebula_x2/2: [0,0]..[7,6] = 56 cores.
 *   L1 bank = 1499136 - reserved; reserved 160 KiB -> 1335296, every bank at offset 163840.
 * soc_grayskull_120_arch.yaml: 8 `dram` entries, 1 GiB, offsets all 0, worker_l1 1048576.
 * core_grayskull_120_arch.yaml:
 *   E150/1: grid [0,0]..[11,8] = 108 cores, 10 storage cores, l1_bank_size 524288:
 *           1048576 / 524288 = 2 banks per storage core -> 108 + 20 = 128 banks of 512 KiB
 *   E150/2: 108 + 8 * 2 = 124
 *   E75/1:  grid [0,0]..[10,7] = 88 cores, 6 storage cores, l1_bank_size 1048576:
 *           1 bank each -> 94 banks of 1 MiB
 *   E75/2:  88 + 4 = 92 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "config.h"
#include "test_run.h"
#include "ttmetal.h"

#define KiB 1024ull
#define MiB (1024ull * KiB)
#define GiB (1024ull * MiB)

static char *shared_path(const char *name)
{
    const char *dir = getenv("MEMD_SHARED_DATA");
    if (!dir)
        return NULL;
    char *p = malloc(4096);
    snprintf(p, 4096, "%s/soc/tt-metal/%s", dir, name);
    return p;
}

static char *slurp(const char *path, size_t *len)
{
    char *b = memd_test_slurp(path, len);
    ck_assert_msg(b != NULL, "cannot open %s", path);
    return b;
}

typedef struct pair {
    char *soc_path, *core_path, *soc, *core;
    size_t soc_len, core_len;
} pair;

static void pair_open(pair *p, const char *arch)
{
    char name[128];
    snprintf(name, sizeof(name), "soc_%s_arch.yaml", arch);
    p->soc_path = shared_path(name);
    snprintf(name, sizeof(name), "core_%s_arch.yaml", arch);
    p->core_path = shared_path(name);
    ck_assert_ptr_nonnull(p->soc_path);
    p->soc = slurp(p->soc_path, &p->soc_len);
    p->core = slurp(p->core_path, &p->core_len);
}

static void pair_close(pair *p)
{
    free(p->soc_path);
    free(p->core_path);
    free(p->soc);
    free(p->core);
}

/* memd_ttmetal_device with memd.yaml's required options; a device it builds is valid. */
static int load(const char *soc_file, const char *soc, size_t soc_len, const char *core_file,
                const char *core, size_t core_len, const char *product, uint32_t cqs,
                uint64_t reserved, memd_device_spec *s, char *msg, size_t cap)
{
    memd_error err;
    memset(&err, 0, sizeof(err));
    /* Bank ids in scan order: these tests check the geometry (the default shuffle of ids
     * is test_banks_ttmetal.c's). */
    memd_ttmetal_opts o = {.product = product, .hw_cqs = cqs, .sram_reserved = reserved,
                           .remap = MEMD_TTMETAL_REMAP_IDENTITY};
    int rc = memd_ttmetal_device(soc_file, soc, soc_len, core_file, core, core_len, &o, s, &err);
    msg[0] = '\0';
    if (rc)
        memd_error_format(&err, msg, cap);
    else
        ck_assert_msg(memd_device_spec_validate(s, &err) == 0, "%s", err.msg);
    return rc;
}

static int load_pair(const pair *p, const char *product, uint32_t cqs, uint64_t reserved,
                     memd_device_spec *s, char *msg, size_t cap)
{
    return load(p->soc_path, p->soc, p->soc_len, p->core_path, p->core, p->core_len, product, cqs,
                reserved, s, msg, cap);
}

/* load_pair succeeds (else the test fails with its message). */
static void load_pair_ok(const pair *p, const char *product, uint32_t cqs, uint64_t reserved,
                         memd_device_spec *s)
{
    char msg[1024];
    int rc = load_pair(p, product, cqs, reserved, s, msg, sizeof(msg));
    ck_assert_msg(rc == 0, "%s", msg);
}

/* Parses p's SoC file into *soc: arch, banks DRAM banks of 1 GiB each (the odd ones at
 * offset odd_offset, the even ones at 0) and a worker L1 of l1 bytes. */
static void parse_soc_ok(const pair *p, memd_ttmetal_soc *soc, const char *arch,
                         uint32_t banks, int64_t odd_offset, uint64_t l1)
{
    memd_error err;
    ck_assert_int_eq(memd_ttmetal_parse_soc(p->soc_path, p->soc, p->soc_len, soc, &err), 0);
    ck_assert_str_eq(soc->arch, arch);
    ck_assert_uint_eq(soc->dram_banks, banks);
    ck_assert_uint_eq(soc->dram_bank_size, 1073741824ull);
    for (uint32_t i = 0; i < banks; i++)
        ck_assert_int_eq(soc->dram_offsets[i], (i % 2) ? odd_offset : 0);
    ck_assert_uint_eq(soc->worker_l1_size, l1);
}

START_TEST(test_wormhole_soc)
{
    pair p;
    pair_open(&p, "wormhole_b0_80");
    memd_ttmetal_soc soc;
    parse_soc_ok(&p, &soc, "wormhole_b0", 12, 1073741824ll, 1499136);
    memd_ttmetal_soc_free(&soc);
    pair_close(&p);
}
END_TEST

static const struct {
    const char *product;
    uint32_t cqs, cores;
} wh_cores[] = {
    {"galaxy", 1, 64}, {"galaxy", 2, 64}, {"nebula_x1", 1, 64},
    {"nebula_x1", 2, 64}, {"nebula_x2", 1, 56}, {"nebula_x2", 2, 56},
};

START_TEST(test_wormhole_l1)
{
    pair p;
    pair_open(&p, "wormhole_b0_80");
    memd_device_spec s;
    load_pair_ok(&p, wh_cores[_i].product, wh_cores[_i].cqs, 160 * KiB, &s);
    const memd_bank_group_spec *d = &s.groups[MEMD_KIND_DRAM], *l = &s.groups[MEMD_KIND_SRAM];
    ck_assert_uint_eq(d->banks, 12);
    ck_assert_uint_eq(d->bank_size, 1073741824ull);
    ck_assert_int_eq(d->bank_offsets[1], 1073741824ll);
    ck_assert_uint_eq(d->nregions, 1);
    ck_assert_str_eq(d->regions[0].name, "data");
    ck_assert_uint_eq(d->regions[0].size, 1073741824ull);
    ck_assert_uint_eq(l->banks, wh_cores[_i].cores);
    ck_assert_uint_eq(l->bank_size, 1499136 - 163840);
    ck_assert_uint_eq(l->bank_size, 1335296);
    for (uint32_t b = 0; b < l->banks; b++)
        ck_assert_int_eq(l->bank_offsets[b], 163840);
    /* the reserved L1 lies below every bank: the bank is all buffers */
    ck_assert_uint_eq(l->nregions, 1);
    ck_assert_str_eq(l->regions[0].name, "buffers");
    ck_assert_uint_eq(l->regions[0].base, 0);
    ck_assert_uint_eq(l->regions[0].size, 1335296);
    ck_assert_uint_eq(l->alignment, 16);
    ck_assert_uint_eq(d->alignment, 32);
    char want[64];
    snprintf(want, sizeof(want), "wormhole_b0-%s", wh_cores[_i].product);
    ck_assert_str_eq(s.name, want);
    ck_assert_str_eq(s.arch, "wormhole_b0");
    memd_device *dev = NULL;
    memd_error err = {0};
    ck_assert_int_eq(memd_device_create(&s, &dev, &err), 0);
    /* an SRAM buffer of 64 pages over all banks: one page per bank, top-down */
    memd_alloc_req r = {.cls = MEMD_CLASS_INTERNAL, .scope = MEMD_SCOPE_SRAM,
                        .bytes = 64 * 2048, .page_size = 2048};
    memd_placement pl;
    ck_assert_int_eq(memd_device_alloc(dev, &r, &pl), 0);
    ck_assert_uint_eq(pl.size_per_bank, wh_cores[_i].cores == 64 ? 2048 : 4096);
    ck_assert_uint_eq(pl.address, 1335296 - pl.size_per_bank);
    uint64_t abs;
    ck_assert_int_eq(memd_device_bank_address(dev, MEMD_KIND_SRAM, 0, pl.address, &abs), 0);
    ck_assert_uint_eq(abs, 1499136 - pl.size_per_bank); /* the top of the core's L1 */
    memd_device_destroy(dev);
    memd_device_spec_free(&s);
    pair_close(&p);
}
END_TEST

static const struct {
    const char *product;
    uint32_t cqs, compute, storage, banks;
    uint64_t bank;
} gs_cores[] = {
    {"E150", 1, 108, 10, 128, 524288},
    {"E150", 2, 108, 8, 124, 524288},
    {"E75", 1, 88, 6, 94, 1048576},
    {"E75", 2, 88, 4, 92, 1048576},
};

START_TEST(test_grayskull)
{
    pair p;
    pair_open(&p, "grayskull_120");
    memd_ttmetal_soc soc;
    memd_ttmetal_core core;
    memd_error err;
    parse_soc_ok(&p, &soc, "grayskull", 8, 0, 1048576);
    ck_assert_int_eq(memd_ttmetal_parse_core(p.core_path, p.core, p.core_len, gs_cores[_i].product,
                                             gs_cores[_i].cqs, soc.worker_l1_size, &core, &err), 0);
    ck_assert_uint_eq(core.compute_cores, gs_cores[_i].compute);
    ck_assert_uint_eq(core.storage_cores, gs_cores[_i].storage);
    ck_assert_uint_eq(core.l1_bank_size, gs_cores[_i].bank);
    memd_ttmetal_soc_free(&soc);

    memd_device_spec s;
    load_pair_ok(&p, gs_cores[_i].product, gs_cores[_i].cqs, 128 * KiB, &s);
    const memd_bank_group_spec *d = &s.groups[MEMD_KIND_DRAM], *l = &s.groups[MEMD_KIND_SRAM];
    ck_assert_uint_eq(d->banks, 8);
    ck_assert_uint_eq(d->bank_size, GiB);
    ck_assert_uint_eq(l->banks, gs_cores[_i].banks);
    ck_assert_uint_eq(l->bank_size, gs_cores[_i].bank);
    /* compute banks sit at the top of L1; storage core bank j (the j-th of its core, in
     * scan order) at j * bank, as tt-metal's allocator puts them. A core with one bank
     * is a compute core (or a storage core of one bank: offset 0 = 1 MiB - bank too). */
    for (uint32_t b = 0; b < l->banks; b++) {
        uint32_t same = 0, j = 0;
        for (uint32_t k = 0; k < l->banks; k++)
            if (l->cores[k].logical_x == l->cores[b].logical_x &&
                l->cores[k].logical_y == l->cores[b].logical_y) {
                same++;
                j += k < b;
            }
        int64_t want = same == 1 ? (int64_t)(1048576 - gs_cores[_i].bank)
                                 : (int64_t)j * (int64_t)gs_cores[_i].bank;
        ck_assert_msg(l->bank_offsets[b] == want, "bank %u offset %lld", b, (long long)l->bank_offsets[b]);
    }
    /* some bank starts at L1 address 0, so the 128 KiB of firmware are reserved in all */
    ck_assert_uint_eq(l->nregions, 2);
    ck_assert_str_eq(l->regions[0].name, "reserved");
    ck_assert(!l->regions[0].allocatable);
    ck_assert_uint_eq(l->regions[0].size, 128 * KiB);
    ck_assert_str_eq(l->regions[1].name, "buffers");
    ck_assert_uint_eq(l->regions[1].base, 128 * KiB);
    ck_assert_uint_eq(l->regions[1].size, gs_cores[_i].bank - 128 * KiB);
    memd_device_spec_free(&s);

    /* reserved 0: no reserved region at all */
    load_pair_ok(&p, gs_cores[_i].product, gs_cores[_i].cqs, 0, &s);
    ck_assert_uint_eq(s.groups[MEMD_KIND_SRAM].nregions, 1);
    ck_assert_uint_eq(s.groups[MEMD_KIND_SRAM].regions[0].size, gs_cores[_i].bank);
    memd_device_spec_free(&s);
    pair_close(&p);
}
END_TEST

START_TEST(test_pair_errors)
{
    pair w, g;
    pair_open(&w, "wormhole_b0_80");
    pair_open(&g, "grayskull_120");
    memd_device_spec s;
    char msg[1024], want[2048];

    ck_assert_int_eq(load_pair(&w, "n150", 1, 160 * KiB, &s, msg, sizeof(msg)), -EINVAL);
    snprintf(want, sizeof(want), "%s:8:1: product 'n150' not found in the core descriptor (products: galaxy, nebula_x1, nebula_x2)",
             w.core_path);
    ck_assert_str_eq(msg, want);

    ck_assert_int_eq(load_pair(&w, "nebula_x1", 3, 160 * KiB, &s, msg, sizeof(msg)), -EINVAL);
    snprintf(want, sizeof(want), "%s:38:3: product 'nebula_x1' has no configuration for 3 hardware command queues (available: 1, 2)",
             w.core_path);
    ck_assert_str_eq(msg, want);

    /* no l1_bank_size: reserved must leave something of worker_l1_size */
    ck_assert_int_eq(load_pair(&w, "galaxy", 1, 1499136, &s, msg, sizeof(msg)), -EINVAL);
    ck_assert_msg(strstr(msg, "reserved size 1499136 leaves nothing of the 1499136-byte worker L1"), "%s", msg);
    ck_assert_int_eq(load_pair(&w, "galaxy", 1, 1499136 - 16, &s, msg, sizeof(msg)), 0);
    ck_assert_uint_eq(s.groups[MEMD_KIND_SRAM].bank_size, 16);
    memd_device_spec_free(&s);

    /* l1_bank_size given: reserved must leave room in the lowest bank */
    ck_assert_int_eq(load_pair(&g, "E150", 1, 512 * KiB, &s, msg, sizeof(msg)), -EINVAL);
    ck_assert_msg(strstr(msg, "reserved size 524288 covers the whole 524288-byte L1 bank"), "%s", msg);
    pair_close(&w);
    pair_close(&g);
}
END_TEST

/* ---- malformed tt-metal files (no shared data needed) ---- */

static const char MINI_SOC[] =
    "grid: {x_size: 2, y_size: 2}\n"          /* 1 */
    "dram: [[0-0], [1-0]]\n"                   /* 2 */
    "dram_address_offsets: [0, 0x100]\n"       /* 3 */
    "dram_bank_size: 4096\n"                   /* 4 */
    "worker_l1_size: 2048\n"                   /* 5 */
    "arch_name: MINI-ARCH\n"                   /* 6 */
    "features: {noc: {translation_id_enabled: True}}\n";

static const char MINI_CORE[] =
    "P:\n"                                     /* 1 */
    "  1:\n"                                   /* 2 */
    "    l1_bank_size: 512\n"                  /* 3 */
    "    compute_with_storage_grid_range: {start: [0, 0], end: [1, 2]}\n"
    "    storage_cores: [[2, -1], [3, -1]]\n"  /* 5 */
    "    dispatch_cores: [[0, -1]]\n"          /* 6 */
    "    dispatch_core_type: \"tensix\"\n";

static int load_mini(const char *soc, const char *core, uint64_t reserved, memd_device_spec *s,
                     char *msg, size_t cap)
{
    return load("soc.yaml", soc, strlen(soc), "core.yaml", core, strlen(core), "P", 1, reserved, s,
                msg, cap);
}

START_TEST(test_mini_pair)
{
    memd_device_spec s;
    char msg[1024];
    int rc = load_mini(MINI_SOC, MINI_CORE, 100, &s, msg, sizeof(msg));
    ck_assert_msg(rc == 0, "%s", msg);
    ck_assert_str_eq(s.name, "mini-arch-p");
    ck_assert_uint_eq(s.groups[0].banks, 2);
    ck_assert_uint_eq(s.groups[0].bank_size, 4096);
    ck_assert_int_eq(s.groups[0].bank_offsets[1], 0x100);
    /* 2 x 3 compute cores + 2 storage cores x (2048 / 512 = 4) banks */
    const memd_bank_group_spec *l = &s.groups[1];
    ck_assert_uint_eq(l->banks, 6 + 8);
    ck_assert_uint_eq(l->bank_size, 512);
    /* (no functional_workers: the storage cores' row is unknown, so they come last) */
    static const int64_t offs[] = {1536, 1536, 1536, 1536, 1536, 1536, 0, 512, 1024, 1536, 0, 512, 1024, 1536};
    for (int i = 0; i < 14; i++)
        ck_assert_int_eq(l->bank_offsets[i], offs[i]);
    ck_assert_uint_eq(l->regions[0].size, 100);
    ck_assert_uint_eq(l->regions[1].base, 100);
    memd_device_spec_free(&s);
}
END_TEST

static const struct {
    const char *soc, *core, *want;
} mini_bad[] = {
    {"dram: [[0-0]]\nworker_l1_size: 1\n", NULL, "soc.yaml:1:1: missing key 'dram_bank_size' in the SoC descriptor: expected the DRAM bank size in bytes"},
    {"dram_bank_size: 1\nworker_l1_size: 1\n", NULL, "soc.yaml:1:1: missing key 'dram' in the SoC descriptor"},
    {"dram: [[0-0]]\ndram_bank_size: 1\n", NULL, "soc.yaml:1:1: missing key 'worker_l1_size' in the SoC descriptor"},
    {"dram: []\n", NULL, "soc.yaml:1:7: expected at least one DRAM bank"},
    {"dram: 0-0\n", NULL, "soc.yaml:1:7: expected one entry per DRAM bank (a sequence), got a scalar"},
    {"dram: [[0-0], [1-0]]\ndram_address_offsets: [0]\ndram_bank_size: 1\nworker_l1_size: 1\n", NULL,
     "soc.yaml:2:23: expected 2 offsets (one per 'dram' entry), got 1"},
    {"dram: [[0-0]]\ndram_address_offsets: [1GiB]\ndram_bank_size: 1\nworker_l1_size: 1\n", NULL,
     "soc.yaml:2:24: expected an integer, got '1GiB'"},
    {"dram: [[0-0]]\ndram_bank_size: -1073741824\nworker_l1_size: 1\n", NULL,
     "soc.yaml:2:17: expected a non-negative integer, got '-1073741824'"},
    {"dram: [[0-0]]\ndram_bank_size: 18446744073709551616\nworker_l1_size: 1\n", NULL,
     "soc.yaml:2:17: integer '18446744073709551616' does not fit in 64 bits"},
    {"dram: [[0-0]]\ndram_bank_size: 0\nworker_l1_size: 1\n", NULL, "soc.yaml:2:17: expected a DRAM bank size > 0, got 0"},
    {"dram: [[0-0]]\ndram_bank_size: 1\nworker_l1_size: [1]\n", NULL, "soc.yaml:3:17: expected an integer, got a sequence"},
    {"dram: [[0-0]\ndram_bank_size: 1\n", NULL, "soc.yaml:2:1: invalid YAML: while parsing a flow sequence did not find expected ',' or ']'"},
    {NULL, "P:\n  1:\n    storage_cores: []\n", "core.yaml:3:5: missing key 'compute_with_storage_grid_range': expected {start: [x, y], end: [x, y]}"},
    {NULL, "P:\n  1:\n    compute_with_storage_grid_range: {start: [0, 0], end: [1, -1]}\n",
     "core.yaml:3:38: expected a grid range with 0 <= start <= end, got [0, 0] .. [1, -1]"},
    {NULL, "P:\n  1:\n    compute_with_storage_grid_range: {start: [0, 0], end: [1]}\n",
     "core.yaml:3:59: expected the grid's end as a core [x, y]"},
    {NULL, "P:\n  1:\n    compute_with_storage_grid_range: {start: [0, 0]}\n",
     "core.yaml:3:38: missing key 'end' in compute_with_storage_grid_range: expected [x, y]"},
    {NULL, "P:\n  1:\n    compute_with_storage_grid_range: {start: [0, 0], end: [0, 0]}\n    storage_cores: [[1, -1], [2, -1], [1, -1]]\n",
     "core.yaml:4:39: storage core [1, -1] is listed twice (first at line 4, column 21)"},
    {NULL, "P:\n  1:\n    compute_with_storage_grid_range: {start: [0, 0], end: [0, 0]}\n    storage_cores: [[1, x]]\n",
     "core.yaml:4:25: expected an integer, got 'x'"},
    {NULL, "P:\n  1:\n    compute_with_storage_grid_range: {start: [0, 0], end: [0, 0]}\n    l1_bank_size: 4096\n",
     "core.yaml:4:19: l1_bank_size 4096 is larger than the SoC's worker_l1_size 2048"},
    {NULL, "P:\n  1:\n    compute_with_storage_grid_range: {start: [0, 0], end: [0, 0]}\n    l1_bank_size: 0\n",
     "core.yaml:4:19: expected an L1 bank size > 0, got 0"},
    {"dram: [[0-0]]\ndram_bank_size: 1\nworker_l1_size: 18446744073709551615\n",
     "P:\n  1:\n    l1_bank_size: 1\n    compute_with_storage_grid_range: {start: [0, 0], end: [0, 0]}\n    storage_cores: [[1, 1], [2, 2]]\n",
     "core.yaml: 1 compute cores + 2 storage cores x 18446744073709551615 banks each: more than 65536 L1 banks"},
    {"dram: [[0-0]]\ndram_bank_size: 1\nworker_l1_size: 65536\n",
     "P:\n  1:\n    l1_bank_size: 1\n    compute_with_storage_grid_range: {start: [0, 0], end: [0, 0]}\n    storage_cores: [[1, 1]]\n",
     "core.yaml: 1 compute cores + 1 storage cores x 65536 banks each: more than 65536 L1 banks"},
    {NULL, "P: [1]\n", "core.yaml:1:4: expected hardware command queue counts (a mapping), got a sequence"},
    {NULL, "P:\n  1:\n    compute_with_storage_grid_range: {start: [0, 0], end: [300, 300]}\n",
     "core.yaml:3:38: 90601 compute cores, at most 65536 supported"},
};

START_TEST(test_mini_errors)
{
    memd_device_spec s;
    char msg[1024];
    const char *soc = mini_bad[_i].soc ? mini_bad[_i].soc : MINI_SOC;
    const char *core = mini_bad[_i].core ? mini_bad[_i].core : MINI_CORE;
    ck_assert_int_eq(load_mini(soc, core, 0, &s, msg, sizeof(msg)), -EINVAL);
    ck_assert_msg(strncmp(msg, mini_bad[_i].want, strlen(mini_bad[_i].want)) == 0, "case %d:\n got  '%s'\n want '%s'",
                  _i, msg, mini_bad[_i].want);
    ck_assert_ptr_null(s.groups[0].bank_offsets);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("soc-ttmetal");
    TCase *tc = tcase_create("mini");
    tcase_add_test(tc, test_mini_pair);
    tcase_add_loop_test(tc, test_mini_errors, 0, (int)(sizeof(mini_bad) / sizeof(mini_bad[0])));
    suite_add_tcase(s, tc);

    /* The real descriptor pairs live outside the repository; without them those cases
     * are not registered (rather than passing without checking anything). */
    char *probe = shared_path("core_grayskull_120_arch.yaml");
    if (!probe || access(probe, R_OK) != 0) {
        fprintf(stderr, "# skip: tt-metal descriptors not found (MEMD_SHARED_DATA=%s); "
                        "exact bank-count checks not run\n",
                getenv("MEMD_SHARED_DATA") ? getenv("MEMD_SHARED_DATA") : "(unset)");
    } else {
        TCase *real = tcase_create("tt-metal");
        tcase_add_test(real, test_wormhole_soc);
        tcase_add_loop_test(real, test_wormhole_l1, 0, (int)(sizeof(wh_cores) / sizeof(wh_cores[0])));
        tcase_add_loop_test(real, test_grayskull, 0, (int)(sizeof(gs_cores) / sizeof(gs_cores[0])));
        tcase_add_test(real, test_pair_errors);
        suite_add_tcase(s, real);
    }
    free(probe);
    return s;
}

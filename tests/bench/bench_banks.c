/* memd-bench-alloc --banks MODE: alloc + free pairs on a 64-bank L1 (SRAM) group through
 * memd_device, one placement mode at a time (engine/alloc/device_banks.c).
 *
 * MODE: lockstep (every bank, region never split: today's path), lockstep-split (every
 * bank, after one subset buffer split the region: the intersection path),
 * lockstep-unsplit (as lockstep-split, then that buffer is released and untimed pairs
 * run until the region un-splits: the timed pairs then show what a region pays after
 * its last bank-set buffer went, which should be plain lockstep's cost), range (one
 * address over a shard grid of 8 consecutive banks, uniform per-core), range-lockstep (the
 * same search, reserved in every bank: tt-metal's range lockstep), per-bank (8
 * independent addresses, one per bank of a shard grid of 8), mixed (each buffer picks
 * one of lockstep, range and per-bank), mixed-cut (mixed in a region shrunk by 1 MiB at
 * both ends first, engine/alloc/device_cut.c; after the timed pairs, as many
 * untimed-by-pairs cycles of a reset of both ends and the two shrinks again, timed as
 * "cut_ns": what giving up and back costs with that many live buffers; 0 in other
 * modes). The
 * live buffers are filled first, then each timed pair frees a random live buffer and
 * allocates a new one of the same mode (random direction, 32 B to 2 KiB per bank). Banks
 * are 64 MiB so that 10k live per-bank pieces per bank fit. Checks: every operation
 * succeeds, the device passes memd_device_check at the end. The output's "placements" is a
 * hash of every address handed out (each bank's for per-bank buffers), in order: two
 * builds that place identically print the same one. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_banks.h"
#include "device.h"
#include "test_clock.h"
#include "test_rand.h"

#define BANKS 64
#define GRID 8

static int make_device(memd_device **d)
{
    memd_device_spec s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "l1-64");
    memd_bank_group_spec *g = &s.groups[MEMD_KIND_SRAM];
    g->banks = BANKS;
    g->bank_size = UINT64_C(64) << 20;
    g->alignment = 32;
    g->nregions = 1;
    snprintf(g->regions[0].name, MEMD_NAME_MAX, "buffers");
    g->regions[0].size = g->bank_size;
    g->regions[0].allocatable = true;
    memd_device_spec_default_policy(&s);
    /* constant: bottom-up, placeholder: top-down (the default SRAM policy is all
     * top-down). */
    s.policy[MEMD_KIND_SRAM][MEMD_CLASS_CONSTANT].dir = MEMD_DIR_BOTTOM_UP;
    memd_error err = {0};
    int rc = memd_device_create(&s, d, &err);
    if (rc)
        fprintf(stderr, "memd-bench-alloc: %s\n", err.msg);
    return rc;
}

typedef struct bench {
    memd_device *d;
    uint64_t rng;
    int mode; /* -1: mixed */
    uint64_t hash; /* of every placement so far */
    uint32_t grids[BANKS - GRID + 1][GRID];
} bench;

static int alloc_one(bench *b, memd_placement *p)
{
    int mode = b->mode >= 0 ? b->mode : (int)(memd_test_rand(&b->rng) % 3);
    uint64_t r = memd_test_rand(&b->rng);
    memd_alloc_req req = {.cls = (r & 1) ? MEMD_CLASS_CONSTANT : MEMD_CLASS_PLACEHOLDER,
                          .scope = MEMD_SCOPE_SRAM, .bytes = 32 + (r >> 8) % 2017};
    if (mode != MEMD_BANKS_ALL) {
        req.bank_set = b->grids[(r >> 32) % (BANKS - GRID + 1)];
        req.nbank_set = GRID;
        req.per_bank = mode == MEMD_BANKS_PER_BANK;
        req.range_lockstep = mode == MEMD_BANKS_RANGE_LOCKSTEP;
    }
    int rc = memd_device_alloc(b->d, &req, p);
    for (uint32_t i = 0; rc == 0 && i < (p->addrs ? p->nset : 1); i++)
        b->hash = memd_test_rand(&b->hash) ^ (p->addrs ? p->addrs[i] : p->address);
    return rc;
}

/* One timed unit: free a random live buffer, allocate a new one of the mode. */
static int pair(bench *b, memd_placement *lv, uint64_t live)
{
    uint64_t k = memd_test_rand(&b->rng) % live;
    int rc = memd_device_release(b->d, &lv[k]);
    memd_placement_fini(&lv[k]);
    return rc ? rc : alloc_one(b, &lv[k]);
}

/* mixed-cut: reset both ends and shrink both again, `cycles` times; ns per cycle. */
#define CUT (UINT64_C(1) << 20)
static int cut_cycles(memd_device *d, uint64_t cycles, double *ns)
{
    memd_error err = {0};
    int rc = 0;
    double t0 = (double)memd_test_now_ns();
    for (uint64_t i = 0; rc == 0 && i < cycles; i++) {
        rc = memd_device_region_reset(d, MEMD_KIND_SRAM, 0, 3);
        if (rc == 0)
            rc = memd_device_region_shrink(d, MEMD_KIND_SRAM, 0, MEMD_END_BOTTOM, CUT, &err);
        if (rc == 0)
            rc = memd_device_region_shrink(d, MEMD_KIND_SRAM, 0, MEMD_END_TOP, CUT, &err);
    }
    *ns = ((double)memd_test_now_ns() - t0) / (double)cycles;
    if (rc)
        fprintf(stderr, "memd-bench-alloc: --banks mixed-cut: %s\n", err.msg);
    return rc;
}

static int run_once(const char *mode, uint64_t live, uint64_t pairs, uint64_t seed,
                    double *ns_per_pair, uint64_t *hash, memd_device_walks *walks, double *cut_ns)
{
    bench b = {.rng = seed};
    bool cut = strcmp(mode, "mixed-cut") == 0;
    *cut_ns = 0;
    bool split = strcmp(mode, "lockstep-split") == 0 || strcmp(mode, "lockstep-unsplit") == 0;
    if (strcmp(mode, "lockstep") == 0 || split)
        b.mode = MEMD_BANKS_ALL;
    else if (strcmp(mode, "range") == 0)
        b.mode = MEMD_BANKS_RANGE;
    else if (strcmp(mode, "range-lockstep") == 0)
        b.mode = MEMD_BANKS_RANGE_LOCKSTEP;
    else if (strcmp(mode, "per-bank") == 0)
        b.mode = MEMD_BANKS_PER_BANK;
    else if (strcmp(mode, "mixed") == 0 || cut)
        b.mode = -1;
    else {
        fprintf(stderr, "memd-bench-alloc: --banks: unknown mode '%s' (lockstep, "
                        "lockstep-split, lockstep-unsplit, range, range-lockstep, per-bank, "
                        "mixed, mixed-cut)\n", mode);
        return -EINVAL;
    }
    for (uint32_t i = 0; i <= BANKS - GRID; i++)
        for (uint32_t j = 0; j < GRID; j++)
            b.grids[i][j] = i + j;
    if (make_device(&b.d))
        return -EINVAL;
    memd_placement *lv = calloc(live, sizeof(*lv));
    int rc = lv ? 0 : -ENOMEM;
    memd_placement splitter = {0};
    memd_error err = {0};
    if (rc == 0 && cut &&
        ((rc = memd_device_region_shrink(b.d, MEMD_KIND_SRAM, 0, MEMD_END_BOTTOM, CUT, &err)) ||
         (rc = memd_device_region_shrink(b.d, MEMD_KIND_SRAM, 0, MEMD_END_TOP, CUT, &err))))
        fprintf(stderr, "memd-bench-alloc: --banks mixed-cut: %s\n", err.msg);
    if (rc == 0 && split) {
        /* One 32-byte buffer in bank 63 splits the region. */
        uint32_t last = BANKS - 1;
        memd_alloc_req req = {.cls = MEMD_CLASS_CONSTANT, .scope = MEMD_SCOPE_SRAM, .bytes = 32,
                              .bank_set = &last, .nbank_set = 1};
        rc = memd_device_alloc(b.d, &req, &splitter);
    }
    for (uint64_t i = 0; rc == 0 && i < live; i++)
        rc = alloc_one(&b, &lv[i]);
    if (rc == 0 && strcmp(mode, "lockstep-unsplit") == 0) {
        rc = memd_device_release(b.d, &splitter);
        /* The region un-splits after banks + live lockstep operations (two a pair). */
        for (uint64_t i = 0; rc == 0 && i <= BANKS + live &&
                             memd_device_region_split(b.d, MEMD_KIND_SRAM, 0); i++)
            rc = pair(&b, lv, live);
        if (rc == 0 && memd_device_region_split(b.d, MEMD_KIND_SRAM, 0))
            rc = -EFAULT;
    }
    memd_device_walks w0, w1;
    memd_device_walks_get(b.d, &w0);
    double t0 = (double)memd_test_now_ns();
    for (uint64_t i = 0; rc == 0 && i < pairs; i++)
        rc = pair(&b, lv, live);
    double t1 = (double)memd_test_now_ns();
    memd_device_walks_get(b.d, &w1);
    if (rc == 0 && cut)
        rc = cut_cycles(b.d, pairs, cut_ns);
    *walks = (memd_device_walks){w1.merges - w0.merges, w1.merge_blocks - w0.merge_blocks,
                                 w1.ranges - w0.ranges, w1.range_questions - w0.range_questions};
    if (rc == 0 && memd_device_check(b.d) != 0)
        rc = -EFAULT;
    if (rc)
        fprintf(stderr, "memd-bench-alloc: --banks %s failed: %s\n", mode, strerror(-rc));
    for (uint64_t i = 0; lv && i < live; i++)
        memd_placement_fini(&lv[i]);
    memd_placement_fini(&splitter);
    free(lv);
    memd_device_destroy(b.d);
    *ns_per_pair = (t1 - t0) / (double)pairs;
    *hash = b.hash;
    return rc;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Each repeat runs the mode and, right after, plain lockstep on the same live count: the
 * ratio of the two medians is the figure that survives a loaded machine. */
int memd_bench_banks(const char *mode, uint64_t live, uint64_t pairs, uint64_t seed, uint64_t repeat)
{
    double ns[101], ref[101], cut[101], none;
    uint64_t hash = 0, h, rh;
    memd_device_walks w, rw;
    if (repeat > 101)
        repeat = 101;
    for (uint64_t r = 0; r < repeat; r++) {
        if (run_once(mode, live, pairs, seed, &ns[r], &h, &w, &cut[r]) < 0 ||
            run_once("lockstep", live, pairs, seed, &ref[r], &rh, &rw, &none) < 0)
            return -1;
        if (r > 0 && h != hash) {
            fprintf(stderr, "memd-bench-alloc: --banks %s placed differently in repeat %" PRIu64 "\n",
                    mode, r);
            return -1;
        }
        hash = h;
    }
    qsort(ns, repeat, sizeof(double), cmp_d);
    qsort(ref, repeat, sizeof(double), cmp_d);
    qsort(cut, repeat, sizeof(double), cmp_d);
    double cmed = repeat % 2 ? cut[repeat / 2] : (cut[repeat / 2 - 1] + cut[repeat / 2]) / 2;
    double med = repeat % 2 ? ns[repeat / 2] : (ns[repeat / 2 - 1] + ns[repeat / 2]) / 2;
    double rmed = repeat % 2 ? ref[repeat / 2] : (ref[repeat / 2 - 1] + ref[repeat / 2]) / 2;
    printf("{\"bench\":\"banks\",\"mode\":\"%s\",\"banks\":%d,\"grid\":%d,\"live\":%" PRIu64
           ",\"pairs\":%" PRIu64 ",\"seed\":%" PRIu64 ",\"repeat\":%" PRIu64
           ",\"ns_per_pair\":%.1f,\"lockstep_ns_per_pair\":%.1f,\"vs_lockstep\":%.2f"
           ",\"placements\":\"%016" PRIx64 "\",\"merges\":%" PRIu64
           ",\"blocks_per_merge\":%.1f,\"ranges\":%" PRIu64 ",\"questions_per_range\":%.1f"
           ",\"cut_ns\":%.1f}\n",
           mode, BANKS, GRID, live, pairs, seed, repeat, med, rmed, rmed > 0 ? med / rmed : 0.0, hash,
           w.merges, w.merges ? (double)w.merge_blocks / (double)w.merges : 0.0, w.ranges,
           w.ranges ? (double)w.range_questions / (double)w.ranges : 0.0, cmed);
    return 0;
}

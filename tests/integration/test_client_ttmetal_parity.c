/* tt-metal parity (issue 28): tt-metal's own allocator tests, case by case, against the
 * real daemon through libmemclient, with tt-metal's expected numbers. Each test names the
 * tt-metal test it transcribes (tests/tt_metal/tt_metal/api/allocator/ test files,
 * tests/tt_metal/tt_metal/dispatch/dispatch_buffer/test_sub_device.cpp).
 *
 * Device 0: tt-metal's Wormhole galaxy descriptors (../shared/data/soc/tt-metal), so it
 * keeps tt-metal's rules: no interleaved buffers in a sub-device, a per-core buffer's
 * address is 0, no bank sets in DRAM. Device 1: the same Wormhole in memd's own format
 * (config/devices/wormhole_b0.yaml), which keeps memd's more general behaviour. Device 2:
 * the allocator of the FreeListOpt tests, one bank of 1 GiB with 1 KiB alignment
 * (tests/data/soc/devices/freelist_1g.yaml). Device 3: the allocators of the Alignment and
 * MinAllocationSize tests (freelist_min.yaml: a 1 KiB minimum allocation size in L1).
 *
 * Logical core (x, y) of the galaxy grid has L1 bank memd_test_galaxy_l1_ids[y * 8 + x]
 * (tt-metal's shuffle, printed by its C++ library). */
#include <errno.h>
#include <signal.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ttmetal_galaxy_ids.h"
#include "check_main.h"
#include "client_util.h"
#include "memctl_run.h"

#define KiB 1024ull
#define GiB (1024ull * 1024 * 1024)
#define WORKER_L1_SIZE 1499136ull /* the galaxy's worker_l1_size: tt-metal's l1_size_per_core */
#define PAGE_SIZE 2048ull         /* HYBRID_TEST_PAGE_SIZE: 32 x 32 bf16 tile */

MEMCTL_SUITE_STATICS
#define RUN MEMCTL_RUN

static void start(void)
{
    const char *src = memd_fixture_source_root();
    char yaml[2048] = "devices:\n";
    size_t n = strlen(yaml);
    n += cu_galaxy_yaml(yaml + n, sizeof yaml - n, 0, "wormhole_galaxy");
    snprintf(yaml + n, sizeof yaml - n,
             "  - id: 1\n"
             "    descriptor: %s/config/devices/wormhole_b0.yaml\n"
             "  - id: 2\n"
             "    descriptor: %s/tests/data/soc/devices/freelist_1g.yaml\n"
             "  - id: 3\n"
             "    descriptor: %s/tests/data/soc/devices/freelist_min.yaml\n"
             "sub_devices:\n"
             /* TensixTestSubDeviceAllocations' sub_device_1 and sub_device_2 */
             "  - {name: sd1, device: 0, group: l1, cores: {x: 0-2, y: 0-2}}\n"
             "  - {name: sd2, device: 0, group: l1, cores: [{x: 3, y: 3}, {x: 4, y: 4}]}\n"
             /* TensixTestSubDeviceBankIds' sub-device */
             "  - name: ids\n"
             "    device: 0\n"
             "    group: l1\n"
             "    cores: [{x: 5, y: 4}, {x: 3, y: 2-3}, {x: 0-2, y: 0-2}]\n"
             "    overlap: [sd1, sd2]\n"
             "  - {name: mine, device: 1, group: l1, banks: 0-8}\n",
             src, src, src);
    memctl_yaml_start(&f, yaml, false, out_path, err_path);
}

static void teardown(void)
{
    memctl_yaml_stop(&f, out_path, err_path, &out, &err);
}

static uint32_t bank_of(uint32_t x, uint32_t y)
{
    return memd_test_galaxy_l1_ids[y * 8 + x];
}

/* dispatch_buffer/test_sub_device.cpp, TensixTestSubDeviceAllocations: sharded buffers
 * (height sharded over a sub-device's cores, one page per core) are placed in their
 * sub-device; an interleaved 1 KiB buffer (replicated_config_3) is placed outside any
 * sub-device, and refused inside one (local_config_3 with sub_device_id 0: EXPECT_THROW).
 * Without a window here: client-subdev-windows has its local L1 window (local_l1_size
 * 3200) and its addresses (max_addr - 32, - 64). */
START_TEST(subdev_allocations)
{
    start();
    memclient *c1 = cu_connect(&f), *c2 = cu_connect(&f), *plain = cu_connect(&f);
    ck_assert_int_eq(memclient_subdev_bind(c1, "sd1"), 0);
    ck_assert_int_eq(memclient_subdev_bind(c2, "sd2"), 0);
    uint32_t cores1[9], n1 = 0;
    for (uint32_t y = 0; y <= 2; y++)
        for (uint32_t x = 0; x <= 2; x++)
            cores1[n1++] = bank_of(x, y);
    memclient_buffer b1, b2, b3, b4, x;
    memclient_bank banks[9];
    /* buffer_1: 9 pages of 32 bytes over sharded_cores_1, top down. */
    memclient_alloc_req r1 = cu_l1(0, 9 * 32, 32, cores1, 9, 0);
    r1.bank_out = banks;
    r1.nbank_out = 9;
    ck_assert_int_eq(memclient_alloc(c1, &r1, &b1), 0);
    ck_assert_uint_eq(b1.banks, 9);
    for (int i = 0; i < 9; i++)
        ck_assert_msg(banks[i].logical_x <= 2 && banks[i].logical_y <= 2, "bank %u at %u,%u",
                      banks[i].bank, banks[i].logical_x, banks[i].logical_y);
    /* buffer_2: interleaved 1 KiB outside any sub-device. */
    memclient_alloc_req r3 = cu_l1(0, 1024, 1024, NULL, 0, 0);
    ck_assert_int_eq(memclient_alloc(plain, &r3, &b2), 0);
    ck_assert_uint_eq(b2.banks, 64); /* interleaved over every bank */
    /* local_config_3 in sub-device 0: tt-metal throws; memd refuses, saying why. */
    ck_assert_int_eq(memclient_alloc(c1, &r3, &x), -EINVAL);
    cu_last_error_says("holds no interleaved buffers");
    /* buffer_3: 2 pages of 64 bytes over sharded_cores_2 = sub_device_2. */
    uint32_t cores2[2] = {bank_of(3, 3), bank_of(4, 4)};
    memclient_alloc_req r2 = cu_l1(0, 2 * 64, 64, cores2, 2, 0);
    ck_assert_int_eq(memclient_alloc(c2, &r2, &b3), 0);
    ck_assert_uint_eq(b3.banks, 2);
    /* buffer_1's request again in sub_device_2: its cores are not there. */
    ck_assert_int_eq(memclient_alloc(c2, &r1, &x), -EACCES);
    /* buffer_4: buffer_1's request again in sub_device_0. */
    ck_assert_int_eq(memclient_alloc(c1, &r1, &b4), 0);
    ck_assert_uint_ne(b4.address, b1.address);
    memclient_disconnect(c1);
    memclient_disconnect(c2);
    memclient_disconnect(plain);
    teardown();
}
END_TEST

/* dispatch_buffer/test_sub_device.cpp, TensixTestSubDeviceBankIds: a sub-device's bank
 * ids are the device's (global == sub-device bank id for every core of it). */
START_TEST(subdev_bank_ids)
{
    start();
    memclient *c = cu_connect(&f);
    ck_assert_int_eq(memclient_subdev_bind(c, "ids"), 0);
    memclient_alloc_req r = cu_l1(0, 4096, 0, NULL, 0, 1); /* per core: every core of it */
    memclient_bank banks[16];
    r.bank_out = banks;
    r.nbank_out = 16;
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    ck_assert_uint_eq(b.banks, 12); /* (5,4), (3,2), (3,3) and the 3 x 3 at (0,0) */
    for (int i = 0; i < 12; i++)
        ck_assert_uint_eq(banks[i].bank, bank_of(banks[i].logical_x, banks[i].logical_y));
    memclient_disconnect(c);
    teardown();
}
END_TEST

/* memd-format devices keep memd's behaviour: an interleaved buffer in a sub-device is
 * lockstep over its banks, and a per-bank buffer's address is its first bank's. */
START_TEST(memd_format_keeps_memd_rules)
{
    start();
    memclient *c = cu_connect(&f);
    ck_assert_int_eq(memclient_subdev_bind(c, "mine"), 0);
    memclient_alloc_req r = cu_l1(1, 1024, 1024, NULL, 0, 0);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    ck_assert_uint_eq(b.banks, 9);
    memclient_bank bank;
    uint32_t set[] = {3};
    memclient_alloc_req p = cu_l1(1, 2048, 0, set, 1, 1);
    p.bank_out = &bank;
    p.nbank_out = 1;
    ck_assert_int_eq(memclient_alloc(c, &p, &b), 0);
    ck_assert_uint_eq(b.address, bank.address);
    ck_assert_uint_ne(b.address, 0);
    uint32_t dram[] = {0, 1};
    memclient_alloc_req d = cu_req(MEMD_CLASS_CONSTANT, 4096);
    d.device = 1;
    d.bank_set = dram;
    d.nbank_set = 2;
    memclient *u = cu_connect(&f);
    ck_assert_int_eq(memclient_alloc(u, &d, &b), 0);
    memclient_disconnect(u);
    memclient_disconnect(c);
    teardown();
}
END_TEST

/* test_per_core_allocation.cpp, PerCoreSocketDataBufferPlacement: a per-core buffer of
 * 2048 bytes (the socket FIFO) on the receiver core (0,1) only: its per-core address lies
 * in L1 (0 < address < l1_size_per_core), and the buffer's address() is 0 (no single
 * lockstep address). PerCoreSocketCoexistsWithLockstep: a sharded lockstep buffer over
 * (0,0)-(1,0) does not alias it. */
START_TEST(per_core_socket_address)
{
    start();
    memclient *c = cu_connect(&f);
    uint32_t recv = bank_of(0, 1);
    memclient_bank bank;
    memclient_alloc_req r = cu_l1(0, 2048, 0, &recv, 1, 1);
    r.bank_out = &bank;
    r.nbank_out = 1;
    memclient_buffer fifo, lock;
    ck_assert_int_eq(memclient_alloc(c, &r, &fifo), 0);
    ck_assert_int_eq(fifo.bank_mode, MEMD_BANKS_PER_BANK);
    ck_assert_uint_eq(fifo.address, 0);
    ck_assert_uint_eq(bank.bank, recv);
    ck_assert_uint_gt(bank.absolute, 0);
    ck_assert_uint_lt(bank.absolute, WORKER_L1_SIZE);
    memclient_alloc_info info;
    ck_assert_int_eq(memclient_query(c, fifo.handle, &info), 0);
    ck_assert_uint_eq(info.buf.address, 0);
    /* tt-metal's lockstep L1 buffer is reserved on every core, its pages on 2 of them. */
    memclient_alloc_req g = cu_l1(0, 2 * PAGE_SIZE, PAGE_SIZE, NULL, 0, 0);
    g.banks = 2;
    ck_assert_int_eq(memclient_alloc(c, &g, &lock), 0);
    ck_assert_uint_ne(lock.address, bank.address);
    memclient_disconnect(c);
    teardown();
}
END_TEST

/* test_per_core_allocation.cpp, BasicPerCoreAllocation (each core of (0,0)-(3,0) gets a
 * per-core address above the L1 base and below l1_size_per_core), PerCoreAndLockstepCoexist
 * (a lockstep buffer on the same cores does not sit at any per-core address) and
 * DeallocationFreesPerCoreSpace (the same request succeeds again after a free). */
START_TEST(per_core_basic)
{
    start();
    memclient *c = cu_connect(&f);
    uint32_t row[4];
    for (uint32_t x = 0; x < 4; x++)
        row[x] = bank_of(x, 0);
    memclient_bank banks[4];
    memclient_alloc_req r = cu_l1(0, 2 * PAGE_SIZE * 4, PAGE_SIZE, row, 4, 1);
    r.bank_out = banks;
    r.nbank_out = 4;
    memclient_buffer pc, lock, again;
    ck_assert_int_eq(memclient_alloc(c, &r, &pc), 0);
    ck_assert_uint_eq(pc.address, 0);
    for (int i = 0; i < 4; i++) {
        ck_assert_uint_gt(banks[i].absolute, 0);
        ck_assert_uint_lt(banks[i].absolute, WORKER_L1_SIZE);
    }
    memclient_alloc_req g = cu_l1(0, 2 * PAGE_SIZE * 4, PAGE_SIZE, NULL, 0, 0);
    g.banks = 4; /* lockstep: reserved on every core, its pages on 4 */
    ck_assert_int_eq(memclient_alloc(c, &g, &lock), 0);
    for (int i = 0; i < 4; i++)
        ck_assert_uint_ne(lock.address, banks[i].address);
    ck_assert_int_eq(memclient_free(c, pc.handle), 0);
    r.bank_out = NULL;
    r.nbank_out = 0;
    ck_assert_int_eq(memclient_alloc(c, &r, &again), 0);
    memclient_disconnect(c);
    teardown();
}
END_TEST

/* Bytes allocated in bank `bank` of L1's buffers region, from the daemon's dump. */
static uint64_t core_bytes(memclient *c, uint32_t bank)
{
    memclient_snapshot *s;
    ck_assert_int_eq(memclient_dump(c, 0, MEMCLIENT_DUMP_BANKS, &s), 0);
    uint64_t n = UINT64_MAX;
    for (size_t u = 0; u < s->nbank_use; u++)
        if (s->bank_use[u].kind == MEMD_KIND_SRAM && s->bank_use[u].bank == bank &&
            s->bank_use[u].stats.allocated)
            n = s->bank_use[u].stats.allocated;
    memclient_snapshot_free(s);
    return n == UINT64_MAX ? 0 : n;
}

/* test_per_core_allocation.cpp, DifferentSizesPerCore and DeallocationFreesPerCoreSpace
 * with set_per_core_shard_sizes: 1, 2, 3 and 4 KiB on cores (0,0) to (3,0), each at its
 * own address inside L1, in one request (and two in one batch); each core holds its own
 * size (the daemon's per-bank figures), also after a daemon crash (the state store keeps
 * the sizes), and all of it comes back once freed. SizeMismatchFatals (a size count other than the core
 * count) cannot be said in memd's request: one size goes with each bank id. */
START_TEST(per_core_sizes)
{
    start();
    memclient *c = cu_connect(&f);
    uint32_t core[4];
    uint64_t sizes[4];
    memclient_bank banks[4];
    memclient_buffer b;
    uint32_t xs[4]; /* core (xs[i],0) is bank core[i]: the set in id order, sizes with it */
    for (uint32_t x = 0; x < 4; x++) {
        uint32_t i = x, id = bank_of(x, 0);
        for (; i > 0 && core[i - 1] > id; i--) {
            core[i] = core[i - 1];
            xs[i] = xs[i - 1];
        }
        core[i] = id;
        xs[i] = x;
    }
    for (uint32_t i = 0; i < 4; i++)
        sizes[i] = (xs[i] + 1) * KiB;
    memclient_alloc_req r = cu_l1(0, 0, 0, core, 4, 1);
    r.sizes = sizes;
    r.bank_out = banks;
    r.nbank_out = 4;
    for (int round = 0; round < 2; round++) { /* the second after freeing the first */
        ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
        ck_assert_int_eq(b.bank_mode, MEMD_BANKS_PER_BANK);
        ck_assert_uint_eq(b.size_per_bank, 4 * KiB); /* the largest piece */
        ck_assert_uint_eq(b.banks, 4);
        for (uint32_t x = 0; x < 4; x++) {
            ck_assert_uint_eq(banks[x].bank, core[x]);
            ck_assert_uint_eq(banks[x].logical_x, xs[x]);
            ck_assert_uint_eq(banks[x].logical_y, 0);
            ck_assert_uint_gt(banks[x].absolute, 0);
            ck_assert_uint_le(banks[x].absolute + sizes[x], WORKER_L1_SIZE);
            ck_assert_uint_eq(core_bytes(c, core[x]), sizes[x]);
        }
        if (round == 0) {
            ck_assert_int_eq(memd_fixture_restart(&f, NULL, SIGKILL), 0);
            ck_assert_int_eq(memclient_reconnect(c, 5000), 0);
            for (uint32_t x = 0; x < 4; x++)
                ck_assert_uint_eq(core_bytes(c, core[x]), sizes[x]);
        }
        ck_assert_int_eq(memclient_free(c, b.handle), 0);
        for (uint32_t x = 0; x < 4; x++)
            ck_assert_uint_eq(core_bytes(c, core[x]), 0);
    }
    /* In a batch: two such buffers side by side in one round trip, each piece its own
     * size; all or nothing when an element is refused (a zero size). */
    memclient_buffer two[2];
    memclient_bank pieces[2][4];
    memclient_alloc_req batch[2] = {r, r};
    for (int i = 0; i < 2; i++) {
        batch[i].bank_out = pieces[i];
        batch[i].nbank_out = 4;
    }
    ck_assert_int_eq(memclient_alloc_batch(c, batch, 2, two), 0);
    for (uint32_t x = 0; x < 4; x++) {
        ck_assert_uint_eq(core_bytes(c, core[x]), 2 * sizes[x]);
        ck_assert_uint_eq(pieces[0][x].bank, core[x]);
        ck_assert_uint_eq(pieces[1][x].bank, core[x]);
        ck_assert(pieces[0][x].address + sizes[x] <= pieces[1][x].address ||
                  pieces[1][x].address + sizes[x] <= pieces[0][x].address);
    }
    ck_assert_uint_eq(two[1].size_per_bank, 4 * KiB);
    ck_assert_int_eq(memclient_free(c, two[0].handle), 0);
    ck_assert_int_eq(memclient_free(c, two[1].handle), 0);
    uint64_t zero[4] = {KiB, 0, KiB, KiB};
    batch[1].sizes = zero;
    ck_assert_int_eq(memclient_alloc_batch(c, batch, 2, two), -EINVAL);
    for (uint32_t x = 0; x < 4; x++)
        ck_assert_uint_eq(core_bytes(c, core[x]), 0);
    /* Refused with a reason: sizes without per_bank, with bytes too, a zero size. */
    memclient_alloc_req bad = r;
    bad.per_bank = 0;
    ck_assert_int_eq(memclient_alloc(c, &bad, &b), -EINVAL);
    bad = r;
    bad.bytes = 4 * KiB;
    ck_assert_int_eq(memclient_alloc(c, &bad, &b), -EINVAL);
    memclient_error e;
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "sizes"), "%s", e.message);
    bad = r;
    bad.sizes = zero;
    ck_assert_int_eq(memclient_alloc(c, &bad, &b), -EINVAL);
    memclient_disconnect(c);
    teardown();
}
END_TEST

/* 0 with *b: `bytes` (one page) on banks set[0, n), uniform (one address: a bank set) or
 * per core (per bank); else the error. */
static int on_cores(memclient *c, const uint32_t *set, uint32_t n, uint64_t bytes, bool uniform,
                    memclient_buffer *b)
{
    memclient_alloc_req r = cu_l1(0, bytes * n, bytes, set, n, !uniform);
    return memclient_alloc(c, &r, b);
}

/* A range-lockstep request: `bytes` (one page) on banks set[0, n). */
static memclient_alloc_req range_lockstep(const uint32_t *set, uint32_t n, uint64_t bytes)
{
    memclient_alloc_req r = cu_l1(0, bytes * n, bytes, set, n, 0);
    r.flags |= MEMCLIENT_ALLOC_RANGE_LOCKSTEP;
    return r;
}

/* test_range_lockstep_allocation.cpp, PlacesBesideAPerCoreHogWhenScoped (and
 * ...ScopedByADistributionSpec, ScopesDependenciesOnADirectBufferCreate: the same request
 * in memd) and RefusesToPlaceBesideAPerCoreHogWhenNotScoped: a per-core buffer of 60% of
 * L1 (largest_free_block * 6 / 10, whole pages) on core (0,0); the same size on core
 * (1,0) fits with range lockstep, not as plain lockstep (scanned over every core). Both
 * go top down, so the range-lockstep buffer takes the hog's very address: it lies over
 * the hog's range on (0,0), where it is reserved too. A uniform per-core buffer (a bank
 * set without the flag) fits there as well. */
START_TEST(range_beside_per_core_hog)
{
    start();
    memclient *c = cu_connect(&f);
    uint64_t size = cu_region_size(c, 0, MEMD_KIND_SRAM, "buffers") * 6 / 10 / PAGE_SIZE * PAGE_SIZE;
    ck_assert_uint_gt(size, cu_region_size(c, 0, MEMD_KIND_SRAM, "buffers") / 2);
    uint32_t hogged = bank_of(0, 0), free_core = bank_of(1, 0);
    memclient_buffer hog, scoped, uniform, x;
    memclient_bank hb;
    memclient_alloc_req h = cu_l1(0, size, size, &hogged, 1, 1);
    h.bank_out = &hb;
    h.nbank_out = 1;
    ck_assert_int_eq(memclient_alloc(c, &h, &hog), 0);
    memclient_alloc_req lock = cu_l1(0, size, size, NULL, 0, 0);
    lock.banks = 1;
    ck_assert_int_eq(memclient_alloc(c, &lock, &x), -ENOMEM); /* ...WhenNotScoped */
    memclient_alloc_req r = range_lockstep(&free_core, 1, size);
    ck_assert_int_eq(memclient_alloc(c, &r, &scoped), 0); /* ...WhenScoped */
    ck_assert_int_eq(scoped.bank_mode, MEMD_BANKS_RANGE_LOCKSTEP);
    ck_assert_uint_eq(scoped.address, hb.address);
    ck_assert_uint_eq(scoped.banks, 1);
    ck_assert_int_eq(memclient_free(c, scoped.handle), 0);
    memclient_alloc_req u = cu_l1(0, size, size, &free_core, 1, 0);
    ck_assert_int_eq(memclient_alloc(c, &u, &uniform), 0);
    ck_assert_int_eq(uniform.bank_mode, MEMD_BANKS_RANGE);
    memclient_disconnect(c);
    teardown();
}
END_TEST

/* test_uniform_per_core_allocation.cpp's header: "a range-lockstep allocation sits in the
 * lockstep allocator, which every core's per-core allocator avoids, so that full-bank
 * allocation would fail" (the contrast to UniformPerCoreLeavesTheAddressFreeOnOtherCores):
 * one page of range lockstep on (0,0) keeps a whole-bank per-core buffer off (1,0), and
 * off (0,0), and a whole-bank lockstep buffer (UniformPerCoreIsAvoidedByLockstep holds
 * for it too); freed, every core is whole again (...ReleasesEveryCoreOnDeallocation). Two
 * range-lockstep buffers on disjoint cores do not share an address, as two uniform ones
 * do (...BuffersOnDisjointCoresShareAnAddress). */
START_TEST(range_lockstep_reserved_on_every_core)
{
    start();
    memclient *c = cu_connect(&f);
    uint64_t whole = cu_region_size(c, 0, MEMD_KIND_SRAM, "buffers") / PAGE_SIZE * PAGE_SIZE;
    uint32_t row[2] = {bank_of(0, 0), bank_of(1, 0)};
    memclient_buffer small, x, first, second;
    memclient_alloc_req r = range_lockstep(&row[0], 1, PAGE_SIZE);
    ck_assert_int_eq(memclient_alloc(c, &r, &small), 0);
    ck_assert_uint_ne(small.address, 0);
    ck_assert_int_eq(on_cores(c, &row[1], 1, whole, false, &x), -ENOMEM);
    ck_assert_int_eq(on_cores(c, &row[0], 1, whole, false, &x), -ENOMEM);
    memclient_alloc_req lock = cu_l1(0, whole, whole, NULL, 0, 0);
    lock.banks = 1;
    ck_assert_int_eq(memclient_alloc(c, &lock, &x), -ENOMEM);
    ck_assert_int_eq(memclient_free(c, small.handle), 0);
    ck_assert_int_eq(on_cores(c, row, 2, whole, false, &x), 0);
    ck_assert_int_eq(memclient_free(c, x.handle), 0);
    r = range_lockstep(&row[0], 1, PAGE_SIZE);
    ck_assert_int_eq(memclient_alloc(c, &r, &first), 0);
    r = range_lockstep(&row[1], 1, PAGE_SIZE);
    ck_assert_int_eq(memclient_alloc(c, &r, &second), 0);
    ck_assert_uint_eq(second.address, first.address - PAGE_SIZE); /* top down, below it */
    /* Refused: no set, per bank; named by tt-metal's names in memctl and Python. */
    r = range_lockstep(NULL, 0, PAGE_SIZE);
    ck_assert_int_eq(memclient_alloc(c, &r, &x), -EINVAL);
    cu_last_error_says("needs a bank set");
    memclient_alloc_req m = cu_l1(0, PAGE_SIZE, PAGE_SIZE, &row[0], 1, 0);
    ck_assert_int_eq(memclient_alloc_req_set_mode(&m, "per_core"), 0);
    ck_assert(m.per_bank && !(m.flags & MEMCLIENT_ALLOC_RANGE_LOCKSTEP));
    ck_assert_int_eq(memclient_alloc_req_set_mode(&m, "range_lockstep"), 0);
    ck_assert(!m.per_bank && (m.flags & MEMCLIENT_ALLOC_RANGE_LOCKSTEP));
    ck_assert_int_eq(memclient_alloc_req_set_mode(&m, "uniform_per_core"), 0);
    ck_assert(!m.per_bank && !(m.flags & MEMCLIENT_ALLOC_RANGE_LOCKSTEP));
    ck_assert_int_eq(memclient_alloc_req_set_mode(&m, "lockstep"), -EINVAL);
    ck_assert_int_eq(memclient_alloc_req_set_mode(&m, "sideways"), -EINVAL);
    m.per_bank = 1;
    m.flags |= MEMCLIENT_ALLOC_RANGE_LOCKSTEP;
    ck_assert_int_eq(memclient_alloc(c, &m, &x), -EINVAL);
    /* It would reserve banks outside a sub-device: refused to a bound session. */
    memclient *bound = cu_connect(&f);
    ck_assert_int_eq(memclient_subdev_bind(bound, "sd1"), 0);
    r = range_lockstep(&row[0], 1, PAGE_SIZE);
    ck_assert_int_eq(memclient_alloc(bound, &r, &x), -EINVAL);
    cu_last_error_says("range lockstep would reserve its range in every bank");
    memclient_disconnect(bound);
    memclient_disconnect(c);
    teardown();
}
END_TEST

/* A range-lockstep buffer over another core's per-core buffer (PlacesBesideAPerCoreHog)
 * survives a daemon crash: the same address and mode after the restart, still reserved on
 * every core, and memctl's dump names it. */
START_TEST(range_lockstep_restart_and_memctl)
{
    start();
    memclient *c = cu_connect(&f);
    uint64_t size = cu_region_size(c, 0, MEMD_KIND_SRAM, "buffers") * 6 / 10 / PAGE_SIZE * PAGE_SIZE;
    uint32_t hogged = bank_of(0, 0), free_core = bank_of(1, 0), third = bank_of(2, 0);
    memclient_buffer hog, rl, x;
    memclient_alloc_req h = cu_l1(0, size, size, &hogged, 1, 1);
    ck_assert_int_eq(memclient_alloc(c, &h, &hog), 0);
    memclient_alloc_req r = range_lockstep(&free_core, 1, size);
    ck_assert_int_eq(memclient_alloc(c, &r, &rl), 0);

    ck_assert_int_eq(memd_fixture_restart(&f, NULL, SIGKILL), 0);
    ck_assert_int_eq(memclient_reconnect(c, 5000), 0);

    memclient_alloc_info qi;
    ck_assert_int_eq(memclient_query(c, rl.handle, &qi), 0);
    ck_assert_int_eq(qi.buf.bank_mode, MEMD_BANKS_RANGE_LOCKSTEP);
    ck_assert_uint_eq(qi.buf.address, rl.address);
    memclient_bank b;
    ck_assert_int_eq(memclient_bank_info(c, rl.handle, &b, 1), 1);
    ck_assert_uint_eq(b.bank, free_core);
    ck_assert_int_eq(on_cores(c, &third, 1, size, false, &x), -ENOMEM); /* every core */
    ck_assert_int_eq(RUN("dump", "--json"), 0);
    ck_assert_msg(strstr(out, "\"bank_mode\": \"range_lockstep\""), "%s", out);
    ck_assert_int_eq(memclient_free(c, rl.handle), 0);
    ck_assert_int_eq(on_cores(c, &third, 1, size, false, &x), 0);
    memclient_disconnect(c);
    teardown();
}
END_TEST


/* test_uniform_per_core_allocation.cpp: tt-metal's uniform per-core allocation is memd's
 * bank set (one address on each of its banks, reserved there only).
 * UniformPerCoreTakesOneAddressOnEveryCore, ...LeavesTheAddressFreeOnOtherCores,
 * ...IsAvoidedOnItsOwnCores, ...IsAvoidedByLockstep, ...BuffersOnDisjointCoresShareAnAddress,
 * ...ReleasesEveryCoreOnDeallocation. */
START_TEST(uniform_per_core)
{
    start();
    memclient *c = cu_connect(&f);
    uint64_t whole = cu_region_size(c, 0, MEMD_KIND_SRAM, "buffers") / PAGE_SIZE * PAGE_SIZE;
    uint32_t row[3] = {bank_of(0, 0), bank_of(1, 0), bank_of(2, 0)}, skewed = row[1];
    memclient_buffer skew, u, x, small, other, first, second;
    memclient_bank banks[3], sk;
    memclient_alloc_req s = cu_l1(0, PAGE_SIZE, PAGE_SIZE, &skewed, 1, 1);
    s.bank_out = &sk;
    s.nbank_out = 1;
    ck_assert_int_eq(memclient_alloc(c, &s, &skew), 0);
    memclient_alloc_req r = cu_l1(0, 3 * PAGE_SIZE, PAGE_SIZE, row, 3, 0);
    r.bank_out = banks;
    r.nbank_out = 3;
    ck_assert_int_eq(memclient_alloc(c, &r, &u), 0); /* TakesOneAddressOnEveryCore */
    ck_assert_uint_ne(u.address, 0);
    for (int i = 0; i < 3; i++)
        ck_assert_uint_eq(banks[i].address, u.address);
    ck_assert(u.address + PAGE_SIZE <= sk.address || sk.address + PAGE_SIZE <= u.address);
    ck_assert_int_eq(memclient_free(c, skew.handle), 0);
    ck_assert_int_eq(memclient_free(c, u.handle), 0);
    ck_assert_int_eq(on_cores(c, &row[0], 1, PAGE_SIZE, true, &small), 0);
    ck_assert_int_eq(on_cores(c, &row[1], 1, whole, false, &other), 0); /* LeavesTheAddressFree... */
    ck_assert_int_eq(on_cores(c, &row[0], 1, whole, false, &x), -ENOMEM); /* IsAvoidedOnItsOwnCores */
    ck_assert_int_eq(memclient_free(c, other.handle), 0);
    memclient_alloc_req lock = cu_l1(0, whole, whole, NULL, 0, 0);
    lock.banks = 1;
    ck_assert_int_eq(memclient_alloc(c, &lock, &x), -ENOMEM); /* IsAvoidedByLockstep */
    ck_assert_int_eq(memclient_free(c, small.handle), 0);
    ck_assert_int_eq(on_cores(c, &row[0], 1, PAGE_SIZE, true, &first), 0); /* ...ShareAnAddress */
    ck_assert_int_eq(on_cores(c, &row[1], 1, PAGE_SIZE, true, &second), 0);
    ck_assert_uint_eq(first.address, second.address);
    ck_assert_int_eq(memclient_free(c, first.handle), 0);
    ck_assert_int_eq(memclient_free(c, second.handle), 0);
    ck_assert_int_eq(on_cores(c, row, 2, PAGE_SIZE, true, &small), 0); /* ReleasesEveryCore... */
    ck_assert_int_eq(memclient_free(c, small.handle), 0);
    ck_assert_int_eq(on_cores(c, row, 2, whole, false, &x), 0);
    memclient_disconnect(c);
    teardown();
}
END_TEST

/* test_range_lockstep_allocation.cpp, RejectsNonL1Buffers: a range-lockstep (bank set)
 * buffer in DRAM throws in tt-metal; memd refuses it on tt-metal devices, per bank too,
 * and a DRAM sub-device there could hold nothing, so it is refused as well. */
START_TEST(dram_bank_sets_refused)
{
    start();
    memclient *c = cu_connect(&f);
    uint32_t zero = 0;
    memclient_alloc_req d = cu_req(MEMD_CLASS_CONSTANT, PAGE_SIZE);
    d.bank_set = &zero;
    d.nbank_set = 1;
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &d, &b), -EINVAL);
    cu_last_error_says("bank sets and per-bank buffers in L1 only");
    d.bank_set = NULL;
    d.nbank_set = 0;
    d.per_bank = 1;
    ck_assert_int_eq(memclient_alloc(c, &d, &b), -EINVAL);
    d.per_bank = 0;
    d.bank_set = &zero; /* RejectsNonL1Buffers itself: range lockstep */
    d.nbank_set = 1;
    d.flags = MEMCLIENT_ALLOC_RANGE_LOCKSTEP;
    ck_assert_int_eq(memclient_alloc(c, &d, &b), -EINVAL);
    cu_last_error_says("bank sets and per-bank buffers in L1 only");
    d.bank_set = NULL;
    d.nbank_set = 0;
    d.flags = 0;
    ck_assert_int_eq(memclient_alloc(c, &d, &b), 0); /* interleaved DRAM stays */
    uint32_t ids[] = {0, 1};
    memclient_subdev sd = {.name = "dram", .device = 0, .kind = MEMD_KIND_DRAM, .banks = ids,
                           .nbanks = 2};
    ck_assert_int_eq(memclient_subdev_define(c, &sd), -EINVAL);
    cu_last_error_says("sub-devices are sets of cores");
    memclient_disconnect(c);
    teardown();
}
END_TEST

static memclient_alloc_req fl(memd_class cls, uint64_t bytes)
{
    memclient_alloc_req r = cu_req(cls, bytes);
    r.device = 2;
    return r;
}

static uint64_t fl_alloc(memclient *c, memd_class cls, uint64_t bytes)
{
    memclient_alloc_req r = fl(cls, bytes);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    return b.address;
}

/* Frees b[0, n). */
static void fl_free(memclient *c, const memclient_buffer *b, int n)
{
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(memclient_free(c, b[i].handle), 0);
}

/* 0 with *b the buffer at address, or the error. */
static int fl_at(memclient *c, uint64_t address, uint64_t bytes, memclient_buffer *b)
{
    memclient_alloc_req r = fl(MEMD_CLASS_CONSTANT, bytes);
    r.flags = MEMCLIENT_ALLOC_AT;
    r.address = address;
    return memclient_alloc(c, &r, b);
}

/* test_free_list_opt_allocator.cpp, FreeListOptTest.AllocateAtAddress. */
START_TEST(freelist_allocate_at_address)
{
    start();
    memclient *c = cu_connect(&f);
    memclient_buffer a, b, x, d, e;
    memclient_alloc_req ra = fl(MEMD_CLASS_CONSTANT, KiB);
    ck_assert_int_eq(memclient_alloc(c, &ra, &a), 0);
    ck_assert_uint_eq(a.address, 0);
    ck_assert_int_eq(fl_at(c, KiB, KiB, &b), 0);
    ck_assert_uint_eq(b.address, KiB);
    ck_assert_int_eq(fl_at(c, KiB, KiB, &x), -EBUSY); /* already allocated */
    cu_last_error_says("is taken");
    ck_assert_int_eq(fl_at(c, 2 * KiB, KiB, &d), 0);
    ck_assert_uint_eq(d.address, 2 * KiB);
    ck_assert_int_eq(memclient_free(c, a.handle), 0);
    ck_assert_int_eq(fl_at(c, 0, KiB, &e), 0);
    ck_assert_uint_eq(e.address, 0);
    /* What tt-metal asserts (TT_FATAL) rather than returns: misaligned, out of range. */
    ck_assert_int_eq(fl_at(c, 4 * KiB + 16, KiB, &x), -EINVAL);
    cu_last_error_says("start at multiples of 1024");
    ck_assert_int_eq(fl_at(c, GiB - KiB, 2 * KiB, &x), -ERANGE);
    cu_last_error_says("do not lie inside");
    memclient_alloc_req sh = fl(MEMD_CLASS_CONSTANT, KiB);
    sh.flags = MEMCLIENT_ALLOC_AT | MEMCLIENT_ALLOC_SHARED;
    sh.name = "w";
    ck_assert_int_eq(memclient_alloc(c, &sh, &x), -EINVAL);
    memclient_buffer batch[1];
    memclient_alloc_req bt = fl(MEMD_CLASS_CONSTANT, KiB);
    bt.flags = MEMCLIENT_ALLOC_AT;
    ck_assert_int_eq(memclient_alloc_batch(c, &bt, 1, batch), -EINVAL);
    cu_last_error_says("not batches");
    memclient_disconnect(c);
    teardown();
}
END_TEST

/* FreeListOptTest.FirstFitAllocateAtAddressInteractions (first fit) and
 * AllocateAtAddressInteractions (tt-metal's default best fit; memd's exact best fit gives
 * the same here: the smallest block that fits is [1 KiB, 32 KiB), top-down at its end). */
START_TEST(freelist_at_address_interactions)
{
    start();
    memclient *c = cu_connect(&f);
    memclient_buffer wedge;
    ck_assert_int_eq(fl_at(c, 32 * KiB, KiB, &wedge), 0);
    ck_assert_uint_eq(fl_alloc(c, MEMD_CLASS_CONSTANT, KiB), 0);           /* a */
    ck_assert_uint_eq(fl_alloc(c, MEMD_CLASS_PLACEHOLDER, KiB), GiB - KiB); /* z */
    ck_assert_uint_eq(fl_alloc(c, MEMD_CLASS_CONSTANT, KiB), KiB);         /* b */
    memclient_disconnect(c);
    teardown();
    start();
    c = cu_connect(&f);
    ck_assert_int_eq(fl_at(c, 32 * KiB, KiB, &wedge), 0);
    ck_assert_uint_eq(fl_alloc(c, MEMD_CLASS_CODE, KiB), 0);                  /* a */
    ck_assert_uint_eq(fl_alloc(c, MEMD_CLASS_INTERNAL, KiB), 32 * KiB - KiB); /* z */
    ck_assert_uint_eq(fl_alloc(c, MEMD_CLASS_CODE, KiB), KiB);                /* b */
    memclient_disconnect(c);
    teardown();
}
END_TEST

/* Allocation at an address with bank sets on the galaxy's L1: a range set takes the
 * address in each of its banks, a per-bank set too (each piece there), lockstep over
 * every bank then finds it taken; memctl alloc --at asks the same. */
START_TEST(at_address_bank_sets)
{
    start();
    memclient *c = cu_connect(&f);
    memclient_buffer top, range, per, x;
    memclient_alloc_req t = cu_l1(0, 4096, 0, NULL, 0, 0);
    ck_assert_int_eq(memclient_alloc(c, &t, &top), 0); /* top-down: the highest 4 KiB */
    uint64_t at = top.address - 64 * KiB;
    uint32_t set[] = {bank_of(0, 0), bank_of(1, 0)}, other[] = {bank_of(2, 0), bank_of(3, 0)};
    memclient_bank banks[2];
    memclient_alloc_req r = cu_l1(0, 4096, 0, set, 2, 0);
    r.flags = MEMCLIENT_ALLOC_AT;
    r.address = at;
    r.bank_out = banks;
    r.nbank_out = 2;
    ck_assert_int_eq(memclient_alloc(c, &r, &range), 0);
    ck_assert_uint_eq(range.address, at);
    ck_assert_uint_eq(banks[0].address, at);
    ck_assert_uint_eq(banks[1].address, at);
    ck_assert_int_eq(memclient_alloc(c, &r, &x), -EBUSY);
    memclient_alloc_req p = r;
    p.bank_set = other;
    p.per_bank = 1;
    ck_assert_int_eq(memclient_alloc(c, &p, &per), 0);
    ck_assert_uint_eq(per.address, 0); /* tt-metal device: a per-core buffer's address */
    ck_assert_uint_eq(banks[0].address, at);
    ck_assert_uint_eq(banks[1].address, at);
    memclient_alloc_req all = cu_l1(0, 4096, 0, NULL, 0, 0);
    all.flags = MEMCLIENT_ALLOC_AT;
    all.address = at;
    ck_assert_int_eq(memclient_alloc(c, &all, &x), -EBUSY);
    all.address = at - 8 * KiB;
    ck_assert_int_eq(memclient_alloc(c, &all, &x), 0);
    ck_assert_uint_eq(x.address, at - 8 * KiB);
    char addr[32];
    snprintf(addr, sizeof addr, "0x%" PRIx64, at);
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--scope", "l1",
                         "--size", "4KiB", "--at", addr, "--hold"), 1);
    ck_assert_msg(strstr(err, "is taken"), "%s", err);
    ck_assert_int_eq(RUN("alloc", "--device", "0", "--class", "constant", "--scope", "l1",
                         "--size", "4KiB", "--at", "0x1008", "--hold"), 1);
    ck_assert_msg(strstr(err, "not aligned"), "%s", err); /* L1 alignment: 16 */
    memclient_disconnect(c);
    teardown();
}
END_TEST

/* test_free_list_opt_allocator.cpp: FreeListOptTest.Allocation, AllocateFromTop,
 * FirstFit, Coalescing, OutOfMemory, Alignment and MinAllocationSize (the minimum of a
 * region: min_allocation_size). */
START_TEST(freelist_basics)
{
    start();
    memclient *c = cu_connect(&f);
    memclient_buffer b[5];
    const memd_class top[3] = {MEMD_CLASS_PLACEHOLDER, MEMD_CLASS_PLACEHOLDER, MEMD_CLASS_CONSTANT};
    const uint64_t at[3] = {GiB - KiB, GiB - 2 * KiB, 0};
    for (int i = 0; i < 3; i++) { /* AllocateFromTop */
        memclient_alloc_req r = fl(top[i], KiB);
        ck_assert_int_eq(memclient_alloc(c, &r, &b[i]), 0);
        ck_assert_uint_eq(b[i].address, at[i]);
    }
    fl_free(c, b, 3);
    const uint64_t sizes[5] = {KiB, 3 * KiB, KiB, KiB, KiB}, want[5] = {0, KiB, 4 * KiB, 5 * KiB,
                                                                         6 * KiB};
    for (int i = 0; i < 5; i++) { /* FirstFit */
        memclient_alloc_req r = fl(MEMD_CLASS_CONSTANT, sizes[i]);
        ck_assert_int_eq(memclient_alloc(c, &r, &b[i]), 0);
        ck_assert_uint_eq(b[i].address, want[i]);
    }
    fl_free(c, &b[1], 1);
    fl_free(c, &b[3], 1);
    memclient_alloc_req r1 = fl(MEMD_CLASS_CONSTANT, KiB);
    ck_assert_int_eq(memclient_alloc(c, &r1, &b[1]), 0);
    ck_assert_uint_eq(b[1].address, KiB);
    fl_free(c, b, 3);
    fl_free(c, &b[4], 1);
    for (int i = 0; i < 3; i++) { /* Coalescing: a and b freed, 2 KiB fits at 0 */
        memclient_alloc_req r = fl(MEMD_CLASS_CONSTANT, KiB);
        ck_assert_int_eq(memclient_alloc(c, &r, &b[i]), 0);
    }
    fl_free(c, &b[1], 1);
    fl_free(c, &b[0], 1);
    memclient_alloc_req two = fl(MEMD_CLASS_CONSTANT, 2 * KiB);
    ck_assert_int_eq(memclient_alloc(c, &two, &b[0]), 0);
    ck_assert_uint_eq(b[0].address, 0);
    fl_free(c, b, 1);
    fl_free(c, &b[2], 1);
    /* OutOfMemory */
    memclient_alloc_req all = fl(MEMD_CLASS_CONSTANT, GiB), x = fl(MEMD_CLASS_CONSTANT, KiB);
    ck_assert_int_eq(memclient_alloc(c, &all, &b[0]), 0);
    ck_assert_int_eq(memclient_alloc(c, &x, &b[1]), -ENOMEM);
    ck_assert_int_eq(memclient_free(c, b[0].handle), 0);
    all.bytes = GiB - KiB;
    x.bytes = 2 * KiB;
    ck_assert_int_eq(memclient_alloc(c, &all, &b[0]), 0);
    ck_assert_int_eq(memclient_alloc(c, &x, &b[1]), -ENOMEM);
    /* Alignment: 64 bytes at 0, the next at 1 KiB. */
    memclient_alloc_req al = cu_req(MEMD_CLASS_CONSTANT, 64);
    al.device = 3;
    ck_assert_int_eq(memclient_alloc(c, &al, &b[2]), 0);
    ck_assert_uint_eq(b[2].address, 0);
    ck_assert_int_eq(memclient_alloc(c, &al, &b[2]), 0);
    ck_assert_uint_eq(b[2].address, KiB);
    /* MinAllocationSize: 1 byte takes 1 KiB, the next at 1 KiB. */
    memclient_alloc_req m = cu_l1(3, 1, 0, NULL, 0, 0);
    ck_assert_int_eq(memclient_alloc(c, &m, &b[3]), 0);
    ck_assert_uint_eq(b[3].address, 0);
    ck_assert_uint_eq(b[3].size_per_bank, KiB);
    ck_assert_int_eq(memclient_alloc(c, &m, &b[3]), 0);
    ck_assert_uint_eq(b[3].address, KiB);
    memclient_disconnect(c);
    teardown();
}
END_TEST

/* test_l1_banking_allocator.cpp, TestL1BuffersAllocatedTopDown: interleaved L1 buffers of
 * 32, 64 and 128 KiB in turn (one page each) sit top-down, each at l1_size_per_core minus
 * the bytes so far (absolute); TestL1BuffersDoNotGrowBeyondBankSize: the bank's size + 64
 * is refused. FreeListOptTest.Statistics: the region's allocated bytes. */
START_TEST(l1_top_down_and_statistics)
{
    start();
    memclient *c = cu_connect(&f);
    uint64_t limit = cu_region_size(c, 0, MEMD_KIND_SRAM, "buffers"), total = 0;
    const uint64_t sizes[3] = {32 * KiB, 64 * KiB, 128 * KiB};
    for (int i = 0;; i++) {
        uint64_t size = sizes[i % 3];
        if (total + size >= limit)
            break;
        memclient_alloc_req r = cu_l1(0, size, size, NULL, 0, 0);
        memclient_buffer b;
        uint64_t abs;
        ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
        ck_assert_int_eq(memclient_bank_addresses(c, b.handle, &abs, 1), 64);
        total += size;
        ck_assert_uint_eq(abs, WORKER_L1_SIZE - total);
    }
    memclient_alloc_req big = cu_l1(0, limit + 64, limit + 64, NULL, 0, 0);
    memclient_buffer x;
    ck_assert_int_lt(memclient_alloc(c, &big, &x), 0);
    memclient_buffer a, b;
    memclient_alloc_req k = fl(MEMD_CLASS_CONSTANT, KiB);
    ck_assert_int_eq(memclient_alloc(c, &k, &a), 0);
    ck_assert_int_eq(memclient_alloc(c, &k, &b), 0);
    ck_assert_int_eq(memclient_free(c, a.handle), 0);
    memclient_snapshot *s = cu_dump(c, 0);
    ck_assert_uint_eq(cu_region_of(s, 2, MEMD_KIND_DRAM, "data")->stats.allocated, KiB);
    memclient_snapshot_free(s);
    memclient_disconnect(c);
    teardown();
}
END_TEST

/* 1 with *at the lowest occupied address of the FreeListOpt device's one bank, or 0. */
static int fl_lowest(memclient *c, uint64_t *at)
{
    return memclient_lowest_occupied(c, 2, MEMD_KIND_DRAM, 0, at, NULL);
}

/* FreeListOptTest.LowestOccupiedAddress and LowestOccupiedAddressWithAllocateAt. */
START_TEST(freelist_lowest_occupied)
{
    start();
    memclient *c = cu_connect(&f);
    memclient_buffer b[3], w;
    uint64_t at;
    for (int i = 0; i < 3; i++) {
        memclient_alloc_req r = fl(MEMD_CLASS_CONSTANT, KiB);
        ck_assert_int_eq(memclient_alloc(c, &r, &b[i]), 0);
        ck_assert_uint_eq(b[i].address, (uint64_t)i * KiB);
    }
    ck_assert_int_eq(fl_lowest(c, &at), 1);
    ck_assert_uint_eq(at, 0);
    ck_assert_int_eq(memclient_free(c, b[0].handle), 0);
    ck_assert_int_eq(fl_lowest(c, &at), 1);
    ck_assert_uint_eq(at, KiB);
    ck_assert_int_eq(memclient_free(c, b[1].handle), 0);
    ck_assert_int_eq(fl_lowest(c, &at), 1);
    ck_assert_uint_eq(at, 2 * KiB);
    ck_assert_int_eq(memclient_free(c, b[2].handle), 0);
    ck_assert_int_eq(fl_lowest(c, &at), 0);
    /* WithAllocateAt */
    ck_assert_int_eq(fl_at(c, KiB, KiB, &w), 0);
    ck_assert_int_eq(fl_lowest(c, &at), 1);
    ck_assert_uint_eq(at, KiB);
    ck_assert_int_eq(memclient_free(c, w.handle), 0);
    ck_assert_int_eq(fl_lowest(c, &at), 0);
    ck_assert_int_eq(memclient_lowest_occupied(c, 2, MEMD_KIND_DRAM, 1, &at, NULL), -EINVAL);
    cu_last_error_says("no bank 1");
    memclient_disconnect(c);
    teardown();
}
END_TEST

/* Per bank on the galaxy's L1, as tt-metal checks circular buffers against L1 buffers:
 * a per-core buffer lowers only its own core's lowest occupied address, a lockstep
 * buffer every core's; memctl lowest prints the same. */
START_TEST(lowest_per_bank)
{
    start();
    memclient *c = cu_connect(&f);
    uint32_t one = bank_of(0, 0), other = bank_of(1, 0);
    uint64_t at, abs;
    ck_assert_int_eq(memclient_lowest_occupied(c, 0, MEMD_KIND_SRAM, one, &at, &abs), 0);
    memclient_buffer lock, pc;
    memclient_alloc_req l = cu_l1(0, 64 * KiB, 0, NULL, 0, 0);
    ck_assert_int_eq(memclient_alloc(c, &l, &lock), 0);
    ck_assert_int_eq(memclient_lowest_occupied(c, 0, MEMD_KIND_SRAM, other, &at, &abs), 1);
    ck_assert_uint_eq(at, lock.address);
    memclient_bank piece;
    memclient_alloc_req p = cu_l1(0, 4 * KiB, 0, &one, 1, 1);
    p.bank_out = &piece;
    p.nbank_out = 1;
    ck_assert_int_eq(memclient_alloc(c, &p, &pc), 0);
    ck_assert_uint_lt(piece.address, lock.address); /* top-down: below the lockstep one */
    ck_assert_int_eq(memclient_lowest_occupied(c, 0, MEMD_KIND_SRAM, one, &at, &abs), 1);
    ck_assert_uint_eq(at, piece.address);
    ck_assert_uint_eq(abs, piece.absolute);
    ck_assert_int_eq(memclient_lowest_occupied(c, 0, MEMD_KIND_SRAM, other, &at, &abs), 1);
    ck_assert_uint_eq(at, lock.address);
    char bank[16], want[64];
    snprintf(bank, sizeof bank, "%u", one);
    ck_assert_int_eq(RUN("lowest", "--device", "0", "--group", "l1", "--bank", bank), 0);
    snprintf(want, sizeof want, "lowest occupied address 0x%" PRIx64, piece.address);
    ck_assert_msg(strstr(out, want), "%s", out);
    ck_assert_int_eq(RUN("lowest", "--device", "0", "--group", "l1", "--bank", bank, "--json"), 0);
    snprintf(want, sizeof want, "\"address\": %" PRIu64, piece.address);
    ck_assert_msg(strstr(out, "\"occupied\": true") && strstr(out, want), "%s", out);
    ck_assert_int_eq(RUN("lowest", "--device", "0", "--group", "l1", "--bank", "64"), 1);
    ck_assert_msg(strstr(err, "no bank 64"), "%s", err);
    memclient_disconnect(c);
    teardown();
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("client-ttmetal-parity");
    memd_test_tcase(s, "parity", 60, NULL, NULL,
                    (const TTest *const[]){subdev_allocations, subdev_bank_ids,
                                           memd_format_keeps_memd_rules,
                                           per_core_socket_address, per_core_basic,
                                           per_core_sizes, dram_bank_sets_refused,
                                           range_beside_per_core_hog,
                                           range_lockstep_reserved_on_every_core,
                                           range_lockstep_restart_and_memctl, uniform_per_core,
                                           freelist_allocate_at_address,
                                           freelist_at_address_interactions,
                                           at_address_bank_sets, freelist_lowest_occupied,
                                           freelist_basics, l1_top_down_and_statistics,
                                           lowest_per_bank, NULL});
    return s;
}

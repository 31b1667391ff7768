/* Sub-device windows (issue 28, point g: tt-metal's sub-device manager local L1) against
 * the real daemon through libmemclient: tt-metal's TensixTestSubDeviceAllocations with its
 * expected addresses, the refusals around a window, the configured form (memd.yaml
 * `window:`) and a restart that keeps the window carved and its buffers inside.
 *
 * Device 0: tt-metal's Wormhole galaxy descriptors (../shared/data/soc/tt-metal); device
 * 1: the same Wormhole in memd's own format with a configured windowed sub-device.
 * Logical core (x, y) of the galaxy grid has L1 bank memd_test_galaxy_l1_ids[y * 8 + x]. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../common/ttmetal_galaxy_ids.h"
#include "check_main.h"
#include "client_util.h"
#include "daemon_fixture.h"

#define KiB 1024ull
#define LOCAL_L1_SIZE 3200ull /* TensixTestSubDeviceAllocations' local_l1_size */

static memd_fixture f;

static void start(void)
{
    char yaml[2048] = "devices:\n";
    size_t n = strlen(yaml);
    n += cu_galaxy_yaml(yaml + n, sizeof yaml - n, 0, "wormhole_galaxy");
    snprintf(yaml + n, sizeof yaml - n,
             "  - id: 1\n"
             "    descriptor: %s/config/devices/wormhole_b0.yaml\n"
             "sub_devices:\n"
             "  - {name: cfg, device: 1, group: l1, banks: 0-8, window: 64KiB}\n",
             memd_fixture_source_root());
    memd_fixture_opts o = {.config_yaml = yaml, .capture_stderr = true};
    ck_assert_int_eq(memd_fixture_start(&f, &o), 0);
}

static void teardown(void)
{
    memd_fixture_destroy(&f);
}

static uint32_t bank_of(uint32_t x, uint32_t y)
{
    return memd_test_galaxy_l1_ids[y * 8 + x];
}

/* tt-metal's sub_device_1, cores (0,0)-(2,2) (its sharded_cores_1 too), and sub_device_2,
 * cores (3,3) and (4,4), each with the manager's local_l1_size. */
static uint32_t cores1[9], cores2[2];

static void define(memclient *root, const char *name, const uint32_t *banks, uint32_t n,
                   uint64_t window)
{
    memclient_subdev sd = {.name = name, .device = 0, .kind = MEMD_KIND_SRAM, .banks = banks,
                           .nbanks = n, .window = window};
    ck_assert_int_eq(memclient_subdev_define(root, &sd), 0);
}

static void define_both(memclient *root)
{
    uint32_t n = 0;
    for (uint32_t y = 0; y <= 2; y++)
        for (uint32_t x = 0; x <= 2; x++)
            cores1[n++] = bank_of(x, y);
    cores2[0] = bank_of(3, 3);
    cores2[1] = bank_of(4, 4);
    define(root, "sub_device_1", cores1, 9, LOCAL_L1_SIZE);
    define(root, "sub_device_2", cores2, 2, LOCAL_L1_SIZE);
}

/* The allocatable range of device dev's L1 region "buffers": its base (tt-metal's
 * l1_unreserved_base) and what its bottom gave up; its index. */
static uint32_t l1_range(memclient *c, uint32_t dev, uint64_t *base, uint64_t *bottom)
{
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_RANGES);
    const memclient_region *buffers = cu_region_of(s, dev, MEMD_KIND_SRAM, "buffers");
    ck_assert_ptr_nonnull(buffers);
    bool found = false;
    for (size_t i = 0; i < s->nranges; i++)
        if (s->ranges[i].device == dev && s->ranges[i].kind == MEMD_KIND_SRAM &&
            s->ranges[i].region == buffers->region) {
            *base = s->ranges[i].start - s->ranges[i].bottom;
            *bottom = s->ranges[i].bottom;
            found = true;
        }
    ck_assert(found);
    uint32_t region = buffers->region;
    memclient_snapshot_free(s);
    return region;
}

/* dispatch_buffer/test_sub_device.cpp, TensixTestSubDeviceAllocations. max_addr =
 * l1_unreserved_base + local_l1_size; buffer_1 (height sharded, 9 pages of 32 bytes over
 * sub_device_1's cores) at max_addr - 32; buffer_2 (interleaved 1 KiB, global) outside the
 * window; buffer_3 (64 bytes on core (4,4) in sub_device_2) at max_addr - 64; buffer_4
 * (buffer_1's config again, after buffer_1 is freed) at max_addr - 32 again; interleaved
 * in a sub-device refused. tt-metal loads two managers in turn (and refuses the switch
 * while buffer_1 is held); memd has both sub-devices at once, sharing the window's
 * addresses on their disjoint cores, as tt-metal's second manager does. */
START_TEST(subdev_allocations)
{
    start();
    memclient *root = cu_connect(&f), *c1 = cu_connect(&f), *c2 = cu_connect(&f);
    define_both(root);
    uint64_t base, bottom;
    l1_range(root, 0, &base, &bottom);
    ck_assert_uint_eq(bottom, LOCAL_L1_SIZE); /* the global allocator shrunk by as much */
    uint64_t max_addr = base + LOCAL_L1_SIZE;
    ck_assert_int_eq(memclient_subdev_bind(c1, "sub_device_1"), 0);
    ck_assert_int_eq(memclient_subdev_bind(c2, "sub_device_2"), 0);

    memclient_buffer b1, b2, b3, b4, x;
    memclient_alloc_req r1 = cu_l1(0, 9 * 32, 32, cores1, 9, 0);
    ck_assert_int_eq(memclient_alloc(c1, &r1, &b1), 0);
    ck_assert_uint_eq(b1.address, max_addr - 32);
    memclient_alloc_req r2 = cu_l1(0, 1024, 1024, NULL, 0, 0);
    ck_assert_int_eq(memclient_alloc(root, &r2, &b2), 0);
    ck_assert_uint_ge(b2.address, max_addr);
    ck_assert_uint_eq(b2.banks, 64);
    ck_assert_int_eq(memclient_alloc(c1, &r2, &x), -EINVAL);
    cu_last_error_says("holds no interleaved buffers");
    ck_assert_int_eq(memclient_free(c1, b1.handle), 0);
    uint32_t core44 = bank_of(4, 4);
    memclient_alloc_req r3 = cu_l1(0, 64, 64, &core44, 1, 0);
    ck_assert_int_eq(memclient_alloc(c2, &r3, &b3), 0);
    ck_assert_uint_eq(b3.address, max_addr - 64);
    ck_assert_int_eq(memclient_alloc(c1, &r1, &b4), 0);
    ck_assert_uint_eq(b4.address, max_addr - 32);
    ck_assert_int_eq(memclient_alloc(c1, &r2, &x), -EINVAL);

    /* Dumps show each window and its use. */
    memclient_snapshot *s = cu_dump(root, MEMCLIENT_DUMP_BANKS);
    ck_assert_uint_eq(s->nsubdevs, 3);
    for (size_t i = 0; i < s->nsubdevs; i++) {
        const memclient_subdev_rec *d = &s->subdevs[i];
        bool first = !strcmp(d->name, "sub_device_1"), cfg = !strcmp(d->name, "cfg");
        ck_assert_uint_eq(d->window, cfg ? 64 * KiB : LOCAL_L1_SIZE);
        if (cfg)
            continue;
        ck_assert_uint_eq(d->window_start, base);
        ck_assert_uint_eq(d->window_allocated, first ? 32 : 64);
        ck_assert_uint_eq(d->window_allocations, 1);
    }
    memclient_snapshot_free(s);

    /* memd's own: a window holds only what fits, the global map never reaches into it. */
    memclient_alloc_req big = cu_l1(0, 9 * 4 * KiB, 4 * KiB, cores1, 9, 0);
    ck_assert_int_eq(memclient_alloc(c1, &big, &x), -ENOMEM);
    cu_last_error_says("its window");
    memclient_alloc_req at = cu_l1(0, 1024, 1024, NULL, 0, 0);
    at.flags = MEMCLIENT_ALLOC_AT;
    at.address = base;
    ck_assert_int_eq(memclient_alloc(root, &at, &x), -EBUSY);
    memclient_disconnect(c1);
    memclient_disconnect(c2);
    memclient_disconnect(root);
    teardown();
}
END_TEST

/* Defining a window is refused while a buffer lies where it goes (tt-metal's
 * shrink_size: "cuts into allocated block") and when it would share banks; the windows
 * own the bottom: a region shrink there is refused, one from the top is not. */
START_TEST(refusals)
{
    start();
    memclient *root = cu_connect(&f);
    uint64_t base, bottom;
    uint32_t region = l1_range(root, 0, &base, &bottom);
    ck_assert_uint_eq(bottom, 0);
    memclient_alloc_req at = cu_l1(0, 1024, 1024, NULL, 0, 0);
    at.flags = MEMCLIENT_ALLOC_AT;
    at.address = base + 1024;
    memclient_buffer held;
    ck_assert_int_eq(memclient_alloc(root, &at, &held), 0);
    uint32_t b0 = bank_of(0, 0), b01[2] = {bank_of(0, 0), bank_of(1, 0)};
    memclient_subdev sd = {.name = "w", .device = 0, .kind = MEMD_KIND_SRAM, .banks = &b0,
                           .nbanks = 1, .window = 4 * KiB};
    ck_assert_int_eq(memclient_subdev_define(root, &sd), -EBUSY);
    char want[96];
    snprintf(want, sizeof want, "a buffer there starts at 0x%llx", (unsigned long long)(base + 1024));
    cu_last_error_says(want);
    sd.window = 1 * KiB; /* below the buffer */
    ck_assert_int_eq(memclient_subdev_define(root, &sd), 0);
    sd.name = "w2";
    sd.banks = b01;
    sd.nbanks = 2;
    ck_assert_int_eq(memclient_subdev_define(root, &sd), -EINVAL);
    cu_last_error_says("windows share addresses");
    memclient_range out;
    ck_assert_int_eq(memclient_region_shrink(root, 0, MEMD_KIND_SRAM, region, MEMCLIENT_RANGE_BOTTOM,
                                             1 * KiB, &out), -EBUSY);
    cu_last_error_says("carved for sub-device windows");
    ck_assert_int_eq(memclient_region_shrink(root, 0, MEMD_KIND_SRAM, region, MEMCLIENT_RANGE_TOP,
                                             1 * KiB, &out), 0);
    ck_assert_uint_eq(out.bottom, 1 * KiB);
    memclient_disconnect(root);
    teardown();
}
END_TEST

/* memd.yaml `window:` on a memd-format device: a request without a bank set is lockstep
 * over the sub-device's banks, inside its window; per bank is refused. */
START_TEST(configured_window)
{
    start();
    memclient *c = cu_connect(&f);
    uint64_t base, bottom;
    l1_range(c, 1, &base, &bottom);
    ck_assert_uint_eq(bottom, 64 * KiB);
    ck_assert_int_eq(memclient_subdev_bind(c, "cfg"), 0);
    memclient_buffer b, x;
    memclient_alloc_req r = cu_l1(1, 9 * 4 * KiB, 4 * KiB, NULL, 0, 0);
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    ck_assert_uint_eq(b.banks, 9);
    ck_assert_uint_ge(b.address, base);
    ck_assert_uint_le(b.address + 4 * KiB, base + 64 * KiB);
    memclient_alloc_req pb = cu_l1(1, 4 * KiB, 0, NULL, 0, 1);
    ck_assert_int_eq(memclient_alloc(c, &pb, &x), -EINVAL);
    cu_last_error_says("not per bank");
    memclient_disconnect(c);
    teardown();
}
END_TEST

/* A defined window is in the state store: after SIGKILL and a restart the bottom is
 * still carved, the held buffer still at its address inside it (the next one lands
 * below it, not over it), and the global map still stays out. A configured window
 * (carved before the store restores buffers) keeps its buffer likewise. */
START_TEST(window_survives_restart)
{
    start();
    memclient *root = cu_connect(&f), *c1 = cu_connect(&f);
    define_both(root);
    uint64_t base, bottom;
    l1_range(root, 0, &base, &bottom);
    uint64_t max_addr = base + LOCAL_L1_SIZE;
    ck_assert_int_eq(memclient_subdev_bind(c1, "sub_device_1"), 0);
    memclient_alloc_req r1 = cu_l1(0, 9 * 32, 32, cores1, 9, 0);
    memclient_buffer held, next, cfg_held;
    ck_assert_int_eq(memclient_alloc(c1, &r1, &held), 0);
    ck_assert_uint_eq(held.address, max_addr - 32);
    memclient *c3 = cu_connect(&f);
    ck_assert_int_eq(memclient_subdev_bind(c3, "cfg"), 0);
    memclient_alloc_req rc = cu_l1(1, 9 * 4 * KiB, 4 * KiB, NULL, 0, 0);
    ck_assert_int_eq(memclient_alloc(c3, &rc, &cfg_held), 0);

    memclient_alloc_info qi;
    memd_fixture_opts o = {.capture_stderr = true};
    ck_assert_int_eq(memd_fixture_restart(&f, &o, SIGKILL), 0);
    ck_assert_int_eq(memclient_reconnect(c1, 5000), 0);
    ck_assert_int_eq(memclient_reconnect(c3, 5000), 0);
    ck_assert_int_eq(memclient_query(c3, cfg_held.handle, &qi), 0);
    ck_assert_uint_eq(qi.buf.address, cfg_held.address);
    memclient *root2 = cu_connect(&f);
    l1_range(root2, 0, &base, &bottom);
    ck_assert_uint_eq(bottom, LOCAL_L1_SIZE);
    ck_assert_int_eq(memclient_query(c1, held.handle, &qi), 0);
    ck_assert_uint_eq(qi.buf.address, max_addr - 32);
    ck_assert_int_eq(memclient_alloc(c1, &r1, &next), 0);
    ck_assert_uint_eq(next.address, max_addr - 64);
    memclient_alloc_req at = cu_l1(0, 32, 32, NULL, 0, 0);
    at.flags = MEMCLIENT_ALLOC_AT;
    at.address = max_addr - 32;
    memclient_buffer x;
    ck_assert_int_eq(memclient_alloc(root2, &at, &x), -EBUSY);
    /* Freed, its place in the window is free again. */
    ck_assert_int_eq(memclient_free(c1, held.handle), 0);
    ck_assert_int_eq(memclient_alloc(c1, &r1, &held), 0);
    ck_assert_uint_eq(held.address, max_addr - 32);
    /* Its session may ask for an address inside its window, not outside. */
    memclient_alloc_req in_window = r1;
    in_window.flags = MEMCLIENT_ALLOC_AT;
    in_window.address = base;
    ck_assert_int_eq(memclient_alloc(c1, &in_window, &x), 0);
    ck_assert_uint_eq(x.address, base);
    in_window.address = max_addr;
    ck_assert_int_eq(memclient_alloc(c1, &in_window, &next), -ERANGE);
    memclient_disconnect(c1);
    memclient_disconnect(c3);
    memclient_disconnect(root2);
    memclient_disconnect(root);
    teardown();
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("client-subdev-windows");
    memd_test_tcase(s, "windows", 60, NULL, NULL,
                    (const TTest *const[]){subdev_allocations, refusals, configured_window,
                                           window_survives_restart, NULL});
    return s;
}

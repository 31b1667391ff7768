/* Region ranges shrunk and restored (tt-metal's shrink_size / reset_size), against the
 * real daemon through libmemclient: tt-metal's own tests with its expected numbers (each
 * names the test it transcribes, from tests/tt_metal/tt_metal/api/allocator/), the
 * refusal while a buffer lies in the part to give up, admins only, the dump's RANGE
 * records, memctl region, and the parts given up surviving a daemon crash.
 *
 * Device 0: the FreeList tests' allocator (tests/data/soc/devices/freelist_1k.yaml: 1024
 * bytes, 32-byte alignment, first fit). Device 1: the FreeListOpt tests' (freelist_1g.yaml:
 * 1 GiB, 1 KiB alignment). Constants go bottom-up, placeholders top-down. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "client_util.h"
#include "memctl_run.h"

#define KiB 1024ull
#define UP MEMD_CLASS_CONSTANT
#define DOWN MEMD_CLASS_PLACEHOLDER
#define BOTTOM MEMCLIENT_RANGE_BOTTOM
#define TOP MEMCLIENT_RANGE_TOP

MEMCTL_SUITE_STATICS
#define RUN MEMCTL_RUN

static void start(void)
{
    const char *src = memd_fixture_source_root();
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "devices:\n"
             "  - id: 0\n"
             "    descriptor: %s/tests/data/soc/devices/freelist_1k.yaml\n"
             "  - id: 1\n"
             "    descriptor: %s/tests/data/soc/devices/freelist_1g.yaml\n",
             src, src);
    memctl_yaml_start(&f, yaml, true, out_path, err_path);
}

static void teardown(void)
{
    memctl_yaml_stop(&f, out_path, err_path, &out, &err);
}

/* 0 with *b, or the error: bytes of class cls on device dev (in its DRAM "data"). */
static int alloc(memclient *c, uint32_t dev, memd_class cls, uint64_t bytes, memclient_buffer *b)
{
    memclient_alloc_req r = cu_req(cls, bytes);
    r.device = dev;
    return memclient_alloc(c, &r, b);
}

/* The address of a new buffer (fails the test if there is none). */
static uint64_t at(memclient *c, uint32_t dev, memd_class cls, uint64_t bytes, memclient_buffer *b)
{
    int rc = alloc(c, dev, cls, bytes, b);
    ck_assert_msg(rc == 0, "alloc %" PRIu64 " on device %u: %d", bytes, dev, rc);
    return b->address;
}

static int alloc_at(memclient *c, uint32_t dev, uint64_t address, uint64_t bytes,
                    memclient_buffer *b)
{
    memclient_alloc_req r = cu_req(UP, bytes);
    r.device = dev;
    r.flags = MEMCLIENT_ALLOC_AT;
    r.address = address;
    return memclient_alloc(c, &r, b);
}

static int shrink(memclient *c, uint32_t dev, unsigned end, uint64_t bytes)
{
    return memclient_region_shrink(c, dev, MEMD_KIND_DRAM, 0, end, bytes, NULL);
}

static void reset(memclient *c, uint32_t dev)
{
    ck_assert_int_eq(memclient_region_reset(c, dev, MEMD_KIND_DRAM, 0, BOTTOM | TOP, NULL), 0);
}

/* test_free_list_allocator.cpp, FreeListAllocator.TestResizeAllocator. */
START_TEST(freelist_resize)
{
    start();
    memclient *c = cu_connect(&f);
    memclient_buffer b[7];
    ck_assert_uint_eq(at(c, 0, DOWN, 32, &b[0]), 992);
    ck_assert_int_eq(shrink(c, 0, BOTTOM, 64), 0);
    ck_assert_uint_eq(at(c, 0, DOWN, 32, &b[1]), 960);
    ck_assert_uint_eq(at(c, 0, UP, 32, &b[2]), 64);
    reset(c, 0);
    ck_assert_uint_eq(at(c, 0, UP, 32, &b[3]), 0);
    ck_assert_uint_eq(at(c, 0, UP, 32, &b[4]), 32);
    ck_assert_int_eq(memclient_free(c, b[3].handle), 0);
    ck_assert_uint_eq(at(c, 0, UP, 64, &b[5]), 96);
    ck_assert_int_eq(shrink(c, 0, BOTTOM, 32), 0);
    ck_assert_int_eq(memclient_free(c, b[4].handle), 0);
    ck_assert_uint_eq(at(c, 0, UP, 32, &b[6]), 32);
    memclient_disconnect(c);
    teardown();
}
END_TEST

/* test_free_list_allocator.cpp, FreeListAllocator.TestDirectedResizeAllocator. */
START_TEST(freelist_directed_resize)
{
    start();
    memclient *c = cu_connect(&f);
    memclient_buffer a, x, b[4];
    ck_assert_int_eq(alloc_at(c, 0, 32, 992, &a), 0);
    ck_assert_uint_eq(a.address, 32);
    ck_assert_int_eq(shrink(c, 0, BOTTOM, 32), 0);
    ck_assert_int_eq(alloc(c, 0, DOWN, 32, &x), -ENOMEM);
    ck_assert_int_ne(alloc_at(c, 0, 0, 32, &x), 0); /* given up */
    ck_assert_int_eq(memclient_free(c, a.handle), 0);
    ck_assert_uint_eq(at(c, 0, UP, 32, &b[0]), 32);
    ck_assert_uint_eq(at(c, 0, DOWN, 32, &b[1]), 992);
    reset(c, 0);
    ck_assert_uint_eq(at(c, 0, UP, 32, &b[2]), 0);
    ck_assert_int_eq(memclient_free(c, b[0].handle), 0);
    ck_assert_uint_eq(at(c, 0, UP, 32, &b[3]), 32);
    memclient_disconnect(c);
    teardown();
}
END_TEST

/* test_free_list_opt_allocator.cpp, FreeListOptTest.ShrinkAndReset and
 * CoalescingAfterResetShrink. */
START_TEST(freelist_opt_shrink_and_reset)
{
    start();
    memclient *c = cu_connect(&f);
    memclient_buffer a, b, x, d, e, cc;
    ck_assert_uint_eq(at(c, 1, UP, KiB, &a), 0);
    ck_assert_uint_eq(at(c, 1, UP, KiB, &b), KiB);
    ck_assert_int_eq(memclient_free(c, a.handle), 0);
    ck_assert_int_eq(shrink(c, 1, BOTTOM, KiB), 0);
    ck_assert_int_ne(alloc_at(c, 1, 0, KiB, &x), 0);
    ck_assert_int_ne(alloc_at(c, 1, KiB, KiB, &x), 0);
    reset(c, 1);
    ck_assert_int_eq(memclient_free(c, b.handle), 0);
    ck_assert_int_eq(alloc(c, 1, UP, 2 * KiB, &e), 0);
    ck_assert_int_eq(memclient_free(c, e.handle), 0);
    /* CoalescingAfterResetShrink */
    ck_assert_uint_eq(at(c, 1, UP, KiB, &a), 0);
    ck_assert_uint_eq(at(c, 1, UP, KiB, &b), KiB);
    ck_assert_uint_eq(at(c, 1, UP, KiB, &cc), 2 * KiB);
    ck_assert_int_eq(memclient_free(c, b.handle), 0);
    ck_assert_int_eq(memclient_free(c, a.handle), 0);
    ck_assert_int_eq(shrink(c, 1, BOTTOM, KiB), 0);
    ck_assert_int_eq(alloc(c, 1, UP, 2 * KiB, &d), 0);
    reset(c, 1);
    ck_assert_uint_eq(at(c, 1, UP, 2 * KiB, &e), 0);
    memclient_disconnect(c);
    teardown();
}
END_TEST

/* What tt-metal asserts (TT_FATAL "cuts into allocated block") memd refuses, naming the
 * buffer; and memd shrinks from the top too, which tt-metal does not support yet. */
START_TEST(refusals)
{
    start();
    memclient *c = cu_connect(&f);
    memclient_buffer lo, hi;
    ck_assert_uint_eq(at(c, 0, UP, 64, &lo), 0);
    ck_assert_uint_eq(at(c, 0, DOWN, 32, &hi), 992);
    ck_assert_int_eq(shrink(c, 0, BOTTOM, 32), -EBUSY);
    cu_last_error_says("a buffer there starts at 0x0");
    ck_assert_int_eq(shrink(c, 0, TOP, 64), -EBUSY);
    cu_last_error_says("a buffer there ends at 0x400");
    ck_assert_int_eq(shrink(c, 0, TOP, 48), -EINVAL);
    cu_last_error_says("multiple of the alignment 32");
    ck_assert_int_eq(memclient_free(c, hi.handle), 0);
    memclient_range r;
    ck_assert_int_eq(memclient_region_shrink(c, 0, MEMD_KIND_DRAM, 0, TOP, 64, &r), 0);
    ck_assert_uint_eq(r.top, 64);
    ck_assert_uint_eq(r.bottom, 0);
    ck_assert_uint_eq(r.start, 0);
    ck_assert_uint_eq(r.end, 960);
    ck_assert_uint_eq(at(c, 0, DOWN, 32, &hi), 928);
    ck_assert_int_eq(shrink(c, 0, BOTTOM, 1024), -ERANGE);
    cu_last_error_says("[0x0, 0x3c0) is left");
    ck_assert_int_eq(memclient_region_shrink(c, 7, MEMD_KIND_DRAM, 0, TOP, 64, NULL), -ENODEV);
    ck_assert_int_eq(memclient_region_shrink(c, 0, MEMD_KIND_DRAM, 3, TOP, 64, NULL), -ENOENT);
    ck_assert_int_eq(memclient_region_shrink(c, 0, MEMD_KIND_DRAM, 0, BOTTOM | TOP, 64, NULL),
                     -EINVAL);
    /* The dump: the region's statistics leave the part given up out; RANGE says what is
     * left. */
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_RANGES | MEMCLIENT_DUMP_BLOCKS);
    const memclient_region *reg = cu_region_of(s, 0, MEMD_KIND_DRAM, "data");
    ck_assert_ptr_nonnull(reg);
    ck_assert_uint_eq(reg->stats.total, 960);
    ck_assert_uint_eq(reg->stats.allocated, 96);
    ck_assert_uint_eq(reg->stats.allocations, 2);
    ck_assert_uint_eq(s->nranges, 2);
    ck_assert_uint_eq(s->ranges[0].device, 0);
    ck_assert_uint_eq(s->ranges[0].top, 64);
    ck_assert_uint_eq(s->ranges[0].end, 960);
    ck_assert_uint_eq(s->ranges[1].device, 1);
    ck_assert_uint_eq(s->ranges[1].end, 1024 * 1024 * KiB);
    for (size_t i = 0; i < s->nblocks; i++)
        ck_assert(s->blocks[i].device != 0 || s->blocks[i].address < 960);
    memclient_snapshot_free(s);
    memclient_disconnect(c);
    teardown();
}
END_TEST

static int unprivileged_shrink(void *arg)
{
    memclient *c;
    if (memclient_connect(arg, &c) < 0)
        return 2;
    int rc = shrink(c, 0, BOTTOM, 32);
    memclient_disconnect(c);
    return rc == -EPERM ? 0 : 1;
}

/* Only an admin changes a region's range. */
START_TEST(admins_only)
{
    start();
    cu_open_socket_to_all(&f);
    ck_assert_int_eq(cu_run_as(CU_NOBODY, unprivileged_shrink, f.socket_path), 0);
    teardown();
}
END_TEST

/* memctl region shrink, ranges and reset: text and JSON. */
START_TEST(memctl_round_trip)
{
    start();
    ck_assert_int_eq(RUN("region", "shrink", "--device", "0", "--group", "dram", "--region",
                         "data", "--bottom", "128"), 0);
    ck_assert_msg(strstr(out, "[0x80, 0x400)"), "%s", out);
    ck_assert_int_eq(RUN("region", "shrink", "--device", "0", "--group", "dram", "--region", "0",
                         "--top", "64", "--json"), 0);
    ck_assert_msg(strstr(out, "\"bottom\": 128, \"top\": 64, \"start\": 128, \"end\": 960"), "%s",
                  out);
    ck_assert_int_eq(RUN("region", "ranges", "--device", "0"), 0);
    ck_assert_msg(strstr(out, "given up: 128 at the bottom, 64 at the top"), "%s", out);
    ck_assert_int_eq(RUN("region", "reset", "--device", "0", "--group", "dram", "--region",
                         "data", "--top"), 0);
    ck_assert_int_eq(RUN("region", "ranges", "--json"), 0);
    ck_assert_msg(strstr(out, "\"device\": 0, \"group\": \"dram\", \"region\": \"data\", "
                              "\"index\": 0, \"bottom\": 128, \"top\": 0"), "%s", out);
    ck_assert_int_ne(RUN("region", "shrink", "--device", "0", "--group", "dram", "--region",
                         "nope", "--top", "64"), 0);
    ck_assert_msg(strstr(err, "no dram region 'nope'"), "%s", err);
    ck_assert_int_ne(RUN("region", "shrink", "--device", "0", "--group", "dram", "--region",
                         "data", "--bottom", "4096"), 0);
    ck_assert_msg(strstr(err, "is left"), "%s", err);
    teardown();
}
END_TEST

/* The parts given up are in the state store before the reply: a crash and restart bring
 * them back; the buffer held beside them too. */
START_TEST(survives_restart)
{
    start();
    memclient *c = cu_connect(&f);
    memclient_buffer b, x;
    ck_assert_int_eq(shrink(c, 0, BOTTOM, 64), 0);
    ck_assert_int_eq(shrink(c, 0, TOP, 32), 0);
    ck_assert_int_eq(shrink(c, 0, TOP, 32), 0);
    ck_assert_uint_eq(at(c, 0, UP, 32, &b), 64);
    memd_fixture_opts o = {.capture_stderr = true};
    ck_assert_int_eq(memd_fixture_restart(&f, &o, SIGKILL), 0);
    ck_assert_int_eq(memclient_reconnect(c, 5000), 0);
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_RANGES);
    ck_assert_uint_eq(s->ranges[0].bottom, 64);
    ck_assert_uint_eq(s->ranges[0].top, 64);
    memclient_snapshot_free(s);
    ck_assert_uint_eq(at(c, 0, UP, 32, &x), 96);
    ck_assert_uint_eq(at(c, 0, DOWN, 32, &x), 928);
    reset(c, 0);
    /* Nothing given up any more: its record is gone, a restart gives the whole range. */
    ck_assert_int_eq(memd_fixture_restart(&f, &o, SIGTERM), 0);
    ck_assert_int_eq(memclient_reconnect(c, 5000), 0);
    s = cu_dump(c, MEMCLIENT_DUMP_RANGES);
    ck_assert_uint_eq(s->ranges[0].bottom, 0);
    ck_assert_uint_eq(s->ranges[0].end, 1024);
    memclient_snapshot_free(s);
    ck_assert_uint_eq(at(c, 0, UP, 32, &x), 0);
    memclient_disconnect(c);
    teardown();
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("client-ranges");
    memd_test_tcase(s, "ranges", 60, NULL, NULL,
                    (const TTest *const[]){freelist_resize, freelist_directed_resize,
                                           freelist_opt_shrink_and_reset, refusals,
                                           admins_only, memctl_round_trip, survives_restart,
                                           NULL});
    return s;
}

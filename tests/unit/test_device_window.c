/* Sub-device windows (memd_device_window_open / _close / _adopt, tt-metal's sub-device
 * manager local L1): the bottom given up for them, buffers placed in a window's own map
 * over its banks, windows of disjoint banks sharing addresses, refusals, release and
 * adoption. memd_device_check after each case. */
#include <errno.h>
#include <string.h>

#include "check_main.h"
#include "device.h"
#include "unit_device.h"

#define KiB 1024ull
#define REGION 1 /* the unit device's SRAM "buffers": [16 KiB, 256 KiB), 8 banks, align 16 */
#define LO (16 * KiB)

static memd_alloc_req in(uint32_t window, memd_class c, uint64_t bytes, const uint32_t *set,
                         uint32_t n)
{
    return (memd_alloc_req){.cls = c, .scope = MEMD_SCOPE_SRAM, .bytes = bytes,
                            .bank_set = set, .nbank_set = n, .window = window};
}

static const uint32_t A[] = {0, 1, 2}, B[] = {3, 4};

START_TEST(windows_share_the_carved_bottom)
{
    memd_device *d = unit_device_bottom_up();
    memd_error err = {0};
    uint32_t a, b;
    ck_assert_int_eq(memd_device_window_open(d, MEMD_KIND_SRAM, REGION, 4 * KiB, A, 3, &a, &err), 0);
    ck_assert_int_eq(memd_device_window_open(d, MEMD_KIND_SRAM, REGION, 4 * KiB, B, 2, &b, &err), 0);
    ck_assert_uint_ne(a, b);
    memd_region_cut cut;
    ck_assert_int_eq(memd_device_region_cut(d, MEMD_KIND_SRAM, REGION, &cut), 0);
    ck_assert_uint_eq(cut.window, 4 * KiB);
    ck_assert_uint_eq(cut.bottom, 4 * KiB);
    ck_assert_uint_eq(cut.start, LO + 4 * KiB);

    /* A global buffer lands above the windows. */
    memd_placement g, p1, p2, p3;
    memd_alloc_req glob = in(0, MEMD_CLASS_CONSTANT, 1 * KiB, NULL, 0);
    ck_assert_int_eq(memd_device_alloc(d, &glob, &g), 0);
    ck_assert_uint_eq(g.address, LO + 4 * KiB);
    /* Bottom-up and top-down inside window a; window b has the same addresses. */
    memd_alloc_req up = in(a, MEMD_CLASS_CONSTANT, 512, A, 2);
    ck_assert_int_eq(memd_device_alloc(d, &up, &p1), 0);
    ck_assert_uint_eq(p1.address, LO);
    ck_assert_int_eq(p1.mode, MEMD_BANKS_RANGE);
    memd_alloc_req down = in(a, MEMD_CLASS_PLACEHOLDER, 256, A + 1, 2);
    ck_assert_int_eq(memd_device_alloc(d, &down, &p2), 0);
    ck_assert_uint_eq(p2.address, LO + 4 * KiB - 256);
    memd_alloc_req other = in(b, MEMD_CLASS_CONSTANT, 512, B, 2);
    ck_assert_int_eq(memd_device_alloc(d, &other, &p3), 0);
    ck_assert_uint_eq(p3.address, LO);
    memd_window_info wi;
    ck_assert_int_eq(memd_device_window_info(d, a, &wi), 0);
    ck_assert_uint_eq(wi.start, LO);
    ck_assert_uint_eq(wi.bytes, 4 * KiB);
    ck_assert_uint_eq(wi.allocated, 768);
    ck_assert_uint_eq(wi.allocations, 2);

    /* Refused: banks outside the window, per bank, no room, another window's banks. */
    memd_placement x;
    const uint32_t mixed[] = {0, 3};
    memd_alloc_req bad = in(a, MEMD_CLASS_CONSTANT, 16, mixed, 2);
    ck_assert_int_eq(memd_device_alloc(d, &bad, &x), -EINVAL);
    bad = in(a, MEMD_CLASS_CONSTANT, 16, A, 3);
    bad.per_bank = true;
    ck_assert_int_eq(memd_device_alloc(d, &bad, &x), -EINVAL);
    bad = in(a, MEMD_CLASS_CONSTANT, 4 * KiB, A, 3);
    ck_assert_int_eq(memd_device_alloc(d, &bad, &x), -ENOMEM);
    uint32_t c;
    const uint32_t overlapping[] = {2, 5};
    ck_assert_int_eq(memd_device_window_open(d, MEMD_KIND_SRAM, REGION, 4 * KiB, overlapping, 2, &c, &err), -EINVAL);
    /* At an address: a window's request inside it, nobody else's. */
    memd_placement f;
    memd_alloc_req fixed = in(a, MEMD_CLASS_CONSTANT, 256, A, 3);
    ck_assert_int_eq(memd_device_alloc_fixed(d, &fixed, LO + 4 * KiB, &x), -ERANGE);
    ck_assert_int_eq(memd_device_alloc_fixed(d, &fixed, LO, &x), -EBUSY); /* p1 */
    ck_assert_int_eq(memd_device_alloc_fixed(d, &fixed, LO + 1 * KiB, &f), 0);
    fixed.window = 0;
    ck_assert_int_eq(memd_device_alloc_fixed(d, &fixed, LO + 2 * KiB, &x), -EBUSY);
    ck_assert_int_eq(memd_device_release(d, &f), 0);
    /* A restore (alloc-at of a known placement) inside a window goes to its map. */
    ck_assert_int_eq(memd_device_alloc_at(d, &f), 0);
    ck_assert_int_eq(memd_device_alloc_at(d, &f), -EBUSY);
    ck_assert_int_eq(memd_device_release(d, &f), 0);
    memd_placement_fini(&f);
    /* The windows own the bottom: no shrink or reset there; the top still shrinks. */
    ck_assert_int_eq(memd_device_region_shrink(d, MEMD_KIND_SRAM, REGION, MEMD_END_BOTTOM, 1 * KiB, &err), -EBUSY);
    ck_assert_msg(strstr(err.msg, "sub-device windows"), "%s", err.msg);
    ck_assert_int_eq(memd_device_region_shrink(d, MEMD_KIND_SRAM, REGION, MEMD_END_TOP, 1 * KiB, &err), 0);
    ck_assert_int_eq(memd_device_region_reset(d, MEMD_KIND_SRAM, REGION, 3), 0);
    ck_assert_int_eq(memd_device_region_cut(d, MEMD_KIND_SRAM, REGION, &cut), 0);
    ck_assert_uint_eq(cut.bottom, 4 * KiB);
    ck_assert_uint_eq(cut.top, 0);
    ck_assert_int_eq(memd_device_check(d), 0);

    /* A larger window carves more; closing needs it empty; the last one gives it back. */
    const uint32_t C[] = {6};
    ck_assert_int_eq(memd_device_window_open(d, MEMD_KIND_SRAM, REGION, 8 * KiB, C, 1, &c, &err), -EBUSY);
    ck_assert_msg(strstr(err.msg, "0x5000"), "%s", err.msg); /* the global buffer */
    ck_assert_int_eq(memd_device_release(d, &g), 0);
    ck_assert_int_eq(memd_device_window_open(d, MEMD_KIND_SRAM, REGION, 8 * KiB, C, 1, &c, &err), 0);
    ck_assert_int_eq(memd_device_region_cut(d, MEMD_KIND_SRAM, REGION, &cut), 0);
    ck_assert_uint_eq(cut.window, 8 * KiB);
    ck_assert_int_eq(memd_device_window_close(d, a), -EBUSY);
    ck_assert_int_eq(memd_device_release(d, &p1), 0);
    ck_assert_int_eq(memd_device_release(d, &p2), 0);
    ck_assert_int_eq(memd_device_release(d, &p2), -ENOENT);
    ck_assert_int_eq(memd_device_window_close(d, a), 0);
    ck_assert_int_eq(memd_device_window_close(d, a), -ENOENT);
    ck_assert_int_eq(memd_device_release(d, &p3), 0);
    ck_assert_int_eq(memd_device_window_close(d, b), 0);
    ck_assert_int_eq(memd_device_window_close(d, c), 0);
    ck_assert_int_eq(memd_device_region_cut(d, MEMD_KIND_SRAM, REGION, &cut), 0);
    ck_assert_uint_eq(cut.bottom, 0);
    ck_assert_uint_eq(cut.window, 0);
    ck_assert_uint_eq(cut.start, LO);
    ck_assert_int_eq(memd_device_check(d), 0);
    memd_placement_fini(&g);
    memd_placement_fini(&p1);
    memd_placement_fini(&p2);
    memd_placement_fini(&p3);
    memd_device_destroy(d);
}
END_TEST

/* A restart restores buffers before windows: the window takes them over. */
START_TEST(adopt_after_restore)
{
    memd_device *d = unit_device_bottom_up();
    memd_error err = {0};
    memd_placement p;
    memd_alloc_req r = in(0, MEMD_CLASS_CONSTANT, 512, B, 2);
    ck_assert_int_eq(memd_device_alloc(d, &r, &p), 0);
    ck_assert_uint_eq(p.address, LO);
    uint32_t w;
    ck_assert_int_eq(memd_device_window_open(d, MEMD_KIND_SRAM, REGION, 4 * KiB, B, 2, &w, &err), -EBUSY);
    ck_assert_int_eq(memd_device_release(d, &p), 0);
    ck_assert_int_eq(memd_device_window_open(d, MEMD_KIND_SRAM, REGION, 4 * KiB, B, 2, &w, &err), 0);
    ck_assert_int_eq(memd_device_window_adopt(d, w, &p), 0);
    ck_assert_int_eq(memd_device_window_adopt(d, w, &p), -EBUSY);
    memd_placement q;
    ck_assert_int_eq(memd_placement_copy(&q, &p), 0);
    q.set[0] = 0; /* not the window's bank */
    ck_assert_int_eq(memd_device_window_adopt(d, w, &q), -ERANGE);
    ck_assert_int_eq(memd_device_window_close(d, w), -EBUSY);
    ck_assert_int_eq(memd_device_release(d, &p), 0);
    ck_assert_int_eq(memd_device_window_close(d, w), 0);
    ck_assert_int_eq(memd_device_check(d), 0);
    memd_placement_fini(&p);
    memd_placement_fini(&q);
    memd_device_destroy(d);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("device-window");
    memd_test_tcase(s, "window", 0, NULL, NULL,
                    (const TTest *const[]){windows_share_the_carved_bottom, adopt_after_restore,
                                           NULL});
    return s;
}

/* common/units.h: the one integer and size syntax for config files and memctl flags. */
#include <errno.h>
#include <stdint.h>

#include "check_main.h"
#include "banklist.h"
#include "units.h"

START_TEST(test_u64)
{
    uint64_t v = 7;
    ck_assert_int_eq(memd_parse_u64("0", &v), 0);
    ck_assert_uint_eq(v, 0);
    ck_assert_int_eq(memd_parse_u64("4096", &v), 0);
    ck_assert_uint_eq(v, 4096);
    ck_assert_int_eq(memd_parse_u64("0x1F", &v), 0);
    ck_assert_uint_eq(v, 31);
    ck_assert_int_eq(memd_parse_u64("18446744073709551615", &v), 0);
    ck_assert_uint_eq(v, UINT64_MAX);
    ck_assert_int_eq(memd_parse_u64("0xffffffffffffffff", &v), 0);
    ck_assert_uint_eq(v, UINT64_MAX);
    v = 7;
    ck_assert_int_eq(memd_parse_u64("18446744073709551616", &v), -ERANGE);
    ck_assert_int_eq(memd_parse_u64("0x10000000000000000", &v), -ERANGE);
    ck_assert_int_eq(memd_parse_u64("", &v), -EINVAL);
    ck_assert_int_eq(memd_parse_u64("0x", &v), -EINVAL);
    ck_assert_int_eq(memd_parse_u64("-1", &v), -EINVAL);
    ck_assert_int_eq(memd_parse_u64("+1", &v), -EINVAL);
    ck_assert_int_eq(memd_parse_u64("12 ", &v), -EINVAL);
    ck_assert_int_eq(memd_parse_u64("1g", &v), -EINVAL);
    ck_assert_int_eq(memd_parse_u64(NULL, &v), -EINVAL);
    ck_assert_uint_eq(v, 7); /* untouched on failure */
}
END_TEST

START_TEST(test_digits_advance)
{
    const char *s = "123abc", *p = s;
    uint64_t v;
    ck_assert_int_eq(memd_parse_digits(&p, &v), 0);
    ck_assert_uint_eq(v, 123);
    ck_assert_ptr_eq(p, s + 3);
    const char *big = "99999999999999999999999 KiB";
    p = big;
    ck_assert_int_eq(memd_parse_digits(&p, &v), -ERANGE);
    ck_assert_ptr_eq(p, big + 23); /* consumed every digit even so */
}
END_TEST

/* Bank lists (memctl --bank-set / --banks, sub_devices banks): ids and ranges in
 * increasing order; the offset of the item at fault; ids past the limit (or past 64
 * bits) are -ERANGE, not a syntax error. */
START_TEST(test_bank_list)
{
    uint32_t ids[16], n, bad;
    ck_assert_int_eq(memd_parse_bank_list("0-3,8", 64, ids, 16, &n, &bad), 0);
    ck_assert_uint_eq(n, 5);
    ck_assert_uint_eq(ids[3], 3);
    ck_assert_uint_eq(ids[4], 8);
    ck_assert_int_eq(memd_parse_bank_list("7", 64, NULL, 0, &n, NULL), 0); /* count only */
    ck_assert_uint_eq(n, 1);
    static const struct {
        const char *s;
        int rc;
        uint32_t at;
    } bad_lists[] = {
        {"", -EINVAL, 0},        {"8,0-3", -EINVAL, 2}, {"3-1", -EINVAL, 3},
        {"0-3,3", -EINVAL, 4},   {"1,,2", -EINVAL, 2},  {"1-2-3", -EINVAL, 3},
        {"a", -EINVAL, 0},       {"1,", -EINVAL, 2},    {"64", -ERANGE, 0},
        {"0,60-70", -ERANGE, 2}, {"5,99999999999999999999", -ERANGE, 2},
        {"1-99999999999999999999", -ERANGE, 0},
    };
    for (size_t i = 0; i < sizeof bad_lists / sizeof bad_lists[0]; i++) {
        bad = 999;
        ck_assert_msg(memd_parse_bank_list(bad_lists[i].s, 64, ids, 16, &n, &bad) ==
                              bad_lists[i].rc && bad == bad_lists[i].at,
                      "'%s': want %d at %u, got bad %u", bad_lists[i].s, bad_lists[i].rc,
                      bad_lists[i].at, bad);
        ck_assert_uint_eq(n, 0);
    }
    ck_assert_int_eq(memd_parse_bank_list("0-20", 64, ids, 16, &n, &bad), -ENOSPC);
    /* Written back the same way, cut with "..." when long. */
    char buf[16];
    uint32_t some[] = {0, 1, 2, 3, 8, 10, 11};
    memd_format_bank_list(some, 7, buf, sizeof buf);
    ck_assert_str_eq(buf, "0-3,8,10-11");
    ck_assert_int_eq(memd_parse_bank_list(buf, 64, ids, 16, &n, NULL), 0);
    ck_assert_uint_eq(n, 7);
    uint32_t far[] = {100, 200, 300, 400, 500};
    memd_format_bank_list(far, 5, buf, sizeof buf);
    ck_assert_str_eq(buf, "100,200,300...");
    memd_format_bank_list(far, 0, buf, sizeof buf);
    ck_assert_str_eq(buf, "");
}
END_TEST

START_TEST(test_size)
{
    uint64_t v = 0;
    const char *bad = NULL;
    ck_assert_int_eq(memd_parse_size("4096", &v, NULL), 0);
    ck_assert_uint_eq(v, 4096);
    ck_assert_int_eq(memd_parse_size("4KiB", &v, NULL), 0);
    ck_assert_uint_eq(v, 4096);
    ck_assert_int_eq(memd_parse_size("4K", &v, NULL), 0);
    ck_assert_uint_eq(v, 4096);
    ck_assert_int_eq(memd_parse_size("64 MiB", &v, NULL), 0);
    ck_assert_uint_eq(v, 64ull << 20);
    ck_assert_int_eq(memd_parse_size("1GiB", &v, NULL), 0);
    ck_assert_uint_eq(v, 1ull << 30);
    ck_assert_int_eq(memd_parse_size("2T", &v, NULL), 0);
    ck_assert_uint_eq(v, 2ull << 40);
    ck_assert_int_eq(memd_parse_size("0x10 KiB", &v, NULL), 0);
    ck_assert_uint_eq(v, 16ull << 10);
    ck_assert_int_eq(memd_parse_size("7B", &v, NULL), 0);
    ck_assert_uint_eq(v, 7);
    /* Ambiguous decimal units and fractions are refused, naming the suffix. */
    ck_assert_int_eq(memd_parse_size("4KB", &v, &bad), -ENOENT);
    ck_assert_str_eq(bad, "KB");
    ck_assert_int_eq(memd_parse_size("1.5GiB", &v, &bad), -ENOENT);
    ck_assert_str_eq(bad, ".5GiB");
    ck_assert_int_eq(memd_parse_size("4 kib", &v, &bad), -ENOENT);
    ck_assert_int_eq(memd_parse_size("KiB", &v, NULL), -EINVAL);
    ck_assert_int_eq(memd_parse_size("", &v, NULL), -EINVAL);
    ck_assert_int_eq(memd_parse_size(NULL, &v, NULL), -EINVAL);
    /* Overflow through the digits or through the shift. */
    ck_assert_int_eq(memd_parse_size("16777216TiB", &v, NULL), -ERANGE);
    ck_assert_int_eq(memd_parse_size("16777215TiB", &v, NULL), 0);
    ck_assert_uint_eq(v, 16777215ull << 40);
    ck_assert_int_eq(memd_parse_size("99999999999999999999", &v, NULL), -ERANGE);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("units");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_u64);
    tcase_add_test(tc, test_digits_advance);
    tcase_add_test(tc, test_size);
    tcase_add_test(tc, test_bank_list);
    suite_add_tcase(s, tc);
    return s;
}

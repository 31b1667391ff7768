/* Plan CSV reader/writer: accepted forms, every error with file:line:col, round trip. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "plan_csv.h"

/* Parses text as t.csv; msg gets the error as users see it (memd_error_format). */
static int parse(const char *text, memd_plan_csv *c, char *msg, size_t cap)
{
    memd_error e = {0};
    int rc = memd_plan_csv_parse("t.csv", text, strlen(text), c, &e);
    memd_error_format(&e, msg, cap);
    return rc;
}

START_TEST(parses_basic)
{
    memd_plan_csv c;
    char err[256];
    ck_assert_int_eq(parse("id,lower,upper,size\na,0,10,100\nb,5,6,0\n", &c, err, sizeof err), 0);
    ck_assert_uint_eq(c.n, 2);
    ck_assert_str_eq(memd_plan_csv_id(&c, 0), "a");
    ck_assert_uint_eq(c.bufs[0].lower, 0);
    ck_assert_uint_eq(c.bufs[0].upper, 10);
    ck_assert_uint_eq(c.bufs[0].size, 100);
    ck_assert_uint_eq(c.bufs[0].align, 1);
    ck_assert(!c.bufs[0].pinned);
    ck_assert_uint_eq(c.bufs[1].size, 0);
    ck_assert_uint_eq(c.lines[1], 3);
    ck_assert(!c.has_offset && !c.has_alignment);
    memd_plan_csv_free(&c);
}
END_TEST

START_TEST(parses_any_column_order_crlf_and_pins)
{
    memd_plan_csv c;
    char err[256];
    const char *t = "\xEF\xBB\xBF" "offset,size,alignment,upper,id,lower\r\n"
                    "64,8,16,10,x,0\r\n"
                    "\r\n"
                    ",4,,3,y,1\r\n"
                    ",4,8,3,z z,1"; /* no final newline */
    ck_assert_int_eq(parse(t, &c, err, sizeof err), 0);
    ck_assert_uint_eq(c.n, 3);
    ck_assert(c.has_offset && c.has_alignment);
    ck_assert_uint_eq(c.npinned, 1);
    ck_assert(c.bufs[0].pinned);
    ck_assert_uint_eq(c.bufs[0].offset, 64);
    ck_assert_uint_eq(c.bufs[0].align, 16);
    ck_assert(!c.bufs[1].pinned);
    ck_assert_uint_eq(c.bufs[1].align, 1);
    ck_assert_str_eq(memd_plan_csv_id(&c, 2), "z z");
    ck_assert_uint_eq(c.lines[2], 5);
    memd_plan_csv_free(&c);
    /* Header only: an empty problem. */
    ck_assert_int_eq(parse("id,lower,upper,size\n", &c, err, sizeof err), 0);
    ck_assert_uint_eq(c.n, 0);
    memd_plan_csv_free(&c);
}
END_TEST

static const struct {
    const char *text;
    const char *msg;
} bad[] = {
    {"", "t.csv:1:1: empty file"},
    {"id,lower,upper\n", "t.csv:1:15: missing column 'size'"},
    {"id,lower,upper,size,colour\n", "t.csv:1:21: unknown column 'colour'"},
    {"id,lower,size,upper,size\n", "t.csv:1:21: column 'size' appears twice"},
    {"id,lower,upper,size,alignment,offset,x\n", "t.csv:1:38: too many columns"},
    {"id,lower,upper,size\na,0,10,x7\n", "t.csv:2:8: expected an unsigned integer for 'size'"},
    {"id,lower,upper,size\na,0,10,\n", "t.csv:2:8: expected an unsigned integer for 'size'"},
    {"id,lower,upper,size\na,-1,10,5\n", "t.csv:2:3: expected an unsigned integer for 'lower'"},
    {"id,lower,upper,size\na,0,10, 5\n", "t.csv:2:8: expected an unsigned integer for 'size'"},
    {"id,lower,upper,size\na,0,18446744073709551616,5\n",
     "t.csv:2:5: value for 'upper' does not fit in 64 bits"},
    {"id,lower,upper,size\na,0,10,5\n,1,2,3\n", "t.csv:3:1: empty id"},
    {"id,lower,upper,size\na,0,10,5\nb,1,2\n", "t.csv:3:6: expected 4 fields, found 3"},
    {"id,lower,upper,size\na,0,10,5,9\n", "t.csv:2:10: expected 4 fields, found 5"},
    {"id,lower,upper,size\na,10,10,5\n", "t.csv:2:6: 'upper' (10) must be greater than 'lower'"},
    {"id,lower,upper,size\na,0,1,5\nb,0,1,5\na,3,4,1\n",
     "t.csv:4:1: duplicate id 'a' (first on line 2)"},
    {"id,lower,upper,size,alignment\na,0,1,5,12\n", "t.csv:2:9: alignment 12 is not a power of two"},
    {"id,lower,upper,size,alignment\na,0,1,5,0\n", "t.csv:2:9: alignment 0 is not a power of two"},
    {"id,lower,upper,size,alignment,offset\na,0,1,5,8,12\n",
     "t.csv:2:11: offset 12 is not a multiple of the alignment 8"},
    {"id,lower,upper,size,offset\na,0,1,2,18446744073709551615\n",
     "t.csv:2:9: offset + size does not fit in 64 bits"},
    {"id,lower,upper,size\n\"a\",0,1,5\n", "t.csv:2:1: quoted fields are not supported"},
    {"id,lower,upper,size\na,0,1\r5\n", "t.csv:2:6: stray carriage return"},
};

START_TEST(rejects_with_line_and_column)
{
    memd_plan_csv c;
    char err[256];
    const char *t = bad[_i].text;
    ck_assert_int_eq(parse(t, &c, err, sizeof err), -EINVAL);
    ck_assert_msg(!strncmp(err, bad[_i].msg, strlen(bad[_i].msg)), "case %d: got '%s', want '%s'",
                  _i, err, bad[_i].msg);
    ck_assert_uint_eq(c.n, 0);
    ck_assert_ptr_null(c.bufs);
}
END_TEST

START_TEST(rejects_nul_and_truncates_messages)
{
    memd_plan_csv c;
    memd_error e = {0};
    char err[16];
    static const char t[] = "id,lower,upper,size\na,0\0,1,5\n";
    ck_assert_int_eq(memd_plan_csv_parse("t.csv", t, sizeof t - 1, &c, &e), -EINVAL);
    memd_error_format(&e, err, sizeof err);
    ck_assert_uint_eq(strlen(err), sizeof err - 1);
    char big[128];
    memd_error_format(&e, big, sizeof big);
    ck_assert_str_eq(big, "t.csv:2:4: NUL byte");
}
END_TEST

START_TEST(read_reports_missing_file)
{
    memd_plan_csv c;
    memd_error e = {0};
    char err[256];
    ck_assert_int_eq(memd_plan_csv_read("/nonexistent/plan.csv", &c, &e), -ENOENT);
    memd_error_format(&e, err, sizeof err);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/plan.csv"));
}
END_TEST

START_TEST(writer_round_trip)
{
    memd_plan_csv c, d;
    char err[256];
    const char *t = "size,id,lower,upper,alignment\n8,a,0,10,8\n4,b,5,7,1\n";
    ck_assert_int_eq(parse(t, &c, err, sizeof err), 0);
    uint64_t off[] = {16, 0};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(memd_plan_csv_write(f, &c, off), 0);
    fclose(f);
    ck_assert_str_eq(buf, "size,id,lower,upper,alignment,offset\n8,a,0,10,8,16\n4,b,5,7,1,0\n");
    memd_error e = {0};
    ck_assert_int_eq(memd_plan_csv_parse("out.csv", buf, len, &d, &e), 0);
    ck_assert(d.has_offset);
    ck_assert_uint_eq(d.npinned, 2);
    ck_assert_uint_eq(d.bufs[0].offset, 16);
    ck_assert_uint_eq(d.bufs[1].offset, 0);
    free(buf);
    /* With an offset column already there, it is filled in place. */
    buf = NULL;
    f = open_memstream(&buf, &len);
    uint64_t off2[] = {8, 24};
    ck_assert_int_eq(memd_plan_csv_write(f, &d, off2), 0);
    fclose(f);
    ck_assert_str_eq(buf, "size,id,lower,upper,alignment,offset\n8,a,0,10,8,8\n4,b,5,7,1,24\n");
    free(buf);
    memd_plan_csv_free(&c);
    memd_plan_csv_free(&d);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("plan-csv");
    TCase *tc = tcase_create("plan-csv");
    tcase_add_test(tc, parses_basic);
    tcase_add_test(tc, parses_any_column_order_crlf_and_pins);
    tcase_add_loop_test(tc, rejects_with_line_and_column, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_test(tc, rejects_nul_and_truncates_messages);
    tcase_add_test(tc, read_reports_missing_file);
    tcase_add_test(tc, writer_round_trip);
    suite_add_tcase(s, tc);
    return s;
}

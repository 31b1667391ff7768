/* Text from outside (common/text.c): what the protocol and YAML borders refuse, and how
 * every output escapes what it prints. */
#include <errno.h>
#include <string.h>

#include "check_main.h"
#include "text.h"

static const struct {
    const char *s;
    size_t at; /* SIZE_MAX: valid */
    const char *why;
} cases[] = {
    {"", SIZE_MAX, NULL},
    {"weights.v2-final_7", SIZE_MAX, NULL},
    {"gewichte-\xc3\xa4\xe2\x82\xac\xf0\x9f\x98\x80", SIZE_MAX, NULL}, /* ä € 😀 */
    {"\x1b[2Jx", 0, "a control character"},
    {"a\nb", 1, "a control character"},
    {"tab\there", 3, "a control character"},
    {"del\x7f", 3, "a control character"},
    {"c1\xc2\x85", 2, "a control character"}, /* U+0085 NEL */
    {"c1\xc2\x9b[2J", 2, "a control character"}, /* U+009B CSI */
    {"\xc2\xa0nbsp", SIZE_MAX, NULL},           /* U+00A0 is text */
    {"bad\xff", 3, "not valid UTF-8"},
    {"cut\xe2\x82", 3, "not valid UTF-8"},
    {"overlong\xc0\xaf", 8, "not valid UTF-8"},
    {"surrogate\xed\xa0\x80", 9, "not valid UTF-8"},
    {"big\xf4\x90\x80\x80", 3, "not valid UTF-8"}, /* past U+10FFFF */
    {"lone\x80", 4, "not valid UTF-8"},
};

START_TEST(check_names)
{
    size_t at = SIZE_MAX;
    const char *why = NULL;
    int rc = memd_text_check(cases[_i].s, &at, &why);
    if (cases[_i].at == SIZE_MAX) {
        ck_assert_msg(rc == 0, "case %d refused at %zu", _i, at);
    } else {
        ck_assert_msg(rc == -EILSEQ, "case %d accepted", _i);
        ck_assert_uint_eq(at, cases[_i].at);
        ck_assert_str_eq(why, cases[_i].why);
    }
}
END_TEST

START_TEST(escape_for_output)
{
    char b[64];
    ck_assert_str_eq(memd_text_escape("plain name", b, sizeof b), "plain name");
    ck_assert_str_eq(memd_text_escape("\x1b[31mred", b, sizeof b), "\\x1b[31mred");
    ck_assert_str_eq(memd_text_escape("a\nforged line", b, sizeof b), "a\\x0aforged line");
    ck_assert_str_eq(memd_text_escape("back\\slash", b, sizeof b), "back\\\\slash");
    ck_assert_str_eq(memd_text_escape("\xc3\xa4\xff\xc2\x9b", b, sizeof b), "\xc3\xa4\\xff\\xc2\\x9b");
    /* what comes out is valid text itself */
    ck_assert_int_eq(memd_text_check(memd_text_escape("\x01\x02\xfe", b, sizeof b), NULL, NULL),
                     0);
    /* cut to the buffer, never in the middle of an escape or a character */
    char s[12];
    ck_assert_str_eq(memd_text_escape("abcdefghijklmnop", s, sizeof s), "abcdefgh...");
    ck_assert_str_eq(memd_text_escape("ab\x1b\x1b\x1b", s, sizeof s), "ab\\x1b...");
    ck_assert_str_eq(memd_text_escape("abcdef\xe2\x82\xac\xe2\x82\xac", s, sizeof s),
                     "abcdef...");
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("text");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, check_names, 0, (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(tc, escape_for_output);
    suite_add_tcase(s, tc);
    return s;
}

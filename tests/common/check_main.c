/* Runs one Check suite and reports it as TAP on stdout, so meson counts every case. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "check_main.h"

uint64_t memd_test_seed(uint64_t dflt)
{
    const char *env = getenv("MEMD_TEST_SEED");
    if (!env || !*env)
        return dflt;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(env, &end, 0);
    ck_assert_msg(*end == '\0' && errno == 0 && env[0] != '-',
                  "MEMD_TEST_SEED='%s' is not an unsigned integer", env);
    return v;
}

TCase *memd_test_tcase(Suite *s, const char *name, double timeout, SFun setup, SFun teardown,
                       const TTest *const *tests)
{
    TCase *tc = tcase_create(name);
    if (timeout > 0)
        tcase_set_timeout(tc, timeout);
    if (setup || teardown)
        tcase_add_checked_fixture(tc, setup, teardown);
    for (; *tests; tests++)
        tcase_add_test(tc, *tests);
    suite_add_tcase(s, tc);
    return tc;
}

int main(void)
{
    SRunner *sr = srunner_create(memd_test_suite());
    srunner_set_tap(sr, "-");
    srunner_run_all(sr, CK_SILENT);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

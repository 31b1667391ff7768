#ifndef MEMD_TESTS_CHECK_MAIN_H
#define MEMD_TESTS_CHECK_MAIN_H

#include <check.h>
#include <stdint.h>

/* Each Check suite file defines this; tests/common/check_main.c runs it as TAP. */
Suite *memd_test_suite(void);

/* The seed of a randomized test: MEMD_TEST_SEED (an unsigned integer, checked) or dflt,
 * so a failure printed with its seed can be replayed. */
uint64_t memd_test_seed(uint64_t dflt);

/* Adds to s a test case named name: its timeout in seconds (0: CK_DEFAULT_TIMEOUT), a
 * checked fixture (setup and teardown NULL: none) and tests, a NULL-ended list. */
TCase *memd_test_tcase(Suite *s, const char *name, double timeout, SFun setup, SFun teardown,
                       const TTest *const *tests);

#endif

#ifndef MEMD_TESTS_CHECK_MAIN_H
#define MEMD_TESTS_CHECK_MAIN_H

#include <check.h>

/* Each Check suite file defines this; tests/unit/check_main.c runs it as TAP. */
Suite *memd_test_suite(void);

#endif

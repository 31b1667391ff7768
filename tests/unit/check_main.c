/* Runs one Check suite and reports it as TAP on stdout, so meson counts every case. */
#include <check.h>
#include <stdlib.h>

#include "check_main.h"

int main(void)
{
    SRunner *sr = srunner_create(memd_test_suite());
    srunner_set_tap(sr, "-");
    srunner_run_all(sr, CK_SILENT);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

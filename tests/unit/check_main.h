/*
 * The main() every unit-test binary shares: run one Check suite, print a
 * normal report, exit non-zero when any test failed. Use it as the last line
 * of a test file:
 *
 *     OFFERD_CHECK_MAIN(recordio_suite)
 */
#ifndef OFFERD_TESTS_CHECK_MAIN_H
#define OFFERD_TESTS_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

#define OFFERD_CHECK_MAIN(suite_fn)                                            \
    int main(void)                                                             \
    {                                                                          \
        SRunner *sr = srunner_create(suite_fn());                              \
        srunner_run_all(sr, CK_NORMAL);                                        \
        int failed = srunner_ntests_failed(sr);                                \
        srunner_free(sr);                                                      \
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;                      \
    }

#endif

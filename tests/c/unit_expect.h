/*
 * Checks for the pure unit tests (no MPI): a failed EXPECT prints where and
 * what, and counts; main returns unit_result("name") so that any failure
 * makes the test fail after all checks have run. Header-only.
 */
#ifndef MPIDHT_UNIT_EXPECT_H
#define MPIDHT_UNIT_EXPECT_H

#include <stdio.h>
#include <stdlib.h>

static int unit_failures;

#define EXPECT(cond)                                                           \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
            ++unit_failures;                                                   \
        }                                                                      \
    } while (0)

static inline int unit_result(const char *what)
{
    if (unit_failures)
        fprintf(stderr, "%d %s check(s) failed\n", unit_failures, what);
    return unit_failures ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif /* MPIDHT_UNIT_EXPECT_H */

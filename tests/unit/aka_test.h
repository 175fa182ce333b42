/*
 * aka_test.h — the one include every cmocka test starts with.
 *
 * cmocka.h needs <setjmp.h>, <stdarg.h>, <stddef.h> and <stdint.h> first;
 * clang-format's include sorting would break that order in each test file,
 * so the order is fixed once here.
 */
#ifndef AKA_TEST_H
#define AKA_TEST_H

// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include "base/fs.h"

#include <stdio.h>
#include <time.h>

/* Seconds on CLOCK_MONOTONIC, for tests that bound how long something took. */
static inline double aka_test_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * A scratch directory shared by every test of a group: pass
 * aka_scratch_setup / aka_scratch_teardown to cmocka_run_group_tests and
 * build paths under aka_scratch_dir().
 */
static inline char *aka_scratch_dir(void)
{
    static char dir[256];
    return dir;
}

static inline int aka_scratch_setup(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    if (aka_make_temp_dir(NULL, "aka-unit-test", &sb, &err) < 0)
        return -1;
    snprintf(aka_scratch_dir(), 256, "%s", sb.buf);
    strbuf_release(&sb);
    return 0;
}

static inline int aka_scratch_teardown(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    return aka_remove_tree(aka_scratch_dir(), &err);
}

#endif

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

#endif

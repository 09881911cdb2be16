// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// CHECK for the tests that run as plain programs around child processes
// (opencl_tuning, opencl_conv_tuning) rather than under Catch2: on failure
// it prints the condition and a printf-style message, and exits 1.
#pragma once
#include <cstdio>
#include <cstdlib>

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "FAILED %s:%d: %s\n  ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                       \
      std::fprintf(stderr, "\n");                                              \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The unary kernel family (UNARY) for one Kokkos execution space:
// VNN_KOKKOS_INSTANTIATE_UNARY(Space) in a plugin's kernels_unary.cpp
// compiles it there (kernels/entry.hpp).
#pragma once
#include "kokkos/kernels/entry.hpp"
#include "kokkos/kernels/elementwise.hpp"

#define VNN_KOKKOS_INSTANTIATE_UNARY(Space) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, unary, VNN_KOKKOS_UNARY_PARAMS)

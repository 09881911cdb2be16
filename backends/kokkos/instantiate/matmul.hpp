// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The matmul kernel family (MATMUL (the portable kernel) and IM2COL / COL2IM)
// for one Kokkos execution space: VNN_KOKKOS_INSTANTIATE_MATMUL(Space) in a
// plugin's kernels_matmul.cpp compiles it there (kernels/entry.hpp).
#pragma once
#include "kokkos/kernels/entry.hpp"
#include "kokkos/kernels/conv.hpp"
#include "kokkos/kernels/matmul.hpp"

#define VNN_KOKKOS_INSTANTIATE_MATMUL(Space) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, matmul, VNN_KOKKOS_MATMUL_PARAMS) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, im2col, VNN_KOKKOS_IM2COL_PARAMS)

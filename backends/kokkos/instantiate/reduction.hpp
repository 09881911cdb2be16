// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The reduction kernel family (REDUCE and SOFTMAX) for one Kokkos execution
// space: VNN_KOKKOS_INSTANTIATE_REDUCTION(Space) in a plugin's
// kernels_reduction.cpp compiles it there (kernels/entry.hpp).
#pragma once
#include "kokkos/kernels/entry.hpp"
#include "kokkos/kernels/reduction.hpp"
#include "kokkos/kernels/softmax.hpp"

#define VNN_KOKKOS_INSTANTIATE_REDUCTION(Space) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, reduce, VNN_KOKKOS_REDUCE_PARAMS) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, softmax, VNN_KOKKOS_SOFTMAX_PARAMS)

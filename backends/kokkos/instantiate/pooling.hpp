// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The pooling kernel family (POOL2D and POOL2D_BACKWARD) for one Kokkos
// execution space: VNN_KOKKOS_INSTANTIATE_POOLING(Space) in a plugin's
// kernels_pooling.cpp compiles it there (kernels/entry.hpp).
#pragma once
#include "kokkos/kernels/entry.hpp"
#include "kokkos/kernels/pooling.hpp"

#define VNN_KOKKOS_INSTANTIATE_POOLING(Space) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, pool2d, VNN_KOKKOS_POOL2D_PARAMS)

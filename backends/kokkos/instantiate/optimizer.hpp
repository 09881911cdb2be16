// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The optimizer kernel family (OPTIMIZER_STEP and UNSCALE_CHECK) for one Kokkos
// execution space: VNN_KOKKOS_INSTANTIATE_OPTIMIZER(Space) in a plugin's
// kernels_optimizer.cpp compiles it there (kernels/entry.hpp).
#pragma once
#include "kokkos/kernels/entry.hpp"
#include "kokkos/kernels/optimizer.hpp"

#define VNN_KOKKOS_INSTANTIATE_OPTIMIZER(Space) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, optimizer_step, VNN_KOKKOS_OPTIMIZER_STEP_PARAMS) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, unscale_check, VNN_KOKKOS_UNSCALE_CHECK_PARAMS)

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The grid-sampling kernel family (GRID_SAMPLE and GRID_SAMPLE_BACKWARD)
// for one Kokkos execution space: VNN_KOKKOS_INSTANTIATE_GRID_SAMPLE(Space)
// in a plugin's kernels_grid_sample.cpp compiles it there (kernels/entry.hpp).
#pragma once
#include "kokkos/kernels/entry.hpp"
#include "kokkos/kernels/grid_sample.hpp"

#define VNN_KOKKOS_INSTANTIATE_GRID_SAMPLE(Space) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, grid_sample, VNN_KOKKOS_GRID_SAMPLE_PARAMS)

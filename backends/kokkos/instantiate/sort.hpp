// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The sort kernel family (SORT and SEARCHSORTED) for one Kokkos execution
// space: VNN_KOKKOS_INSTANTIATE_SORT(Space) in a plugin's kernels_sort.cpp
// compiles it there (kernels/entry.hpp).
#pragma once
#include "kokkos/kernels/entry.hpp"
#include "kokkos/kernels/sort.hpp"

#define VNN_KOKKOS_INSTANTIATE_SORT(Space) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, sort, VNN_KOKKOS_SORT_PARAMS) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, searchsorted, VNN_KOKKOS_SEARCHSORTED_PARAMS)

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The indexing kernel family (INDEX_SELECT, GATHER, SCATTER, INDEX_ADD and
// RANDOM) for one Kokkos execution space:
// VNN_KOKKOS_INSTANTIATE_INDEXING(Space) in a plugin's kernels_indexing.cpp
// compiles it there (kernels/entry.hpp).
#pragma once
#include "kokkos/kernels/entry.hpp"
#include "kokkos/kernels/indexing.hpp"
#include "kokkos/kernels/random.hpp"

#define VNN_KOKKOS_INSTANTIATE_INDEXING(Space) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, indexing, VNN_KOKKOS_INDEXING_PARAMS) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, random, VNN_KOKKOS_RANDOM_PARAMS)

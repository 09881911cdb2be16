// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The copy kernel family (FILL, COPY and WHERE) for one Kokkos execution space:
// VNN_KOKKOS_INSTANTIATE_COPY(Space) in a plugin's kernels_copy.cpp compiles it
// there (kernels/entry.hpp).
#pragma once
#include "kokkos/kernels/entry.hpp"
#include "kokkos/kernels/copy.hpp"
#include "kokkos/kernels/fill.hpp"
#include "kokkos/kernels/where.hpp"

#define VNN_KOKKOS_INSTANTIATE_COPY(Space) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, fill, VNN_KOKKOS_FILL_PARAMS) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, copy, VNN_KOKKOS_COPY_PARAMS) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, where, VNN_KOKKOS_WHERE_PARAMS)

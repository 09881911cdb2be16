// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The binary kernel family (BINARY) for one Kokkos execution space:
// VNN_KOKKOS_INSTANTIATE_BINARY(Space) in a plugin's kernels_binary.cpp
// compiles it there (kernels/entry.hpp). UNARY, from the same header, is a
// piece of its own (unary.hpp): each is one of the plugin's largest.
#pragma once
#include "kokkos/kernels/entry.hpp"
#include "kokkos/kernels/elementwise.hpp"

#define VNN_KOKKOS_INSTANTIATE_BINARY(Space) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, binary, VNN_KOKKOS_BINARY_PARAMS)

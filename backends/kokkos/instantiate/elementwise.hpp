// The elementwise kernel family (BINARY and UNARY) for one Kokkos execution
// space: VNN_KOKKOS_INSTANTIATE_ELEMENTWISE(Space) in a plugin's
// kernels_elementwise.cpp compiles it there (kernels/entry.hpp).
#pragma once
#include "kokkos/kernels/entry.hpp"
#include "kokkos/kernels/elementwise.hpp"

#define VNN_KOKKOS_INSTANTIATE_ELEMENTWISE(Space) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, binary, VNN_KOKKOS_BINARY_PARAMS) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, unary, VNN_KOKKOS_UNARY_PARAMS)

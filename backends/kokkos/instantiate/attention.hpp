// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The attention kernel family (SDPA, SDPA_BACKWARD, and the transformer's
// other fused op, LAYER_NORM / LAYER_NORM_BACKWARD) for one Kokkos
// execution space: VNN_KOKKOS_INSTANTIATE_ATTENTION(Space) in a plugin's
// kernels_attention.cpp compiles it there (kernels/entry.hpp).
#pragma once
#include "kokkos/kernels/entry.hpp"
#include "kokkos/kernels/attention.hpp"
#include "kokkos/kernels/layer_norm.hpp"

#define VNN_KOKKOS_INSTANTIATE_ATTENTION(Space)                       \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, sdpa, VNN_KOKKOS_SDPA_PARAMS) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, layer_norm, VNN_KOKKOS_LAYER_NORM_PARAMS)

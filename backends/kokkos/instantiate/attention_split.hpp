// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's split of the attention family by dtype (split.hpp):
// float64 (tests and gradient checks; no training step runs it) in
// backends/openmp/kernels_attention_cold.cpp at -O1, float32 in
// kernels_attention.cpp. The GPU plugins instantiate the whole family in
// one piece (attention.hpp).
#pragma once
#include "kokkos/instantiate/attention.hpp"
#include "kokkos/instantiate/split.hpp"

// The leaves of SDPA (host and team kernels) and LAYER_NORM on the dtype T.
#define VNN_KOKKOS_ATTENTION_EXTERN(Space, T)                                                                 \
  extern template decltype(vnn::kernels::sdpa_host<Space, T>) vnn::kernels::sdpa_host<Space, T>;                 \
  extern template decltype(vnn::kernels::sdpa_forward_team<Space, T>) vnn::kernels::sdpa_forward_team<Space, T>; \
  extern template decltype(vnn::kernels::sdpa_backward_team<Space, T>)                                          \
      vnn::kernels::sdpa_backward_team<Space, T>;                                                             \
  extern template decltype(vnn::kernels::layer_norm_host<Space, T>) vnn::kernels::layer_norm_host<Space, T>;
#define VNN_KOKKOS_ATTENTION_LEAVES(Space, T) template void vnn::kernels::split::attention_leaves<Space, T>();

namespace vnn::kernels::split {
template <class Exec, class T>
void attention_leaves() {
  keep(&sdpa_host<Exec, T>);
  keep(&sdpa_forward_team<Exec, T>);
  keep(&sdpa_backward_team<Exec, T>);
  keep(&layer_norm_host<Exec, T>);
}
}  // namespace vnn::kernels::split

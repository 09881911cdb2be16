// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's split of the copy family by dtype (split.hpp): what
// backends/openmp/kernels_copy*.cpp instantiate where. The GPU plugins
// instantiate the whole family in one piece (copy.hpp).
#pragma once
#include "kokkos/instantiate/copy.hpp"
#include "kokkos/instantiate/split.hpp"
#include "kokkos/kernels/dispatch.hpp"

// Split by dtype pair (split.hpp), COPY only (FILL and WHERE are small):
// the leaves copy_typed<Space, To, From>. The hot piece keeps the copies to
// float32 from float32, bool (dropout masks) and uint8 (images), and
// declares every other pair; the lowp piece defines the pairs among
// float32, float16 and bfloat16, the cold piece the rest.
#define VNN_KOKKOS_COPY_EXTERN_PAIR(Space, To, From) \
  extern template decltype(vnn::kernels::copy_typed<Space, To, From>) vnn::kernels::copy_typed<Space, To, From>;
#define VNN_KOKKOS_COPY_EXTERN_TO(Space, To)                                                       \
  VNN_KOKKOS_COPY_EXTERN_PAIR(Space, To, float) VNN_KOKKOS_COPY_EXTERN_PAIR(Space, To, double)     \
  VNN_KOKKOS_COPY_EXTERN_PAIR(Space, To, int32_t) VNN_KOKKOS_COPY_EXTERN_PAIR(Space, To, int64_t)  \
  VNN_KOKKOS_COPY_EXTERN_PAIR(Space, To, uint8_t)                                                  \
  VNN_KOKKOS_COPY_EXTERN_PAIR(Space, To, vnn::kernels::Bool)                                       \
  VNN_KOKKOS_COPY_EXTERN_PAIR(Space, To, vnn::kernels::Half)                                       \
  VNN_KOKKOS_COPY_EXTERN_PAIR(Space, To, vnn::kernels::BFloat16)                                   \
  VNN_KOKKOS_COPY_EXTERN_PAIR(Space, To, int8_t) VNN_KOKKOS_COPY_EXTERN_PAIR(Space, To, int16_t)
// Every pair but the hot ones.
#define VNN_KOKKOS_COPY_EXTERN(Space)                                                                   \
  VNN_KOKKOS_OTHER_TYPES(VNN_KOKKOS_COPY_EXTERN_TO, Space)                                              \
  VNN_KOKKOS_COPY_EXTERN_PAIR(Space, float, vnn::kernels::Half)                                         \
  VNN_KOKKOS_COPY_EXTERN_PAIR(Space, float, vnn::kernels::BFloat16)                                     \
  VNN_KOKKOS_COPY_EXTERN_PAIR(Space, float, double) VNN_KOKKOS_COPY_EXTERN_PAIR(Space, float, int32_t) \
  VNN_KOKKOS_COPY_EXTERN_PAIR(Space, float, int64_t)                                                   \
  VNN_KOKKOS_COPY_EXTERN_PAIR(Space, float, int8_t) VNN_KOKKOS_COPY_EXTERN_PAIR(Space, float, int16_t)
#define VNN_KOKKOS_COPY_LEAVES(Space, To, FromSet) \
  template void vnn::kernels::split::copy_leaves<Space, To>(vnn::kernels::split::FromSet);

namespace vnn::kernels::split {
using Lowp = TypeSet<Half, BFloat16>;
using FloatAndLowp = TypeSet<float, Half, BFloat16>;
using Cold = TypeSet<double, int32_t, int64_t, uint8_t, Bool, int8_t, int16_t>;
using ColdToFloat = TypeSet<double, int32_t, int64_t, int8_t, int16_t>;  // float32 from bool and uint8 is hot
using All = AllTypes;
template <class Exec, class To, class... Froms>
void copy_leaves(TypeSet<Froms...>) {
  (keep(&copy_typed<Exec, To, Froms>), ...);
}
}  // namespace vnn::kernels::split

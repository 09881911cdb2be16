// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's split of the reduction family by dtype (split.hpp): what
// backends/openmp/kernels_reduction*.cpp instantiate where. The GPU plugins
// instantiate the whole family in one piece (reduction.hpp).
#pragma once
#include "kokkos/instantiate/reduction.hpp"
#include "kokkos/instantiate/split.hpp"

// Split by dtype (split.hpp), REDUCE only (SOFTMAX is small): the leaves
// reduce_typed<Space, T, O, Fn> of the dtype T (O as ReduceOut says),
// declared in the hot piece, defined in T's piece for every Fn reduce_out
// takes with T.
#define VNN_KOKKOS_REDUCE_EXTERN_FN(Fn, Space, T)                                                        \
  extern template decltype(vnn::kernels::reduce_typed<Space, T, vnn::kernels::ReduceOut<Fn, T>::type, Fn>) \
      vnn::kernels::reduce_typed<Space, T, vnn::kernels::ReduceOut<Fn, T>::type, Fn>;
// REDUCE's dtypes but float32 (kernels/reduction.hpp: ArithmeticTypes).
#define VNN_KOKKOS_REDUCE_COLD_TYPES(X, Space) X(Space, double) X(Space, int32_t) X(Space, int64_t)
#define VNN_KOKKOS_REDUCE_EXTERN(Space, T) VNN_KOKKOS_FOR_CODES(VNN_KOKKOS_REDUCE_EXTERN_FN, Space, T)
#define VNN_KOKKOS_REDUCE_LEAVES(Space, T) \
  template void vnn::kernels::split::reduce_leaves<Space, T>(std::make_integer_sequence<int, VNN_REDUCE_COUNT_>);

namespace vnn::kernels::split {
static_assert(VNN_REDUCE_COUNT_ <= VNN_KOKKOS_MAX_CODES, "instantiate/split.hpp: VNN_KOKKOS_FOR_CODES needs more codes");
template <class Exec, class T, int Fn>
void reduce_leaf() {
  if constexpr (Fn != VNN_REDUCE_MEAN || std::is_floating_point_v<T>)
    keep(&reduce_typed<Exec, T, typename ReduceOut<Fn, T>::type, Fn>);
}
template <class Exec, class T, int... Fns>
void reduce_leaves(std::integer_sequence<int, Fns...>) {
  (reduce_leaf<Exec, T, Fns>(), ...);
}
}  // namespace vnn::kernels::split

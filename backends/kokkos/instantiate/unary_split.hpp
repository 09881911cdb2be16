// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's split of the unary family by dtype (split.hpp): what
// backends/openmp/kernels_unary*.cpp instantiate where. The GPU plugins
// instantiate the whole family in one piece (unary.hpp).
#pragma once
#include "kokkos/instantiate/unary.hpp"
#include "kokkos/instantiate/split.hpp"

// Split by dtype (split.hpp): the leaves unary_typed<Space, T, O, Fn> of the
// dtype T (O: T, or bool for the BOOLOUT ops), declared in the hot piece,
// defined in T's piece for every Fn unary_fn calls with T.
#define VNN_KOKKOS_UNARY_EXTERN_FN(Fn, Space, T)                                                                 \
  extern template decltype(vnn::kernels::unary_typed<Space, T, T, Fn>) vnn::kernels::unary_typed<Space, T, T, Fn>; \
  extern template decltype(vnn::kernels::unary_typed<Space, T, vnn::kernels::Bool, Fn>)                          \
      vnn::kernels::unary_typed<Space, T, vnn::kernels::Bool, Fn>;
#define VNN_KOKKOS_UNARY_EXTERN(Space, T) VNN_KOKKOS_FOR_CODES(VNN_KOKKOS_UNARY_EXTERN_FN, Space, T)
#define VNN_KOKKOS_UNARY_LEAVES(Space, T) \
  template void vnn::kernels::split::unary_leaves<Space, T>(std::make_integer_sequence<int, VNN_UNARY_COUNT_>);

namespace vnn::kernels::split {
static_assert(VNN_UNARY_COUNT_ <= VNN_KOKKOS_MAX_CODES, "instantiate/split.hpp: VNN_KOKKOS_FOR_CODES needs more codes");
template <class Exec, class T, int Fn>
void unary_leaf() {
  using O = std::conditional_t<unary_bool_out<Fn>, Bool, T>;
  if constexpr (unary_takes<Fn, compute_t<T>>) keep(&unary_typed<Exec, T, O, Fn>);
}
template <class Exec, class T, int... Fns>
void unary_leaves(std::integer_sequence<int, Fns...>) {
  (unary_leaf<Exec, T, Fns>(), ...);
}
}  // namespace vnn::kernels::split

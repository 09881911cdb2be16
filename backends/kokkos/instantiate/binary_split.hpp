// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's split of the binary family by dtype (split.hpp): what
// backends/openmp/kernels_binary*.cpp instantiate where. The GPU plugins
// instantiate the whole family in one piece (binary.hpp).
#pragma once
#include "kokkos/instantiate/binary.hpp"
#include "kokkos/instantiate/split.hpp"

// Split by dtype (split.hpp): the leaves binary_typed<Space, T, Fn> of the
// dtype T, declared in the hot piece, defined in T's piece for every Fn
// binary_fn calls with T.
#define VNN_KOKKOS_BINARY_EXTERN_FN(Fn, Space, T) \
  extern template decltype(vnn::kernels::binary_typed<Space, T, Fn>) vnn::kernels::binary_typed<Space, T, Fn>;
#define VNN_KOKKOS_BINARY_EXTERN(Space, T) VNN_KOKKOS_FOR_CODES(VNN_KOKKOS_BINARY_EXTERN_FN, Space, T)
#define VNN_KOKKOS_BINARY_LEAVES(Space, T) \
  template void vnn::kernels::split::binary_leaves<Space, T>(std::make_integer_sequence<int, VNN_BINARY_COUNT_>);

namespace vnn::kernels::split {
static_assert(VNN_BINARY_COUNT_ <= VNN_KOKKOS_MAX_CODES, "instantiate/split.hpp: VNN_KOKKOS_FOR_CODES needs more codes");
template <class Exec, class T, int Fn>
void binary_leaf() {
  if constexpr (binary_takes<Fn, compute_t<T>>) keep(&binary_typed<Exec, T, Fn>);
}
template <class Exec, class T, int... Fns>
void binary_leaves(std::integer_sequence<int, Fns...>) {
  (binary_leaf<Exec, T, Fns>(), ...);
}
}  // namespace vnn::kernels::split

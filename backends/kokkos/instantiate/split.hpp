// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Splitting a kernel family of a host plugin by dtype, so that each piece
// gets the optimisation level its use deserves (issue 34: the CPU plugin's
// kernels were most of the quick start's build time, and most of that was
// -O3 on dtypes no training step touches).
//
// A family's entry (e.g. kernels::binary<Space>) is instantiated in its hot
// piece, kernels_<family>.cpp, at -O3. There, the leaf templates of the
// other dtypes (binary_typed<Space, T, Fn> & co, the functions that hold
// the parallel loops) are declared `extern template`: the entry calls them
// instead of instantiating them. The lowp piece (float16 / bfloat16,
// computed in float32) and the cold piece (float64, the integers, bool)
// define them, each at its own level (backends/openmp/CMakeLists.txt).
// A family's macros are in instantiate/<family>_split.hpp, which only the
// CPU plugin's pieces include (the GPU plugins build each family whole).
//
// The leaves are named without their parameter lists (`extern template
// decltype(f<...>) f<...>;`), so a kernel body may change its signature
// freely. The function codes are enumerated up to 128 by the preprocessor
// for the extern declarations (unused ones are harmless) and up to the ABI
// count (VNN_BINARY_COUNT_ ...) for the definitions, so a new code needs no
// edit here; a piece that misses a leaf the entry calls fails the plugin's
// link (--no-undefined), one that defines a wrong one fails to compile.
#pragma once
#include <utility>

namespace vnn::kernels::split {

// Makes the compiler emit the function p points to in this translation
// unit (an implicit instantiation, out of line, for the hot piece to call).
template <class P>
inline void keep(P p) {
  asm volatile("" : : "r"(p));
}

}  // namespace vnn::kernels::split

// X(code, a, b) for every function code 0..127.
#define VNN_KOKKOS_FOR_CODES(X, a, b) \
  X(0, a, b) X(1, a, b) X(2, a, b) X(3, a, b) X(4, a, b) X(5, a, b) X(6, a, b) X(7, a, b) X(8, a, b) X(9, a, b) \
  X(10, a, b) X(11, a, b) X(12, a, b) X(13, a, b) X(14, a, b) X(15, a, b) X(16, a, b) X(17, a, b) X(18, a, b) \
  X(19, a, b) X(20, a, b) X(21, a, b) X(22, a, b) X(23, a, b) X(24, a, b) X(25, a, b) X(26, a, b) X(27, a, b) \
  X(28, a, b) X(29, a, b) X(30, a, b) X(31, a, b) X(32, a, b) X(33, a, b) X(34, a, b) X(35, a, b) X(36, a, b) \
  X(37, a, b) X(38, a, b) X(39, a, b) X(40, a, b) X(41, a, b) X(42, a, b) X(43, a, b) X(44, a, b) X(45, a, b) \
  X(46, a, b) X(47, a, b) X(48, a, b) X(49, a, b) X(50, a, b) X(51, a, b) X(52, a, b) X(53, a, b) X(54, a, b) \
  X(55, a, b) X(56, a, b) X(57, a, b) X(58, a, b) X(59, a, b) X(60, a, b) X(61, a, b) X(62, a, b) X(63, a, b) \
  X(64, a, b) X(65, a, b) X(66, a, b) X(67, a, b) X(68, a, b) X(69, a, b) X(70, a, b) X(71, a, b) X(72, a, b) \
  X(73, a, b) X(74, a, b) X(75, a, b) X(76, a, b) X(77, a, b) X(78, a, b) X(79, a, b) X(80, a, b) X(81, a, b) \
  X(82, a, b) X(83, a, b) X(84, a, b) X(85, a, b) X(86, a, b) X(87, a, b) X(88, a, b) X(89, a, b) X(90, a, b) \
  X(91, a, b) X(92, a, b) X(93, a, b) X(94, a, b) X(95, a, b) X(96, a, b) X(97, a, b) X(98, a, b) X(99, a, b) \
  X(100, a, b) X(101, a, b) X(102, a, b) X(103, a, b) X(104, a, b) X(105, a, b) X(106, a, b) X(107, a, b) \
  X(108, a, b) X(109, a, b) X(110, a, b) X(111, a, b) X(112, a, b) X(113, a, b) X(114, a, b) X(115, a, b) \
  X(116, a, b) X(117, a, b) X(118, a, b) X(119, a, b) X(120, a, b) X(121, a, b) X(122, a, b) X(123, a, b) \
  X(124, a, b) X(125, a, b) X(126, a, b) X(127, a, b)
#define VNN_KOKKOS_MAX_CODES 128

// The dtype groups of the split families, as X(Space, T) lists.
#define VNN_KOKKOS_LOWP_TYPES(X, Space) X(Space, vnn::kernels::Half) X(Space, vnn::kernels::BFloat16)
#define VNN_KOKKOS_COLD_TYPES(X, Space) \
  X(Space, double) X(Space, int32_t) X(Space, int64_t) X(Space, uint8_t) X(Space, vnn::kernels::Bool) \
  X(Space, int8_t) X(Space, int16_t)
// Every storage type but float32 (the hot one).
#define VNN_KOKKOS_OTHER_TYPES(X, Space) VNN_KOKKOS_LOWP_TYPES(X, Space) VNN_KOKKOS_COLD_TYPES(X, Space)

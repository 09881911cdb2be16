// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's attention kernels (kokkos/instantiate/attention.hpp): on
// the OpenMP pool (tiles in parallel, their products through OpenBLAS) and,
// for small work and other threads, inline on Serial. float32 here at -O3,
// float64 in kernels_attention_cold.cpp (instantiate/split.hpp).
#include "kokkos/instantiate/attention_split.hpp"

VNN_KOKKOS_ATTENTION_EXTERN(Kokkos::OpenMP, double)
VNN_KOKKOS_ATTENTION_EXTERN(Kokkos::Serial, double)
VNN_KOKKOS_INSTANTIATE_ATTENTION(Kokkos::OpenMP)
VNN_KOKKOS_INSTANTIATE_ATTENTION(Kokkos::Serial)

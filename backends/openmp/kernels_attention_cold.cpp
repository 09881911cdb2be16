// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's attention kernels on float64, called by
// kernels_attention.cpp (instantiate/attention_split.hpp): at -O1.
#include "kokkos/instantiate/attention_split.hpp"

VNN_KOKKOS_ATTENTION_LEAVES(Kokkos::OpenMP, double)
VNN_KOKKOS_ATTENTION_LEAVES(Kokkos::Serial, double)

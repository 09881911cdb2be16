// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's matmul kernels (kokkos/instantiate/matmul.hpp): on the
// OpenMP pool and, for small work and other threads, inline on Serial.
#include "kokkos/instantiate/matmul.hpp"

VNN_KOKKOS_INSTANTIATE_MATMUL(Kokkos::OpenMP)
VNN_KOKKOS_INSTANTIATE_MATMUL(Kokkos::Serial)

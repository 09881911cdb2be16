// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's indexing kernels (kokkos/instantiate/indexing.hpp): on the
// OpenMP pool and, for small work and other threads, inline on Serial.
#include "kokkos/instantiate/indexing.hpp"

VNN_KOKKOS_INSTANTIATE_INDEXING(Kokkos::OpenMP)
VNN_KOKKOS_INSTANTIATE_INDEXING(Kokkos::Serial)

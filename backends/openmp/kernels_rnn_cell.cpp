// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's recurrent-cell kernels (kokkos/instantiate/rnn_cell.hpp):
// on the OpenMP pool and, for small work and other threads, inline on Serial.
#include "kokkos/instantiate/rnn_cell.hpp"

VNN_KOKKOS_INSTANTIATE_RNN_CELL(Kokkos::OpenMP)
VNN_KOKKOS_INSTANTIATE_RNN_CELL(Kokkos::Serial)

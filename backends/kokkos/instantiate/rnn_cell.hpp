// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The recurrent-cell kernel family (RNN_CELL and RNN_CELL_BACKWARD) for one
// Kokkos execution space: VNN_KOKKOS_INSTANTIATE_RNN_CELL(Space) in a
// plugin's kernels_rnn_cell.cpp compiles it there (kernels/entry.hpp).
#pragma once
#include "kokkos/kernels/entry.hpp"
#include "kokkos/kernels/rnn_cell.hpp"

#define VNN_KOKKOS_INSTANTIATE_RNN_CELL(Space) \
  VNN_KOKKOS_INSTANTIATE_ENTRY(Space, rnn_cell, VNN_KOKKOS_RNN_CELL_PARAMS)

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A GPU plugin's recurrent-cell kernels (kokkos/instantiate/rnn_cell.hpp) on its
// device space: Kokkos::Cuda in the CUDA plugin, HIP in the HIP one (gpu_traits.hpp).
#include "cuda_hip/gpu_traits.hpp"
#include "kokkos/instantiate/rnn_cell.hpp"

VNN_KOKKOS_INSTANTIATE_RNN_CELL(vnn::gpu::ExecSpace)

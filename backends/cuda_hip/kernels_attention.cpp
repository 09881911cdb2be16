// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A GPU plugin's attention kernels (kokkos/instantiate/attention.hpp) on its
// device space: Kokkos::Cuda in the CUDA plugin, HIP in the HIP one
// (gpu_traits.hpp); team kernels with the tiles in team scratch.
#include "cuda_hip/gpu_traits.hpp"
#include "kokkos/instantiate/attention.hpp"

VNN_KOKKOS_INSTANTIATE_ATTENTION(vnn::gpu::ExecSpace)

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A GPU plugin's indexing kernels (kokkos/instantiate/indexing.hpp) on its device
// space: Kokkos::Cuda in the CUDA plugin, HIP in the HIP one (gpu_traits.hpp).
#include "cuda_hip/gpu_traits.hpp"
#include "kokkos/instantiate/indexing.hpp"

VNN_KOKKOS_INSTANTIATE_INDEXING(vnn::gpu::ExecSpace)

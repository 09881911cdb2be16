// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A GPU plugin's copy kernels (kokkos/instantiate/copy.hpp) on its device
// space: Kokkos::Cuda in the CUDA plugin, HIP in the HIP one (gpu_traits.hpp).
#include "cuda_hip/gpu_traits.hpp"
#include "kokkos/instantiate/copy.hpp"

VNN_KOKKOS_INSTANTIATE_COPY(vnn::gpu::ExecSpace)

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A GPU plugin's unary kernels (kokkos/instantiate/unary.hpp) on its device
// space: Kokkos::Cuda in the CUDA plugin, HIP in the HIP one (gpu_traits.hpp).
#include "cuda_hip/gpu_traits.hpp"
#include "kokkos/instantiate/unary.hpp"

VNN_KOKKOS_INSTANTIATE_UNARY(vnn::gpu::ExecSpace)

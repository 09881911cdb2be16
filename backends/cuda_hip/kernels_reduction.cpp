// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A GPU plugin's reduction kernels (kokkos/instantiate/reduction.hpp) on its device
// space: Kokkos::Cuda in the CUDA plugin, HIP in the HIP one (gpu_traits.hpp).
#include "cuda_hip/gpu_traits.hpp"
#include "kokkos/instantiate/reduction.hpp"

VNN_KOKKOS_INSTANTIATE_REDUCTION(vnn::gpu::ExecSpace)

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A GPU plugin's sort kernels (kokkos/instantiate/sort.hpp) on its device
// space: Kokkos::Cuda in the CUDA plugin, HIP in the HIP one (gpu_traits.hpp).
#include "cuda_hip/gpu_traits.hpp"
#include "kokkos/instantiate/sort.hpp"

VNN_KOKKOS_INSTANTIATE_SORT(vnn::gpu::ExecSpace)

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A GPU plugin's grid-sampling kernels (kokkos/instantiate/grid_sample.hpp) on
// its device space: Kokkos::Cuda in the CUDA plugin, HIP in the HIP one (gpu_traits.hpp).
#include "cuda_hip/gpu_traits.hpp"
#include "kokkos/instantiate/grid_sample.hpp"

VNN_KOKKOS_INSTANTIATE_GRID_SAMPLE(vnn::gpu::ExecSpace)

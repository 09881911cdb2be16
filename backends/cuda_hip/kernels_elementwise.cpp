// A GPU plugin's elementwise kernels (kokkos/instantiate/elementwise.hpp) on its device
// space: Kokkos::Cuda in the CUDA plugin, HIP in the HIP one (gpu_traits.hpp).
#include "cuda_hip/gpu_traits.hpp"
#include "kokkos/instantiate/elementwise.hpp"

VNN_KOKKOS_INSTANTIATE_ELEMENTWISE(vnn::gpu::ExecSpace)

// The CPU plugin's attention kernels (kokkos/instantiate/attention.hpp): on
// the OpenMP pool (tiles in parallel, their products through OpenBLAS) and,
// for small work and other threads, inline on Serial.
#include "kokkos/instantiate/attention.hpp"

VNN_KOKKOS_INSTANTIATE_ATTENTION(Kokkos::OpenMP)
VNN_KOKKOS_INSTANTIATE_ATTENTION(Kokkos::Serial)

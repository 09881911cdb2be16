// The CPU plugin's reduction kernels (kokkos/instantiate/reduction.hpp): on the
// OpenMP pool and, for small work and other threads, inline on Serial.
#include "kokkos/instantiate/reduction.hpp"

VNN_KOKKOS_INSTANTIATE_REDUCTION(Kokkos::OpenMP)
VNN_KOKKOS_INSTANTIATE_REDUCTION(Kokkos::Serial)

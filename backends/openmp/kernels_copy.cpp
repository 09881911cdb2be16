// The CPU plugin's copy kernels (kokkos/instantiate/copy.hpp): on the
// OpenMP pool and, for small work and other threads, inline on Serial.
#include "kokkos/instantiate/copy.hpp"

VNN_KOKKOS_INSTANTIATE_COPY(Kokkos::OpenMP)
VNN_KOKKOS_INSTANTIATE_COPY(Kokkos::Serial)

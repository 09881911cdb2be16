// The CPU plugin's elementwise kernels (kokkos/instantiate/elementwise.hpp): on the
// OpenMP pool and, for small work and other threads, inline on Serial.
#include "kokkos/instantiate/elementwise.hpp"

VNN_KOKKOS_INSTANTIATE_ELEMENTWISE(Kokkos::OpenMP)
VNN_KOKKOS_INSTANTIATE_ELEMENTWISE(Kokkos::Serial)

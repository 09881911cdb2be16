// The CPU plugin's unary kernels (kokkos/instantiate/unary.hpp): on the
// OpenMP pool and, for small work and other threads, inline on Serial.
#include "kokkos/instantiate/unary.hpp"

VNN_KOKKOS_INSTANTIATE_UNARY(Kokkos::OpenMP)
VNN_KOKKOS_INSTANTIATE_UNARY(Kokkos::Serial)

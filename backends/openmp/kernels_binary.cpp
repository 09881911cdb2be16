// The CPU plugin's binary kernels (kokkos/instantiate/binary.hpp): on the
// OpenMP pool and, for small work and other threads, inline on Serial.
#include "kokkos/instantiate/binary.hpp"

VNN_KOKKOS_INSTANTIATE_BINARY(Kokkos::OpenMP)
VNN_KOKKOS_INSTANTIATE_BINARY(Kokkos::Serial)

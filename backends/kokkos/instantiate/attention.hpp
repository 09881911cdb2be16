// The attention kernel family (SDPA, SDPA_BACKWARD) for one Kokkos
// execution space: VNN_KOKKOS_INSTANTIATE_ATTENTION(Space) in a plugin's
// kernels_attention.cpp compiles it there (kernels/entry.hpp).
#pragma once
#include "kokkos/kernels/entry.hpp"
#include "kokkos/kernels/attention.hpp"

#define VNN_KOKKOS_INSTANTIATE_ATTENTION(Space) VNN_KOKKOS_INSTANTIATE_ENTRY(Space, sdpa, VNN_KOKKOS_SDPA_PARAMS)

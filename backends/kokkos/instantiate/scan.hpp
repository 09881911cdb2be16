// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The scan kernel family (SCAN) for one Kokkos execution space:
// VNN_KOKKOS_INSTANTIATE_SCAN(Space) in a plugin's kernels_scan.cpp
// compiles it there (kernels/entry.hpp).
#pragma once
#include "kokkos/kernels/entry.hpp"
#include "kokkos/kernels/scan.hpp"

#define VNN_KOKKOS_INSTANTIATE_SCAN(Space) VNN_KOKKOS_INSTANTIATE_ENTRY(Space, scan, VNN_KOKKOS_SCAN_PARAMS)

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The few Kokkos API differences between 3.4 and 5.x, in one place.
#pragma once
#include <Kokkos_Core.hpp>

namespace vnn::kokkos_compat {

// Kokkos::InitArguments (3.x) became Kokkos::InitializationSettings (3.7+);
// the old one is gone in 5.x.
inline void initialize(int device_id, int num_threads) {
#if KOKKOS_VERSION >= 30700
  Kokkos::InitializationSettings s;
  if (device_id >= 0) s.set_device_id(device_id);
  if (num_threads > 0) s.set_num_threads(num_threads);
  Kokkos::initialize(s);
#else
  Kokkos::InitArguments a;
  a.device_id = device_id;
  a.num_threads = num_threads;
  Kokkos::initialize(a);
#endif
}

inline bool is_initialized() { return Kokkos::is_initialized(); }

inline const char* version_string() {
  static char buf[32];
  int v = KOKKOS_VERSION;
  std::snprintf(buf, sizeof(buf), "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
  return buf;
}

}  // namespace vnn::kokkos_compat

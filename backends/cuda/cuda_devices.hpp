// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How many NVIDIA GPUs one process of the CUDA plugin drives, and how bytes
// move between two of them. Header-only and free of CUDA and Kokkos types,
// so the rules are unit-tested on machines without a GPU
// (tests/backends/cuda_devices.cpp); cuda_backend.cpp applies them.
//
// Kokkos before 4.3 binds its Cuda execution space to the one device given
// to Kokkos::initialize: every instance, allocation and kernel launch goes
// to that device, so a second GPU in the same process cannot be used.
// Kokkos 4.3.00 (CHANGELOG, kokkos#6782) lets a Kokkos::Cuda instance be
// constructed on a cudaStream_t created on another device; the instance then
// launches on, and allocates through CudaSpace::impl_create(device, stream)
// on, that device. With such a Kokkos the plugin runs cuda:0..N-1, one
// instance per device on a stream of its own.
#pragma once
#include <string>
#include <vector>

namespace vnn::cuda_devices {

// The first Kokkos release (KOKKOS_VERSION) with instances on other devices.
inline constexpr int kMultiGpuKokkosVersion = 40300;

// Whether this build may run several GPUs in one process.
struct Rule {
  bool multi_gpu = false;
  std::string reason;  // why only one (set when !multi_gpu)
};

// "4.6.1" from KOKKOS_VERSION 40601.
inline std::string version_text(int kokkos_version) {
  return std::to_string(kokkos_version / 10000) + "." + std::to_string((kokkos_version / 100) % 100) + "." +
         std::to_string(kokkos_version % 100);
}

inline Rule rule(int kokkos_version) {
  Rule r;
  r.multi_gpu = kokkos_version >= kMultiGpuKokkosVersion;
  if (!r.multi_gpu)
    r.reason = "one GPU per process with Kokkos " + version_text(kokkos_version) +
               ": its Cuda space runs only on the device Kokkos was initialised with (instances on other "
               "devices need Kokkos >= 4.3); rebuild vnn's CUDA plugin against a newer Kokkos (-DKokkos_DIR) "
               "or use one process per GPU";
  return r;
}

// init_device's answer for `device` given the devices already running.
struct Admission {
  bool ok = false;
  std::string reason;  // set when !ok
};

inline Admission admit(const Rule& r, const std::vector<int>& running, int device, int count) {
  Admission a;
  if (device < 0 || device >= count) {
    a.reason = "no device cuda:" + std::to_string(device) + " (" + std::to_string(count) + " found)";
    return a;
  }
  for (int d : running)
    if (d == device) return a.ok = true, a;
  if (running.empty() || r.multi_gpu) return a.ok = true, a;
  a.reason = "this process already runs on cuda:" + std::to_string(running.front()) + "; " + r.reason;
  return a;
}

// The path of a copy from one device's memory to another's.
enum class CopyRoute {
  same_device,  // one device: an ordinary device copy
  peer,         // cudaMemcpyPeerAsync over NVLink/PCIe, peer access enabled
  staged_host,  // no peer access between the two: through pinned host memory
};

inline CopyRoute route(int src_device, int dst_device, bool peer_access) {
  if (src_device == dst_device) return CopyRoute::same_device;
  return peer_access ? CopyRoute::peer : CopyRoute::staged_host;
}

inline const char* route_name(CopyRoute c) {
  switch (c) {
    case CopyRoute::same_device: return "same device";
    case CopyRoute::peer: return "peer";
    case CopyRoute::staged_host: return "staged through host memory";
  }
  return "?";
}

// The line vnn-devices --verbose shows for the rule ("multi_gpu=...").
inline std::string report(const Rule& r) {
  return r.multi_gpu ? "multi_gpu=yes (Kokkos >= 4.3: one Kokkos::Cuda instance per device)\n"
                     : "multi_gpu=no (" + r.reason + ")\n";
}

}  // namespace vnn::cuda_devices

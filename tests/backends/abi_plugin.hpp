// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The plugin under test for tests/backends/abi.cpp: loaded with dlopen the
// way the core loads it, and the helpers its test cases share (descriptors,
// op requests, device buffers). Only the C ABI (vnn/backend_abi.h): no
// libvnn, so a plugin is checked without the core's validation in front.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "vnn/backend_abi.h"

namespace abi_test {

// The plugin's table and the device every case runs on (set by main).
inline const vnn_backend*& table() {
  static const vnn_backend* b = nullptr;
  return b;
}
constexpr int32_t kDevice = 0;

inline std::string plugin_name() { return table() ? table()->name : "?"; }
inline bool is_opencl() { return plugin_name() == "opencl"; }

// true for OK; otherwise false, with the status and the plugin's
// last_error() attached to the next assertion: REQUIRE(ok(B->alloc(...))).
inline bool ok(vnn_status st) {
  if (st == VNN_STATUS_OK) return true;
  UNSCOPED_INFO(plugin_name() << ": status " << int(st) << ", last_error: " << table()->last_error());
  return false;
}

inline vnn_tensor_desc desc(void* data, vnn_dtype dt, std::vector<int64_t> sizes, std::vector<int64_t> strides = {},
                            int64_t offset = 0) {
  vnn_tensor_desc d{};
  d.data = data;
  d.dtype = dt;
  d.offset = offset;
  d.ndim = static_cast<int32_t>(sizes.size());
  if (strides.empty()) {  // contiguous, row-major
    strides.resize(sizes.size());
    int64_t s = 1;
    for (size_t k = sizes.size(); k-- > 0;) {
      strides[k] = s;
      s *= sizes[k];
    }
  }
  for (size_t k = 0; k < sizes.size(); ++k) {
    d.sizes[k] = sizes[k];
    d.strides[k] = strides[k];
  }
  return d;
}

inline vnn_status run_op(int kind, std::vector<vnn_tensor_desc> in, vnn_tensor_desc out,
                         std::vector<double> scalars = {}, std::vector<int64_t> ints = {}, void* queue = nullptr) {
  vnn_op op{};
  op.struct_size = sizeof op;
  op.kind = kind;
  op.num_inputs = static_cast<int32_t>(in.size());
  op.num_outputs = 1;
  op.num_scalars = static_cast<int32_t>(scalars.size());
  op.num_ints = static_cast<int32_t>(ints.size());
  op.inputs = in.data();
  op.outputs = &out;
  op.scalars = scalars.data();
  op.ints = ints.data();
  op.queue = queue;
  return table()->run(kDevice, &op);
}

inline void* device_buffer(size_t bytes) {
  void* h = nullptr;
  REQUIRE(ok(table()->alloc(kDevice, bytes, &h)));
  return h;
}

template <typename T>
void* upload(const std::vector<T>& v) {
  void* h = device_buffer(v.size() * sizeof(T));
  REQUIRE(ok(table()->copy_to_device(kDevice, h, 0, v.data(), v.size() * sizeof(T), nullptr, 1)));
  return h;
}

template <typename T>
std::vector<T> download(void* h, size_t n) {
  std::vector<T> v(n);
  REQUIRE(ok(table()->copy_to_host(kDevice, v.data(), h, 0, n * sizeof(T), nullptr, 1)));
  return v;
}

inline void release(std::initializer_list<void*> handles) {
  for (void* p : handles) REQUIRE(ok(table()->free(kDevice, p)));
}

inline vnn_device_info device_info() {
  vnn_device_info info{};
  info.struct_size = sizeof info;
  REQUIRE(ok(table()->device_info(kDevice, &info)));
  return info;
}

// Every Kokkos plugin has float64; an OpenCL device says so in its
// properties (cl_khr_fp64).
inline bool fp64_supported() {
  return !is_opencl() || std::strstr(device_info().properties, "fp64=yes") != nullptr;
}

// Independent of the plugin's encoder: decodes IEEE binary16 exactly.
inline double half_to_double(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
  double v = exp == 0 ? std::ldexp(man, -24) : exp == 31 ? (man ? NAN : INFINITY) : std::ldexp(1024 + man, exp - 25);
  return sign ? -v : v;
}

inline bool close(double got, double want, double rel) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= rel * std::max(std::fabs(want), 1e-30) + 1e-300;
}

}  // namespace abi_test

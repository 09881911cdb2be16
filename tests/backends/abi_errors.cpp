// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What a plugin says when it declines an op: the op and the dtypes by name
// ("matmul: dtype uint8 is not supported on openmp:0 (float32, ...)"),
// never ABI codes ("kind 6, dtype 4"). Runs against every plugin found,
// as the other abi*.cpp cases do.
#include <string>

#include "backends/abi_plugin.hpp"

using namespace abi_test;

namespace {

// The plugin's message for a declined request, with the checks every
// backend's text must pass: the op and the dtype named, no raw codes.
std::string declined(vnn_status st, const char* op, const char* dtype) {
  const std::string msg = table()->last_error();
  INFO(plugin_name() << ": " << msg);
  CHECK(st == VNN_STATUS_UNSUPPORTED);
  CHECK(msg.find(op) != std::string::npos);
  CHECK(msg.find(dtype) != std::string::npos);
  CHECK(msg.find("kind ") == std::string::npos);
  CHECK(msg.find("code ") == std::string::npos);
  CHECK(msg.find("dtype 4") == std::string::npos);
  return msg;
}

}  // namespace

TEST_CASE("a dtype outside a kernel's set is named, with the set", "[abi][errors]") {
  void* a = device_buffer(64);
  void* b = device_buffer(64);
  void* c = device_buffer(64);
  vnn_status st = run_op(VNN_OP_MATMUL, {desc(a, VNN_UINT8, {2, 3}), desc(b, VNN_UINT8, {3, 2})},
                         desc(c, VNN_UINT8, {2, 2}), {1.0, 0.0});
  std::string msg = declined(st, "matmul", "uint8");
  if (plugin_name() == "opencl")
    CHECK(msg == "opencl:0: matmul on uint8: dtype uint8 (inputs uint8, uint8) is not supported by the opencl backend");
  else  // the Kokkos plugins: one text for every kernel's type set
    CHECK(msg == "matmul: dtype uint8 is not supported on " + plugin_name() +
                     ":0 (float32, float64, int32, int64 are)");
  st = run_op(VNN_OP_SOFTMAX, {desc(a, VNN_INT64, {2, 4})}, desc(c, VNN_INT64, {2, 4}), {}, {0});
  msg = declined(st, "softmax", "int64");
  if (plugin_name() == "opencl")
    CHECK(msg == "opencl:0: softmax on int64: only float32, float64, float16 and bfloat16 with matching input are "
                 "supported");
  else
    CHECK(msg == "softmax: dtype int64 is not supported on " + plugin_name() +
                     ":0 (float32, float64, float16, bfloat16 are)");
  release({a, b, c});
}

TEST_CASE("a kernel that declines names the op, its function, the dtypes and why", "[abi][errors]") {
  void* a = device_buffer(64);
  void* c = device_buffer(64);
  // gelu has no integer form in the Kokkos kernels (OpenCL computes it).
  if (plugin_name() != "opencl") {
    vnn_status st = run_op(VNN_OP_UNARY, {desc(a, VNN_INT32, {4})}, desc(c, VNN_INT32, {4}), {}, {VNN_UNARY_GELU});
    std::string msg = declined(st, "gelu", "int32");
    CHECK(msg == plugin_name() +
                     ":0: unary gelu on int32 (inputs int32) is not supported on this backend: takes floating "
                     "dtypes only");
  }
  // add of float32 and int32 operands (the core converts; the ABI does not).
  void* b = device_buffer(64);
  vnn_status st = run_op(VNN_OP_BINARY, {desc(a, VNN_FLOAT32, {4}), desc(b, VNN_INT32, {4})},
                         desc(c, VNN_FLOAT32, {4}), {}, {VNN_BINARY_ADD});
  std::string msg = declined(st, "add", "int32");
  if (plugin_name() == "opencl")
    CHECK(msg == "opencl:0: binary add on float32: operand dtypes do not match (inputs float32, int32, out float32)");
  else
    CHECK(msg == plugin_name() +
                     ":0: binary add on float32 (inputs float32, int32) is not supported on this backend: takes a "
                     "and b of one dtype and out of that dtype");
  release({a, b, c});
}

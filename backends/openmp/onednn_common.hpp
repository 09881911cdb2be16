// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// oneDNN inside the CPU plugin: the interface openmp_backend.cpp sees. The
// implementation (onednn_runtime.cpp, onednn_conv.cpp, onednn_pooling.cpp,
// onednn_matmul.cpp) is compiled only when
// CMake found oneDNN (VNN_CPU_HAVE_ONEDNN); without it every op stays on
// the Kokkos kernels and OpenBLAS.
//
// What runs through oneDNN (float32 only; float64 stays on vnn's kernels):
//   VNN_OP_CONV2D, VNN_OP_CONV2D_BACKWARD_DATA, VNN_OP_CONV2D_BACKWARD_WEIGHT
//   (docs/ops.md), where onednn_conv.cpp's conv_rule says so;
//   VNN_OP_POOL2D, VNN_OP_POOL2D_BACKWARD (max and avg), where
//   onednn_pooling.cpp's pool_rule says so.
// Runtime switch: VNN_ONEDNN=0 in the environment (read once, at the
// plugin's first use) turns oneDNN off; the core then runs conv2d as
// IM2COL + MATMUL, as without oneDNN.
#pragma once
#include <cstdint>
#include <string>

#include "vnn/backend_abi.h"

namespace vnn::openmp_backend::onednn {

// What run() did with an op.
enum class Outcome {
  taken,     // oneDNN ran it
  declined,  // not oneDNN's (off, dtype, the selection rule): the caller's own kernels decide
  invalid    // malformed operands for this kind (*why says which)
};

// Built with oneDNN and not switched off by VNN_ONEDNN=0.
bool enabled();
// "onednn=2.6.3 (jit ISA avx512_core...)" / "onednn=off (VNN_ONEDNN=0)" /
// "onednn=not built": one line for the device's properties.
std::string describe();
// float32 GEMM through oneDNN's dnnl_sgemm instead of OpenBLAS: the rule
// of onednn_matmul.cpp (large GEMMs where oneDNN's JIT has AVX-512).
// Plugins built with OpenBLAS only.
bool sgemm_selected(int64_t m, int64_t n, int64_t k);
// The fused attention's tile products (m, n, k of a few hundred, one per
// thread inside the pool's parallel region) through oneDNN: wherever its
// JIT has AVX-512, as for large GEMMs (twice OpenBLAS's AVX2 kernels on
// such tiles here; the same as its AVX-512 ones).
bool tile_sgemm_selected();
// "matmul_onednn=yes (OpenBLAS core Haswell, ...)" for the device's properties.
std::string sgemm_describe();
// Row-major C = alpha op(A) op(B) + beta C through dnnl_sgemm; false on a
// oneDNN error (the caller then runs OpenBLAS).
bool sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
// Where oneDNN's scratch memory comes from: the core's caching allocator
// once the core handed it over (NULL: the plugin's own per-thread arena).
void set_core_allocator(const vnn_core_allocator* allocator);
// The op kinds run() may take (HostOps::wants).
bool wants(int32_t kind);
// Runs a conv or pooling op through oneDNN on the calling thread (the queue
// has drained). Synchronous: returns once the result is written.
Outcome run(const vnn_op& op, std::string* why);
// run() for the conv2d kinds (onednn_conv.cpp).
Outcome run_conv(const vnn_op& op, std::string* why);
// run() for POOL2D / POOL2D_BACKWARD (onednn_pooling.cpp): taken or
// declined, never invalid (vnn's kernels judge malformed requests).
Outcome run_pool(const vnn_op& op);

}  // namespace vnn::openmp_backend::onednn

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn's own register-tiled GEMM (kernels/gemm.cl) and its per-device
// tuning: the MATMUL fallback where CLBlast is absent, and the path for
// the shapes CLBlast serves poorly (tuning.cpp decides which, per device).
#ifndef VNN_OPENCL_OPS_GEMM_HPP
#define VNN_OPENCL_OPS_GEMM_HPP

#include <CL/cl.h>

#include <cstdint>
#include <string>

#include "device.hpp"
#include "vnn/backend_abi.h"

namespace vnn_opencl {

// One MATMUL as the kernels see it: out[b] = alpha a[b] @ b[b] + beta out[b].
struct GemmProblem {
  cl_mem out = nullptr, a = nullptr, b = nullptr;
  cl_long out_off = 0, a_off = 0, b_off = 0;
  int32_t dtype = VNN_FLOAT32;
  double alpha = 1.0, beta = 0.0;
  cl_long m = 0, n = 0, k = 0;
  cl_long a_rs = 0, a_cs = 0, b_rs = 0, b_cs = 0, o_rs = 0, o_cs = 0;
  cl_long batch = 1;  // product of the batch sizes
  cl_int batch_ndim = 1;
  cl_long8 batch_sizes{}, a_bs{}, b_bs{}, o_bs{};
};

// A vnn_gemm tile configuration: a TSM x TSN tile of out per work-group,
// TSK deep, WPTM x WPTN outputs per work item.
struct GemmConfig {
  int tsm, tsn, tsk, wptm, wptn;
};

// The candidates the tuner times, in a fixed order (the index is the
// variant stored in the tuning cache and named by VNN_OPENCL_GEMM_VARIANT).
constexpr int kNumGemmVariants = 5;
const GemmConfig& gemm_variant(int v);
std::string gemm_variant_name(int v);  // "64x64x16/4x4"

// Whether variant v fits device d (work-group size, local memory).
bool gemm_variant_fits(const Device& d, int v, int32_t dtype);

// Enqueues p with variant v on q; split-K where the output has too few
// tiles to fill the device.
vnn_status run_gemm_variant(Device& d, cl_command_queue q, const GemmProblem& p, int v, const std::string& what);

// Enqueues p with vnn_gemm_longk (kernels/gemm.cl): one work-group per
// small output block summing its k range across the group, for k far above
// m and n (conv2d weight gradients); split-K where the blocks are few.
// VNN_STATUS_UNSUPPORTED where the device cannot run it.
vnn_status run_gemm_longk(Device& d, cl_command_queue q, const GemmProblem& p, const std::string& what);

// Enqueues p with vnn_gemm_widen (kernels/gemm.cl): register blocks of
// 8 rows x 2 vectors per item, for n far above m with b n-contiguous
// (conv2d forward and input gradient); an unbatched b of other strides
// (x @ W^T) is first copied contiguous. VNN_STATUS_UNSUPPORTED where the
// device cannot run it.
vnn_status run_gemm_widen(Device& d, cl_command_queue q, const GemmProblem& p, const std::string& what);

// The variant with the least estimated time for an m x n x k problem: the
// padded work of its tiles over its tuned rate (gflops[v] <= 0: unfit).
int pick_gemm_variant(const double* gflops, int64_t m, int64_t n, int64_t k);

// MATMUL paths as choose_gemm_path, GemmForce and the tuning file number them.
enum GemmPath { kGemmClblast = 1, kGemmSimple = 2, kGemmTiled = 3, kGemmLongk = 4, kGemmWiden = 5 };

// Shape classes with their own measured path (tuning.cpp).
enum class GemmShape { square = 0, long_k = 1, short_k = 2 };
GemmShape classify_gemm(int64_t m, int64_t n, int64_t k);

}  // namespace vnn_opencl

#endif

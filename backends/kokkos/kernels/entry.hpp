// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The kernels' entry points, declared without their bodies and without
// Kokkos: plugin.hpp's run_on calls them, and each kernel family is compiled
// for a plugin's execution spaces in translation units of its own
// (kokkos/instantiate/<family>.hpp, included by a plugin's
// kernels_<family>.cpp), so that the plugin builds in parallel pieces.
//
// Each parameter list is written once here, as VNN_KOKKOS_<NAME>_PARAMS
// (Exec), for this declaration and the explicit instantiations; the kernel
// header defines the template with the same parameter list, and an
// instantiation whose list no longer matches the definition fails to
// compile ("no definition available") instead of linking to nothing.
#pragma once
#include <cstdint>

#include "vnn/backend_abi.h"

#define VNN_KOKKOS_FILL_PARAMS(Exec) const Exec& exec, const vnn_tensor_desc& out, double value
#define VNN_KOKKOS_COPY_PARAMS(Exec) const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& in
#define VNN_KOKKOS_WHERE_PARAMS(Exec)                                                             \
  const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& cond, const vnn_tensor_desc& a, \
      const vnn_tensor_desc& b
#define VNN_KOKKOS_BINARY_PARAMS(Exec)                                                         \
  const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& a, const vnn_tensor_desc& b, \
      int64_t fn, double alpha
#define VNN_KOKKOS_UNARY_PARAMS(Exec)                                                                \
  const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& a, int64_t fn, const double* scalars, \
      int32_t num_scalars
#define VNN_KOKKOS_REDUCE_PARAMS(Exec) \
  const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& in, int64_t fn, int64_t k
#define VNN_KOKKOS_SOFTMAX_PARAMS(Exec) \
  const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& in, int64_t log_out
#define VNN_KOKKOS_MATMUL_PARAMS(Exec)                                                         \
  const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& a, const vnn_tensor_desc& b, \
      double alpha, double beta
#define VNN_KOKKOS_IM2COL_PARAMS(Exec) const Exec& exec, const vnn_op& op, bool col2im
#define VNN_KOKKOS_POOL2D_PARAMS(Exec) const Exec& exec, const vnn_op& op, bool backward
#define VNN_KOKKOS_INDEXING_PARAMS(Exec) const Exec& exec, const vnn_op* op
#define VNN_KOKKOS_RANDOM_PARAMS(Exec)                                                                 \
  const Exec& exec, const vnn_tensor_desc& out, const int64_t* ints, int32_t num_ints, const double* scalars, \
      int32_t num_scalars
#define VNN_KOKKOS_OPTIMIZER_STEP_PARAMS(Exec) const Exec& exec, const vnn_op& op
#define VNN_KOKKOS_UNSCALE_CHECK_PARAMS(Exec) const Exec& exec, const vnn_op& op
#define VNN_KOKKOS_SDPA_PARAMS(Exec) const Exec& exec, const vnn_op& op, const vnn::kernels::HostGemm* gemm
#define VNN_KOKKOS_LAYER_NORM_PARAMS(Exec) const Exec& exec, const vnn_op& op
#define VNN_KOKKOS_SORT_PARAMS(Exec) const Exec& exec, const vnn_op& op
#define VNN_KOKKOS_SEARCHSORTED_PARAMS(Exec) const Exec& exec, const vnn_op& op
#define VNN_KOKKOS_SCAN_PARAMS(Exec) const Exec& exec, const vnn_op& op
#define VNN_KOKKOS_RNN_CELL_PARAMS(Exec) const Exec& exec, const vnn_op& op
#define VNN_KOKKOS_GRID_SAMPLE_PARAMS(Exec) const Exec& exec, const vnn_op& op

namespace vnn::kernels {

// A host plugin's BLAS for the fused attention's tile products (row-major
// C = alpha op(A) op(B) + beta C), called from inside the pool's parallel
// region, one tile per thread; NULL: the kernel's own loops. plugin.hpp
// makes it from the plugin's Traits::HostBlas.
struct HostGemm {
  void (*sgemm)(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
  void (*dgemm)(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
                const double* b, int64_t ldb, double beta, double* c, int64_t ldc);
};

// Each returns false for an op it does not take (wrong arity, shapes or
// dtype), which the plugin reports as VNN_STATUS_UNSUPPORTED.
template <class Exec> bool fill(VNN_KOKKOS_FILL_PARAMS(Exec));                    // fill.hpp
template <class Exec> bool copy(VNN_KOKKOS_COPY_PARAMS(Exec));                    // copy.hpp
template <class Exec> bool where(VNN_KOKKOS_WHERE_PARAMS(Exec));                  // where.hpp
template <class Exec> bool binary(VNN_KOKKOS_BINARY_PARAMS(Exec));                // elementwise.hpp
template <class Exec> bool unary(VNN_KOKKOS_UNARY_PARAMS(Exec));                  // elementwise.hpp
template <class Exec> bool reduce(VNN_KOKKOS_REDUCE_PARAMS(Exec));                // reduction.hpp
template <class Exec> bool softmax(VNN_KOKKOS_SOFTMAX_PARAMS(Exec));              // softmax.hpp
template <class Exec> bool matmul(VNN_KOKKOS_MATMUL_PARAMS(Exec));                // matmul.hpp
template <class Exec> bool im2col(VNN_KOKKOS_IM2COL_PARAMS(Exec));                // conv.hpp
template <class Exec> bool pool2d(VNN_KOKKOS_POOL2D_PARAMS(Exec));                // pooling.hpp
template <class Exec> bool indexing(VNN_KOKKOS_INDEXING_PARAMS(Exec));            // indexing.hpp
template <class Exec> bool random(VNN_KOKKOS_RANDOM_PARAMS(Exec));                // random.hpp
template <class Exec> bool optimizer_step(VNN_KOKKOS_OPTIMIZER_STEP_PARAMS(Exec));  // optimizer.hpp
template <class Exec> bool unscale_check(VNN_KOKKOS_UNSCALE_CHECK_PARAMS(Exec));    // optimizer.hpp
template <class Exec> bool sdpa(VNN_KOKKOS_SDPA_PARAMS(Exec));                      // attention.hpp
template <class Exec> bool layer_norm(VNN_KOKKOS_LAYER_NORM_PARAMS(Exec));          // layer_norm.hpp
template <class Exec> bool sort(VNN_KOKKOS_SORT_PARAMS(Exec));                      // sort.hpp
template <class Exec> bool searchsorted(VNN_KOKKOS_SEARCHSORTED_PARAMS(Exec));      // sort.hpp
template <class Exec> bool scan(VNN_KOKKOS_SCAN_PARAMS(Exec));                      // scan.hpp
template <class Exec> bool rnn_cell(VNN_KOKKOS_RNN_CELL_PARAMS(Exec));              // rnn_cell.hpp
template <class Exec> bool grid_sample(VNN_KOKKOS_GRID_SAMPLE_PARAMS(Exec));        // grid_sample.hpp

}  // namespace vnn::kernels

// One explicit instantiation of kernels::<name> for the execution space
// Space (kokkos/instantiate/<family>.hpp).
#define VNN_KOKKOS_INSTANTIATE_ENTRY(Space, name, PARAMS) template bool vnn::kernels::name<Space>(PARAMS(Space));

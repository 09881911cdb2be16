// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/* The one name table of every op-kind enum in backend_abi.h, in enum
 * order, each checked against the enum's count so that an enumerator added
 * without its name (or a name without its enumerator) fails to compile.
 * C and C++; the core, the plugins and their messages all name ops from
 * here ("unary gelu on float32", never "kind 4, fn 13"). The OpenCL kernels
 * get the numbers themselves from a prelude generated from backend_abi.h
 * (backends/opencl/EmbedKernelsScript.cmake). */
#ifndef VNN_OP_NAMES_H
#define VNN_OP_NAMES_H

#include "vnn/backend_abi.h"

/** static_assert in C++, _Static_assert in C: a name table checked against its enum's count. */
#ifdef __cplusplus
#define VNN_NAMES_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define VNN_NAMES_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif
/// The number of entries of a name table.
#define VNN_NAMES_LEN(table) (sizeof(table) / sizeof((table)[0]))

/// Names of vnn_dtype, indexed by dtype.
static const char* const vnn_dtype_names[] = {"float32", "float64", "int32", "int64", "uint8",
                                              "bool",    "float16", "bfloat16", "int8", "int16"};
VNN_NAMES_STATIC_ASSERT(VNN_NAMES_LEN(vnn_dtype_names) == VNN_DTYPE_COUNT_, "vnn_dtype_names vs vnn_dtype");

/// Names of vnn_op_kind, indexed by kind (kinds start at 1: entry 0 names no op).
static const char* const vnn_op_kind_names[] = {
    "op",      "fill",   "copy",         "binary",  "unary",     "reduce", "matmul",
    "softmax", "random", "where",        "index_select", "gather", "scatter", "index_add",
    "im2col",  "col2im", "pool2d",       "pool2d_backward", "optimizer_step", "conv2d",
    "conv2d_backward_data", "conv2d_backward_weight", "unscale_check", "sdpa", "sdpa_backward",
    "layer_norm", "layer_norm_backward", "scan", "sort", "searchsorted", "rnn_cell", "rnn_cell_backward",
    "grid_sample", "grid_sample_backward"};
VNN_NAMES_STATIC_ASSERT(VNN_NAMES_LEN(vnn_op_kind_names) == VNN_OP_COUNT_, "vnn_op_kind_names vs vnn_op_kind");

/// Names of vnn_binary_fn, indexed by function (the op table's name column).
static const char* const vnn_binary_names[] = {
#ifndef VNN_DOXYGEN /* one name per table line */
#define VNN_BINARY_OP(ID, NAME, ...) #NAME,
#include "vnn/ops/binary.def"
#undef VNN_BINARY_OP
#endif
};
VNN_NAMES_STATIC_ASSERT(VNN_NAMES_LEN(vnn_binary_names) == VNN_BINARY_COUNT_, "vnn_binary_names vs vnn_binary_fn");

/** How a binary op treats its operands' dtypes: the binary op table's RULE column (vnn/ops/binary.def). */
enum vnn_binary_rule {
  VNN_BRULE_ARITH = 0,     /**< the promoted dtype; integers compute in it */
  VNN_BRULE_TRUEDIV = 1,   /**< the promoted dtype; integers give float32 */
  VNN_BRULE_FLOATING = 2,  /**< the promoted dtype; integers computed in float32 */
  VNN_BRULE_COMPARE = 3,   /**< compared in the promoted dtype, bool out */
  VNN_BRULE_LOGICAL = 4,   /**< any dtypes, bool out */
  VNN_BRULE_FLOATONLY = 5, /**< floating dtypes only */
  VNN_BRULE_INTEGRAL = 6   /**< integer and bool dtypes only */
};
/// The rule of each vnn_binary_fn, indexed by function.
static const unsigned char vnn_binary_rules[] = {
#ifndef VNN_DOXYGEN /* one rule per table line */
#define VNN_BINARY_OP(ID, NAME, SIG, RULE, ...) VNN_BRULE_##RULE,
#include "vnn/ops/binary.def"
#undef VNN_BINARY_OP
#endif
};
VNN_NAMES_STATIC_ASSERT(VNN_NAMES_LEN(vnn_binary_rules) == VNN_BINARY_COUNT_, "vnn_binary_rules vs vnn_binary_fn");
#ifdef __cplusplus
/// The rule of binary function `fn` as a constant expression; -1 for no function.
constexpr int vnn_binary_rule(int fn) {
  switch (fn) {
#ifndef VNN_DOXYGEN /* one case per table line */
#define VNN_BINARY_OP(ID, NAME, SIG, RULE, ...) \
  case VNN_BINARY_##ID:                         \
    return VNN_BRULE_##RULE;
#include "vnn/ops/binary.def"
#undef VNN_BINARY_OP
#endif
    default:
      return -1;
  }
}
#endif

/// Names of vnn_unary_fn, indexed by function (the op table's name column).
static const char* const vnn_unary_names[] = {
#ifndef VNN_DOXYGEN /* one name per table line */
#define VNN_UNARY_OP(ID, NAME, ...) #NAME,
#include "vnn/ops/unary.def"
#undef VNN_UNARY_OP
#endif
};
VNN_NAMES_STATIC_ASSERT(VNN_NAMES_LEN(vnn_unary_names) == VNN_UNARY_COUNT_, "vnn_unary_names vs vnn_unary_fn");

/** How a unary op treats integer and bool inputs: the op table's RULE column (vnn/ops/unary.def). */
enum vnn_unary_rule {
  VNN_RULE_PROMOTE = 0,  /**< computed in float32 */
  VNN_RULE_IDENTITY = 1, /**< a copy */
  VNN_RULE_REJECT = 2,   /**< floating inputs only */
  VNN_RULE_KEEP = 3,     /**< computed in the integer type (not bool) */
  VNN_RULE_BOOLOUT = 4,  /**< any dtype in, bool out */
  VNN_RULE_INTEGRAL = 5  /**< integer and bool inputs only */
};
/// The rule of each vnn_unary_fn, indexed by function.
static const unsigned char vnn_unary_rules[] = {
#ifndef VNN_DOXYGEN /* one rule per table line */
#define VNN_UNARY_OP(ID, NAME, SIG, RULE, ...) VNN_RULE_##RULE,
#include "vnn/ops/unary.def"
#undef VNN_UNARY_OP
#endif
};
VNN_NAMES_STATIC_ASSERT(VNN_NAMES_LEN(vnn_unary_rules) == VNN_UNARY_COUNT_, "vnn_unary_rules vs vnn_unary_fn");
#ifdef __cplusplus
/// The rule of unary function `fn` as a constant expression (the kernels' compile-time dispatch); -1 for no function.
constexpr int vnn_unary_rule(int fn) {
  switch (fn) {
#ifndef VNN_DOXYGEN /* one case per table line */
#define VNN_UNARY_OP(ID, NAME, SIG, RULE, ...) \
  case VNN_UNARY_##ID:                         \
    return VNN_RULE_##RULE;
#include "vnn/ops/unary.def"
#undef VNN_UNARY_OP
#endif
    default:
      return -1;
  }
}
#endif

/// Names of vnn_reduce_fn, indexed by function.
static const char* const vnn_reduce_names[] = {"sum", "mean", "prod", "max", "min", "argmax", "argmin"};
VNN_NAMES_STATIC_ASSERT(VNN_NAMES_LEN(vnn_reduce_names) == VNN_REDUCE_COUNT_, "vnn_reduce_names vs vnn_reduce_fn");

/// Names of vnn_scatter_mode, indexed by mode (scatter_reduce's reduce names).
static const char* const vnn_scatter_mode_names[] = {"set", "sum", "prod", "amax", "amin"};
VNN_NAMES_STATIC_ASSERT(VNN_NAMES_LEN(vnn_scatter_mode_names) == VNN_SCATTER_MODE_COUNT_,
                        "vnn_scatter_mode_names vs vnn_scatter_mode");
/// Names of vnn_scan_fn, indexed by function.
static const char* const vnn_scan_names[] = {"cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"};
VNN_NAMES_STATIC_ASSERT(VNN_NAMES_LEN(vnn_scan_names) == VNN_SCAN_COUNT_, "vnn_scan_names vs vnn_scan_fn");

/// Names of vnn_random_fn, indexed by distribution.
static const char* const vnn_random_names[] = {"uniform", "normal", "bits"};
VNN_NAMES_STATIC_ASSERT(VNN_NAMES_LEN(vnn_random_names) == VNN_RANDOM_COUNT_, "vnn_random_names vs vnn_random_fn");

/// Names of vnn_optimizer_fn, indexed by update rule.
static const char* const vnn_optimizer_names[] = {"sgd", "adam", "rmsprop", "adagrad"};
VNN_NAMES_STATIC_ASSERT(VNN_NAMES_LEN(vnn_optimizer_names) == VNN_OPTIM_COUNT_,
                        "vnn_optimizer_names vs vnn_optimizer_fn");

/// Names of vnn_pool_mode, indexed by mode.
static const char* const vnn_pool_names[] = {"max", "avg", "adaptive_avg", "adaptive_max"};
VNN_NAMES_STATIC_ASSERT(VNN_NAMES_LEN(vnn_pool_names) == VNN_POOL_COUNT_, "vnn_pool_names vs vnn_pool_mode");

/// Names of vnn_rnn_cell_mode, indexed by mode (PyTorch's mode strings).
static const char* const vnn_rnn_cell_names[] = {"RNN_TANH", "RNN_RELU", "LSTM", "GRU"};
VNN_NAMES_STATIC_ASSERT(VNN_NAMES_LEN(vnn_rnn_cell_names) == VNN_RNN_CELL_COUNT_,
                        "vnn_rnn_cell_names vs vnn_rnn_cell_mode");

/// Names of vnn_grid_sample_mode, indexed by mode (PyTorch's mode strings).
static const char* const vnn_grid_sample_mode_names[] = {"bilinear", "nearest", "bicubic"};
VNN_NAMES_STATIC_ASSERT(VNN_NAMES_LEN(vnn_grid_sample_mode_names) == VNN_GRID_MODE_COUNT_,
                        "vnn_grid_sample_mode_names vs vnn_grid_sample_mode");
/// Names of vnn_grid_padding_mode, indexed by mode (PyTorch's padding_mode strings).
static const char* const vnn_grid_padding_names[] = {"zeros", "border", "reflection"};
VNN_NAMES_STATIC_ASSERT(VNN_NAMES_LEN(vnn_grid_padding_names) == VNN_GRID_PAD_COUNT_,
                        "vnn_grid_padding_names vs vnn_grid_padding_mode");

/// table[i] for 0 <= i < n, else NULL: the lookup for codes that come from outside (an op request).
static inline const char* vnn_name_of(const char* const* table, long long n, long long i) {
  return i >= 0 && i < n ? table[i] : NULL;
}
/// The name of a vnn_op_kind, NULL for a code this ABI version lacks.
#define VNN_OP_KIND_NAME(kind) \
  ((kind) == 0 ? NULL : vnn_name_of(vnn_op_kind_names, VNN_OP_COUNT_, (long long)(kind)))
/// The name of code `i` of a name table (e.g. VNN_NAME(vnn_unary_names, fn)), NULL when out of range.
#define VNN_NAME(table, i) vnn_name_of(table, (long long)VNN_NAMES_LEN(table), (long long)(i))

#endif /* VNN_OP_NAMES_H */

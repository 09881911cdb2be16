#include "ops_elementwise.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <mutex>
#include <string>

#include "dtype.hpp"
#include "errors.hpp"
#include "launch.hpp"
#include "op_common.hpp"
#include "program_cache.hpp"
#include "vnn/op_names.h"

namespace vnn_opencl {
namespace {

bool bool_out(const vnn_op& op) {
  return (op.kind == VNN_OP_BINARY && op.ints[0] >= VNN_BINARY_EQ && op.ints[0] <= VNN_BINARY_LOGICAL_XOR) ||
         (op.kind == VNN_OP_UNARY && op.ints[0] == VNN_UNARY_LOGICAL_NOT);
}

// "opencl:0: BINARY pow on float32".
std::string describe(const Device& d, const vnn_op& op) {
  // Names from the ABI's table (vnn/op_names.h), as ops.cpp's describe().
  std::string s = op_label(d, op.kind);
  int64_t fn = op.num_ints > 0 && op.ints ? op.ints[0] : -1;
  if (op.kind != VNN_OP_WHERE) {
    const char* name = op.kind == VNN_OP_BINARY ? VNN_NAME(vnn_binary_names, fn) : VNN_NAME(vnn_unary_names, fn);
    s += name ? " " : " fn=";
    s += name ? name : std::to_string(fn);
  }
  const vnn_tensor_desc* t = op.num_outputs > 0 && op.outputs ? op.outputs : nullptr;
  if (t && dtype_info(t->dtype)) {
    s += " on ";
    s += dtype_info(t->dtype)->name;
  }
  return s;
}

// Structural checks only (the core validated shapes and dtypes); they keep
// a malformed request from reading out of bounds.
vnn_status check(const Device& d, const vnn_op& op, const std::string& what) {
  int need_in = op.kind == VNN_OP_WHERE ? 3 : op.kind == VNN_OP_BINARY ? 2 : 1;
  if (op.num_outputs < 1 || !op.outputs || op.num_inputs < need_in || !op.inputs)
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": needs ", need_in, " input(s) and 1 output");
  if (op.kind != VNN_OP_WHERE) {
    if (op.num_ints < 1 || !op.ints)
      return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": needs ints[0] (the function)");
    int64_t limit = op.kind == VNN_OP_BINARY ? int64_t(VNN_BINARY_COUNT_) : int64_t(VNN_UNARY_COUNT_);
    if (op.ints[0] < 0 || op.ints[0] >= limit)
      return fail(VNN_STATUS_UNSUPPORTED, what, " is not supported by the opencl backend");
  }
  for (int i = 0; i <= need_in; ++i)
    if (vnn_status st = check_operand(d, i < need_in ? op.inputs[i] : op.outputs[0], what)) return st;
  // Operand dtypes as the kernels assume them.
  const vnn_tensor_desc& out = op.outputs[0];
  bool ok;
  if (op.kind == VNN_OP_WHERE)
    ok = op.inputs[0].dtype == VNN_BOOL && op.inputs[1].dtype == out.dtype && op.inputs[2].dtype == out.dtype;
  else
    ok = (op.kind == VNN_OP_UNARY || op.inputs[1].dtype == op.inputs[0].dtype) &&
         out.dtype == (bool_out(op) ? int32_t(VNN_BOOL) : op.inputs[0].dtype);
  const bool floating = out.dtype == VNN_FLOAT32 || out.dtype == VNN_FLOAT64 || out.dtype == VNN_FLOAT16 ||
                        out.dtype == VNN_BFLOAT16;
  if (ok && op.kind == VNN_OP_BINARY && op.ints[0] == VNN_BINARY_GELU_BACKWARD && !floating)
    return fail(VNN_STATUS_UNSUPPORTED, what, ": takes floating dtypes only, not ", vnn::detail::abi_dtype(out.dtype));
  if (!ok) {
    std::string in;
    for (int i = 0; i < need_in; ++i)
      in += vnn::detail::str_cat(i ? ", " : "", vnn::detail::abi_dtype(op.inputs[i].dtype));
    return fail(VNN_STATUS_UNSUPPORTED, what, ": operand dtypes do not match (inputs ", in, ", out ",
                vnn::detail::abi_dtype(out.dtype), ")");
  }
  return VNN_STATUS_OK;
}

vnn_status run_where(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what) {
  const vnn_tensor_desc &out = op.outputs[0], &c = op.inputs[0], &a = op.inputs[1], &b = op.inputs[2];
  Layout l = make_layout(out, {&out, &c, &a, &b});
  if (l.n == 0) return VNN_STATUS_OK;
  // Elements move as bits (an unsigned type of their size): half needs no
  // cl_khr_fp16 that way.
  Kernel* k = nullptr;
  if (vnn_status st = get_kernel(d, "where", "vnn_where", std::string("-DT=") + dtype_info(out.dtype)->bits_storage, &k))
    return st;
  cl_mem mo = mem(out), mc = mem(c), ma = mem(a), mb = mem(b);
  cl_long oo = out.offset, co = c.offset, ao = a.offset, bo = b.offset, n = l.n;
  return launch(d, *k, q, l.n, what,
                {arg(mo), arg(oo), arg(mc), arg(co), arg(ma), arg(ao), arg(mb), arg(bo), arg(n), arg(l.ndim),
                 arg(l.sizes), arg(l.strides[0]), arg(l.strides[1]), arg(l.strides[2]), arg(l.strides[3])});
}

// The BINARY / UNARY kernel for (binary, fn, input dtype, output dtype)
// on d through a small per-thread cache in front of get_kernel: the
// per-op path of small tensors skips building the option string and
// hashing it (perf: ~8 % of a 64-float add's host time). Kernels live as
// long as the process, so a cached pointer never dangles.
// dense: 0 the strided kernel, 1 vnn_binary_dense, 2 the same with b one
// broadcast value, 3 vnn_binary_rows (binary only).
vnn_status elementwise_kernel(Device& d, bool binary, int64_t fn, int32_t dt, int32_t odt, int dense, Kernel** k) {
  struct Slot {
    const Device* d = nullptr;
    uint64_t key = 0;
    Kernel* k = nullptr;
  };
  thread_local Slot slots[64];
  const uint64_t key = uint64_t(binary) | uint64_t(uint32_t(fn)) << 1 | uint64_t(uint8_t(dt)) << 40 |
                       uint64_t(uint8_t(odt)) << 48 | uint64_t(dense) << 56;
  Slot& s = slots[(key * 0x9E3779B97F4A7C15ull) >> 58];
  if (s.k && s.d == &d && s.key == key) return *k = s.k, VNN_STATUS_OK;
  std::string defs = std::string("-DT=") + dtype_info(dt)->storage + " -DDT=" + std::to_string(dt) +
                     " -DOT=" + dtype_info(odt)->storage + " -DODT=" + std::to_string(odt) +
                     (binary ? " -DBINARY_FN=" : " -DUNARY_FN=") + std::to_string(fn) +
                     (dense == 2 ? " -DB_SCALAR=1" : "");
  const char* name = !binary ? "vnn_unary_op" : dense == 3 ? "vnn_binary_rows" : dense ? "vnn_binary_dense" : "vnn_binary_op";
  if (vnn_status st = get_kernel(d, "elementwise", name, defs, k)) return st;
  s = Slot{&d, key, *k};
  return VNN_STATUS_OK;
}

vnn_status run_binary_unary(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what) {
  const bool binary = op.kind == VNN_OP_BINARY;
  const vnn_tensor_desc& out = op.outputs[0];
  const vnn_tensor_desc& a = op.inputs[0];
  const vnn_tensor_desc& b = binary ? op.inputs[1] : op.inputs[0];
  Layout l = binary ? make_layout(out, {&out, &a, &b}) : make_layout(out, {&out, &a});
  if (l.n == 0) return VNN_STATUS_OK;
  // Binary ops on one dense run (b dense too, or one broadcast value).
  const bool out_a_dense = binary && contiguous(l, 0) && contiguous(l, 1);
  // Or dense rows with b one row broadcast down them (a bias over a batch).
  const bool rows = binary && l.ndim == 2 && l.strides[0].s[0] == 1 && l.strides[1].s[0] == 1 &&
                    l.strides[2].s[0] == 1 && l.strides[0].s[1] == l.sizes.s[0] &&
                    l.strides[1].s[1] == l.sizes.s[0] && l.strides[2].s[1] == 0;
  const int dense = rows ? 3 : !out_a_dense ? 0 : contiguous(l, 2) ? 1 : l.strides[2].s[0] == 0 ? 2 : 0;
  Kernel* k = nullptr;
  if (vnn_status st = elementwise_kernel(d, binary, op.ints[0], a.dtype, out.dtype, dense, &k)) return st;
  cl_mem mo = mem(out), ma = mem(a), mb = mem(b);
  cl_long oo = out.offset, ao = a.offset, bo = b.offset, n = l.n;
  if (binary) {
    // alpha travels in the kernel's compute type.
    Scalar alpha(op.num_scalars > 0 && op.scalars ? op.scalars[0] : 1.0);
    if (dense == 3) {
      const cl_long cols = l.sizes.s[0];
      const size_t global[2] = {size_t(cols), size_t(l.sizes.s[1])};
      return enqueue_nd(*k, q, 2, global, nullptr, what,
                        {arg(mo), arg(oo), arg(ma), arg(ao), arg(mb), arg(bo), alpha.as(a.dtype), arg(cols)});
    }
    if (dense)
      return launch(d, *k, q, l.n, what,
                    {arg(mo), arg(oo), arg(ma), arg(ao), arg(mb), arg(bo), alpha.as(a.dtype), arg(n)});
    return launch(d, *k, q, l.n, what,
                  {arg(mo), arg(oo), arg(ma), arg(ao), arg(mb), arg(bo), alpha.as(a.dtype), arg(n), arg(l.ndim),
                   arg(l.sizes), arg(l.strides[0]), arg(l.strides[1]), arg(l.strides[2])});
  }
  // A NaN scalar is an absent clamp bound.
  double v0 = op.num_scalars > 0 && op.scalars ? op.scalars[0] : NAN;
  double v1 = op.num_scalars > 1 && op.scalars ? op.scalars[1] : NAN;
  Scalar s0(std::isnan(v0) ? 0.0 : v0), s1(std::isnan(v1) ? 0.0 : v1);
  cl_int h0 = !std::isnan(v0), h1 = !std::isnan(v1);
  return launch(d, *k, q, l.n, what,
                {arg(mo), arg(oo), arg(ma), arg(ao), arg(n), arg(l.ndim), arg(l.sizes), arg(l.strides[0]),
                 arg(l.strides[1]), s0.as(a.dtype), s1.as(a.dtype), arg(h0), arg(h1)});
}

}  // namespace

vnn_status run_elementwise_op(Device& d, cl_command_queue q, const vnn_op& op) {
  std::string what = describe(d, op);
  if (vnn_status st = check(d, op, what)) return st;
  return op.kind == VNN_OP_WHERE ? run_where(d, q, op, what) : run_binary_unary(d, q, op, what);
}

}  // namespace vnn_opencl

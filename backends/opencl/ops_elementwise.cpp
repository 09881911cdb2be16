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
  return (op.kind == VNN_OP_BINARY && op.ints[0] >= VNN_BINARY_EQ) ||
         (op.kind == VNN_OP_UNARY && op.ints[0] == VNN_UNARY_LOGICAL_NOT);
}

// "opencl:0: BINARY pow on float32".
std::string describe(const Device& d, const vnn_op& op) {
  std::string s = d.label + ": ";
  int64_t fn = op.num_ints > 0 && op.ints ? op.ints[0] : -1;
  // Names from the ABI's table (vnn/op_names.h): no list of our own.
  const char* name = op.kind == VNN_OP_BINARY ? VNN_NAME(vnn_binary_names, fn) : VNN_NAME(vnn_unary_names, fn);
  if (op.kind == VNN_OP_WHERE) s += "WHERE";
  else
    s += std::string(op.kind == VNN_OP_BINARY ? "BINARY " : "UNARY ") + (name ? name : "fn=" + std::to_string(fn));
  const vnn_tensor_desc* t = op.num_outputs > 0 && op.outputs ? op.outputs : nullptr;
  if (t && dtype_info(t->dtype)) s += std::string(" on ") + dtype_info(t->dtype)->name;
  return s;
}

// Structural checks only (the core validated shapes and dtypes); they keep
// a malformed request from reading out of bounds.
vnn_status check(const Device& d, const vnn_op& op, const std::string& what) {
  int need_in = op.kind == VNN_OP_WHERE ? 3 : op.kind == VNN_OP_BINARY ? 2 : 1;
  if (op.num_outputs < 1 || !op.outputs || op.num_inputs < need_in || !op.inputs)
    return fail(VNN_STATUS_INVALID_ARGUMENT, "%s: needs %d input(s) and 1 output", what.c_str(), need_in);
  if (op.kind != VNN_OP_WHERE) {
    if (op.num_ints < 1 || !op.ints)
      return fail(VNN_STATUS_INVALID_ARGUMENT, "%s: needs ints[0] (the function)", what.c_str());
    int64_t limit = op.kind == VNN_OP_BINARY ? int64_t(VNN_BINARY_COUNT_) : int64_t(VNN_UNARY_COUNT_);
    if (op.ints[0] < 0 || op.ints[0] >= limit)
      return fail(VNN_STATUS_UNSUPPORTED, "%s is not supported by the opencl backend", what.c_str());
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
  if (!ok) return fail(VNN_STATUS_UNSUPPORTED, "%s: operand dtypes do not match", what.c_str());
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

vnn_status run_binary_unary(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what) {
  const bool binary = op.kind == VNN_OP_BINARY;
  const vnn_tensor_desc& out = op.outputs[0];
  const vnn_tensor_desc& a = op.inputs[0];
  const vnn_tensor_desc& b = binary ? op.inputs[1] : op.inputs[0];
  Layout l = binary ? make_layout(out, {&out, &a, &b}) : make_layout(out, {&out, &a});
  if (l.n == 0) return VNN_STATUS_OK;
  std::string defs = std::string("-DT=") + dtype_info(a.dtype)->storage + " -DDT=" + std::to_string(a.dtype) +
                     " -DOT=" + dtype_info(out.dtype)->storage + " -DODT=" + std::to_string(out.dtype) +
                     (binary ? " -DBINARY_FN=" : " -DUNARY_FN=") + std::to_string(op.ints[0]);
  Kernel* k = nullptr;
  if (vnn_status st = get_kernel(d, "elementwise", binary ? "vnn_binary_op" : "vnn_unary_op", defs, &k)) return st;
  cl_mem mo = mem(out), ma = mem(a), mb = mem(b);
  cl_long oo = out.offset, ao = a.offset, bo = b.offset, n = l.n;
  if (binary) {
    // alpha travels in the kernel's compute type.
    Scalar alpha(op.num_scalars > 0 && op.scalars ? op.scalars[0] : 1.0);
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

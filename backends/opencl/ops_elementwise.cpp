#include "ops_elementwise.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <mutex>
#include <string>

#include "dtype.hpp"
#include "vnn/checked_size.h"
#include "errors.hpp"
#include "launch.hpp"
#include "program_cache.hpp"
#include "vnn/op_names.h"

namespace vnn_opencl {
namespace {

// Names and counts come from the ABI (vnn/op_names.h): a function added
// there is known here without another list to update.
const char* const* const kBinaryNames = vnn_binary_names;
const char* const* const kUnaryNames = vnn_unary_names;
constexpr int kNumBinary = VNN_BINARY_COUNT_;
constexpr int kNumUnary = VNN_UNARY_COUNT_;

// The op's shape with dimensions merged where every tensor walks them
// contiguously, innermost first (see common.cl): contiguous operands become
// one dimension and take the kernels' division-free path.
struct Layout {
  int64_t n = 1;
  cl_int ndim = 0;
  cl_long8 sizes{};
  cl_long8 strides[4]{};  // per tensor, in the order given
};

Layout make_layout(const vnn_tensor_desc& shape, std::initializer_list<const vnn_tensor_desc*> ts) {
  Layout l;
  for (int k = shape.ndim - 1; k >= 0; --k) {
    int64_t size = shape.sizes[k];
    l.n *= size;
    if (size == 1) continue;
    if (l.ndim > 0) {
      bool merge = true;
      size_t t = 0;
      int prev = l.ndim - 1;
      // Sizes multiply within int64 (run() checked every descriptor); the
      // stride product may not, for a broadcast or as_strided operand.
      for (const vnn_tensor_desc* d : ts) {
        int64_t step;
        merge = merge && vnn::checked::mul(l.strides[t].s[prev], l.sizes.s[prev], &step) && d->strides[k] == step;
        ++t;
      }
      if (merge) {
        l.sizes.s[prev] *= size;
        continue;
      }
    }
    size_t t = 0;
    for (const vnn_tensor_desc* d : ts) l.strides[t++].s[l.ndim] = d->strides[k];
    l.sizes.s[l.ndim++] = size;
  }
  if (l.ndim == 0) {
    l.ndim = 1;
    l.sizes.s[0] = 1;
  }
  return l;
}


cl_mem mem(const vnn_tensor_desc& t) { return static_cast<cl_mem>(t.data); }

// A double scalar in the kernel's compute type CT (see elementwise.cl).
struct Scalar {
  cl_float f;
  cl_double d;
  cl_int i;
  cl_long l;
  explicit Scalar(double v) : f(static_cast<cl_float>(v)), d(v), i(saturating<cl_int>(v)), l(saturating<cl_long>(v)) {}
  Arg as(int32_t dtype) const {
    switch (dtype) {
      case VNN_FLOAT64: return arg(d);
      case VNN_INT64: return arg(l);
      case VNN_FLOAT32:
      case VNN_FLOAT16:
      case VNN_BFLOAT16: return arg(f);
      default: return arg(i);
    }
  }
};

bool bool_out(const vnn_op& op) {
  return (op.kind == VNN_OP_BINARY && op.ints[0] >= VNN_BINARY_EQ) ||
         (op.kind == VNN_OP_UNARY && op.ints[0] == VNN_UNARY_LOGICAL_NOT);
}

// "opencl:0: BINARY pow on float32".
std::string describe(const Device& d, const vnn_op& op) {
  std::string s = d.label + ": ";
  int64_t fn = op.num_ints > 0 && op.ints ? op.ints[0] : -1;
  if (op.kind == VNN_OP_WHERE)
    s += "where";
  else if (op.kind == VNN_OP_BINARY)
    s += std::string("binary ") + (fn >= 0 && fn < kNumBinary ? kBinaryNames[fn] : "fn=" + std::to_string(fn));
  else
    s += std::string("unary ") + (fn >= 0 && fn < kNumUnary ? kUnaryNames[fn] : "fn=" + std::to_string(fn));
  const vnn_tensor_desc* t = op.num_outputs > 0 && op.outputs ? op.outputs : nullptr;
  if (t && dtype_info(t->dtype)) s += std::string(" on ") + dtype_info(t->dtype)->name;
  return s;
}

// Structural checks only (the core validated shapes and dtypes); they keep
// a malformed request from reading out of bounds.
vnn_status check(const Device& d, const vnn_op& op, const std::string& what) {
  int need_in = op.kind == VNN_OP_WHERE ? 3 : op.kind == VNN_OP_BINARY ? 2 : 1;
  if (op.num_outputs < 1 || !op.outputs || op.num_inputs < need_in || !op.inputs)
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": needs ", need_in, " input(s) and 1 output");
  if (op.kind != VNN_OP_WHERE) {
    if (op.num_ints < 1 || !op.ints) return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": needs ints[0] (the function)");
    int64_t limit = op.kind == VNN_OP_BINARY ? kNumBinary : kNumUnary;
    if (op.ints[0] < 0 || op.ints[0] >= limit)
      return fail(VNN_STATUS_UNSUPPORTED, what, " is not supported by the opencl backend");
  }
  for (int i = 0; i <= need_in; ++i) {
    const vnn_tensor_desc& t = i < need_in ? op.inputs[i] : op.outputs[0];
    if (t.ndim < 0 || t.ndim > VNN_MAX_DIMS || !t.data || t.offset < 0)
      return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": malformed tensor descriptor (ndim ", t.ndim, ")");
    if (!dtype_info(t.dtype))
      return fail(VNN_STATUS_UNSUPPORTED, what, ": ", vnn::detail::abi_dtype(t.dtype), " is not supported");
    if (t.dtype == VNN_FLOAT64 && !d.fp64)
      return fail(VNN_STATUS_UNSUPPORTED, what, ": float64 is not supported on ", d.label,
                  " (device lacks cl_khr_fp64)");
  }
  // Operand dtypes as the kernels assume them.
  const vnn_tensor_desc& out = op.outputs[0];
  bool ok;
  if (op.kind == VNN_OP_WHERE)
    ok = op.inputs[0].dtype == VNN_BOOL && op.inputs[1].dtype == out.dtype && op.inputs[2].dtype == out.dtype;
  else
    ok = (op.kind == VNN_OP_UNARY || op.inputs[1].dtype == op.inputs[0].dtype) &&
         out.dtype == (bool_out(op) ? int32_t(VNN_BOOL) : op.inputs[0].dtype);
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
vnn_status elementwise_kernel(Device& d, bool binary, int64_t fn, int32_t dt, int32_t odt, Kernel** k) {
  struct Slot {
    const Device* d = nullptr;
    uint64_t key = 0;
    Kernel* k = nullptr;
  };
  thread_local Slot slots[64];
  const uint64_t key = uint64_t(binary) | uint64_t(uint32_t(fn)) << 1 | uint64_t(uint8_t(dt)) << 40 |
                       uint64_t(uint8_t(odt)) << 48;
  Slot& s = slots[(key * 0x9E3779B97F4A7C15ull) >> 58];
  if (s.k && s.d == &d && s.key == key) return *k = s.k, VNN_STATUS_OK;
  std::string defs = std::string("-DT=") + dtype_info(dt)->storage + " -DDT=" + std::to_string(dt) +
                     " -DOT=" + dtype_info(odt)->storage + " -DODT=" + std::to_string(odt) +
                     (binary ? " -DBINARY_FN=" : " -DUNARY_FN=") + std::to_string(fn);
  if (vnn_status st = get_kernel(d, "elementwise", binary ? "vnn_binary_op" : "vnn_unary_op", defs, k)) return st;
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
  Kernel* k = nullptr;
  if (vnn_status st = elementwise_kernel(d, binary, op.ints[0], a.dtype, out.dtype, &k)) return st;
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

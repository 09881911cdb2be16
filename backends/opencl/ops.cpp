#include "ops.hpp"

#include <CL/cl.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <string>

#include "device.hpp"
#include "dtype.hpp"
#include "errors.hpp"
#include "program_cache.hpp"

namespace vnn_opencl {
namespace {

const char* const kBinaryNames[] = {"add", "sub", "mul", "div", "maximum", "minimum"};
const char* const kUnaryNames[] = {"neg", "abs", "exp", "log", "sqrt", "relu", "sigmoid", "tanh"};

// The shape of an op after merging dimensions that every tensor walks
// contiguously, innermost first, as the kernels expect (see common.cl).
// Merging turns each contiguous tensor into one dimension so kernels take
// their division-free path.
struct Layout {
  int64_t n = 1;  // element count
  cl_int ndim = 0;
  cl_long8 sizes{};
  cl_long8 strides[3]{};  // per tensor, in the order given to make_layout
};

Layout make_layout(const vnn_tensor_desc& shape, std::initializer_list<const vnn_tensor_desc*> ts) {
  Layout l;
  for (int k = shape.ndim - 1; k >= 0; --k) {
    int64_t size = shape.sizes[k];
    l.n *= size;
    if (size == 1) continue;  // size-1 dims move no tensor
    if (l.ndim > 0) {
      bool merge = true;
      size_t t = 0;
      int prev = l.ndim - 1;
      for (const vnn_tensor_desc* d : ts)
        merge = merge && d->strides[k] == l.strides[t++].s[prev] * l.sizes.s[prev];
      if (merge) {
        l.sizes.s[prev] *= size;
        continue;
      }
    }
    size_t t = 0;
    for (const vnn_tensor_desc* d : ts) l.strides[t++].s[l.ndim] = d->strides[k];
    l.sizes.s[l.ndim++] = size;
  }
  if (l.ndim == 0) {  // a scalar, or all sizes 1: one element at the offsets
    l.ndim = 1;
    l.sizes.s[0] = 1;
  }
  return l;
}

bool contiguous(const Layout& l, int t) { return l.ndim == 1 && (l.strides[t].s[0] == 1 || l.n == 1); }

struct Arg {
  size_t size;
  const void* ptr;
};

template <typename V>
Arg arg(const V& v) {
  return {sizeof v, &v};
}

// Launches k over n elements. Kernels loop grid-stride, so the grid is
// capped and any work-group size is valid.
vnn_status launch(const Device& d, Kernel& k, cl_command_queue q, int64_t n,
                  const std::string& what, std::initializer_list<Arg> args) {
  size_t local = std::min<size_t>({k.work_group_size, d.max_work_group_size, 256});
  size_t groups = static_cast<size_t>((n + static_cast<int64_t>(local) - 1) / static_cast<int64_t>(local));
  size_t global = std::min<size_t>(groups, 4096) * local;
  std::lock_guard<std::mutex> lock(k.mutex);
  cl_uint i = 0;
  for (const Arg& a : args) {
    cl_int err = clSetKernelArg(k.kernel, i, a.size, a.ptr);
    if (err != CL_SUCCESS) return fail_cl(err, "%s: clSetKernelArg(%u) failed", what.c_str(), i);
    ++i;
  }
  cl_int err = clEnqueueNDRangeKernel(q, k.kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr);
  if (err != CL_SUCCESS) return fail_cl(err, "%s: clEnqueueNDRangeKernel failed", what.c_str());
  return VNN_STATUS_OK;
}

std::string storage_defines(const char* prefix, int32_t dtype) {
  const DtypeInfo* info = dtype_info(dtype);
  return std::string("-D") + prefix + "_T=" + info->storage + " -D" + prefix + "_DT=" +
         std::to_string(dtype);
}

cl_mem mem(const vnn_tensor_desc& t) { return static_cast<cl_mem>(t.data); }

vnn_status run_fill(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what) {
  const vnn_tensor_desc& out = op.outputs[0];
  if (op.num_scalars < 1) return fail(VNN_STATUS_INVALID_ARGUMENT, "%s: needs scalars[0]", what.c_str());
  const DtypeInfo* info = dtype_info(out.dtype);
  uint64_t bits = scalar_bits(op.scalars[0], out.dtype);
  Layout l = make_layout(out, {&out});
  if (l.n == 0) return VNN_STATUS_OK;
  if (contiguous(l, 0)) {
    cl_int err = clEnqueueFillBuffer(q, mem(out), &bits, info->size,
                                     static_cast<size_t>(out.offset) * info->size,
                                     static_cast<size_t>(l.n) * info->size, 0, nullptr, nullptr);
    if (err != CL_SUCCESS) return fail_cl(err, "%s: clEnqueueFillBuffer failed", what.c_str());
    return VNN_STATUS_OK;
  }
  Kernel* k = nullptr;
  if (vnn_status st = get_kernel(d, "fill", "vnn_fill", std::string("-DT=") + info->bits_storage, &k))
    return st;
  cl_mem m = mem(out);
  cl_long off = out.offset, n = l.n;
  return launch(d, *k, q, l.n, what,
                {arg(m), arg(off), {info->size, &bits}, arg(n), arg(l.ndim), arg(l.sizes), arg(l.strides[0])});
}

vnn_status run_copy(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what) {
  const vnn_tensor_desc& out = op.outputs[0];
  const vnn_tensor_desc& in = op.inputs[0];
  Layout l = make_layout(out, {&out, &in});
  if (l.n == 0) return VNN_STATUS_OK;
  const DtypeInfo* oi = dtype_info(out.dtype);
  if (in.dtype == out.dtype && contiguous(l, 0) && contiguous(l, 1)) {
    size_t bytes = static_cast<size_t>(l.n) * oi->size;
    size_t src = static_cast<size_t>(in.offset) * oi->size, dst = static_cast<size_t>(out.offset) * oi->size;
    if (in.data == out.data && src == dst) return VNN_STATUS_OK;
    // clEnqueueCopyBuffer rejects overlapping ranges; the kernel takes those.
    bool overlap = in.data == out.data && src < dst + bytes && dst < src + bytes;
    if (!overlap) {
      cl_int err = clEnqueueCopyBuffer(q, mem(in), mem(out), src, dst, bytes, 0, nullptr, nullptr);
      if (err != CL_SUCCESS) return fail_cl(err, "%s: clEnqueueCopyBuffer failed", what.c_str());
      return VNN_STATUS_OK;
    }
  }
  Kernel* k = nullptr;
  std::string defs = storage_defines("IN", in.dtype) + " " + storage_defines("OUT", out.dtype);
  if (vnn_status st = get_kernel(d, "copy", "vnn_copy", defs, &k)) return st;
  cl_mem mo = mem(out), mi = mem(in);
  cl_long oo = out.offset, io = in.offset, n = l.n;
  return launch(d, *k, q, l.n, what,
                {arg(mo), arg(oo), arg(mi), arg(io), arg(n), arg(l.ndim), arg(l.sizes),
                 arg(l.strides[0]), arg(l.strides[1])});
}

template <typename I>
I saturating(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

vnn_status run_elementwise(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what,
                           bool binary) {
  const vnn_tensor_desc& out = op.outputs[0];
  const vnn_tensor_desc& a = op.inputs[0];
  const vnn_tensor_desc& b = binary ? op.inputs[1] : op.inputs[0];
  Layout l = binary ? make_layout(out, {&out, &a, &b}) : make_layout(out, {&out, &a});
  if (l.n == 0) return VNN_STATUS_OK;
  std::string defs = std::string("-DT=") + dtype_info(out.dtype)->storage +
                     " -DDT=" + std::to_string(out.dtype) + (binary ? " -DBINARY_FN=" : " -DUNARY_FN=") +
                     std::to_string(op.ints[0]);
  Kernel* k = nullptr;
  if (vnn_status st = get_kernel(d, "elementwise", binary ? "vnn_binary_op" : "vnn_unary_op", defs, &k))
    return st;
  cl_mem mo = mem(out), ma = mem(a), mb = mem(b);
  cl_long oo = out.offset, ao = a.offset, bo = b.offset, n = l.n;
  if (!binary)
    return launch(d, *k, q, l.n, what,
                  {arg(mo), arg(oo), arg(ma), arg(ao), arg(n), arg(l.ndim), arg(l.sizes),
                   arg(l.strides[0]), arg(l.strides[1])});
  // alpha travels in the kernel's compute type (see elementwise.cl's CT).
  double alpha = op.num_scalars > 0 ? op.scalars[0] : 1.0;
  cl_float af = static_cast<cl_float>(alpha);
  cl_double ad = alpha;
  cl_int ai = saturating<cl_int>(alpha);
  cl_long al = saturating<cl_long>(alpha);
  Arg alpha_arg = out.dtype == VNN_FLOAT64 ? arg(ad)
                  : out.dtype == VNN_INT64 ? arg(al)
                  : (out.dtype == VNN_FLOAT32 || out.dtype == VNN_FLOAT16 || out.dtype == VNN_BFLOAT16)
                      ? arg(af)
                      : arg(ai);
  return launch(d, *k, q, l.n, what,
                {arg(mo), arg(oo), arg(ma), arg(ao), arg(mb), arg(bo), alpha_arg, arg(n), arg(l.ndim),
                 arg(l.sizes), arg(l.strides[0]), arg(l.strides[1]), arg(l.strides[2])});
}

// Text naming the op for error messages: "opencl:0: BINARY add on float32".
std::string describe(const Device& d, const vnn_op& op) {
  std::string s = d.label + ": ";
  int64_t fn = op.num_ints > 0 ? op.ints[0] : -1;
  switch (op.kind) {
    case VNN_OP_FILL: s += "FILL"; break;
    case VNN_OP_COPY: s += "COPY"; break;
    case VNN_OP_BINARY:
      s += "BINARY ";
      s += fn >= 0 && fn < 6 ? kBinaryNames[fn] : "fn=" + std::to_string(fn);
      break;
    case VNN_OP_UNARY:
      s += "UNARY ";
      s += fn >= 0 && fn < 8 ? kUnaryNames[fn] : "fn=" + std::to_string(fn);
      break;
    default: s += "op kind " + std::to_string(op.kind); break;
  }
  const vnn_tensor_desc* t = op.num_outputs > 0 ? op.outputs : nullptr;
  const DtypeInfo* info = t ? dtype_info(t->dtype) : nullptr;
  if (op.kind == VNN_OP_COPY && op.num_inputs > 0 && dtype_info(op.inputs[0].dtype))
    s += std::string(" from ") + dtype_info(op.inputs[0].dtype)->name + " to";
  if (info) s += std::string(" on ") + info->name;
  return s;
}

// Structural checks only (the core validated shapes and dtypes); they keep
// a malformed request from reading out of bounds.
vnn_status check(const Device& d, const vnn_op& op, const std::string& what) {
  int need_in = op.kind == VNN_OP_FILL ? 0 : op.kind == VNN_OP_BINARY ? 2 : 1;
  if (op.num_outputs < 1 || !op.outputs || op.num_inputs < need_in || (need_in && !op.inputs))
    return fail(VNN_STATUS_INVALID_ARGUMENT, "%s: needs %d input(s) and 1 output", what.c_str(), need_in);
  if ((op.kind == VNN_OP_BINARY || op.kind == VNN_OP_UNARY) && (op.num_ints < 1 || !op.ints))
    return fail(VNN_STATUS_INVALID_ARGUMENT, "%s: needs ints[0] (the function)", what.c_str());
  if (op.kind == VNN_OP_BINARY && (op.ints[0] < 0 || op.ints[0] > VNN_BINARY_MINIMUM))
    return fail(VNN_STATUS_UNSUPPORTED, "%s is not supported by the opencl backend", what.c_str());
  if (op.kind == VNN_OP_UNARY && (op.ints[0] < 0 || op.ints[0] > VNN_UNARY_TANH))
    return fail(VNN_STATUS_UNSUPPORTED, "%s is not supported by the opencl backend", what.c_str());
  for (int i = 0; i < need_in + 1; ++i) {
    const vnn_tensor_desc& t = i < need_in ? op.inputs[i] : op.outputs[0];
    if (t.ndim < 0 || t.ndim > VNN_MAX_DIMS || !t.data || t.offset < 0)
      return fail(VNN_STATUS_INVALID_ARGUMENT, "%s: malformed tensor descriptor (ndim %d)", what.c_str(),
                  static_cast<int>(t.ndim));
    const DtypeInfo* info = dtype_info(t.dtype);
    if (!info)
      return fail(VNN_STATUS_UNSUPPORTED, "%s: dtype code %d is not supported", what.c_str(),
                  static_cast<int>(t.dtype));
    if (t.dtype == VNN_FLOAT64 && !d.fp64)
      return fail(VNN_STATUS_UNSUPPORTED, "%s: float64 is not supported on %s (device lacks cl_khr_fp64)",
                  what.c_str(), d.label.c_str());
  }
  return VNN_STATUS_OK;
}

}  // namespace

vnn_status run(int32_t device, const vnn_op* op) {
  Device* d = nullptr;
  if (vnn_status st = ready_device(device, &d)) return st;
  if (!op || op->struct_size < sizeof(vnn_op))
    return fail(VNN_STATUS_INVALID_ARGUMENT, "%s: run: op is NULL or its struct_size is too small",
                d->label.c_str());
  std::string what = describe(*d, *op);
  if (op->kind < VNN_OP_FILL || op->kind > VNN_OP_UNARY)
    return fail(VNN_STATUS_UNSUPPORTED, "%s is not supported by the opencl backend", what.c_str());
  if (vnn_status st = check(*d, *op, what)) return st;
  cl_command_queue q = queue_or_default(*d, op->queue);
  switch (op->kind) {
    case VNN_OP_FILL: return run_fill(*d, q, *op, what);
    case VNN_OP_COPY: return run_copy(*d, q, *op, what);
    case VNN_OP_BINARY: return run_elementwise(*d, q, *op, what, true);
    default: return run_elementwise(*d, q, *op, what, false);
  }
}

}  // namespace vnn_opencl

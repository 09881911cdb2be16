#include "op_common.hpp"

#include "dtype.hpp"
#include "errors.hpp"
#include "program_cache.hpp"
#include "vnn/checked_size.h"

namespace vnn_opencl {

// The products below cannot overflow: run() rejected any descriptor whose
// element count or extent does not fit int64 (common/desc_check.hpp), and
// l.n and every merged size are products of shape's sizes. The stride
// product may not fit, for a broadcast or as_strided operand: checked.
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
  if (l.ndim == 0) {  // a scalar, or all sizes 1: one element at the offsets
    l.ndim = 1;
    l.sizes.s[0] = 1;
  }
  return l;
}

int64_t numel(const vnn_tensor_desc& t) {
  int64_t n = 1;
  for (int k = 0; k < t.ndim; ++k) n *= t.sizes[k];
  return n;
}

bool dense(const vnn_tensor_desc& t) {
  int64_t expected = 1;
  for (int k = t.ndim - 1; k >= 0; --k) {
    if (t.sizes[k] != 1 && t.strides[k] != expected) return false;
    expected *= t.sizes[k];
  }
  return true;
}

int preferred_vector_width(const Device& d, int32_t dtype) {
  const DtypeInfo* info = dtype_info(dtype);
  unsigned w = d.vector_width_float;
  if (info && info->size == 8) w /= 2;
  int vw = 1;
  while (vw < 16 && unsigned(vw * 2) <= w) vw *= 2;
  return vw;
}

bool valid_desc(const vnn_tensor_desc& t) {
  return t.ndim >= 0 && t.ndim <= VNN_MAX_DIMS && t.data && t.offset >= 0 && dtype_info(t.dtype);
}

bool desc_ok(const vnn_tensor_desc& t, int ndim, int32_t dtype) {
  return t.data && t.ndim == ndim && t.dtype == dtype && t.offset >= 0;
}

cl_long4 strides4(const vnn_tensor_desc& t) {
  cl_long4 s{};
  for (int i = 0; i < t.ndim && i < 4; ++i) s.s[i] = t.strides[i];
  return s;
}

cl_long4 sizes4(const vnn_tensor_desc& t) {
  cl_long4 s{};
  for (int i = 0; i < 4; ++i) s.s[i] = t.sizes[i];
  return s;
}

std::string storage_defines(const char* prefix, int32_t dtype) {
  const DtypeInfo* info = dtype_info(dtype);
  return std::string("-D") + prefix + "_T=" + info->storage + " -D" + prefix + "_DT=" + std::to_string(dtype);
}

vnn_status check_operand(const Device& d, const vnn_tensor_desc& t, const std::string& what) {
  if (t.ndim < 0 || t.ndim > VNN_MAX_DIMS || !t.data || t.offset < 0)
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": malformed tensor descriptor (ndim ", t.ndim, ")");
  if (!dtype_info(t.dtype))
    return fail(VNN_STATUS_UNSUPPORTED, what, ": ", vnn::detail::abi_dtype(t.dtype), " is not supported");
  if (t.dtype == VNN_FLOAT64 && !d.fp64)
    return fail(VNN_STATUS_UNSUPPORTED, what, ": float64 is not supported on ", d.label, " (device lacks cl_khr_fp64)");
  return VNN_STATUS_OK;
}

std::string op_label(const Device& d, int32_t kind) {
  std::string s;
  s.reserve(64);
  s += d.label;
  s += ": ";
  if (const char* n = VNN_OP_KIND_NAME(kind)) s += n;
  else s += "op kind " + std::to_string(kind);
  return s;
}

Scalar::Scalar(double v) : f(static_cast<cl_float>(v)), d(v), i(saturating<cl_int>(v)), l(saturating<cl_long>(v)) {}

Arg Scalar::as(int32_t dtype) const {
  switch (dtype) {
    case VNN_FLOAT64: return arg(d);
    case VNN_INT64: return arg(l);
    case VNN_FLOAT32:
    case VNN_FLOAT16:
    case VNN_BFLOAT16: return arg(f);
    default: return arg(i);
  }
}

vnn_status copy_kernel(Device& d, cl_command_queue q, const vnn_tensor_desc& out, const vnn_tensor_desc& in,
                       const Layout& l, const std::string& what) {
  Kernel* k = nullptr;
  std::string defs = storage_defines("IN", in.dtype) + " " + storage_defines("OUT", out.dtype);
  if (vnn_status st = get_kernel(d, "copy", "vnn_copy", defs, &k)) return st;
  cl_mem mo = mem(out), mi = mem(in);
  cl_long oo = out.offset, io = in.offset, n = l.n;
  return launch(d, *k, q, l.n, what,
                {arg(mo), arg(oo), arg(mi), arg(io), arg(n), arg(l.ndim), arg(l.sizes), arg(l.strides[0]),
                 arg(l.strides[1])});
}

}  // namespace vnn_opencl

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "op_common.hpp"

#include <algorithm>

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

int x_class(const Layout& l, int t) {
  const cl_long s = l.strides[t].s[0];
  return s == 1 ? 1 : s == 0 ? 0 : -1;
}

namespace {
// The largest divisor of n that is at most most (1 for n = 0).
size_t divisor_at_most(uint64_t n, size_t most) {
  if (n == 0) return 1;
  size_t v = size_t(std::min<uint64_t>(n, most));
  while (v > 1 && n % v != 0) --v;
  return std::max<size_t>(v, 1);
}
}  // namespace

bool plan_nd(const Device& d, const Layout& l, int tensors, NdPlan* p) {
  // Grid dims: 0, then the two largest of the rest (in layout order).
  int dims[3] = {0, -1, -1};
  for (int k = 1; k < l.ndim; ++k) {
    if (dims[1] < 0 || l.sizes.s[k] > l.sizes.s[dims[1]]) dims[2] = dims[1], dims[1] = k;
    else if (dims[2] < 0 || l.sizes.s[k] > l.sizes.s[dims[2]]) dims[2] = k;
  }
  if (dims[1] > dims[2] && dims[2] >= 0) std::swap(dims[1], dims[2]);
  p->outer = 0;
  int64_t launches = 1;
  for (int k = 1; k < l.ndim; ++k) {
    if (k == dims[1] || k == dims[2]) continue;
    p->outer_sizes[p->outer] = l.sizes.s[k];
    for (int t = 0; t < tensors; ++t) p->outer_strides[t][p->outer] = l.strides[t].s[k];
    launches *= l.sizes.s[k];
    ++p->outer;
  }
  if (launches > 256) return false;
  uint64_t size[3];
  for (int g = 0; g < 3; ++g) {
    size[g] = dims[g] >= 0 ? uint64_t(l.sizes.s[dims[g]]) : 1;
    p->sizes.s[g] = cl_long(size[g]);
    for (int t = 0; t < tensors; ++t) p->strides[t].s[g] = dims[g] >= 0 ? l.strides[t].s[dims[g]] : 0;
    if (size[g] >= (uint64_t(1) << 32)) return false;
  }
  // Groups of up to 1024 items on CPU-like devices (PoCL runs each as one
  // loop), 256 on GPUs, halved while there are too few to fill the units.
  // CPU drivers compile a kernel once per group shape (see driver_local in
  // launch.hpp): there the y and z sides are powers of two, as driver_local's.
  const bool gpu = (d.cl_type & CL_DEVICE_TYPE_GPU) != 0;
  auto side = gpu ? divisor_at_most : pow2_divisor_at_most;
  const uint64_t want = 4 * std::max<uint64_t>(d.compute_units, 1);
  for (size_t cap = std::min<size_t>(d.max_work_group_size, gpu ? 256 : 1024);; cap /= 2) {
    size_t lx = divisor_at_most(size[0], std::min(cap, d.max_item_sizes[0]));
    p->check = size[0] > cap && lx < 32;  // a poor divisor: round up and test instead
    if (p->check) lx = std::min({cap, d.max_item_sizes[0], size_t(64)});
    const size_t ly = side(size[1], std::min(cap / lx, d.max_item_sizes[1]));
    const size_t lz = side(size[2], std::min(cap / (lx * ly), d.max_item_sizes[2]));
    p->local[0] = lx, p->local[1] = ly, p->local[2] = lz;
    p->global[0] = size_t((size[0] + lx - 1) / lx * lx), p->global[1] = size_t(size[1]), p->global[2] = size_t(size[2]);
    const uint64_t groups = p->global[0] / lx * (size[1] / ly) * (size[2] / lz);
    if (groups >= want || cap <= 64) return true;
  }
}

namespace {

// The conversions one copy program holds (see Siblings): those a model's
// first steps take (bytes to float32 inputs, float64 and int64 scalars,
// 16-bit casts; float64 only where the device has it); none (empty) for a
// pair not listed.
Siblings copy_siblings(const Device& d, int32_t in, int32_t out) {
  static const int32_t kPairs[][2] = {
      {VNN_FLOAT32, VNN_FLOAT32}, {VNN_UINT8, VNN_FLOAT32},    {VNN_FLOAT32, VNN_FLOAT64}, {VNN_FLOAT64, VNN_FLOAT32},
      {VNN_FLOAT64, VNN_INT64},   {VNN_INT64, VNN_FLOAT32},    {VNN_INT64, VNN_INT64},     {VNN_FLOAT32, VNN_BFLOAT16},
      {VNN_BFLOAT16, VNN_FLOAT32}, {VNN_FLOAT32, VNN_FLOAT16}, {VNN_FLOAT16, VNN_FLOAT32}};
  Siblings s;
  for (const auto& pair : kPairs) {
    if (!d.fp64 && (pair[0] == VNN_FLOAT64 || pair[1] == VNN_FLOAT64)) continue;
    if (pair[0] == in && pair[1] == out) s.index = s.variants.size();
    s.variants.push_back(storage_defines("IN", pair[0]) + " " + storage_defines("OUT", pair[1]));
  }
  if (s.variants[s.index] != storage_defines("IN", in) + " " + storage_defines("OUT", out)) return Siblings{};
  return s;
}

// The copy kernel from dtype `in` to `out` on d, 1-D (nd false) or on the
// 3-D grid with these x stride classes, through a KernelSlots cache (a
// 64-element copy took 11 instead of 6 us on PoCL building its sibling
// list each time).
vnn_status copy_kernel_for(Device& d, int32_t in, int32_t out, bool nd, int ox, int ax, bool check, Kernel** k) {
  thread_local KernelSlots<4> slots;
  const uint64_t key = uint64_t(uint8_t(in)) | uint64_t(uint8_t(out)) << 8 | uint64_t(nd) << 16 |
                       uint64_t(ox + 1) << 17 | uint64_t(ax + 1) << 19 | uint64_t(check) << 21;
  if (Kernel* hit = slots.find(d, key)) return *k = hit, VNN_STATUS_OK;
  const Siblings pairs = copy_siblings(d, in, out);
  std::string defs = pairs.variants.empty() ? storage_defines("IN", in) + " " + storage_defines("OUT", out) : "";
  if (nd)
    defs += " -DOX=" + std::to_string(ox) + " -DAX=" + std::to_string(ax) + (check ? " -DVNN_ND_CHECK=1" : "");
  if (vnn_status st = get_kernel(d, "copy", nd ? "vnn_copy_nd" : "vnn_copy", defs, pairs, k)) return st;
  slots.put(d, key, *k);
  return VNN_STATUS_OK;
}

}  // namespace

vnn_status copy_kernel(Device& d, cl_command_queue q, const vnn_tensor_desc& out, const vnn_tensor_desc& in,
                       const Layout& l, const std::string& what) {
  Kernel* k = nullptr;
  cl_mem mo = mem(out), mi = mem(in);
  cl_long oo = out.offset, io = in.offset, n = l.n;
  // The 3-D grid (no division per element), else the 1-D kernel.
  NdPlan p;
  if (plan_nd(d, l, 2, &p)) {
    if (vnn_status st = copy_kernel_for(d, in.dtype, out.dtype, true, x_class(l, 0), x_class(l, 1), p.check, &k))
      return st;
    if (k->work_group_size >= p.local[0] * p.local[1] * p.local[2]) {
      const cl_long base[2] = {out.offset, in.offset};
      return each_nd_launch(p, base, 2, [&](const cl_long* offs) {
        return enqueue_nd(*k, q, 3, p.global, p.local, what,
                          {arg(mo), arg(offs[0]), arg(mi), arg(offs[1]), arg(p.sizes), arg(p.strides[0]),
                           arg(p.strides[1])});
      });
    }
  }
  if (vnn_status st = copy_kernel_for(d, in.dtype, out.dtype, false, -1, -1, false, &k)) return st;
  return launch(d, *k, q, l.n, what,
                {arg(mo), arg(oo), arg(mi), arg(io), arg(n), arg(l.ndim), arg(l.sizes), arg(l.strides[0]),
                 arg(l.strides[1])});
}

}  // namespace vnn_opencl

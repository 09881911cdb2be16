// Reductions and softmax: dims, dtypes and keepdim are settled here once;
// the backend receives the input permuted so that the reduced dims come
// last (VNN_OP_REDUCE) or the softmax dim last (VNN_OP_SOFTMAX).
#include <algorithm>
#include <string>

#include "tensor/tensor_impl.hpp"
#include "vnn/error.h"
#include "vnn/reduction.h"

namespace vnn {

namespace {

const char* reduce_name(vnn_reduce_fn fn) {
  switch (fn) {
    case VNN_REDUCE_SUM: return "sum";
    case VNN_REDUCE_MEAN: return "mean";
    case VNN_REDUCE_PROD: return "prod";
    case VNN_REDUCE_MAX: return "max";
    case VNN_REDUCE_MIN: return "min";
    case VNN_REDUCE_ARGMAX: return "argmax";
    case VNN_REDUCE_ARGMIN: return "argmin";
  }
  return "reduce";
}

bool is_arg(vnn_reduce_fn fn) { return fn == VNN_REDUCE_ARGMAX || fn == VNN_REDUCE_ARGMIN; }
bool is_extreme(vnn_reduce_fn fn) { return fn == VNN_REDUCE_MAX || fn == VNN_REDUCE_MIN || is_arg(fn); }

const Tensor& checked(const Tensor& t, const char* op) {
  if (!t.defined()) throw ValueError(std::string(op) + ": argument 'input' is an undefined tensor");
  return t;
}

// The dtype the kernel reads (it knows float32/64, int32/64) and the dtype
// the user gets back.
void reduce_dtypes(vnn_reduce_fn fn, DType in, const char* op, DType* compute, DType* result) {
  if (fn == VNN_REDUCE_MEAN && !is_floating(in))
    throw DTypeError(std::string(op) + "(): could not infer output dtype: input dtype " + name(in) +
                     " is not floating; convert first, e.g. t.to(vnn::kFloat32)");
  switch (in) {
    case kFloat16:
    case kBFloat16: *compute = kFloat32; *result = is_arg(fn) ? kInt64 : in; return;
    case kUInt8:
    case kBool:
      if (is_extreme(fn)) {
        *compute = kInt32;
        *result = is_arg(fn) ? kInt64 : in;
      } else {
        *compute = kInt64;
        *result = kInt64;
      }
      return;
    case kInt32:
      *compute = kInt32;
      *result = (fn == VNN_REDUCE_SUM || fn == VNN_REDUCE_PROD || is_arg(fn)) ? kInt64 : kInt32;
      return;
    default: *compute = in; *result = is_arg(fn) ? kInt64 : in; return;
  }
}

// Reduces `t` over the dims flagged in `reduced` (all dims when none are).
Tensor reduce(const Tensor& t0, const bool* reduced_in, vnn_reduce_fn fn, bool keepdim) {
  const char* op = reduce_name(fn);
  const Tensor& t = checked(t0, op);
  int nd = t.dim();
  bool reduced[kMaxDims] = {};
  for (int i = 0; i < nd; ++i) reduced[i] = reduced_in[i];
  DType compute, result;
  reduce_dtypes(fn, t.dtype(), op, &compute, &result);

  Shape perm, out_sizes, keep_sizes;
  int64_t inner = 1;
  for (int i = 0; i < nd; ++i)
    if (!reduced[i]) {
      perm.push_back(i);
      out_sizes.push_back(t.sizes()[i]);
      keep_sizes.push_back(t.sizes()[i]);
    }
  int k = 0;
  for (int i = 0; i < nd; ++i)
    if (reduced[i]) {
      perm.push_back(i);
      keep_sizes.push_back(1);
      inner *= t.sizes()[i];
      ++k;
    }
  if (keepdim) {  // keep_sizes in the original order
    keep_sizes = t.sizes();
    for (int i = 0; i < nd; ++i)
      if (reduced[i]) keep_sizes[i] = 1;
  }
  if (is_extreme(fn) && inner == 0 && out_sizes.numel() > 0)
    throw IndexError(std::string(op) + "(): expected a non-empty reduction, but input of shape " +
                     t.sizes().str() + " has size 0 along a reduced dimension; pick a dim whose size is not 0");
  if (is_arg(fn) && k > 1) {  // several dims: reduce over their flattened product
    Tensor p = t.permute(perm).contiguous();
    Shape flat = out_sizes;
    flat.push_back(inner);
    bool last[kMaxDims] = {};
    last[flat.size() - 1] = true;
    Tensor r = reduce(p.view(flat), last, fn, false);
    return keepdim ? r.view(keep_sizes) : r;
  }

  Tensor in = t.permute(perm).to(compute);
  DType kernel_out = result;
  if (result == kFloat16 || result == kBFloat16) kernel_out = kFloat32;
  if ((result == kUInt8 || result == kBool) && !is_arg(fn)) kernel_out = kInt32;
  Tensor out = detail::make_empty(t.impl()->ctx(), out_sizes, kernel_out);
  detail::enqueue(VNN_OP_REDUCE, op, {&in}, out, {}, {int64_t(fn), int64_t(k)});
  if (kernel_out != result) out = out.to(result);
  return keepdim ? out.view(keep_sizes) : out;
}

Tensor reduce_dims(const Tensor& t, const std::vector<int64_t>& dims, vnn_reduce_fn fn, bool keepdim) {
  const char* op = reduce_name(fn);
  checked(t, op);
  int nd = t.dim();
  bool reduced[kMaxDims] = {};
  if (dims.empty()) {
    for (int i = 0; i < nd; ++i) reduced[i] = true;
  } else {
    for (int64_t d : dims) {
      if (d < -int64_t(kMaxDims) - 1 || d > int64_t(kMaxDims))
        throw IndexError(std::string(op) + ": dimension " + std::to_string(d) +
                         " is out of range for a tensor of " + std::to_string(nd) + " dimensions");
      int n = detail::normalize_dim(int(d), nd, op);
      if (nd == 0) continue;  // a 0-dim tensor accepts dim 0 / -1
      if (reduced[n])
        throw ValueError(std::string(op) + ": dim " + std::to_string(n) + " appears multiple times in the list of dims");
      reduced[n] = true;
    }
  }
  return reduce(t, reduced, fn, keepdim);
}

Tensor reduce_all(const Tensor& t, vnn_reduce_fn fn) { return reduce_dims(t, {}, fn, false); }

Tensor reduce_one(const Tensor& t, int dim, vnn_reduce_fn fn, bool keepdim) {
  return reduce_dims(t, {int64_t(dim)}, fn, keepdim);
}

Tensor softmax_impl(const Tensor& t0, int dim, bool log_out) {
  const char* op = log_out ? "log_softmax" : "softmax";
  const Tensor& t = checked(t0, op);
  if (!is_floating(t.dtype()))
    throw DTypeError(std::string(op) + ": expected a floating dtype, got " + name(t.dtype()) +
                     "; convert first, e.g. t.to(vnn::kFloat32)");
  int nd = t.dim();
  int d = detail::normalize_dim(dim, nd, op);
  DType compute = t.dtype() == kFloat64 ? kFloat64 : kFloat32;
  Tensor in = t.to(compute);
  Tensor out = detail::make_empty(t.impl()->ctx(), t.sizes(), compute);
  if (out.numel() > 0) {
    Tensor in_v = nd > 0 ? in.transpose(d, nd - 1) : in;
    Tensor out_v = nd > 0 ? out.transpose(d, nd - 1) : out;
    detail::enqueue(VNN_OP_SOFTMAX, op, {&in_v}, out_v, {}, {int64_t(log_out ? 1 : 0)});
  }
  return compute == t.dtype() ? out : out.to(t.dtype());
}

}  // namespace

Tensor sum(const Tensor& t) { return reduce_all(t, VNN_REDUCE_SUM); }
Tensor sum(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce_dims(t, dims, VNN_REDUCE_SUM, keepdim);
}
Tensor sum(const Tensor& t, int dim, bool keepdim) { return reduce_one(t, dim, VNN_REDUCE_SUM, keepdim); }
Tensor mean(const Tensor& t) { return reduce_all(t, VNN_REDUCE_MEAN); }
Tensor mean(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce_dims(t, dims, VNN_REDUCE_MEAN, keepdim);
}
Tensor mean(const Tensor& t, int dim, bool keepdim) { return reduce_one(t, dim, VNN_REDUCE_MEAN, keepdim); }
Tensor prod(const Tensor& t) { return reduce_all(t, VNN_REDUCE_PROD); }
Tensor prod(const Tensor& t, int dim, bool keepdim) { return reduce_one(t, dim, VNN_REDUCE_PROD, keepdim); }

Tensor amax(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce_dims(t, dims, VNN_REDUCE_MAX, keepdim);
}
Tensor amin(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce_dims(t, dims, VNN_REDUCE_MIN, keepdim);
}
Tensor max(const Tensor& t) { return reduce_all(t, VNN_REDUCE_MAX); }
Tensor min(const Tensor& t) { return reduce_all(t, VNN_REDUCE_MIN); }
std::tuple<Tensor, Tensor> max(const Tensor& t, int dim, bool keepdim) {
  return {reduce_one(t, dim, VNN_REDUCE_MAX, keepdim), reduce_one(t, dim, VNN_REDUCE_ARGMAX, keepdim)};
}
std::tuple<Tensor, Tensor> min(const Tensor& t, int dim, bool keepdim) {
  return {reduce_one(t, dim, VNN_REDUCE_MIN, keepdim), reduce_one(t, dim, VNN_REDUCE_ARGMIN, keepdim)};
}
Tensor argmax(const Tensor& t) { return reduce_all(t, VNN_REDUCE_ARGMAX); }
Tensor argmax(const Tensor& t, int dim, bool keepdim) { return reduce_one(t, dim, VNN_REDUCE_ARGMAX, keepdim); }
Tensor argmin(const Tensor& t) { return reduce_all(t, VNN_REDUCE_ARGMIN); }
Tensor argmin(const Tensor& t, int dim, bool keepdim) { return reduce_one(t, dim, VNN_REDUCE_ARGMIN, keepdim); }

Tensor softmax(const Tensor& t, int dim) { return softmax_impl(t, dim, false); }
Tensor log_softmax(const Tensor& t, int dim) { return softmax_impl(t, dim, true); }

}  // namespace vnn

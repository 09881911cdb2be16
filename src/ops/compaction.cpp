// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The ops that pick elements out by a mask (nonzero, masked_select,
// masked_scatter) and the NaN-aware and paired reductions. The picking is a
// device compaction: an inclusive scan of the mask gives each element its
// place in a stable partition (the chosen elements first, in order), one
// scatter moves them there, and the only host work is reading the count
// (one synchronisation, as PyTorch's nonzero).
#include <vector>

#include "autograd/autograd.hpp"
#include "autograd/elementwise_grad.hpp"
#include "ops/scan_kernel.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/autograd.h"
#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/indexing.h"
#include "vnn/reduction.h"
#include "vnn/scan.h"

namespace vnn {

namespace {

const Tensor& compaction_checked(const Tensor& t, const char* op, const char* arg = "input") {
  VNN_CHECK(ValueError, t.defined(), op, ": argument '", arg, "' is an undefined tensor");
  return t;
}

// int64 [n] on t's device holding `value` everywhere, without a host loop
// (a stride-0 view of one element).
Tensor broadcast_int64(const Tensor& like, double value, int64_t n) {
  return full({1}, value, TensorOptions(like.device()).with(kInt64)).expand({n});
}

// The places of a stable partition of the flat bool mask m, counted from 1
// (slot 0 stays unused: no pass subtracts 1): the k-th true element goes to
// k, the others after all true ones, in order (count + the number of false
// ones up to it). A permutation of [1, n], so the scatter through it writes
// each slot once. count: the true ones (read on the host).
struct MaskPartition {
  Tensor places;   // int64 [n], values in [1, n]
  Tensor ordinal;  // int64 [n]: i + 1
  int64_t count = 0;
};
MaskPartition partition_mask(const Tensor& m) {
  MaskPartition p;
  const int64_t n = m.numel();
  Tensor trues = detail::run_scan(m, 0, VNN_SCAN_SUM, kInt64).first;  // true ones up to and including i
  p.count = n == 0 ? 0 : trues.narrow(0, n - 1, 1).to_vector<int64_t>()[0];
  p.ordinal = detail::run_scan(broadcast_int64(m, 1.0, n), 0, VNN_SCAN_SUM, kInt64).first;
  p.places = where(m, trues, add(sub(p.ordinal, trues), double(p.count)));
  // The gathers through it need no index read.
  if (n > 0) detail::note_range(p.places, 1, n);
  return p;
}

// The chosen elements of values (those whose mask was true), in order: the
// first count of values moved to their places.
Tensor chosen(const Tensor& values, const MaskPartition& p) {
  const int64_t n = values.numel();
  Tensor out = detail::make_empty(values.impl()->ctx(), {n + 1}, values.dtype(), "compaction");
  detail::enqueue(VNN_OP_SCATTER, "compaction", {&out, &p.places, &values}, out, {}, {0, 0});
  return out.narrow(0, 1, p.count);
}

// The mask as a flat contiguous bool tensor of `shape`.
Tensor flat_mask(const Tensor& mask, const Shape& shape) { return mask.expand(shape).contiguous().reshape({-1}); }

void check_mask(const Tensor& t, const Tensor& mask, const char* op) {
  compaction_checked(mask, op, "mask");
  detail::check_same_device(t, mask, op, "mask");
  VNN_CHECK(DTypeError, mask.dtype() == kBool, op, ": mask must be a bool tensor, got ", name(mask.dtype()),
            "; compare it (e.g. t != 0) first");
}

// The adjoint of chosen(): element i of the result is g's k-th value where
// element i was the k-th chosen one, else 0 (a gather through the places
// from g padded with zeros: slot 0 and the slots after count).
Tensor spread_back(const Tensor& g, const Tensor& places, int64_t n) {
  const int64_t count = g.numel();
  const TensorOptions o = TensorOptions(g.device()).with(g.dtype());
  return gather(cat({zeros({1}, o), g, zeros({n - count}, o)}, 0), 0, places);
}

}  // namespace

Tensor nonzero(const Tensor& t0) {
  const char* op = "nonzero";
  const Tensor& t = compaction_checked(t0, op);
  autograd::NoGradGuard no_grad;
  const int nd = t.dim();
  Tensor m = t.dtype() == kBool ? t : ne(t, 0.0);
  Tensor flat = m.contiguous().reshape({-1});
  MaskPartition p = partition_mask(flat);
  // The flat positions of the true elements, in order, then their digits.
  Tensor pos = sub(chosen(p.ordinal, p), 1.0);
  if (nd == 0) return zeros({p.count, 0}, TensorOptions(t.device()).with(kInt64));
  if (nd == 1) return pos.reshape({p.count, 1});
  std::vector<Tensor> cols(static_cast<size_t>(nd), Tensor());
  for (int d = nd - 1; d >= 0; --d) {
    const double size = double(t.size(d));
    cols[size_t(d)] = d == 0 ? pos : remainder(pos, size);
    if (d > 0) pos = floor_divide(pos, size);
  }
  return stack(cols, 1);
}

std::vector<Tensor> nonzero_numpy(const Tensor& t0) {
  const Tensor& t = compaction_checked(t0, "nonzero_numpy");
  Tensor idx = nonzero(t.dim() == 0 ? t.reshape({1}) : t);
  std::vector<Tensor> out;
  for (int d = 0; d < idx.size(1); ++d) out.push_back(idx.select(1, d).contiguous());
  return out;
}

Tensor argwhere(const Tensor& t) { return nonzero(t); }

std::vector<Tensor> where(const Tensor& condition) {
  return nonzero_numpy(compaction_checked(condition, "where", "condition"));
}

Tensor count_nonzero(const Tensor& t, const Dims& dims) {
  const Tensor& x = compaction_checked(t, "count_nonzero");
  return sum(x.dtype() == kBool ? x : ne(x, 0.0), dims, false);
}

Tensor masked_select(const Tensor& t0, const Tensor& mask) {
  const char* op = "masked_select";
  const Tensor& t = compaction_checked(t0, op);
  check_mask(t, mask, op);
  const Shape shape = broadcast_shapes(t.sizes(), mask.sizes(), op);
  Tensor m = flat_mask(mask, shape);
  const int64_t n = m.numel();
  MaskPartition p;
  Tensor picked;
  {
    autograd::NoGradGuard no_grad;
    p = partition_mask(m);
    picked = chosen(t.expand(shape).contiguous().reshape({-1}), p).contiguous();
  }
  if (detail::needs_grad({&t}) && is_floating(t.dtype())) {
    const Shape t_sizes = t.sizes();
    Tensor places = p.places;
    detail::record(op, picked, {&t}, [places, n, shape, t_sizes](const Tensor& g) {
      return std::vector<Tensor>{detail::sum_to(spread_back(g, places, n).reshape(shape), t_sizes)};
    });
  }
  return picked;
}

Tensor masked_scatter(const Tensor& t0, const Tensor& mask, const Tensor& source) {
  const char* op = "masked_scatter";
  const Tensor& t = compaction_checked(t0, op);
  check_mask(t, mask, op);
  compaction_checked(source, op, "source");
  detail::check_same_device(t, source, op, "source");
  VNN_CHECK(DTypeError, source.dtype() == t.dtype(), op, ": source (", name(source.dtype()),
            ") must have self's dtype ", name(t.dtype()), "; convert it with .to()");
  // Out of place, self and mask broadcast together (PyTorch's expand_outplace).
  const Shape shape = broadcast_shapes(t.sizes(), mask.sizes(), op);
  Tensor m = flat_mask(mask, shape);
  const int64_t n = m.numel();
  MaskPartition p;
  {
    autograd::NoGradGuard no_grad;
    p = partition_mask(m);
  }
  VNN_CHECK(ShapeError, source.numel() >= p.count, op, ": mask has ", p.count, " true elements but source of shape ",
            source.sizes(), " has only ", source.numel(), "; pass a source with at least that many");
  // Differentiable in t (through where) and in source (through gather).
  Tensor taken = source.reshape({-1}).narrow(0, 0, p.count);
  Tensor placed = spread_back(taken, p.places, n);
  return where(m, placed, t.expand(shape).reshape({-1})).reshape(shape);
}

Tensor& masked_scatter_(Tensor& t, const Tensor& mask, const Tensor& source) {
  const char* op = "masked_scatter_";
  compaction_checked(t, op);
  compaction_checked(mask, op, "mask");
  VNN_CHECK(ShapeError, broadcast_shapes(t.sizes(), mask.sizes(), op) == t.sizes(), op, ": mask of shape ",
            mask.sizes(), " does not broadcast to self's shape ", t.sizes());
  auto compute = [&](const Tensor& old) { return masked_scatter(old, mask, source); };
  if (detail::needs_grad({&t, &source}) && is_floating(t.dtype()))
    return detail::inplace_with_grad(t, "masked_scatter_", compute);
  Tensor r = compute(t);
  t.copy_(r);
  return t;
}

// ---- NaN-aware and paired reductions, composed from the existing ones ------

Tensor nansum(const Tensor& t, const Dims& dims, bool keepdim) {
  const Tensor& x = compaction_checked(t, "nansum");
  if (!is_floating(x.dtype())) return sum(x, dims, keepdim);
  return sum(where(isnan(x), 0.0, x), dims, keepdim);
}

Tensor nanmean(const Tensor& t, const Dims& dims, bool keepdim) {
  const Tensor& x = compaction_checked(t, "nanmean");
  VNN_CHECK(DTypeError, is_floating(x.dtype()), "nanmean: expected a floating dtype, got ", name(x.dtype()),
            "; convert first, e.g. t.to(vnn::kFloat32)");
  Tensor kept = logical_not(isnan(x));
  return div(nansum(x, dims, keepdim), sum(kept, dims, keepdim).to(x.dtype()));
}

std::tuple<Tensor, Tensor> aminmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  const Tensor& x = compaction_checked(t, "aminmax");
  VNN_CHECK(IndexError, x.numel() > 0 || dim, "aminmax: expected a non-empty input, got shape ", x.sizes(),
            "; pass a dim whose size is not 0");
  Dims d = dim ? Dims(*dim) : Dims();
  return {amin(x, d, keepdim), amax(x, d, keepdim)};
}

std::tuple<Tensor, Tensor> var_mean(const Tensor& t, const Dims& dims, int64_t correction, bool keepdim) {
  const Tensor& x = compaction_checked(t, "var_mean");
  return {var(x, dims, correction, keepdim), mean(x, dims, keepdim)};
}

std::tuple<Tensor, Tensor> std_mean(const Tensor& t, const Dims& dims, int64_t correction, bool keepdim) {
  const Tensor& x = compaction_checked(t, "std_mean");
  return {vnn::std(x, dims, correction, keepdim), mean(x, dims, keepdim)};
}

}  // namespace vnn

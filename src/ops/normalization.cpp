// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Batch, layer and group normalization, composed from core reductions and
// elementwise ops; layer norm takes the backend's fused LAYER_NORM /
// LAYER_NORM_BACKWARD first (float32 / float64) where it has them. Statistics: biased variance,
// rstd = 1 / sqrt(var + eps) (sqrt + div until a fused rsqrt is used).
// The backward formulas are the standard ones (PyTorch's native_*_backward):
//   xhat = (x - mean) * rstd, M = elements per statistic,
//   dx = rstd / M * (M * dxhat - sum(dxhat) - xhat * sum(dxhat * xhat)).
#include <algorithm>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "amp/autocast.hpp"
#include "autograd/autograd.hpp"
#include "ops/low_precision.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/nn_ops.h"
#include "vnn/reduction.h"

namespace vnn {

namespace {

void check_float(const char* op, const Tensor& t) {
  VNN_CHECK(ValueError, t.defined(), op, ": argument 'input' is undefined");
  VNN_CHECK(DTypeError, is_floating(t.dtype()), op, ": input must be float32, float64, float16 or bfloat16, got ",
            name(t.dtype()), "; convert with .to(vnn::kFloat32)");
}

// An optional per-channel / per-feature tensor: same device and dtype as
// input and exactly `want` sizes.
void check_param(const char* op, const char* arg, const Tensor& input, const Tensor& p, const Shape& want) {
  if (!p.defined()) return;
  detail::check_same_device(input, p, op, arg);
  VNN_CHECK(ShapeError, p.sizes() == want, op, ": ", arg, " must have shape ", want.str(), " for input ", input.sizes(),
            ", got ", p.sizes());
  VNN_CHECK(DTypeError, p.dtype() == input.dtype(), op, ": ", arg, " dtype ", name(p.dtype()),
            " differs from input dtype ", name(input.dtype()));
}

// Every dim of [N, C, *] but 1.
std::vector<int64_t> non_channel_dims(const Tensor& t) {
  std::vector<int64_t> d{0};
  for (int i = 2; i < t.dim(); ++i) d.push_back(i);
  return d;
}

// [C] -> [1, C, 1, ...] to broadcast against an ndim tensor.
Tensor channel_view(const Tensor& p, int ndim) {
  Shape s{1, p.numel()};
  for (int i = 2; i < ndim; ++i) s.push_back(1);
  return p.view(s);
}

using detail::is_low_precision;
using detail::round_to;
using detail::upcast_low;

// Whether the call has 16-bit operands and so runs on float32 copies.
bool low(const Tensor& input) { return input.defined() && is_low_precision(input.dtype()); }

// With 16-bit input, weight / bias / running stats may be the input's dtype
// or float32 (PyTorch's mixed batch_norm); anything else is a DTypeError.
void check_low_params(const char* op, const Tensor& input, std::initializer_list<std::pair<const char*, Tensor>> ps) {
  for (const auto& [arg, p] : ps)
    if (p.defined() && p.dtype() != input.dtype() && p.dtype() != kFloat32)
      VNN_THROW(DTypeError, op, ": ", arg, " dtype ", name(p.dtype()), " differs from input dtype ",
                name(input.dtype()), " (16-bit input takes its own dtype or float32)");
}

// A running statistic updated in float32 and stored back in its dtype.
void store_back(const Tensor& stat, const Tensor& updated) {
  if (!stat.defined() || stat.impl() == updated.impl()) return;
  autograd::NoGradGuard no_grad;
  Tensor s = stat;
  s.copy_(updated);
}

Tensor rstd_of(const Tensor& var, double eps) { return div(ones_like(var), sqrt(add(var, eps))); }

void check_nc(const char* op, const Tensor& input) {
  check_float(op, input);
  if (input.dim() < 2)
    VNN_THROW(ShapeError, op, ": expected input [N, C, *] with at least 2 dims, got ", input.sizes());
}

}  // namespace

namespace {
// Per-channel mean [C], x - mean and biased variance [C] of [N, C, *].
struct CentredStats {
  Tensor mean, centred, var;
};
CentredStats centred_stats(const Tensor& input) {
  auto dims = non_channel_dims(input);
  Tensor mk = mean(input, dims, true);
  Tensor d = sub(input, mk);
  Tensor var = mean(mul(d, d), dims, false);
  return {mk.view({input.size(1)}), d, var};
}
}  // namespace

std::tuple<Tensor, Tensor> batch_norm_stats(const Tensor& input) {
  check_nc("batch_norm_stats", input);
  if (low(input)) return batch_norm_stats(input.to(kFloat32));  // float32 statistics
  CentredStats st = centred_stats(input);
  return {st.mean, st.var};
}

namespace {
std::tuple<Tensor, Tensor, Tensor> batch_norm_forward(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                      const Tensor& running_mean, const Tensor& running_var,
                                                      bool training, double momentum, double eps) {
  const char* op = "batch_norm";
  check_nc(op, input);
  Shape c{input.size(1)};
  check_param(op, "weight", input, weight, c);
  check_param(op, "bias", input, bias, c);
  check_param(op, "running_mean", input, running_mean, c);
  check_param(op, "running_var", input, running_var, c);
  VNN_CHECK(ValueError, running_mean.defined() == running_var.defined(), op,
            ": give both running_mean and running_var, or neither");
  // out = (x - mean) * (rstd * weight) + bias, the centred x taken from the
  // statistics pass: 6 passes over x when training instead of 8.
  const int nd = input.dim();
  Tensor m, rstd, centered;
  if (training) {
    int64_t count = input.numel() / std::max<int64_t>(input.size(1), 1);
    if (count == 0) {
      // An empty batch: PyTorch's empty result, the running stats untouched
      // (still a node, so the parameters get their zero gradients).
      m = zeros({input.size(1)}, input.options());
      Tensor scale = weight.defined() ? weight : add(m, 1.0);
      Tensor out = mul(input, channel_view(scale, nd));
      if (bias.defined()) out = add(out, channel_view(bias, nd));
      return {out, m, add(m, 1.0)};
    }
    if (count == 1)
      VNN_THROW(ValueError, op, ": expected more than 1 value per channel when training, got input ", input.sizes());
    CentredStats st = centred_stats(input);
    Tensor bv = st.var;
    m = st.mean;
    centered = st.centred;
    rstd = rstd_of(bv, eps);
    if (running_mean.defined()) {
      Tensor unbiased = mul(bv, double(count) / double(count - 1));
      // Tensors are shared handles: updating a copy updates the caller's.
      Tensor rm = running_mean, rv = running_var;
      rm.mul_(1.0 - momentum).add_(m, momentum);
      rv.mul_(1.0 - momentum).add_(unbiased, momentum);
    }
  } else {
    VNN_CHECK(ValueError, running_mean.defined(), op,
              ": eval mode (training = false) needs running_mean and running_var");
    m = running_mean.clone();
    rstd = rstd_of(running_var, eps);
    centered = sub(input, channel_view(m, nd));
  }
  Tensor scale = weight.defined() ? mul(rstd, weight) : rstd;
  Tensor out = mul(centered, channel_view(scale, nd));
  if (bias.defined()) out = add(out, channel_view(bias, nd));
  return {out, m, rstd};
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_forward(const Tensor& input, const Shape& normalized_shape,
                                                      const Tensor& weight, const Tensor& bias, double eps);
}  // namespace

// The statistics and running-stat updates are not part of the graph: one
// node per call, whose backward is batch_norm_backward.
std::tuple<Tensor, Tensor, Tensor> batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                              const Tensor& running_mean, const Tensor& running_var, bool training,
                                              double momentum, double eps) {
  // running_mean / running_var are updated in place: never cast copies.
  if (autocast::detail::OpScope s{autocast::detail::Policy::fp32, {&input, &weight, &bias}})
    return batch_norm(s[0], s[1], s[2], running_mean, running_var, training, momentum, eps);
  if (low(input)) {  // float32 statistics and arithmetic; output rounded once, stats in float32
    check_nc("batch_norm", input);
    check_low_params("batch_norm", input, {{"weight", weight}, {"bias", bias}, {"running_mean", running_mean},
                                           {"running_var", running_var}});
    Tensor rm = upcast_low(running_mean), rv = upcast_low(running_var);
    auto [out, m, rstd] = batch_norm(input.to(kFloat32), upcast_low(weight), upcast_low(bias), rm, rv, training,
                                     momentum, eps);
    store_back(running_mean, rm);
    store_back(running_var, rv);
    return {out.to(input.dtype()), m, rstd};
  }
  bool track = detail::needs_grad({&input, &weight, &bias});
  std::tuple<Tensor, Tensor, Tensor> r;
  {
    autograd::NoGradGuard no_grad;
    r = batch_norm_forward(input, weight, bias, running_mean, running_var, training, momentum, eps);
  }
  if (track) {
    Tensor x = input.detach(), w = weight.defined() ? weight.detach() : Tensor();
    Tensor m = std::get<1>(r), rstd = std::get<2>(r);
    detail::record("batch_norm", std::get<0>(r), {&input, &weight, &bias}, [=](const Tensor& g) {
      auto [gx, gw, gb] = batch_norm_backward(g, x, w, m, rstd, training);
      return std::vector<Tensor>{gx, gw, gb};
    }, {&input});
  }
  return r;
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_backward(const Tensor& grad_output, const Tensor& input,
                                                       const Tensor& weight, const Tensor& save_mean,
                                                       const Tensor& save_invstd, bool training) {
  const char* op = "batch_norm_backward";
  check_nc(op, input);
  if (low(input) || low(grad_output)) {
    auto [gx, gw, gb] = batch_norm_backward(upcast_low(grad_output), upcast_low(input), upcast_low(weight),
                                            upcast_low(save_mean), upcast_low(save_invstd), training);
    DType pt = weight.defined() ? weight.dtype() : input.dtype();
    return {round_to(gx, input.dtype()), round_to(gw, pt), round_to(gb, pt)};
  }
  Shape c{input.size(1)};
  check_param(op, "grad_output", input, grad_output, input.sizes());
  check_param(op, "weight", input, weight, c);
  check_param(op, "save_mean", input, save_mean, c);
  check_param(op, "save_invstd", input, save_invstd, c);
  int nd = input.dim();
  auto dims = non_channel_dims(input);
  Tensor rs = channel_view(save_invstd, nd);
  Tensor xhat = mul(sub(input, channel_view(save_mean, nd)), rs);
  Tensor gb = sum(grad_output, dims, false);
  Tensor gw = sum(mul(grad_output, xhat), dims, false);
  Tensor scale = weight.defined() ? mul(rs, channel_view(weight, nd)) : rs;
  Tensor gx;
  if (training) {
    double M = double(input.numel() / std::max<int64_t>(input.size(1), 1));
    // dx = w * rstd * (g - mean(g) - xhat * mean(g * xhat))
    Tensor t = sub(sub(grad_output, channel_view(mul(gb, 1.0 / M), nd)), mul(xhat, channel_view(mul(gw, 1.0 / M), nd)));
    gx = mul(t, scale);
  } else {
    gx = mul(grad_output, scale);
  }
  return {gx, weight.defined() ? gw : Tensor(), gb};
}

std::tuple<Tensor, Tensor, Tensor> layer_norm(const Tensor& input, const Shape& normalized_shape,
                                              const Tensor& weight, const Tensor& bias, double eps) {
  if (autocast::detail::OpScope s{autocast::detail::Policy::fp32, {&input, &weight, &bias}})
    return layer_norm(s[0], normalized_shape, s[1], s[2], eps);
  if (low(input)) {
    check_low_params("layer_norm", input, {{"weight", weight}, {"bias", bias}});
    auto [out, m, rstd] = layer_norm(input.to(kFloat32), normalized_shape, upcast_low(weight), upcast_low(bias), eps);
    return {out.to(input.dtype()), m, rstd};
  }
  bool track = detail::needs_grad({&input, &weight, &bias});
  std::tuple<Tensor, Tensor, Tensor> r;
  {
    autograd::NoGradGuard no_grad;
    r = layer_norm_forward(input, normalized_shape, weight, bias, eps);
  }
  if (track) {
    Tensor x = input.detach(), w = weight.defined() ? weight.detach() : Tensor();
    Tensor m = std::get<1>(r), rstd = std::get<2>(r);
    detail::record("layer_norm", std::get<0>(r), {&input, &weight, &bias}, [=](const Tensor& g) {
      auto [gx, gw, gb] = layer_norm_backward(g, x, normalized_shape, m, rstd, w);
      return std::vector<Tensor>{gx, gw, gb};
    }, {&input});
  }
  return r;
}

namespace {
// The backend's fused LAYER_NORM / LAYER_NORM_BACKWARD (one pass per row;
// kernels/layer_norm.hpp on the CPU) for float32 / float64 operands of one
// dtype over the last k dims; false where the op does not apply or the
// backend declines, and the composed ops run instead.
bool fused_ln_dtypes(std::initializer_list<const Tensor*> ts) {
  const DType t = (*ts.begin())->dtype();
  if (t != kFloat32 && t != kFloat64) return false;
  for (const Tensor* x : ts)
    if (x->defined() && x->dtype() != t) return false;
  return true;
}

// [R, D] with a unit last stride (a view where the input allows it).
Tensor ln_rows(const Tensor& t, int64_t R, int64_t D) {
  Tensor r = t.reshape({R, D});
  return D <= 1 || r.stride(1) == 1 ? r : r.contiguous();
}

Shape ln_stat_shape(const Tensor& input, int k) {
  Shape stat = input.sizes();
  for (int i = input.dim() - k; i < input.dim(); ++i) stat[i] = 1;
  return stat;
}

bool fused_layer_norm(const Tensor& input, int k, const Tensor& weight, const Tensor& bias, double eps,
                      std::tuple<Tensor, Tensor, Tensor>* r) {
  const char* op = "layer_norm";
  if (!fused_ln_dtypes({&input, &weight, &bias}) || input.numel() == 0) return false;
  int64_t D = 1;
  for (int i = input.dim() - k; i < input.dim(); ++i) D *= input.size(i);
  const int64_t R = input.numel() / D;
  Tensor x = ln_rows(input, R, D);
  Tensor w = weight.defined() ? weight.reshape({D}).contiguous() : Tensor();
  Tensor b = bias.defined() ? bias.reshape({D}).contiguous() : Tensor();
  detail::DeviceContext& ctx = input.impl()->ctx();
  Tensor y = detail::make_empty(ctx, {R, D}, input.dtype(), op);
  Tensor m = detail::make_empty(ctx, {R}, input.dtype(), op), rs = detail::make_empty(ctx, {R}, input.dtype(), op);
  std::vector<const Tensor*> in = {&x};
  if (w.defined()) in.push_back(&w);
  if (b.defined()) in.push_back(&b);
  const Tensor* outs[] = {&y, &m, &rs};
  double scalars[] = {eps};
  int64_t ints[] = {int64_t(w.defined()) | int64_t(b.defined()) << 1};
  try {
    detail::enqueue(VNN_OP_LAYER_NORM, op, detail::Span<const Tensor*>(in.data(), in.size()),
                    detail::Span<const Tensor*>(outs, 3), detail::Span<double>(scalars, 1),
                    detail::Span<int64_t>(ints, 1));
  } catch (const Unsupported&) {
    return false;
  }
  const Shape stat = ln_stat_shape(input, k);
  *r = {y.view(input.sizes()), m.view(stat), rs.view(stat)};
  return true;
}

bool fused_layer_norm_backward(const Tensor& grad_output, const Tensor& input, int k, const Tensor& mean_,
                               const Tensor& rstd, const Tensor& weight, std::tuple<Tensor, Tensor, Tensor>* r) {
  const char* op = "layer_norm_backward";
  if (!fused_ln_dtypes({&input, &grad_output, &mean_, &rstd, &weight}) || input.numel() == 0) return false;
  int64_t D = 1;
  for (int i = input.dim() - k; i < input.dim(); ++i) D *= input.size(i);
  const int64_t R = input.numel() / D;
  Tensor x = ln_rows(input, R, D), dy = ln_rows(grad_output, R, D);
  Tensor m = mean_.reshape({R}), rs = rstd.reshape({R});
  Tensor w = weight.defined() ? weight.reshape({D}).contiguous() : Tensor();
  detail::DeviceContext& ctx = input.impl()->ctx();
  Tensor dx = detail::make_empty(ctx, {R, D}, input.dtype(), op);
  Tensor dw, db;
  std::vector<const Tensor*> in = {&dy, &x, &m, &rs}, outs = {&dx};
  if (w.defined()) {
    dw = detail::make_empty(ctx, {D}, input.dtype(), op), db = detail::make_empty(ctx, {D}, input.dtype(), op);
    in.push_back(&w), outs.push_back(&dw), outs.push_back(&db);
  }
  int64_t ints[] = {int64_t(w.defined())};
  try {
    detail::enqueue(VNN_OP_LAYER_NORM_BACKWARD, op, detail::Span<const Tensor*>(in.data(), in.size()),
                    detail::Span<const Tensor*>(outs.data(), outs.size()), {}, detail::Span<int64_t>(ints, 1));
  } catch (const Unsupported&) {
    return false;
  }
  if (w.defined()) *r = {dx.view(input.sizes()), dw.view(weight.sizes()), db.view(weight.sizes())};
  else *r = {dx.view(input.sizes()), Tensor(), Tensor()};
  return true;
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_forward(const Tensor& input, const Shape& normalized_shape,
                                                      const Tensor& weight, const Tensor& bias, double eps) {
  const char* op = "layer_norm";
  check_float(op, input);
  int k = normalized_shape.size(), nd = input.dim();
  bool ok = k > 0 && k <= nd;
  for (int i = 0; ok && i < k; ++i) ok = input.sizes()[nd - k + i] == normalized_shape[i];
  VNN_CHECK(ShapeError, ok, op, ": normalized_shape ", normalized_shape.str(),
            " must be a non-empty suffix of input shape ", input.sizes());
  check_param(op, "weight", input, weight, normalized_shape);
  check_param(op, "bias", input, bias, normalized_shape);
  std::tuple<Tensor, Tensor, Tensor> fused;
  if (fused_layer_norm(input, k, weight, bias, eps, &fused)) return fused;
  std::vector<int64_t> dims;
  for (int i = nd - k; i < nd; ++i) dims.push_back(i);
  Tensor m = mean(input, dims, true);
  Tensor d = sub(input, m);
  Tensor rstd = rstd_of(mean(mul(d, d), dims, true), eps);
  Tensor out = mul(d, rstd);
  if (weight.defined()) out = mul(out, weight);
  if (bias.defined()) out = add(out, bias);
  return {out, m, rstd};
}
}  // namespace

std::tuple<Tensor, Tensor, Tensor> layer_norm_backward(const Tensor& grad_output, const Tensor& input,
                                                       const Shape& normalized_shape, const Tensor& mean_,
                                                       const Tensor& rstd, const Tensor& weight) {
  const char* op = "layer_norm_backward";
  check_float(op, input);
  if (low(input) || low(grad_output)) {
    auto [gx, gw, gb] = layer_norm_backward(upcast_low(grad_output), upcast_low(input), normalized_shape,
                                            upcast_low(mean_), upcast_low(rstd), upcast_low(weight));
    DType pt = weight.defined() ? weight.dtype() : input.dtype();
    return {round_to(gx, input.dtype()), round_to(gw, pt), round_to(gb, pt)};
  }
  check_param(op, "grad_output", input, grad_output, input.sizes());
  check_param(op, "weight", input, weight, normalized_shape);
  int k = normalized_shape.size(), nd = input.dim();
  if (k <= 0 || k > nd)
    VNN_THROW(ShapeError, op, ": normalized_shape ", normalized_shape.str(), " does not fit input ", input.sizes());
  Shape stat = input.sizes();
  for (int i = nd - k; i < nd; ++i) stat[i] = 1;
  check_param(op, "mean", input, mean_, stat);
  check_param(op, "rstd", input, rstd, stat);
  std::tuple<Tensor, Tensor, Tensor> fused;
  if (fused_layer_norm_backward(grad_output, input, k, mean_, rstd, weight, &fused)) return fused;
  std::vector<int64_t> norm_dims, lead_dims;
  for (int i = 0; i < nd; ++i) (i < nd - k ? lead_dims : norm_dims).push_back(i);
  Tensor xhat = mul(sub(input, mean_), rstd);
  Tensor gxhat = weight.defined() ? mul(grad_output, weight) : grad_output;
  Tensor a = mean(gxhat, norm_dims, true), b = mean(mul(gxhat, xhat), norm_dims, true);
  Tensor gx = mul(sub(sub(gxhat, a), mul(xhat, b)), rstd);
  Tensor gw, gb;
  if (weight.defined()) {
    gw = lead_dims.empty() ? mul(grad_output, xhat) : sum(mul(grad_output, xhat), lead_dims, false);
    gb = lead_dims.empty() ? grad_output.clone() : sum(grad_output, lead_dims, false);
  }
  return {gx, gw, gb};
}

std::tuple<Tensor, Tensor, Tensor> group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight,
                                              const Tensor& bias, double eps) {
  if (autocast::detail::OpScope s{autocast::detail::Policy::fp32, {&input, &weight, &bias}})
    return group_norm(s[0], num_groups, s[1], s[2], eps);
  const char* op = "group_norm";
  check_nc(op, input);
  if (low(input)) {
    check_low_params(op, input, {{"weight", weight}, {"bias", bias}});
    auto [out, m, rstd] = group_norm(input.to(kFloat32), num_groups, upcast_low(weight), upcast_low(bias), eps);
    return {out.to(input.dtype()), m, rstd};
  }
  int64_t N = input.size(0), C = input.size(1);
  if (num_groups <= 0 || C % num_groups != 0)
    VNN_THROW(ValueError, op, ": num_groups ", num_groups, " must be positive and divide the channels of input ",
              input.sizes());
  check_param(op, "weight", input, weight, Shape{C});
  check_param(op, "bias", input, bias, Shape{C});
  Tensor x = input.reshape({N, num_groups, -1});
  Tensor m = mean(x, std::vector<int64_t>{2}, true);
  Tensor d = sub(x, m);
  Tensor rstd = rstd_of(mean(mul(d, d), std::vector<int64_t>{2}, true), eps);
  int nd = input.dim();
  Tensor out = mul(d, rstd).view(input.sizes());
  if (weight.defined()) out = mul(out, channel_view(weight, nd));
  if (bias.defined()) out = add(out, channel_view(bias, nd));
  return {out, m.view({N, num_groups}), rstd.view({N, num_groups})};
}

}  // namespace vnn

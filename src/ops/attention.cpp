// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// scaled_dot_product_attention (include/vnn/attention.h). The arguments are
// validated once here and brought to the ABI's 4-D form [N, H, L, E] with
// views (broadcast batch and head dims as stride 0, grouped-query heads
// kept as they are); then either the backend's fused kernel
// (VNN_OP_SDPA / _BACKWARD, FlashAttention-2: memory O(N*H*L) beyond the
// operands) or the math path below (matmul, softmax, dropout, differentiated
// by autograd) runs. Both draw dropout from the same Philox numbers (the
// rand() of [N, Hq, L, S]), so one seed gives one mask on every path.
#include "vnn/attention.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "amp/autocast.hpp"
#include "autograd/autograd.hpp"
#include "ops/low_precision.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/autograd.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/linalg.h"
#include "vnn/profiler.h"
#include "vnn/random.h"
#include "vnn/reduction.h"

namespace vnn {

namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

SDPBackend env_backend() {
  static const SDPBackend b = [] {
    const char* e = std::getenv("VNN_SDPA");
    if (e && std::strcmp(e, "math") == 0) return SDPBackend::math;
    if (e && std::strcmp(e, "flash") == 0) return SDPBackend::flash;
    return SDPBackend::automatic;
  }();
  return b;
}

// -1: no guard on this thread; else an SDPBackend.
thread_local int t_backend = -1;

// The problem in the ABI's 4-D form; `lead` is the broadcast shape of the
// dims before [L, E] (the output is lead + [L, Ev]).
struct Problem {
  Tensor q, k, v, mask;  // [N, Hq, L, E], [N, Hk, S, E], [N, Hk, S, Ev], [N, Hq, L, S] additive or undefined
  Shape lead;
  int64_t N = 1, Hq = 1, Hk = 1, L = 0, S = 0, E = 0, Ev = 0;
  double scale = 1.0;
  bool causal = false;
};

std::string shape_list(const Tensor& q, const Tensor& k, const Tensor& v) {
  return "query " + q.sizes().str() + ", key " + k.sizes().str() + ", value " + v.sizes().str();
}

// Broadcasts a and b (PyTorch's rule); ShapeError naming `what` otherwise.
Shape broadcast_pair(const Shape& a, const Shape& b, const std::string& what) {
  const int n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (int i = 0; i < n; ++i) {
    const int64_t x = i + a.size() >= n ? a[i + a.size() - n] : 1;
    const int64_t y = i + b.size() >= n ? b[i + b.size() - n] : 1;
    if (x != y && x != 1 && y != 1) VNN_THROW(ShapeError, kOp, ": ", what, " do not broadcast");
    out[i] = x == 1 ? y : x;
  }
  return Shape(out);
}

Shape take(const Shape& s, int from, int to) { return Shape(s.begin() + from, s.begin() + to); }

// t [..., A, B] expanded to lead + [A, B] (rows, cols: A, B where given,
// for a mask that broadcasts over them) and viewed as [N, H, A, B].
Tensor to_4d(const Tensor& t, const Shape& lead, int64_t N, int64_t H, int64_t rows = -1, int64_t cols = -1) {
  if (rows < 0) rows = t.size(-2);
  if (cols < 0) cols = t.size(-1);
  std::vector<int64_t> full(lead.begin(), lead.end());
  full.push_back(rows);
  full.push_back(cols);
  Tensor e = t.expand(Shape(full));
  return e.reshape({N, H, rows, cols});
}

// The last dim with unit stride, as the ABI asks of the dense operands.
Tensor unit_last(const Tensor& t) { return t.size(-1) <= 1 || t.stride(-1) == 1 ? t : t.contiguous(); }

Problem prepare(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
                double dropout_p, bool is_causal, std::optional<double> scale, bool enable_gqa) {
  if (!query.defined() || !key.defined() || !value.defined())
    VNN_THROW(ValueError, kOp, ": query, key and value must be defined");
  detail::check_same_device(query, key, kOp, "key");
  detail::check_same_device(query, value, kOp, "value");
  VNN_CHECK(DTypeError, is_floating(query.dtype()), kOp, ": query must be a floating dtype, got ",
            name(query.dtype()), "; convert with .to(vnn::kFloat32)");
  VNN_CHECK(DTypeError, key.dtype() == query.dtype() && value.dtype() == query.dtype(), kOp,
            ": query, key and value must have one dtype, got ", name(query.dtype()), ", ", name(key.dtype()), ", ",
            name(value.dtype()));
  VNN_CHECK(ShapeError, query.dim() >= 2 && key.dim() >= 2 && value.dim() >= 2, kOp,
            ": query, key and value need at least 2 dims [..., L, E], got ", shape_list(query, key, value));
  VNN_CHECK(ShapeError, query.size(-1) == key.size(-1), kOp, ": query and key must have one embedding size E, got ",
            shape_list(query, key, value));
  VNN_CHECK(ShapeError, key.size(-2) == value.size(-2), kOp,
            ": key and value must have one sequence length S, got ", shape_list(query, key, value));
  VNN_CHECK(ValueError, dropout_p >= 0.0 && dropout_p < 1.0, kOp, ": dropout_p must be in [0, 1), got ", dropout_p);
  VNN_CHECK(ValueError, !(is_causal && attn_mask.defined()), kOp,
            ": pass either attn_mask or is_causal, not both (as PyTorch); fold the causal mask into attn_mask");
  if (scale) VNN_CHECK(ValueError, std::isfinite(*scale), kOp, ": scale must be finite, got ", *scale);

  Problem p;
  p.L = query.size(-2), p.S = key.size(-2), p.E = query.size(-1), p.Ev = value.size(-1);
  p.scale = scale ? *scale : 1.0 / std::sqrt(double(p.E > 0 ? p.E : 1));
  p.causal = is_causal;
  const Shape ql = take(query.sizes(), 0, query.dim() - 2), kl = take(key.sizes(), 0, key.dim() - 2),
              vl = take(value.sizes(), 0, value.dim() - 2);
  const std::string what = "the leading dims of " + shape_list(query, key, value);
  Shape kv_lead = broadcast_pair(kl, vl, what);
  if (enable_gqa && ql.size() >= 1 && kv_lead.size() >= 1 && ql[ql.size() - 1] != kv_lead[kv_lead.size() - 1]) {
    // Grouped-query attention: the heads (dim -3) stay as they are, the
    // batch dims before them broadcast.
    const int64_t hq = ql[ql.size() - 1], hk = kv_lead[kv_lead.size() - 1];
    VNN_CHECK(ShapeError, hk > 0 && hq % hk == 0, kOp, ": enable_gqa needs the key/value heads (", hk,
              ") to divide the query heads (", hq, "), got ", shape_list(query, key, value));
    Shape batch = broadcast_pair(take(ql, 0, ql.size() - 1), take(kv_lead, 0, kv_lead.size() - 1), what);
    p.N = batch.numel(), p.Hq = hq, p.Hk = hk;
    std::vector<int64_t> lq(batch.begin(), batch.end()), lk(batch.begin(), batch.end());
    lq.push_back(hq), lk.push_back(hk);
    p.lead = Shape(lq);
    p.q = to_4d(query, p.lead, p.N, p.Hq);
    p.k = to_4d(key, Shape(lk), p.N, p.Hk);
    p.v = to_4d(value, Shape(lk), p.N, p.Hk);
  } else {
    p.lead = broadcast_pair(ql, kv_lead, what);
    p.Hq = p.Hk = p.lead.size() >= 1 ? p.lead[p.lead.size() - 1] : 1;
    p.N = p.lead.size() >= 1 ? p.lead.numel() / std::max<int64_t>(p.Hq, 1) : 1;
    if (p.Hq == 0) p.N = 0;
    p.q = to_4d(query, p.lead, p.N, p.Hq);
    p.k = to_4d(key, p.lead, p.N, p.Hk);
    p.v = to_4d(value, p.lead, p.N, p.Hk);
  }
  p.q = unit_last(p.q), p.k = unit_last(p.k), p.v = unit_last(p.v);
  if (attn_mask.defined()) {
    detail::check_same_device(query, attn_mask, kOp, "attn_mask");
    VNN_CHECK(DTypeError, attn_mask.dtype() == kBool || is_floating(attn_mask.dtype()), kOp,
              ": attn_mask must be bool (true = attend) or floating (added to the scores), got ",
              name(attn_mask.dtype()));
    std::vector<int64_t> want(p.lead.begin(), p.lead.end());
    want.push_back(p.L), want.push_back(p.S);
    const Shape target(want);
    VNN_CHECK(ShapeError, broadcast_pair(attn_mask.sizes(), target, "attn_mask and scores") == target, kOp,
              ": attn_mask ", attn_mask.sizes(), " does not broadcast to the scores ", target, " of ",
              shape_list(query, key, value));
    Tensor additive = attn_mask.dtype() == kBool
                          ? where(attn_mask, zeros(attn_mask.sizes(), TensorOptions(query.device()).with(query.dtype())),
                                  -std::numeric_limits<double>::infinity())
                          : attn_mask.to(query.dtype());
    p.mask = to_4d(additive, p.lead, p.N, p.Hq, p.L, p.S);
  }
  return p;
}

// The dropout draw: seed, first counter and threshold (keep when the top 24
// bits of the word are >= threshold, i.e. the float32 uniform >= p).
struct DropoutDraw {
  uint64_t seed = 0, offset = 0;
  int64_t threshold = 0;
};

DropoutDraw draw_dropout(double p, const Problem& pr, Generator* gen) {
  DropoutDraw d;
  if (p <= 0) return d;
  Generator& g = gen ? *gen : default_generator();
  d.offset = g.reserve(pr.N * pr.Hq * pr.L * pr.S, &d.seed);
  d.threshold = int64_t(std::ceil(p * 16777216.0));
  return d;
}

DType accumulation_dtype(DType t) { return t == kFloat64 ? kFloat64 : kFloat32; }

vnn_sdpa_params abi_params(const Problem& p, double dropout_p, const DropoutDraw& d) {
  vnn_sdpa_params a{};
  a.scale = p.scale;
  a.dropout_p = dropout_p;
  a.is_causal = p.causal ? 1 : 0;
  a.has_mask = p.mask.defined() ? 1 : 0;
  a.dropout_seed = int64_t(d.seed);
  a.dropout_offset = int64_t(d.offset);
  a.dropout_threshold = d.threshold;
  return a;
}

// The math path on the 4-D problem: differentiable ops only, so autograd
// gives its backward. Materialises the [N, Hq, L, S] scores.
Tensor math_forward(const Problem& p, double dropout_p, const DropoutDraw& d) {
  profiler::Range range("sdpa[math]");
  Tensor k = p.k, v = p.v;
  if (p.Hk != p.Hq) {  // grouped-query: each key/value head serves G query heads
    const int64_t G = p.Hq / p.Hk;
    k = k.unsqueeze(2).expand({p.N, p.Hk, G, p.S, p.E}).reshape({p.N, p.Hq, p.S, p.E});
    v = v.unsqueeze(2).expand({p.N, p.Hk, G, p.S, p.Ev}).reshape({p.N, p.Hq, p.S, p.Ev});
  }
  Tensor scores = mul(matmul(p.q, k.transpose(-2, -1)), p.scale);
  if (p.mask.defined()) scores = add(scores, p.mask);
  if (p.causal) {
    TensorOptions opt = TensorOptions(p.q.device()).with(kInt64);
    Tensor above = gt(arange(p.S, opt).unsqueeze(0), arange(p.L, opt).unsqueeze(1));  // j > i
    scores = masked_fill(scores, above, -std::numeric_limits<double>::infinity());
  }
  Tensor probs = softmax(scores, -1);
  // A row with no finite score gives 0, not NaN (PyTorch's safe softmax).
  if (p.S > 0) {
    Tensor row_max = amax(scores.detach(), {-1}, true);
    probs = where(eq(row_max, -std::numeric_limits<double>::infinity()), 0.0, probs);
  }
  if (dropout_p > 0) {
    Generator g(d.seed);
    g.set_offset(d.offset);
    Tensor u = rand({p.N, p.Hq, p.L, p.S}, TensorOptions(p.q.device()).with(kFloat32), &g);
    Tensor keep = ge(u, double(d.threshold) / 16777216.0);
    probs = mul(mul(probs, keep.to(probs.dtype())), 1.0 / (1.0 - dropout_p));
  }
  return matmul(probs, v);
}

// The fused kernel; false where the backend declines (VNN_STATUS_UNSUPPORTED).
// Why the backend declined the latest fused request on this thread (for the
// SDPBackend::flash error).
thread_local std::string t_declined;

bool flash_forward(const Problem& p, const vnn_sdpa_params& a, Tensor* out, Tensor* lse) {
  profiler::Range range("sdpa[flash]");
  detail::DeviceContext& ctx = p.q.impl()->ctx();
  Tensor o = detail::make_empty(ctx, {p.N, p.Hq, p.L, p.Ev}, p.q.dtype(), kOp);
  Tensor l = detail::make_empty(ctx, {p.N, p.Hq, p.L}, accumulation_dtype(p.q.dtype()), kOp);
  double scalars[VNN_SDPA_NUM_SCALARS];
  int64_t ints[VNN_SDPA_NUM_INTS];
  vnn_sdpa_pack(&a, scalars, ints);
  std::vector<const Tensor*> in = {&p.q, &p.k, &p.v};
  if (p.mask.defined()) in.push_back(&p.mask);
  const Tensor* outs[] = {&o, &l};
  try {
    detail::enqueue(VNN_OP_SDPA, "sdpa", detail::Span<const Tensor*>(in.data(), in.size()),
                    detail::Span<const Tensor*>(outs, 2), detail::Span<double>(scalars, VNN_SDPA_NUM_SCALARS),
                    detail::Span<int64_t>(ints, VNN_SDPA_NUM_INTS));
  } catch (const Unsupported& e) {
    t_declined = e.what();
    return false;
  }
  *out = o, *lse = l;
  return true;
}

// dq, dk, dv of the fused forward (FlashAttention-2's backward); false where
// the backend declines.
bool flash_backward(const Problem& p, const vnn_sdpa_params& a, const Tensor& out, const Tensor& lse,
                    const Tensor& grad, std::vector<Tensor>* grads) {
  profiler::Range range("sdpa[flash]");
  detail::DeviceContext& ctx = p.q.impl()->ctx();
  Tensor dout = unit_last(grad);
  Tensor delta = sum(mul(dout.to(lse.dtype()), out.to(lse.dtype())), -1);  // rowsum(dO * O)
  Tensor dq = detail::make_empty(ctx, {p.N, p.Hq, p.L, p.E}, p.q.dtype(), kOp);
  Tensor dk = detail::make_empty(ctx, {p.N, p.Hk, p.S, p.E}, p.q.dtype(), kOp);
  Tensor dv = detail::make_empty(ctx, {p.N, p.Hk, p.S, p.Ev}, p.q.dtype(), kOp);
  double scalars[VNN_SDPA_NUM_SCALARS];
  int64_t ints[VNN_SDPA_NUM_INTS];
  vnn_sdpa_pack(&a, scalars, ints);
  std::vector<const Tensor*> in = {&p.q, &p.k, &p.v, &out, &dout, &lse, &delta};
  if (p.mask.defined()) in.push_back(&p.mask);
  const Tensor* outs[] = {&dq, &dk, &dv};
  try {
    detail::enqueue(VNN_OP_SDPA_BACKWARD, "sdpa_backward", detail::Span<const Tensor*>(in.data(), in.size()),
                    detail::Span<const Tensor*>(outs, 3), detail::Span<double>(scalars, VNN_SDPA_NUM_SCALARS),
                    detail::Span<int64_t>(ints, VNN_SDPA_NUM_INTS));
  } catch (const Unsupported&) {
    return false;
  }
  *grads = {dq, dk, dv};
  return true;
}

// The fused path with its autograd node; undefined where the backend
// declines the forward.
Tensor flash_attention(const Problem& p, double dropout_p, const DropoutDraw& d) {
  const vnn_sdpa_params a = abi_params(p, dropout_p, d);
  Tensor out, lse;
  {
    autograd::NoGradGuard no_grad;
    if (!flash_forward(p, a, &out, &lse)) return Tensor();
  }
  if (!detail::needs_grad({&p.q, &p.k, &p.v})) return out;
  Problem saved = p;  // detached operands: the node holds no graph
  saved.q = p.q.detach(), saved.k = p.k.detach(), saved.v = p.v.detach();
  if (p.mask.defined()) saved.mask = p.mask.detach();
  Tensor o = out, l = lse;
  detail::record(
      "scaled_dot_product_attention", out, {&p.q, &p.k, &p.v},
      [saved, a, o, l, dropout_p, d](const Tensor& g) {
        std::vector<Tensor> grads;
        if (flash_backward(saved, a, o, l, g, &grads)) return grads;
        // A backend with a fused forward but no fused backward: the math
        // path's gradients, recomputed from the saved operands.
        Problem r = saved;
        r.q = saved.q.detach().requires_grad_(true), r.k = saved.k.detach().requires_grad_(true);
        r.v = saved.v.detach().requires_grad_(true);
        const bool was = autograd::grad_enabled();
        autograd::set_grad_enabled(true);
        Tensor y = math_forward(r, dropout_p, d);
        autograd::set_grad_enabled(was);
        return autograd::grad({y}, {r.q, r.k, r.v}, {g});
      },
      {&p.q, &p.k, &p.v});
  return out;
}

}  // namespace

SdpaKernelGuard::SdpaKernelGuard(SDPBackend backend) : previous_(sdpa_backend()) { t_backend = int(backend); }
SdpaKernelGuard::~SdpaKernelGuard() { t_backend = int(previous_); }

SDPBackend sdpa_backend() { return t_backend < 0 ? env_backend() : SDPBackend(t_backend); }

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale, bool enable_gqa, Generator* generator) {
  if (autocast::detail::OpScope s{autocast::detail::Policy::lower, {&query, &key, &value}})
    return scaled_dot_product_attention(s[0], s[1], s[2], attn_mask, dropout_p, is_causal, scale, enable_gqa,
                                        generator);
  if (detail::is_low_precision(query.dtype()) && key.dtype() == query.dtype() && value.dtype() == query.dtype()) {
    // float32 accumulation, the result rounded once (ops/low_precision.hpp).
    Tensor mask = attn_mask.defined() && is_floating(attn_mask.dtype()) ? detail::upcast_low(attn_mask) : attn_mask;
    return detail::round_to(scaled_dot_product_attention(detail::upcast_low(query), detail::upcast_low(key),
                                                         detail::upcast_low(value), mask, dropout_p, is_causal,
                                                         scale, enable_gqa, generator),
                            query.dtype());
  }
  Problem p = prepare(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa);
  std::vector<int64_t> out_shape(p.lead.begin(), p.lead.end());
  out_shape.push_back(p.L), out_shape.push_back(p.Ev);
  const DropoutDraw d = draw_dropout(dropout_p, p, generator);
  const SDPBackend choice = sdpa_backend();
  // A float mask that wants a gradient needs the [L, S] score gradient,
  // which only the math path forms.
  const bool mask_grad = p.mask.defined() && attn_mask.requires_grad() && autograd::grad_enabled();
  // Empty problems take the math path on every choice: the fused ops
  // would write nothing (an empty first output skips the op), leaving lse
  // or the key/value gradients unset.
  const bool empty = p.N == 0 || p.Hq == 0 || p.L == 0 || p.S == 0 || p.E == 0 || p.Ev == 0;
  Tensor out;
  if (choice != SDPBackend::math && !mask_grad && !empty) out = flash_attention(p, dropout_p, d);
  if (!out.defined()) {
    if (choice == SDPBackend::flash && !empty)
      VNN_THROW(Unsupported, kOp, ": the fused kernel was requested (SDPBackend::flash) but ", query.device(),
                mask_grad ? " cannot differentiate the mask in it" : " declined the request (" + t_declined + ")",
                "; use SDPBackend::automatic to fall back to the math path");
    out = math_forward(p, dropout_p, d);
  }
  return out.reshape(Shape(out_shape));
}

}  // namespace vnn

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// matmul / mm: torch.matmul's shape rules are applied here once; the backend
// receives [B..., M, K] @ [B..., K, N] operands of one dtype with the batch
// dims already broadcast (stride 0) and a contiguous [B..., M, N] output.
#include <algorithm>
#include <string>

#include "amp/autocast.hpp"
#include "autograd/autograd.hpp"
#include "runtime/device_context.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/linalg.h"

namespace vnn {

namespace {

std::string dims_str(const Tensor& t) {
  std::string s;
  for (int i = 0; i < t.dim(); ++i) s += (i ? "x" : "") + std::to_string(t.sizes()[i]);
  return s.empty() ? "scalar" : s;
}

void check_operands(const Tensor& a, const Tensor& b, const char* op) {
  if (!a.defined() || !b.defined())
    VNN_THROW(ValueError, op, ": argument '", (a.defined() ? "mat2" : "input"), "' is an undefined tensor");
  detail::check_same_device(a, b, op, "mat2");
  VNN_CHECK(DTypeError, a.dtype() == b.dtype(), op, ": expected input and mat2 to have the same dtype, but got ",
            name(a.dtype()), " != ", name(b.dtype()), "; convert one with .to(dtype)");
  DType t = a.dtype();
  if (t == kBool || t == kUInt8)
    VNN_THROW(DTypeError, op, ": ", name(t),
              " operands are not accepted; convert both to float32, float64, int32 or int64");
}

// a @ b in the layout of `like`: for a transposed 2-D operand (a Linear
// weight used as weight.t()) it is (b^T @ a^T)^T, whose transpose, the
// gradient that reaches the weight, is contiguous: the leaf then takes it
// without a transposing copy. The GEMM reads transposed operands as they are.
Tensor product_like(const Tensor& a, const Tensor& b, const Tensor& like) {
  if (like.dim() == 2 && like.size(0) > 1 && like.size(1) > 1 && like.strides()[0] == 1 &&
      like.strides()[1] == like.size(0))
    return matmul(b.transpose(0, 1), a.transpose(0, 1)).transpose(0, 1);
  return matmul(a, b);
}

// out = x @ y on the backend, with the gradient recorded.
void matmul_into(const Tensor& x, const Tensor& y, Tensor& out) {
  detail::enqueue(VNN_OP_MATMUL, "matmul", {&x, &y}, out, {1.0, 0.0});
  if (detail::needs_grad({&x, &y})) {
    // d x = g @ y^T, d y = x^T @ g (same batch dims; expand's backward
    // sums broadcast batches).
    detail::record("MatmulBackward", out, {&x, &y},
                   [x, y](const Tensor& g) {
                     Tensor gx = x.requires_grad() ? product_like(g, y.transpose(-1, -2), x) : Tensor();
                     Tensor gy = y.requires_grad() ? product_like(x.transpose(-1, -2), g, y) : Tensor();
                     return std::vector<Tensor>{gx, gy};
                   },
                   {&x, &y}, /*twice_differentiable=*/true);
  }
}

// a [B..., M, K] @ b [B..., K, N] with a.dim() == b.dim() >= 2 and equal
// batch sizes; returns a contiguous [B..., M, N]. float16/bfloat16 go to the
// backend as they are where it takes them (cuBLAS: float32 accumulation,
// one rounding), else through float32 (the same result: one rounding of a
// float32 product); which one a device does is learnt at its first call.
Tensor run_matmul(const Tensor& a, const Tensor& b, const Shape& out_shape) {
  DType t = a.dtype();
  detail::DeviceContext& ctx = a.impl()->ctx();
  const bool half = t == kFloat16 || t == kBFloat16;
  if (half && ctx.native_half_matmul.load(std::memory_order_relaxed) != 0) {
    Tensor out = detail::make_empty(ctx, out_shape, t, "matmul");
    try {
      matmul_into(a, b, out);
      ctx.native_half_matmul.store(1, std::memory_order_relaxed);
      return out;
    } catch (const Unsupported&) {
      ctx.native_half_matmul.store(0, std::memory_order_relaxed);
    }
  }
  // int8 / int16 multiply in int32: the wrapped int32 sums, narrowed,
  // are the sums PyTorch's kernels wrap at 8 / 16 bits.
  DType compute = half ? kFloat32 : (t == kInt8 || t == kInt16) ? kInt32 : t;
  Tensor x = a.to(compute), y = b.to(compute);
  Tensor out = detail::make_empty(ctx, out_shape, compute, "matmul");
  matmul_into(x, y, out);
  return compute == t ? out : out.to(t);
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  if (autocast::detail::OpScope s{autocast::detail::Policy::lower, {&a, &b}}) return mm(s[0], s[1]);
  check_operands(a, b, "mm");
  VNN_CHECK(ShapeError, a.dim() == 2, "mm: input must be a matrix (2-D), got shape ", a.sizes());
  VNN_CHECK(ShapeError, b.dim() == 2, "mm: mat2 must be a matrix (2-D), got shape ", b.sizes());
  VNN_CHECK(ShapeError, a.sizes()[1] == b.sizes()[0], "mm: mat1 and mat2 shapes cannot be multiplied (", dims_str(a),
            " and ", dims_str(b), ")");
  return run_matmul(a, b, Shape{a.sizes()[0], b.sizes()[1]});
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (autocast::detail::OpScope s{autocast::detail::Policy::lower, {&a, &b}}) return matmul(s[0], s[1]);
  check_operands(a, b, "matmul");
  if (a.dim() == 0 || b.dim() == 0)
    VNN_THROW(ShapeError, "matmul: both arguments need at least 1 dimension, but got shapes ", a.sizes(), " and ",
              b.sizes(), "; use mul() for a scalar product");
  // 1-D operands become a row (a) or a column (b) vector, as views.
  Tensor x = a.dim() == 1 ? a.expand({1, a.sizes()[0]}) : a;
  Tensor y = b.dim() == 1 ? b.expand({1, b.sizes()[0]}).transpose(0, 1) : b;
  int64_t m = x.size(-2), k = x.size(-1), k2 = y.size(-2), n = y.size(-1);
  VNN_CHECK(ShapeError, k == k2, "matmul: shapes ", a.sizes(), " and ", b.sizes(), " cannot be multiplied (",
            dims_str(x), " and ", dims_str(y), "): size ", k, " of input's last dim differs from size ", k2,
            " of mat2's ", (b.dim() == 1 ? "only" : "second-to-last"), " dim");
  if (x.dim() > 2 && b.dim() == 2) {
    // [B..., M, K] @ [K, N]: one GEMM of (B*M) rows, as PyTorch folds it
    // (a Linear on a sequence batch): BLAS is faster on one large product
    // than on B small ones, and the weight's gradient becomes one GEMM too
    // instead of B products summed over the batch.
    Shape os(x.sizes().begin(), x.sizes().end() - 1);
    os.push_back(n);
    int64_t rows = 1;
    for (int i = 0; i + 1 < x.dim(); ++i) rows *= x.size(i);
    return run_matmul(x.reshape({rows, k}), y, Shape{rows, n}).view(os);
  }
  Shape ba(x.sizes().begin(), x.sizes().end() - 2), bb(y.sizes().begin(), y.sizes().end() - 2);
  Shape batch = broadcast_shapes(ba, bb, "matmul (batch dimensions)");
  Shape xs = batch, ys = batch, os = batch;
  xs.push_back(m);
  xs.push_back(k);
  ys.push_back(k);
  ys.push_back(n);
  os.push_back(m);
  os.push_back(n);
  Tensor out = run_matmul(x.expand(xs), y.expand(ys), os);
  if (a.dim() == 1 || b.dim() == 1) {
    Shape r = batch;
    if (a.dim() != 1) r.push_back(m);
    if (b.dim() != 1) r.push_back(n);
    out = out.view(r);
  }
  return out;
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  if (autocast::detail::OpScope s{autocast::detail::Policy::lower, {&a, &b}}) return bmm(s[0], s[1]);
  check_operands(a, b, "bmm");
  VNN_CHECK(ShapeError, a.dim() == 3, "bmm: input must be a batch of matrices (3-D), got shape ", a.sizes());
  VNN_CHECK(ShapeError, b.dim() == 3, "bmm: mat2 must be a batch of matrices (3-D), got shape ", b.sizes());
  VNN_CHECK(ShapeError, a.size(0) == b.size(0), "bmm: input ", a.sizes(), " and mat2 ", b.sizes(),
            " have different batch sizes (", a.size(0), " and ", b.size(0), "); use matmul() to broadcast them");
  VNN_CHECK(ShapeError, a.size(2) == b.size(1), "bmm: input ", a.sizes(), " and mat2 ", b.sizes(),
            " cannot be multiplied (", dims_str(a), " and ", dims_str(b), ")");
  return run_matmul(a, b, Shape{a.size(0), a.size(1), b.size(2)});
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, double beta, double alpha) {
  VNN_CHECK(ValueError, self.defined(), "addmm: argument 'input' is an undefined tensor");
  check_operands(mat1, mat2, "addmm");
  detail::check_same_device(mat1, self, "addmm", "input");
  VNN_CHECK(ShapeError, mat1.dim() == 2 && mat2.dim() == 2, "addmm: mat1 ", mat1.sizes(), " and mat2 ", mat2.sizes(),
            " must be matrices (2-D)");
  VNN_CHECK(ShapeError, mat1.size(1) == mat2.size(0), "addmm: mat1 and mat2 shapes cannot be multiplied (",
            dims_str(mat1), " and ", dims_str(mat2), ")");
  const Shape out{mat1.size(0), mat2.size(1)};
  VNN_CHECK(ShapeError, broadcast_shapes(self.sizes(), out, "addmm") == out, "addmm: input of shape ", self.sizes(),
            " does not broadcast to the product's shape ", out);
  Tensor p = mm(mat1, mat2);
  if (alpha != 1.0) p = mul(p, alpha);
  if (beta == 0.0) return p;  // as PyTorch: self is ignored (NaN in it does not propagate)
  return add(beta == 1.0 ? self : mul(self, beta), p);
}

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  VNN_CHECK(ValueError, input.defined() && weight.defined(), "linear: argument '",
            (input.defined() ? "weight" : "input"), "' is an undefined tensor");
  detail::check_same_device(input, weight, "linear", "weight");
  VNN_CHECK(ShapeError, weight.dim() == 2, "linear: weight must be 2-D [out_features, in_features], got shape ",
            weight.sizes());
  VNN_CHECK(ShapeError, input.dim() >= 1 && input.size(-1) == weight.size(1), "linear: input of shape ",
            input.sizes(), " does not end in in_features = ", weight.size(1), " of weight ", weight.sizes());
  if (bias.defined())
    VNN_CHECK(ShapeError, bias.dim() == 1 && bias.size(0) == weight.size(0), "linear: bias of shape ", bias.sizes(),
              " must be [", weight.size(0), "] (out_features of weight ", weight.sizes(), ")");
  // As nn::Linear: the weight itself is what an autocast scope keeps cast.
  autocast::detail::OpScope s{autocast::detail::Policy::lower, {&input, &weight, &bias}};
  const Tensor& x = s ? s[0] : input;
  const Tensor& w = s ? s[1] : weight;
  const Tensor& b = s ? s[2] : bias;
  Tensor y = matmul(x, w.transpose(0, 1));
  if (!b.defined()) return y;
  detail::check_same_device(y, b, "linear", "bias");
  return add(y, b);
}

}  // namespace vnn

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bilinear, CosineSimilarity and PairwiseDistance of include/vnn/nn/two_input.h.
#include "vnn/nn/two_input.h"

#include <cmath>
#include <vector>

#include "tensor/tensor_impl.hpp"

#include "vnn/autograd.h"
#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/linalg.h"
#include "vnn/nn/init.h"
#include "vnn/reduction.h"
#include "vnn/shape_ops.h"

namespace vnn::nn {

namespace functional {

namespace {
void check_pair(const Tensor& x1, const Tensor& x2, const char* op) {
  VNN_CHECK(ValueError, x1.defined() && x2.defined(), op, ": argument 'x1' or 'x2' is an undefined tensor");
  VNN_CHECK(DeviceMismatch, x1.device() == x2.device(), op, ": x1 is on ", x1.device(), " and x2 on ", x2.device(),
            "; move both to one device");
}
}  // namespace

Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight, const Tensor& bias) {
  check_pair(input1, input2, "bilinear");
  VNN_CHECK(ValueError, weight.defined(), "bilinear: argument 'weight' is an undefined tensor");
  VNN_CHECK(ShapeError, weight.dim() == 3, "bilinear: weight must be 3-D [out, in1, in2], got ", weight.sizes());
  const int64_t out = weight.size(0), in1 = weight.size(1), in2 = weight.size(2);
  VNN_CHECK(ShapeError, input1.dim() >= 1 && input1.dim() == input2.dim(), "bilinear: input1 ", input1.sizes(),
            " and input2 ", input2.sizes(), " must have the same number of dims (at least 1)");
  std::vector<int64_t> lead = input1.sizes().vec(), lead2 = input2.sizes().vec();
  lead.pop_back();
  lead2.pop_back();
  VNN_CHECK(ShapeError, lead == lead2, "bilinear: input1 ", input1.sizes(), " and input2 ", input2.sizes(),
            " must agree in every dim but the last");
  VNN_CHECK(ShapeError, input1.size(-1) == in1 && input2.size(-1) == in2, "bilinear: weight ", weight.sizes(),
            " expects inputs [*, ", in1, "] and [*, ", in2, "], got ", input1.sizes(), " and ", input2.sizes());
  VNN_CHECK(ShapeError, !bias.defined() || (bias.dim() == 1 && bias.size(0) == out), "bilinear: bias must be [", out,
            "], got ", bias.sizes());
  // x1 @ W viewed [in1, out * in2], then the product with x2 summed over in2.
  const int64_t rows = input1.numel() / in1;
  Tensor t = mm(input1.reshape({rows, in1}), weight.permute({1, 0, 2}).reshape({in1, out * in2}));
  Tensor prod = mul(t.reshape({rows, out, in2}), input2.reshape({rows, 1, in2}));
  Tensor y = sum(prod, {2}).to(prod.dtype());  // sum widens integers to int64; bilinear keeps their dtype
  if (bias.defined()) y = add(y, bias);
  lead.push_back(out);
  return y.reshape(Shape(lead));
}

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, const CosineSimilarityFuncOptions& o) {
  check_pair(x1, x2, "cosine_similarity");
  VNN_CHECK(DTypeError, is_floating(x1.dtype()) && is_floating(x2.dtype()),
            "cosine_similarity: inputs must be floating, got ", x1.dtype(), " and ", x2.dtype());
  std::vector<Tensor> b = broadcast_tensors({x1, x2});
  const int d = ::vnn::detail::normalize_dim(int(o.dim()), b[0].dim(), "cosine_similarity");
  // Each input divided by its norm first (PyTorch 2.x): the norm is clamped
  // to eps in value only, the gradient passing as if unclamped, as there.
  auto unit = [&](const Tensor& x) {
    Tensor n = norm(x, 2.0, {d}, true);
    Tensor frozen = n.detach();
    return div(x, add(n, sub(clamp_min(frozen, o.eps()), frozen)));
  };
  return sum(mul(unit(b[0]), unit(b[1])), {d});
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, const PairwiseDistanceFuncOptions& o) {
  check_pair(x1, x2, "pairwise_distance");
  VNN_CHECK(DTypeError, is_floating(x1.dtype()) && is_floating(x2.dtype()),
            "pairwise_distance: inputs must be floating, got ", x1.dtype(), " and ", x2.dtype());
  Tensor diff = add(sub(x1, x2), o.eps());
  if (diff.dim() == 0) return norm(diff.reshape({1}), o.norm_degree(), {0}, o.keepdim());
  return norm(diff, o.norm_degree(), {-1}, o.keepdim());
}

}  // namespace functional

BilinearImpl::BilinearImpl(const BilinearOptions& opt, Generator* gen)
    : Cloneable("Bilinear"), options(opt), gen_(gen) {
  VNN_CHECK(ValueError, opt.in1_features() > 0 && opt.in2_features() > 0 && opt.out_features() > 0,
            "Bilinear: in1_features, in2_features and out_features must be positive, got ", opt.in1_features(), ", ",
            opt.in2_features(), ", ", opt.out_features());
  reset();
}

void BilinearImpl::reset() {
  const double bound = 1.0 / std::sqrt(double(options.in1_features()));
  Tensor w = empty({options.out_features(), options.in1_features(), options.in2_features()});
  init::uniform_(w, -bound, bound, gen_);
  weight = register_parameter("weight", w);
  bias = Tensor();
  if (options.bias()) {
    Tensor b = empty({options.out_features()});
    init::uniform_(b, -bound, bound, gen_);
    bias = register_parameter("bias", b);
  }
}

Tensor BilinearImpl::forward(const Tensor& input1, const Tensor& input2) {
  return functional::bilinear(input1, input2, weight, bias);
}

std::string BilinearImpl::describe() const {
  return ::vnn::detail::str_cat("Bilinear(in1_features=", options.in1_features(), ", in2_features=",
                                options.in2_features(), ", out_features=", options.out_features(),
                                ", bias=", options.bias() ? "true" : "false", ")");
}

}  // namespace vnn::nn

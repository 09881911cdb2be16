// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "vnn/detail/message.h"
#include "vnn/nn/layers.h"

#include <cmath>
#include <utility>

#include "amp/autocast.hpp"
#include "autograd/autograd.hpp"
#include "nn/inplace.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/autograd.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/indexing.h"
#include "vnn/linalg.h"
#include "vnn/nn/init.h"
#include "vnn/reduction.h"

namespace vnn::nn {

LinearImpl::LinearImpl(const LinearOptions& opt, Generator* gen)
    : Cloneable("Linear"), options(opt), in_features(opt.in_features()), out_features(opt.out_features()) {
  if (in_features <= 0 || out_features <= 0)
    VNN_THROW(ValueError, "Linear: in_features and out_features must be positive, got ", in_features, " and ",
              out_features);
  build(gen);
}

void LinearImpl::build(Generator* gen) {
  Tensor w = empty({out_features, in_features});
  init::kaiming_uniform_(w, std::sqrt(5.0), "fan_in", "leaky_relu", gen);
  weight = register_parameter("weight", w);
  bias = Tensor();
  if (options.bias()) {
    Tensor b = empty({out_features});
    double bound = 1.0 / std::sqrt(double(in_features));
    init::uniform_(b, -bound, bound, gen);
    bias = register_parameter("bias", b);
  }
}

Tensor LinearImpl::forward(const Tensor& x) {
  if (x.dim() < 1 || x.size(-1) != in_features)
    VNN_THROW(ShapeError, "Linear: input of shape ", x.sizes(), " does not end in in_features = ", in_features);
  // Autocast here rather than only in matmul: the weight itself (not its
  // transposed view) is what the scope's cache keeps cast.
  autocast::detail::OpScope s{autocast::detail::Policy::lower, {&x, &weight, &bias}};
  const Tensor& xs = s ? s[0] : x;
  const Tensor& w = s ? s[1] : weight;
  const Tensor& b = s ? s[2] : bias;
  Tensor y = matmul(xs, w.transpose(0, 1));
  return b.defined() ? add(y, b) : y;
}

std::string LinearImpl::describe() const {
  return "Linear(in_features=" + std::to_string(in_features) + ", out_features=" + std::to_string(out_features) +
         ", bias=" + (bias.defined() ? "true" : "false") + ")";
}

Tensor FlattenImpl::forward(const Tensor& x) { return flatten(x, options.start_dim(), options.end_dim()); }

DropoutImpl::DropoutImpl(const DropoutOptions& opt) : Cloneable("Dropout"), options(opt) {
  double p = opt.p();
  VNN_CHECK(ValueError, p >= 0.0 && p <= 1.0, "Dropout: p must be in [0, 1], got ", p);
}

FunctionalImpl::FunctionalImpl(Function function) : Cloneable("Functional"), function_(std::move(function)) {
  VNN_CHECK(ValueError, static_cast<bool>(function_), "Functional: the function is empty; give a callable");
}

Tensor UnflattenImpl::forward(const Tensor& x) {
  VNN_CHECK(ValueError, x.defined(), "Unflatten: argument 'input' is an undefined tensor");
  return x.unflatten(::vnn::detail::normalize_dim(int(options.dim()), x.dim(), "Unflatten"), Shape(options.sizes()));
}
std::string UnflattenImpl::describe() const {
  return ::vnn::detail::str_cat("Unflatten(dim=", options.dim(), ", unflattened_size=", Shape(options.sizes()), ")");
}

Tensor DropoutImpl::forward(const Tensor& x) { return detail::write_into_input(x, drop(x), options.inplace()); }

Tensor DropoutImpl::drop(const Tensor& x) const {
  double p = options.p();
  if (!is_training() || p == 0.0) return x;
  if (p == 1.0) return mul(x, 0.0);
  // The uniforms are float32 for 16-bit x (rounded to 16 bits they would
  // bias the keep probability). x * keep is exact; the 1/(1-p) scale is
  // applied in float32 and rounded once (a float32 scalar does not widen a
  // 16-bit tensor), as PyTorch does.
  DType u = x.dtype() == kFloat64 ? kFloat64 : kFloat32;
  Tensor keep = lt(rand(x.sizes(), TensorOptions(x.device()).with(u)), 1.0 - p);
  return mul(mul(x, keep.to(x.dtype())), 1.0 / (1.0 - p));
}

std::string DropoutImpl::describe() const { return "Dropout(p=" + std::to_string(options.p()) + ")"; }

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& opt, Generator* gen) : Cloneable("Embedding"), options(opt) {
  if (opt.num_embeddings() <= 0 || opt.embedding_dim() <= 0)
    VNN_THROW(ValueError, "Embedding: sizes must be positive, got ", opt.num_embeddings(), " x ", opt.embedding_dim());
  if (auto& p = options.padding_idx()) {
    const int64_t n = opt.num_embeddings();
    VNN_CHECK(ValueError, *p >= -n && *p < n, "Embedding: padding_idx ", *p, " must be in [", -n, ", ", n,
              ") for num_embeddings = ", n);
    if (*p < 0) *p += n;  // as PyTorch: counted from the end
  }
  build(gen);
}

void EmbeddingImpl::build(Generator* gen) {
  Tensor w = empty({options.num_embeddings(), options.embedding_dim()});
  init::normal_(w, 0.0, 1.0, gen);
  if (options.padding_idx()) w.select(0, *options.padding_idx()).zero_();
  weight = register_parameter("weight", w);
}

Tensor EmbeddingImpl::forward(const Tensor& indices) {
  if (!options.padding_idx() || !autograd::grad_enabled() || !weight.requires_grad()) return embedding(weight, indices);
  // The lookup without history, then one node whose gradient leaves the padding row at zero.
  Tensor out;
  {
    autograd::NoGradGuard no_grad;
    out = embedding(weight, indices);
  }
  const int64_t rows = weight.size(0), pad = *options.padding_idx();
  Tensor idx = indices;
  ::vnn::detail::record("embedding", out, {&weight}, [idx, rows, pad](const Tensor& g) {
    Tensor gw = embedding_backward(g, idx, rows);
    gw.select(0, pad).zero_();
    return std::vector<Tensor>{gw};
  });
  return out;
}

std::string EmbeddingImpl::describe() const {
  std::string s = "Embedding(" + std::to_string(weight.size(0)) + ", " + std::to_string(weight.size(1));
  if (options.padding_idx()) s += ", padding_idx=" + std::to_string(*options.padding_idx());
  return s + ")";
}

Tensor ReLUImpl::forward(const Tensor& x) { return detail::write_into_input(x, relu(x), options.inplace()); }
Tensor LeakyReLUImpl::forward(const Tensor& x) {
  return detail::write_into_input(x, leaky_relu(x, options.negative_slope()), options.inplace());
}
std::string LeakyReLUImpl::describe() const {
  return "LeakyReLU(negative_slope=" + std::to_string(options.negative_slope()) + ")";
}
GELUImpl::GELUImpl(const GELUOptions& opt) : Cloneable("GELU"), options(opt) {
  const std::string& a = opt.approximate();
  VNN_CHECK(ValueError, a == "none" || a == "tanh", "GELU: approximate must be \"none\" or \"tanh\", got \"", a, "\"");
}
Tensor GELUImpl::forward(const Tensor& x) { return gelu(x, options.approximate()); }
std::string GELUImpl::describe() const {
  return options.approximate() == "none" ? "GELU" : "GELU(approximate=" + options.approximate() + ")";
}
Tensor SiLUImpl::forward(const Tensor& x) { return silu(x); }
Tensor SigmoidImpl::forward(const Tensor& x) { return sigmoid(x); }
Tensor TanhImpl::forward(const Tensor& x) { return tanh(x); }
Tensor SoftmaxImpl::forward(const Tensor& x) { return softmax(x, options.dim()); }
Tensor LogSoftmaxImpl::forward(const Tensor& x) { return log_softmax(x, options.dim()); }

}  // namespace vnn::nn

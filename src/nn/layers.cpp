#include "vnn/nn/layers.h"

#include <cmath>

#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/indexing.h"
#include "vnn/linalg.h"
#include "vnn/nn/init.h"
#include "vnn/reduction.h"

namespace vnn::nn {

Linear::Linear(int64_t in, int64_t out, bool with_bias, Generator* gen)
    : Module("Linear"), in_features(in), out_features(out) {
  if (in <= 0 || out <= 0)
    throw ValueError("Linear: in_features and out_features must be positive, got " + std::to_string(in) + " and " +
                     std::to_string(out));
  Tensor w = empty({out, in});
  init::kaiming_uniform_(w, std::sqrt(5.0), "fan_in", "leaky_relu", gen);
  weight = register_parameter("weight", w);
  if (with_bias) {
    Tensor b = empty({out});
    double bound = 1.0 / std::sqrt(double(in));
    init::uniform_(b, -bound, bound, gen);
    bias = register_parameter("bias", b);
  }
}

Tensor Linear::forward(const Tensor& x) {
  if (x.dim() < 1 || x.size(-1) != in_features)
    throw ShapeError("Linear: input of shape " + x.sizes().str() + " does not end in in_features = " +
                     std::to_string(in_features));
  Tensor y = matmul(x, weight.transpose(0, 1));
  return bias.defined() ? add(y, bias) : y;
}

std::string Linear::describe() const {
  return "Linear(in_features=" + std::to_string(in_features) + ", out_features=" + std::to_string(out_features) +
         ", bias=" + (bias.defined() ? "true" : "false") + ")";
}

Tensor Flatten::forward(const Tensor& x) { return flatten(x, start_dim_, end_dim_); }

Dropout::Dropout(double p) : Module("Dropout"), p_(p) {
  if (!(p >= 0.0 && p <= 1.0)) throw ValueError("Dropout: p must be in [0, 1], got " + std::to_string(p));
}

Tensor Dropout::forward(const Tensor& x) {
  if (!is_training() || p_ == 0.0) return x;
  if (p_ == 1.0) return mul(x, 0.0);
  // keep-mask scaled by 1/(1-p): one multiply carries the gradient too.
  Tensor keep = lt(rand(x.sizes(), TensorOptions(x.device()).with(x.dtype())), 1.0 - p_);
  return mul(x, mul(keep.to(x.dtype()), 1.0 / (1.0 - p_)));
}

std::string Dropout::describe() const { return "Dropout(p=" + std::to_string(p_) + ")"; }

Embedding::Embedding(int64_t n, int64_t dim, Generator* gen) : Module("Embedding") {
  if (n <= 0 || dim <= 0)
    throw ValueError("Embedding: sizes must be positive, got " + std::to_string(n) + " x " + std::to_string(dim));
  Tensor w = empty({n, dim});
  init::normal_(w, 0.0, 1.0, gen);
  weight = register_parameter("weight", w);
}

Tensor Embedding::forward(const Tensor& indices) { return embedding(weight, indices); }

std::string Embedding::describe() const {
  return "Embedding(" + std::to_string(weight.size(0)) + ", " + std::to_string(weight.size(1)) + ")";
}

Tensor ReLU::forward(const Tensor& x) { return relu(x); }
Tensor LeakyReLU::forward(const Tensor& x) { return leaky_relu(x, slope_); }
std::string LeakyReLU::describe() const { return "LeakyReLU(negative_slope=" + std::to_string(slope_) + ")"; }
Tensor GELU::forward(const Tensor& x) { return gelu(x); }
Tensor SiLU::forward(const Tensor& x) { return silu(x); }
Tensor Sigmoid::forward(const Tensor& x) { return sigmoid(x); }
Tensor Tanh::forward(const Tensor& x) { return tanh(x); }
Tensor Softmax::forward(const Tensor& x) { return softmax(x, dim_); }
Tensor LogSoftmax::forward(const Tensor& x) { return log_softmax(x, dim_); }

}  // namespace vnn::nn

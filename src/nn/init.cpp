// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "vnn/detail/message.h"
#include "vnn/nn/init.h"

#include <cmath>

#include "vnn/autograd.h"
#include "vnn/error.h"

namespace vnn::nn::init {

std::pair<int64_t, int64_t> fan_in_out(const Tensor& w) {
  if (w.dim() < 2)
    VNN_THROW(ShapeError, "init: fan in and fan out need a tensor of at least 2 dimensions, got shape ", w.sizes());
  int64_t receptive = 1;
  for (int i = 2; i < w.dim(); ++i) receptive *= w.size(i);
  return {w.size(1) * receptive, w.size(0) * receptive};
}

double calculate_gain(const std::string& nl, double param) {
  if (nl == "linear" || nl == "sigmoid" || nl.rfind("conv", 0) == 0) return 1.0;
  if (nl == "tanh") return 5.0 / 3.0;
  if (nl == "relu") return std::sqrt(2.0);
  if (nl == "leaky_relu") return std::sqrt(2.0 / (1.0 + param * param));
  if (nl == "selu") return 3.0 / 4.0;
  VNN_THROW(ValueError, "calculate_gain: unknown nonlinearity '", nl,
            "' (expected linear, conv2d, sigmoid, tanh, relu, leaky_relu or selu)");
}

Tensor& uniform_(Tensor& t, double low, double high, Generator* gen) {
  autograd::NoGradGuard g;
  return vnn::uniform_(t, low, high, gen);
}
Tensor& normal_(Tensor& t, double mean, double std, Generator* gen) {
  autograd::NoGradGuard g;
  return vnn::normal_(t, mean, std, gen);
}
Tensor& constant_(Tensor& t, double value) {
  autograd::NoGradGuard g;
  t.fill_(value);
  return t;
}
Tensor& zeros_(Tensor& t) { return constant_(t, 0.0); }
Tensor& ones_(Tensor& t) { return constant_(t, 1.0); }

Tensor& xavier_uniform_(Tensor& t, double gain, Generator* gen) {
  auto [fan_in, fan_out] = fan_in_out(t);
  double a = gain * std::sqrt(6.0 / double(fan_in + fan_out));
  return init::uniform_(t, -a, a, gen);
}
Tensor& xavier_normal_(Tensor& t, double gain, Generator* gen) {
  auto [fan_in, fan_out] = fan_in_out(t);
  return init::normal_(t, 0.0, gain * std::sqrt(2.0 / double(fan_in + fan_out)), gen);
}

namespace {
double kaiming_std(const Tensor& t, double a, const std::string& mode, const std::string& nl) {
  auto [fan_in, fan_out] = fan_in_out(t);
  if (mode != "fan_in" && mode != "fan_out")
    VNN_THROW(ValueError, "kaiming init: mode must be \"fan_in\" or \"fan_out\", not \"", mode, "\"");
  double fan = double(mode == "fan_in" ? fan_in : fan_out);
  return calculate_gain(nl, a) / std::sqrt(fan);
}
}  // namespace

Tensor& kaiming_uniform_(Tensor& t, double a, const std::string& mode, const std::string& nl, Generator* gen) {
  double bound = std::sqrt(3.0) * kaiming_std(t, a, mode, nl);
  return init::uniform_(t, -bound, bound, gen);
}
Tensor& kaiming_normal_(Tensor& t, double a, const std::string& mode, const std::string& nl, Generator* gen) {
  return init::normal_(t, 0.0, kaiming_std(t, a, mode, nl), gen);
}

}  // namespace vnn::nn::init

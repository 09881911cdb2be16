// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Parameter initialisation, as torch.nn.init (in place, under no_grad).
#pragma once
#include <string>

#include "vnn/random.h"
#include "vnn/tensor.h"

namespace vnn::nn::init {

/// fan_in / fan_out of a weight [out, in, *kernel] (PyTorch's definition).
std::pair<int64_t, int64_t> fan_in_out(const Tensor& weight);
/// Recommended gain for a nonlinearity: "linear", "sigmoid", "tanh",
/// "relu", "leaky_relu" (with slope), "selu".
double calculate_gain(const std::string& nonlinearity, double param = 0.01);

/// Fills t with U(low, high) values drawn from `gen` (the default generator when null).
Tensor& uniform_(Tensor& t, double low = 0.0, double high = 1.0, Generator* gen = nullptr);
/// Fills t with N(mean, std^2) values drawn from `gen` (the default generator when null).
Tensor& normal_(Tensor& t, double mean = 0.0, double std = 1.0, Generator* gen = nullptr);
/// Fills t with `value`.
Tensor& constant_(Tensor& t, double value);
/// Fills t with zeros.
Tensor& zeros_(Tensor& t);
/// Fills t with ones.
Tensor& ones_(Tensor& t);
/// Glorot uniform: U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out)).
Tensor& xavier_uniform_(Tensor& t, double gain = 1.0, Generator* gen = nullptr);
/// Glorot normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).
Tensor& xavier_normal_(Tensor& t, double gain = 1.0, Generator* gen = nullptr);
/// mode: "fan_in" or "fan_out"; nonlinearity as calculate_gain.
Tensor& kaiming_uniform_(Tensor& t, double a = 0.0, const std::string& mode = "fan_in",
                         const std::string& nonlinearity = "leaky_relu", Generator* gen = nullptr);
/// He normal: N(0, std^2) with std = gain / sqrt(fan), gain from `a` and `nonlinearity`, fan from `mode`.
Tensor& kaiming_normal_(Tensor& t, double a = 0.0, const std::string& mode = "fan_in",
                        const std::string& nonlinearity = "leaky_relu", Generator* gen = nullptr);

}  // namespace vnn::nn::init

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Parameter initialisation, as torch::nn::init (in place, under no_grad),
// with LibTorch's spellings:
//
//   vnn::nn::init::kaiming_normal_(conv->weight, 0.0, vnn::nn::kFanOut, vnn::nn::kReLU);
//   vnn::nn::init::xavier_uniform_(fc->weight, vnn::nn::init::calculate_gain(vnn::nn::kTanh));
//   vnn::nn::init::orthogonal_(rnn->weight_hh_l0);
//   vnn::nn::init::trunc_normal_(vit->pos_embed, 0.0, 0.02);
//
// The PyTorch strings ("fan_out", "relu") are accepted wherever the
// constants are. Every random fill takes an optional Generator (the default
// generator when null).
#pragma once
#include <string>
#include <tuple>

#include "vnn/random.h"
#include "vnn/tensor.h"

namespace vnn {
enum class InterpolateMode;  // vnn/nn/functional.h (its kLinear)
}  // namespace vnn

namespace vnn::nn {

enum class RNNNonlinearityKind;        // vnn/nn/rnn.h (its kTanh)
enum class TransformerActivationKind;  // vnn/nn/transformer.h (its kReLU)

/// The nonlinearities calculate_gain knows (LibTorch's enumtypes).
enum class NonlinearityKind {
  linear,
  conv1d,
  conv2d,
  conv3d,
  conv_transpose1d,
  conv_transpose2d,
  conv_transpose3d,
  sigmoid,
  tanh,
  relu,
  leaky_relu,
  selu
};
/// calculate_gain's nonlinearities, as torch::kConv1D ... (kLinear, kTanh and
/// kReLU are the constants vnn already has and are accepted too).
///@{
inline constexpr NonlinearityKind kConv1D = NonlinearityKind::conv1d, kConv2D = NonlinearityKind::conv2d,
                                  kConv3D = NonlinearityKind::conv3d,
                                  kConvTranspose1D = NonlinearityKind::conv_transpose1d,
                                  kConvTranspose2D = NonlinearityKind::conv_transpose2d,
                                  kConvTranspose3D = NonlinearityKind::conv_transpose3d,
                                  kSigmoid = NonlinearityKind::sigmoid, kLeakyReLU = NonlinearityKind::leaky_relu,
                                  kSELU = NonlinearityKind::selu;
///@}

/// The fan a kaiming init scales by: the weight's fan_in (default) or fan_out.
enum class FanMode { fan_in, fan_out };
/// kaiming modes, as torch::kFanIn / torch::kFanOut.
///@{
inline constexpr FanMode kFanIn = FanMode::fan_in, kFanOut = FanMode::fan_out;
///@}

namespace init {

/// A nonlinearity argument (LibTorch's init::NonlinearityType): any constant
/// above, vnn::kLinear, vnn::nn::kTanh, vnn::nn::kReLU, or PyTorch's string
/// ("linear", "conv2d", "conv_transpose1d", "sigmoid", "tanh", "relu",
/// "leaky_relu", "selu"; ValueError for any other).
struct NonlinearityType {
  /// One of the constants.
  NonlinearityType(NonlinearityKind k) : kind(k) {}  // NOLINT: implicit, as LibTorch's variant
  /// vnn::kLinear (ValueError for the other interpolation modes).
  NonlinearityType(InterpolateMode m);  // NOLINT: implicit, as LibTorch's variant
  /// vnn::nn::kTanh or kReLU.
  NonlinearityType(RNNNonlinearityKind k);  // NOLINT: implicit, as LibTorch's variant
  /// vnn::nn::kReLU (ValueError for kGELU and custom activations).
  NonlinearityType(TransformerActivationKind k);  // NOLINT: implicit, as LibTorch's variant
  /// PyTorch's name.
  NonlinearityType(const std::string& name);  // NOLINT: implicit, as PyTorch's strings
  /// PyTorch's name.
  NonlinearityType(const char* name) : NonlinearityType(std::string(name)) {}  // NOLINT: implicit
  /// The nonlinearity.
  NonlinearityKind kind;
};

/// A kaiming mode argument (LibTorch's init::FanModeType): kFanIn, kFanOut,
/// "fan_in" or "fan_out" (ValueError for any other string).
struct FanModeType {
  /// kFanIn or kFanOut.
  FanModeType(FanMode m) : mode(m) {}  // NOLINT: implicit, as LibTorch's variant
  /// "fan_in" or "fan_out".
  FanModeType(const std::string& name);  // NOLINT: implicit, as PyTorch's strings
  /// "fan_in" or "fan_out".
  FanModeType(const char* name) : FanModeType(std::string(name)) {}  // NOLINT: implicit
  /// The mode.
  FanMode mode;
};

/// fan_in / fan_out of a weight [out, in, *kernel] (PyTorch's definition;
/// ShapeError below 2 dimensions).
std::pair<int64_t, int64_t> fan_in_out(const Tensor& weight);
/// fan_in_out under LibTorch's name.
std::tuple<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& weight);
/// Recommended gain for a nonlinearity, as torch.nn.init.calculate_gain:
/// 1 for linear, the convolutions and sigmoid; 5/3 for tanh; sqrt(2) for
/// relu; sqrt(2 / (1 + param^2)) for leaky_relu (param: its negative slope);
/// 3/4 for selu.
double calculate_gain(NonlinearityType nonlinearity, double param = 0.01);

/// Fills t with U(low, high) values drawn from `gen` (the default generator when null).
Tensor& uniform_(Tensor& t, double low = 0.0, double high = 1.0, Generator* gen = nullptr);
/// Fills t with N(mean, std^2) values drawn from `gen` (the default generator when null).
Tensor& normal_(Tensor& t, double mean = 0.0, double std = 1.0, Generator* gen = nullptr);
/// Fills t with N(mean, std^2) values truncated to [a, b] (PyTorch's
/// trunc_normal_: a uniform draw mapped through the inverse normal CDF, so
/// no value is redrawn). ValueError unless std > 0 and a < b.
Tensor& trunc_normal_(Tensor& t, double mean = 0.0, double std = 1.0, double a = -2.0, double b = 2.0,
                      Generator* gen = nullptr);
/// Fills t with `value`.
Tensor& constant_(Tensor& t, double value);
/// Fills t with zeros.
Tensor& zeros_(Tensor& t);
/// Fills t with ones.
Tensor& ones_(Tensor& t);
/// The identity in a 2-D t (ones on the main diagonal of a rectangular
/// matrix too); ShapeError for other ranks.
Tensor& eye_(Tensor& t);
/// The Dirac delta in a 3-, 4- or 5-D convolution weight [out, in, *kernel]:
/// the convolution keeps its input channels, as many as out / groups and in
/// allow in each group, centred in the kernel. ShapeError for other ranks
/// and ValueError when groups does not divide out.
Tensor& dirac_(Tensor& t, int64_t groups = 1);
/// A (semi-)orthogonal matrix times gain in t viewed as [size(0), numel / size(0)]
/// (rows orthonormal when there are fewer rows than columns, else columns):
/// the Q of the QR of a normal matrix with R's diagonal made positive, as
/// PyTorch's orthogonal_ (QR by Householder on the host in float64).
/// ShapeError below 2 dimensions.
Tensor& orthogonal_(Tensor& t, double gain = 1.0, Generator* gen = nullptr);
/// N(0, std^2) values in a 2-D t with ceil(sparsity * rows) zeros in each
/// column, at random rows (PyTorch's sparse_). ShapeError for other ranks,
/// ValueError unless 0 <= sparsity <= 1.
Tensor& sparse_(Tensor& t, double sparsity, double std = 0.01, Generator* gen = nullptr);
/// Glorot uniform: U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out)).
Tensor& xavier_uniform_(Tensor& t, double gain = 1.0, Generator* gen = nullptr);
/// Glorot normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).
Tensor& xavier_normal_(Tensor& t, double gain = 1.0, Generator* gen = nullptr);
/// He uniform: U(-b, b) with b = sqrt(3) * gain / sqrt(fan), gain from `a`
/// (leaky_relu's slope) and `nonlinearity`, fan from `mode`.
Tensor& kaiming_uniform_(Tensor& t, double a = 0.0, FanModeType mode = kFanIn,
                         NonlinearityType nonlinearity = kLeakyReLU, Generator* gen = nullptr);
/// He normal: N(0, std^2) with std = gain / sqrt(fan), gain from `a` and `nonlinearity`, fan from `mode`.
Tensor& kaiming_normal_(Tensor& t, double a = 0.0, FanModeType mode = kFanIn,
                        NonlinearityType nonlinearity = kLeakyReLU, Generator* gen = nullptr);

}  // namespace init
}  // namespace vnn::nn

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The activations of torch.nn beyond layers.h's (ReLU, GELU, SiLU, Sigmoid,
// Tanh, LeakyReLU, Softmax, LogSoftmax): ELU, SELU, CELU, GLU, Hardtanh,
// ReLU6, Hardswish, Hardsigmoid, Hardshrink, Softshrink, Tanhshrink,
// Threshold, LogSigmoid, Softplus, Softsign, Softmin, Mish, PReLU, RReLU and
// Softmax2d, with
// LibTorch's options and their functional forms in vnn::nn::functional:
//   vnn::nn::Hardtanh ht(vnn::nn::HardtanhOptions().min_val(-2).max_val(2));
//   auto y = F::softplus(x, F::SoftplusFuncOptions().beta(2).threshold(10));
// Each is composed of differentiable core ops (where, clamp, exp, log1p ...),
// so it runs on every device and backpropagates. PyTorch's formulas; the
// `inplace` options compute out of place and copy the result into the input.
#pragma once
#include <optional>
#include <string>

#include "vnn/nn/module.h"
#include "vnn/nn/options.h"
#include "vnn/random.h"

namespace vnn::nn {

/// Options of ELU: alpha, inplace.
struct ELUOptions {
  /// The value ELU tends to for x -> -inf is -alpha (default 1).
  VNN_ARG(double, alpha) = 1.0;
  /// Write the result into the input.
  VNN_ARG(bool, inplace) = false;
};
/// Options of SELU: inplace.
struct SELUOptions {
  /// SELUOptions(inplace), implicit as LibTorch's.
  SELUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT: implicit, as LibTorch's
  /// Write the result into the input.
  VNN_ARG(bool, inplace);
};
/// Options of CELU: alpha, inplace.
struct CELUOptions {
  /// Scale of the negative part, alpha > 0 (default 1).
  VNN_ARG(double, alpha) = 1.0;
  /// Write the result into the input.
  VNN_ARG(bool, inplace) = false;
};
/// Options of GLU: the dim split in halves.
struct GLUOptions {
  /// GLUOptions(dim), implicit as LibTorch's.
  GLUOptions(int64_t dim = -1) : dim_(dim) {}  // NOLINT: implicit, as LibTorch's
  /// The dim split into (a, b); its size must be even.
  VNN_ARG(int64_t, dim);
};
/// Options of Hardtanh: min_val, max_val, inplace.
struct HardtanhOptions {
  /// Lower bound (default -1).
  VNN_ARG(double, min_val) = -1.0;
  /// Upper bound (default 1), at least min_val.
  VNN_ARG(double, max_val) = 1.0;
  /// Write the result into the input.
  VNN_ARG(bool, inplace) = false;
};
/// Options of ReLU6: inplace.
struct ReLU6Options {
  /// ReLU6Options(inplace), implicit as LibTorch's.
  ReLU6Options(bool inplace = false) : inplace_(inplace) {}  // NOLINT: implicit, as LibTorch's
  /// Write the result into the input.
  VNN_ARG(bool, inplace);
};
/// Options of Hardshrink and Softshrink: lambda.
struct HardshrinkOptions {
  /// HardshrinkOptions(lambda), implicit as LibTorch's.
  HardshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT: implicit, as LibTorch's
  /// The half-width of the band set to zero (>= 0 for Softshrink).
  VNN_ARG(double, lambda);
};
/// Options of Softshrink (those of Hardshrink).
using SoftshrinkOptions = HardshrinkOptions;
/// Options of Threshold: threshold, value, inplace.
struct ThresholdOptions {
  /// x where x > threshold, value elsewhere.
  ThresholdOptions(double threshold, double value) : threshold_(threshold), value_(value) {}
  /// The threshold compared with.
  VNN_ARG(double, threshold);
  /// The value of the elements at or below the threshold.
  VNN_ARG(double, value);
  /// Write the result into the input.
  VNN_ARG(bool, inplace) = false;
};
/// Options of Softplus: beta, threshold.
struct SoftplusOptions {
  /// The sharpness: log(1 + exp(beta x)) / beta (default 1).
  VNN_ARG(double, beta) = 1.0;
  /// Above beta x > threshold the result is x itself (default 20).
  VNN_ARG(double, threshold) = 20.0;
};
/// Options of Softmin: the dim normalised over.
struct SoftminOptions {
  /// Softmin over `dim`; implicit, as LibTorch's.
  SoftminOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, as LibTorch's
  /// The dim normalised over (negative counts from the end).
  VNN_ARG(int64_t, dim);
};
/// Options of RReLU: lower, upper, inplace.
struct RReLUOptions {
  /// Lower bound of the random slope (default 1/8).
  VNN_ARG(double, lower) = 1.0 / 8.0;
  /// Upper bound of the random slope (default 1/3).
  VNN_ARG(double, upper) = 1.0 / 3.0;
  /// Write the result into the input.
  VNN_ARG(bool, inplace) = false;
};
/// Options of PReLU: num_parameters, init.
struct PReLUOptions {
  /// 1 (one slope shared by all channels) or the number of channels (dim 1 of the input).
  VNN_ARG(int64_t, num_parameters) = 1;
  /// The initial slope (default 0.25).
  VNN_ARG(double, init) = 0.25;
};

namespace functional {
/// Options of rrelu: lower, upper, training (false by default, as LibTorch's), inplace.
struct RReLUFuncOptions {
  /// Lower bound of the random slope.
  VNN_ARG(double, lower) = 1.0 / 8.0;
  /// Upper bound of the random slope.
  VNN_ARG(double, upper) = 1.0 / 3.0;
  /// Random slopes (true) or their mean (false).
  VNN_ARG(bool, training) = false;
  /// Write the result into the input.
  VNN_ARG(bool, inplace) = false;
};
/// Options of elu (nn::ELUOptions, as LibTorch's).
using ELUFuncOptions = ELUOptions;
/// Options of selu.
using SELUFuncOptions = SELUOptions;
/// Options of celu.
using CELUFuncOptions = CELUOptions;
/// Options of glu.
using GLUFuncOptions = GLUOptions;
/// Options of hardtanh.
using HardtanhFuncOptions = HardtanhOptions;
/// Options of relu6.
using ReLU6FuncOptions = ReLU6Options;
/// Options of hardshrink.
using HardshrinkFuncOptions = HardshrinkOptions;
/// Options of softshrink.
using SoftshrinkFuncOptions = SoftshrinkOptions;
/// Options of threshold.
using ThresholdFuncOptions = ThresholdOptions;
/// Options of softplus.
using SoftplusFuncOptions = SoftplusOptions;
/// Options of softmin: the dim, and a dtype the input is converted to first.
struct SoftminFuncOptions {
  /// Softmin over `dim`.
  SoftminFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, as LibTorch's
  /// The dim normalised over (negative counts from the end).
  VNN_ARG(int64_t, dim);
  /// A dtype to convert the input to first (none: the input's).
  VNN_ARG(std::optional<DType>, dtype);
};

/// x for x > 0, alpha (exp(x) - 1) below.
Tensor elu(Tensor input, const ELUFuncOptions& options = {});
/// scale * (max(0, x) + min(0, alpha (exp(x) - 1))) with PyTorch's alpha 1.6732632... and scale 1.0507009...
Tensor selu(Tensor input, const SELUFuncOptions& options = {});
/// max(0, x) + min(0, alpha (exp(x / alpha) - 1)).
Tensor celu(Tensor input, const CELUFuncOptions& options = {});
/// a * sigmoid(b) where (a, b) are the halves of `dim` (ShapeError when its size is odd).
Tensor glu(const Tensor& input, const GLUFuncOptions& options = {});
/// clamp(x, min_val, max_val) (ValueError when max_val < min_val).
Tensor hardtanh(Tensor input, const HardtanhFuncOptions& options = {});
/// clamp(x, 0, 6).
Tensor relu6(Tensor input, const ReLU6FuncOptions& options = {});
/// x * relu6(x + 3) / 6.
Tensor hardswish(const Tensor& input);
/// relu6(x + 3) / 6.
Tensor hardsigmoid(const Tensor& input);
/// x where |x| > lambda, 0 elsewhere.
Tensor hardshrink(const Tensor& input, const HardshrinkFuncOptions& options = {});
/// x - lambda above lambda, x + lambda below -lambda, 0 between (ValueError for lambda < 0).
Tensor softshrink(const Tensor& input, const SoftshrinkFuncOptions& options = {});
/// x - tanh(x).
Tensor tanhshrink(const Tensor& input);
/// x where x > threshold, value elsewhere.
Tensor threshold(Tensor input, const ThresholdFuncOptions& options);
/// log(sigmoid(x)), computed stably: min(x, 0) - log1p(exp(-|x|)).
Tensor logsigmoid(const Tensor& input);
/// log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (computed without overflow).
Tensor softplus(const Tensor& input, const SoftplusFuncOptions& options = {});
/// x / (1 + |x|).
Tensor softsign(const Tensor& input);
/// softmax(-x, dim).
Tensor softmin(const Tensor& input, const SoftminFuncOptions& options);
/// x * tanh(softplus(x)).
Tensor mish(const Tensor& input);
/// x for x > 0, weight * x below; weight [1] or [C] for the channels of dim 1 (dim 0 of a 1-D input).
Tensor prelu(const Tensor& input, const Tensor& weight);
/// x for x >= 0, a x below, a ~ U(lower, upper) per element in training (vnn's default
/// generator, or gen), a = (lower + upper) / 2 otherwise (ValueError unless 0 <= lower <= upper).
Tensor rrelu(Tensor input, const RReLUFuncOptions& options = {}, Generator* gen = nullptr);
/// softmax over the channels (dim -3) of [N, C, H, W] or [C, H, W] (ShapeError for other ranks).
Tensor softmax2d(const Tensor& input);
}  // namespace functional

/// ELU (torch.nn.ELU).
class ELUImpl : public Cloneable<ELUImpl> {
 public:
  /// An ELU from options.
  explicit ELUImpl(const ELUOptions& options = {}) : Cloneable("ELU"), options(options) {}
  void reset() override {}
  /// functional::elu(x, options).
  Tensor forward(const Tensor& x) { return functional::elu(x, options); }
  std::string describe() const override;
  /// The options the layer was built with.
  ELUOptions options;
};
/// The holder of ELUImpl.
VNN_MODULE(ELU);

/// SELU (torch.nn.SELU).
class SELUImpl : public Cloneable<SELUImpl> {
 public:
  /// A SELU from options.
  explicit SELUImpl(const SELUOptions& options = {}) : Cloneable("SELU"), options(options) {}
  void reset() override {}
  /// functional::selu(x, options).
  Tensor forward(const Tensor& x) { return functional::selu(x, options); }
  /// The options the layer was built with.
  SELUOptions options;
};
/// The holder of SELUImpl.
VNN_MODULE(SELU);

/// CELU (torch.nn.CELU).
class CELUImpl : public Cloneable<CELUImpl> {
 public:
  /// A CELU from options.
  explicit CELUImpl(const CELUOptions& options = {}) : Cloneable("CELU"), options(options) {}
  void reset() override {}
  /// functional::celu(x, options).
  Tensor forward(const Tensor& x) { return functional::celu(x, options); }
  std::string describe() const override;
  /// The options the layer was built with.
  CELUOptions options;
};
/// The holder of CELUImpl.
VNN_MODULE(CELU);

/// The gated linear unit (torch.nn.GLU).
class GLUImpl : public Cloneable<GLUImpl> {
 public:
  /// A GLU from options.
  explicit GLUImpl(const GLUOptions& options = {}) : Cloneable("GLU"), options(options) {}
  void reset() override {}
  /// functional::glu(x, options).
  Tensor forward(const Tensor& x) { return functional::glu(x, options); }
  std::string describe() const override;
  /// The options the layer was built with.
  GLUOptions options;
};
/// The holder of GLUImpl.
VNN_MODULE(GLU);

/// Hardtanh (torch.nn.Hardtanh).
class HardtanhImpl : public Cloneable<HardtanhImpl> {
 public:
  /// A Hardtanh from options (ValueError when max_val < min_val).
  explicit HardtanhImpl(const HardtanhOptions& options = {});
  void reset() override {}
  /// functional::hardtanh(x, options).
  Tensor forward(const Tensor& x) { return functional::hardtanh(x, options); }
  std::string describe() const override;
  /// The options the layer was built with.
  HardtanhOptions options;
};
/// The holder of HardtanhImpl.
VNN_MODULE(Hardtanh);

/// ReLU6 (torch.nn.ReLU6).
class ReLU6Impl : public Cloneable<ReLU6Impl> {
 public:
  /// A ReLU6 from options.
  explicit ReLU6Impl(const ReLU6Options& options = {}) : Cloneable("ReLU6"), options(options) {}
  void reset() override {}
  /// functional::relu6(x, options).
  Tensor forward(const Tensor& x) { return functional::relu6(x, options); }
  /// The options the layer was built with.
  ReLU6Options options;
};
/// The holder of ReLU6Impl.
VNN_MODULE(ReLU6);

/// Hardswish (torch.nn.Hardswish).
class HardswishImpl : public Cloneable<HardswishImpl> {
 public:
  /// A Hardswish layer.
  HardswishImpl() : Cloneable("Hardswish") {}
  void reset() override {}
  /// functional::hardswish(x).
  Tensor forward(const Tensor& x) { return functional::hardswish(x); }
};
/// The holder of HardswishImpl.
VNN_MODULE(Hardswish);

/// Hardsigmoid (torch.nn.Hardsigmoid).
class HardsigmoidImpl : public Cloneable<HardsigmoidImpl> {
 public:
  /// A Hardsigmoid layer.
  HardsigmoidImpl() : Cloneable("Hardsigmoid") {}
  void reset() override {}
  /// functional::hardsigmoid(x).
  Tensor forward(const Tensor& x) { return functional::hardsigmoid(x); }
};
/// The holder of HardsigmoidImpl.
VNN_MODULE(Hardsigmoid);

/// Hardshrink (torch.nn.Hardshrink).
class HardshrinkImpl : public Cloneable<HardshrinkImpl> {
 public:
  /// A Hardshrink from options.
  explicit HardshrinkImpl(const HardshrinkOptions& options = {}) : Cloneable("Hardshrink"), options(options) {}
  void reset() override {}
  /// functional::hardshrink(x, options).
  Tensor forward(const Tensor& x) { return functional::hardshrink(x, options); }
  std::string describe() const override;
  /// The options the layer was built with.
  HardshrinkOptions options;
};
/// The holder of HardshrinkImpl.
VNN_MODULE(Hardshrink);

/// Softshrink (torch.nn.Softshrink).
class SoftshrinkImpl : public Cloneable<SoftshrinkImpl> {
 public:
  /// A Softshrink from options (ValueError for lambda < 0).
  explicit SoftshrinkImpl(const SoftshrinkOptions& options = {});
  void reset() override {}
  /// functional::softshrink(x, options).
  Tensor forward(const Tensor& x) { return functional::softshrink(x, options); }
  std::string describe() const override;
  /// The options the layer was built with.
  SoftshrinkOptions options;
};
/// The holder of SoftshrinkImpl.
VNN_MODULE(Softshrink);

/// Tanhshrink (torch.nn.Tanhshrink).
class TanhshrinkImpl : public Cloneable<TanhshrinkImpl> {
 public:
  /// A Tanhshrink layer.
  TanhshrinkImpl() : Cloneable("Tanhshrink") {}
  void reset() override {}
  /// functional::tanhshrink(x).
  Tensor forward(const Tensor& x) { return functional::tanhshrink(x); }
};
/// The holder of TanhshrinkImpl.
VNN_MODULE(Tanhshrink);

/// Threshold (torch.nn.Threshold).
class ThresholdImpl : public Cloneable<ThresholdImpl> {
 public:
  /// A Threshold from options.
  explicit ThresholdImpl(const ThresholdOptions& options) : Cloneable("Threshold"), options(options) {}
  /// Threshold(threshold, value).
  ThresholdImpl(double threshold, double value) : ThresholdImpl(ThresholdOptions(threshold, value)) {}
  void reset() override {}
  /// functional::threshold(x, options).
  Tensor forward(const Tensor& x) { return functional::threshold(x, options); }
  std::string describe() const override;
  /// The options the layer was built with.
  ThresholdOptions options;
};
/// The holder of ThresholdImpl.
VNN_MODULE(Threshold);

/// LogSigmoid (torch.nn.LogSigmoid).
class LogSigmoidImpl : public Cloneable<LogSigmoidImpl> {
 public:
  /// A LogSigmoid layer.
  LogSigmoidImpl() : Cloneable("LogSigmoid") {}
  void reset() override {}
  /// functional::logsigmoid(x).
  Tensor forward(const Tensor& x) { return functional::logsigmoid(x); }
};
/// The holder of LogSigmoidImpl.
VNN_MODULE(LogSigmoid);

/// Softplus (torch.nn.Softplus).
class SoftplusImpl : public Cloneable<SoftplusImpl> {
 public:
  /// A Softplus from options.
  explicit SoftplusImpl(const SoftplusOptions& options = {}) : Cloneable("Softplus"), options(options) {}
  void reset() override {}
  /// functional::softplus(x, options).
  Tensor forward(const Tensor& x) { return functional::softplus(x, options); }
  std::string describe() const override;
  /// The options the layer was built with.
  SoftplusOptions options;
};
/// The holder of SoftplusImpl.
VNN_MODULE(Softplus);

/// Softsign (torch.nn.Softsign).
class SoftsignImpl : public Cloneable<SoftsignImpl> {
 public:
  /// A Softsign layer.
  SoftsignImpl() : Cloneable("Softsign") {}
  void reset() override {}
  /// functional::softsign(x).
  Tensor forward(const Tensor& x) { return functional::softsign(x); }
};
/// The holder of SoftsignImpl.
VNN_MODULE(Softsign);

/// Softmin over a dim (torch.nn.Softmin).
class SoftminImpl : public Cloneable<SoftminImpl> {
 public:
  /// A Softmin over options.dim().
  explicit SoftminImpl(const SoftminOptions& options) : Cloneable("Softmin"), options(options) {}
  /// Softmin(dim).
  explicit SoftminImpl(int64_t dim) : SoftminImpl(SoftminOptions(dim)) {}
  void reset() override {}
  /// functional::softmin(x, dim).
  Tensor forward(const Tensor& x) { return functional::softmin(x, options.dim()); }
  /// The options the layer was built with.
  SoftminOptions options;
};
/// The holder of SoftminImpl.
VNN_MODULE(Softmin);

/// Mish (torch.nn.Mish).
class MishImpl : public Cloneable<MishImpl> {
 public:
  /// A Mish layer.
  MishImpl() : Cloneable("Mish") {}
  void reset() override {}
  /// functional::mish(x).
  Tensor forward(const Tensor& x) { return functional::mish(x); }
};
/// The holder of MishImpl.
VNN_MODULE(Mish);

/// PReLU with a learned slope (torch.nn.PReLU); its parameter is "weight" [num_parameters].
class PReLUImpl : public Cloneable<PReLUImpl> {
 public:
  /// A PReLU from options (ValueError for num_parameters < 1).
  explicit PReLUImpl(const PReLUOptions& options = {});
  /// Fills weight with options.init().
  void reset() override;
  /// functional::prelu(x, weight).
  Tensor forward(const Tensor& x) { return functional::prelu(x, weight); }
  std::string describe() const override;
  /// The options the layer was built with.
  PReLUOptions options;
  /// The slopes, [num_parameters].
  Tensor weight;
};
/// The holder of PReLUImpl.
VNN_MODULE(PReLU);

/// Randomized leaky ReLU (torch.nn.RReLU): random slopes in training, their mean in eval.
class RReLUImpl : public Cloneable<RReLUImpl> {
 public:
  /// An RReLU from options (ValueError unless 0 <= lower <= upper).
  explicit RReLUImpl(const RReLUOptions& options = {});
  void reset() override {}
  /// functional::rrelu(x, options with training = is_training()).
  Tensor forward(const Tensor& x);
  std::string describe() const override;
  /// The options the layer was built with.
  RReLUOptions options;
};
/// The holder of RReLUImpl.
VNN_MODULE(RReLU);

/// Softmax over the channels of each spatial location (torch.nn.Softmax2d).
class Softmax2dImpl : public Cloneable<Softmax2dImpl> {
 public:
  /// A Softmax2d layer.
  Softmax2dImpl() : Cloneable("Softmax2d") {}
  void reset() override {}
  /// functional::softmax2d(x).
  Tensor forward(const Tensor& x) { return functional::softmax2d(x); }
};
/// The holder of Softmax2dImpl.
VNN_MODULE(Softmax2d);

}  // namespace vnn::nn

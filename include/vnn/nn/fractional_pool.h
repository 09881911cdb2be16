// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// FractionalMaxPool2d / FractionalMaxPool3d (torch.nn.FractionalMaxPool*d)
// and their functional forms: max pooling over pseudo-random windows whose
// starts follow PyTorch's interval rule from one sample u in [0, 1) per
// plane and dim (drawn from a vnn::Generator, or given as _random_samples
// [N, C, dims] for reproducible pools):
//   vnn::nn::FractionalMaxPool2d pool(vnn::nn::FractionalMaxPool2dOptions(3).output_ratio({0.5, 0.5}));
//   auto [y, idx] = F::fractional_max_pool2d_with_indices(x, F::FractionalMaxPool2dFuncOptions(2).output_size(Size2(5, 4)));
// The windows become one int64 gather index on the host; gather + max over
// the taps give values and indices on every device, and their backward.
#pragma once
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "vnn/nn/conv3d.h"
#include "vnn/nn/module.h"
#include "vnn/nn/options.h"
#include "vnn/random.h"

namespace vnn::nn {

/// Options of FractionalMaxPool2d / 3d (S: Size2 or Size3): kernel_size and either output_size or output_ratio.
template <class S>
struct FractionalMaxPoolOptions {
  /// Pools with `kernel_size` windows; implicit, as LibTorch's.
  FractionalMaxPoolOptions(S kernel_size) : kernel_size_(kernel_size) {}  // NOLINT: implicit, as LibTorch's
  /// Window size.
  VNN_ARG(S, kernel_size);
  /// The output's spatial sizes (give this or output_ratio).
  VNN_ARG(std::optional<S>, output_size) = std::nullopt;
  /// The output's sizes as fractions of the input's, in (0, 1): one value or one per dim.
  VNN_ARG(std::optional<std::vector<double>>, output_ratio) = std::nullopt;
  /// The samples u [N, C, dims] in [0, 1) that place the windows (undefined: drawn from the generator).
  VNN_ARG(Tensor, _random_samples);
};
/// Options of FractionalMaxPool2d.
using FractionalMaxPool2dOptions = FractionalMaxPoolOptions<Size2>;
/// Options of FractionalMaxPool3d.
using FractionalMaxPool3dOptions = FractionalMaxPoolOptions<Size3>;

namespace functional {
/// Options of fractional_max_pool2d.
using FractionalMaxPool2dFuncOptions = FractionalMaxPool2dOptions;
/// Options of fractional_max_pool3d.
using FractionalMaxPool3dFuncOptions = FractionalMaxPool3dOptions;
/// Fractional max pooling of [N, C, H, W] (or [C, H, W]) with int64 indices h * W + w; `gen` draws the samples
/// when options._random_samples() is undefined (the default generator when null).
std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(const Tensor& input,
                                                              const FractionalMaxPool2dFuncOptions& options,
                                                              Generator* gen = nullptr);
/// The values of fractional_max_pool2d_with_indices.
Tensor fractional_max_pool2d(const Tensor& input, const FractionalMaxPool2dFuncOptions& options,
                             Generator* gen = nullptr);
/// Fractional max pooling of [N, C, D, H, W] (or [C, D, H, W]) with int64 indices d * H * W + h * W + w.
std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(const Tensor& input,
                                                              const FractionalMaxPool3dFuncOptions& options,
                                                              Generator* gen = nullptr);
/// The values of fractional_max_pool3d_with_indices.
Tensor fractional_max_pool3d(const Tensor& input, const FractionalMaxPool3dFuncOptions& options,
                             Generator* gen = nullptr);
}  // namespace functional

/// Max pooling over pseudo-random windows of [N, C, H, W] (torch.nn.FractionalMaxPool2d).
class FractionalMaxPool2dImpl : public Cloneable<FractionalMaxPool2dImpl> {
 public:
  /// A FractionalMaxPool2d from options.
  explicit FractionalMaxPool2dImpl(const FractionalMaxPool2dOptions& options)
      : Cloneable("FractionalMaxPool2d"), options(options) {}
  void reset() override {}
  /// functional::fractional_max_pool2d(x, options).
  Tensor forward(const Tensor& x) { return functional::fractional_max_pool2d(x, options); }
  /// The values and their int64 indices.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& x) {
    return functional::fractional_max_pool2d_with_indices(x, options);
  }
  /// The options the layer was built with.
  FractionalMaxPool2dOptions options;
};
/// The holder of FractionalMaxPool2dImpl.
VNN_MODULE(FractionalMaxPool2d);

/// Max pooling over pseudo-random windows of [N, C, D, H, W] (torch.nn.FractionalMaxPool3d).
class FractionalMaxPool3dImpl : public Cloneable<FractionalMaxPool3dImpl> {
 public:
  /// A FractionalMaxPool3d from options.
  explicit FractionalMaxPool3dImpl(const FractionalMaxPool3dOptions& options)
      : Cloneable("FractionalMaxPool3d"), options(options) {}
  void reset() override {}
  /// functional::fractional_max_pool3d(x, options).
  Tensor forward(const Tensor& x) { return functional::fractional_max_pool3d(x, options); }
  /// The values and their int64 indices.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& x) {
    return functional::fractional_max_pool3d_with_indices(x, options);
  }
  /// The options the layer was built with.
  FractionalMaxPool3dOptions options;
};
/// The holder of FractionalMaxPool3dImpl.
VNN_MODULE(FractionalMaxPool3d);

}  // namespace vnn::nn

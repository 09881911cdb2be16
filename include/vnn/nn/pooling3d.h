// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// 3-D pooling (MaxPool3d, AvgPool3d, AdaptiveAvgPool3d, AdaptiveMaxPool3d),
// MaxUnpool1d / 2d / 3d and LPPool1d / 2d / 3d, with LibTorch's options and
// functional forms:
//   vnn::nn::MaxPool3d pool(vnn::nn::MaxPool3dOptions(2).stride(2).ceil_mode(true));
//   auto [y, idx] = pool->forward_with_indices(x);
//   auto up = F::max_unpool3d(y, idx, F::MaxUnpool3dFuncOptions(2).stride(2));
// A box window is separable: the 3-D pools run the 2-D pool op over
// (H, W) of every depth, then over depth ([N, C, D, OH*OW] with a (kd, 1)
// window), so they have its kernels on every device and its backward; max
// indices (d * H * W + h * W + w, PyTorch's) are joined from the two passes.
// ceil_mode extends the input past its end (by -inf / zeros), and the
// average divides the window sums by PyTorch's divisors. MaxUnpool is a
// scatter into zeros; LPPool is (avg_pool(x^p) * window size)^(1/p).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "vnn/nn/conv3d.h"
#include "vnn/nn/module.h"
#include "vnn/nn/options.h"

namespace vnn::nn {

/// Options of MaxPool3d; a stride of 0 (the default) means the kernel size, as PyTorch's None.
struct MaxPool3dOptions {
  /// A pool over `kernel_size` windows; implicit, as LibTorch's.
  MaxPool3dOptions(Size3 kernel_size) : kernel_size_(kernel_size) {}  // NOLINT: implicit, as LibTorch's
  /// Window depth, height and width.
  VNN_ARG(Size3, kernel_size);
  /// Step between windows (0: the kernel size).
  VNN_ARG(Size3, stride) = 0;
  /// Implicit -inf padding on each side, at most half the kernel (default 0).
  VNN_ARG(Size3, padding) = 0;
  /// Spacing between window taps (default 1).
  VNN_ARG(Size3, dilation) = 1;
  /// Output sizes rounded up (a last window starting inside the input or left padding); default false.
  VNN_ARG(bool, ceil_mode) = false;
};

/// Options of AvgPool3d; a stride of 0 (the default) means the kernel size.
struct AvgPool3dOptions {
  /// A pool over `kernel_size` windows; implicit, as LibTorch's.
  AvgPool3dOptions(Size3 kernel_size) : kernel_size_(kernel_size) {}  // NOLINT: implicit, as LibTorch's
  /// Window depth, height and width.
  VNN_ARG(Size3, kernel_size);
  /// Step between windows (0: the kernel size).
  VNN_ARG(Size3, stride) = 0;
  /// Zero padding on each side, at most half the kernel (default 0).
  VNN_ARG(Size3, padding) = 0;
  /// Output sizes rounded up (default false).
  VNN_ARG(bool, ceil_mode) = false;
  /// Whether padded zeros count in the divisor (default true).
  VNN_ARG(bool, count_include_pad) = true;
  /// A divisor used instead of the window's size (none: the window's; must be non-zero).
  VNN_ARG(std::optional<int64_t>, divisor_override) = std::nullopt;
};

/// Options of AdaptiveAvgPool3d and AdaptiveMaxPool3d: the output size.
struct AdaptiveAvgPool3dOptions {
  /// Pools to `output_size` whatever the input size; implicit, as LibTorch's.
  AdaptiveAvgPool3dOptions(Size3 output_size) : output_size_(output_size) {}  // NOLINT: implicit, as LibTorch's
  /// Output depth, height and width.
  VNN_ARG(Size3, output_size);
};
/// Options of AdaptiveMaxPool3d (those of AdaptiveAvgPool3d).
using AdaptiveMaxPool3dOptions = AdaptiveAvgPool3dOptions;

/// Options of MaxUnpool1d / 2d / 3d (S: int64_t, Size2, Size3); a stride of 0 (the default) means the kernel size.
template <class S>
struct MaxUnpoolOptions {
  /// Undoes a pool over `kernel_size` windows; implicit, as LibTorch's.
  MaxUnpoolOptions(S kernel_size) : kernel_size_(kernel_size) {}  // NOLINT: implicit, as LibTorch's
  /// The pool's window size.
  VNN_ARG(S, kernel_size);
  /// The pool's stride (0: the kernel size).
  VNN_ARG(S, stride) = 0;
  /// The pool's padding.
  VNN_ARG(S, padding) = 0;
};
/// Options of MaxUnpool1d.
using MaxUnpool1dOptions = MaxUnpoolOptions<int64_t>;
/// Options of MaxUnpool2d.
using MaxUnpool2dOptions = MaxUnpoolOptions<Size2>;
/// Options of MaxUnpool3d.
using MaxUnpool3dOptions = MaxUnpoolOptions<Size3>;

/// Options of LPPool1d / 2d / 3d (S: int64_t, Size2, Size3); a stride of 0 (the default) means the kernel size.
template <class S>
struct LPPoolOptions {
  /// The `norm_type`-norm over `kernel_size` windows.
  LPPoolOptions(double norm_type, S kernel_size) : norm_type_(norm_type), kernel_size_(kernel_size) {}
  /// p of the p-norm (1: sum pooling; large p tends to max pooling).
  VNN_ARG(double, norm_type);
  /// Window size.
  VNN_ARG(S, kernel_size);
  /// Step between windows (0: the kernel size).
  VNN_ARG(S, stride) = 0;
  /// Output sizes rounded up (default false).
  VNN_ARG(bool, ceil_mode) = false;
};
/// Options of LPPool1d.
using LPPool1dOptions = LPPoolOptions<int64_t>;
/// Options of LPPool2d.
using LPPool2dOptions = LPPoolOptions<Size2>;
/// Options of LPPool3d.
using LPPool3dOptions = LPPoolOptions<Size3>;

namespace functional {
/// Options of max_pool3d.
using MaxPool3dFuncOptions = MaxPool3dOptions;
/// Options of avg_pool3d.
using AvgPool3dFuncOptions = AvgPool3dOptions;
/// Options of adaptive_avg_pool3d.
using AdaptiveAvgPool3dFuncOptions = AdaptiveAvgPool3dOptions;
/// Options of adaptive_max_pool3d.
using AdaptiveMaxPool3dFuncOptions = AdaptiveMaxPool3dOptions;
/// Options of max_unpool1d / 2d / 3d: the pool's kernel_size, stride, padding, and the output size (none: the
/// pool's input size, (in - 1) * stride - 2 * padding + kernel_size).
template <class S>
struct MaxUnpoolFuncOptions {
  /// Unpools with `kernel_size` windows; implicit, as LibTorch's.
  MaxUnpoolFuncOptions(S kernel_size) : kernel_size_(kernel_size) {}  // NOLINT: implicit, as LibTorch's
  /// The pool's window size.
  VNN_ARG(S, kernel_size);
  /// The pool's stride (0: the kernel size).
  VNN_ARG(S, stride) = 0;
  /// The pool's padding.
  VNN_ARG(S, padding) = 0;
  /// The spatial output sizes (or the whole output shape).
  VNN_ARG(std::optional<std::vector<int64_t>>, output_size) = std::nullopt;
};
/// Options of max_unpool1d.
using MaxUnpool1dFuncOptions = MaxUnpoolFuncOptions<int64_t>;
/// Options of max_unpool2d.
using MaxUnpool2dFuncOptions = MaxUnpoolFuncOptions<Size2>;
/// Options of max_unpool3d.
using MaxUnpool3dFuncOptions = MaxUnpoolFuncOptions<Size3>;
/// Options of lp_pool1d.
using LPPool1dFuncOptions = LPPool1dOptions;
/// Options of lp_pool2d.
using LPPool2dFuncOptions = LPPool2dOptions;
/// Options of lp_pool3d.
using LPPool3dFuncOptions = LPPool3dOptions;

/// Max pooling of [N, C, D, H, W] (or [C, D, H, W]).
Tensor max_pool3d(const Tensor& input, const MaxPool3dFuncOptions& options);
/// Max pooling with int64 indices d * H * W + h * W + w into each input volume.
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, const MaxPool3dFuncOptions& options);
/// Average pooling of [N, C, D, H, W] (or [C, D, H, W]).
Tensor avg_pool3d(const Tensor& input, const AvgPool3dFuncOptions& options);
/// Adaptive average pooling to options.output_size(), PyTorch's windows.
Tensor adaptive_avg_pool3d(const Tensor& input, const AdaptiveAvgPool3dFuncOptions& options);
/// Adaptive max pooling to options.output_size().
Tensor adaptive_max_pool3d(const Tensor& input, const AdaptiveMaxPool3dFuncOptions& options);
/// Adaptive max pooling with int64 indices d * H * W + h * W + w.
std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool3dFuncOptions& options);
/// The partial inverse of max_pool1d: input's values written at `indices` (into L) of a zero output.
Tensor max_unpool1d(const Tensor& input, const Tensor& indices, const MaxUnpool1dFuncOptions& options);
/// The partial inverse of max_pool2d (indices h * W + w).
Tensor max_unpool2d(const Tensor& input, const Tensor& indices, const MaxUnpool2dFuncOptions& options);
/// The partial inverse of max_pool3d (indices d * H * W + h * W + w).
Tensor max_unpool3d(const Tensor& input, const Tensor& indices, const MaxUnpool3dFuncOptions& options);
/// Power-average pooling of [N, C, L] (or [C, L]).
Tensor lp_pool1d(const Tensor& input, const LPPool1dFuncOptions& options);
/// Power-average pooling of [N, C, H, W] (or [C, H, W]).
Tensor lp_pool2d(const Tensor& input, const LPPool2dFuncOptions& options);
/// Power-average pooling of [N, C, D, H, W] (or [C, D, H, W]).
Tensor lp_pool3d(const Tensor& input, const LPPool3dFuncOptions& options);
}  // namespace functional

/// The maximum over each window of [N, C, D, H, W] (torch.nn.MaxPool3d).
class MaxPool3dImpl : public Cloneable<MaxPool3dImpl> {
 public:
  /// A MaxPool3d from options.
  explicit MaxPool3dImpl(const MaxPool3dOptions& options) : Cloneable("MaxPool3d"), options(options) {}
  /// MaxPool3d(kernel_size) with the default options.
  explicit MaxPool3dImpl(Size3 kernel_size) : MaxPool3dImpl(MaxPool3dOptions(kernel_size)) {}
  void reset() override {}
  /// functional::max_pool3d(x, options).
  Tensor forward(const Tensor& x) { return functional::max_pool3d(x, options); }
  /// The values and their int64 indices (return_indices).
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& x) {
    return functional::max_pool3d_with_indices(x, options);
  }
  /// The options the layer was built with.
  MaxPool3dOptions options;
};
/// The holder of MaxPool3dImpl.
VNN_MODULE(MaxPool3d);

/// The mean over each window of [N, C, D, H, W] (torch.nn.AvgPool3d).
class AvgPool3dImpl : public Cloneable<AvgPool3dImpl> {
 public:
  /// An AvgPool3d from options.
  explicit AvgPool3dImpl(const AvgPool3dOptions& options) : Cloneable("AvgPool3d"), options(options) {}
  /// AvgPool3d(kernel_size) with the default options.
  explicit AvgPool3dImpl(Size3 kernel_size) : AvgPool3dImpl(AvgPool3dOptions(kernel_size)) {}
  void reset() override {}
  /// functional::avg_pool3d(x, options).
  Tensor forward(const Tensor& x) { return functional::avg_pool3d(x, options); }
  /// The options the layer was built with.
  AvgPool3dOptions options;
};
/// The holder of AvgPool3dImpl.
VNN_MODULE(AvgPool3d);

/// Averages [N, C, D, H, W] into output_size bins (torch.nn.AdaptiveAvgPool3d).
class AdaptiveAvgPool3dImpl : public Cloneable<AdaptiveAvgPool3dImpl> {
 public:
  /// An AdaptiveAvgPool3d from options.
  explicit AdaptiveAvgPool3dImpl(const AdaptiveAvgPool3dOptions& options)
      : Cloneable("AdaptiveAvgPool3d"), options(options) {}
  /// AdaptiveAvgPool3d(output_size).
  explicit AdaptiveAvgPool3dImpl(Size3 output_size) : AdaptiveAvgPool3dImpl(AdaptiveAvgPool3dOptions(output_size)) {}
  void reset() override {}
  /// functional::adaptive_avg_pool3d(x, options).
  Tensor forward(const Tensor& x) { return functional::adaptive_avg_pool3d(x, options); }
  /// The options the layer was built with.
  AdaptiveAvgPool3dOptions options;
};
/// The holder of AdaptiveAvgPool3dImpl.
VNN_MODULE(AdaptiveAvgPool3d);

/// The maximum of [N, C, D, H, W] over output_size bins (torch.nn.AdaptiveMaxPool3d).
class AdaptiveMaxPool3dImpl : public Cloneable<AdaptiveMaxPool3dImpl> {
 public:
  /// An AdaptiveMaxPool3d from options.
  explicit AdaptiveMaxPool3dImpl(const AdaptiveMaxPool3dOptions& options)
      : Cloneable("AdaptiveMaxPool3d"), options(options) {}
  /// AdaptiveMaxPool3d(output_size).
  explicit AdaptiveMaxPool3dImpl(Size3 output_size) : AdaptiveMaxPool3dImpl(AdaptiveMaxPool3dOptions(output_size)) {}
  void reset() override {}
  /// functional::adaptive_max_pool3d(x, options).
  Tensor forward(const Tensor& x) { return functional::adaptive_max_pool3d(x, options); }
  /// The values and their int64 indices.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& x) {
    return functional::adaptive_max_pool3d_with_indices(x, options);
  }
  /// The options the layer was built with.
  AdaptiveMaxPool3dOptions options;
};
/// The holder of AdaptiveMaxPool3dImpl.
VNN_MODULE(AdaptiveMaxPool3d);

/// The shared body of MaxUnpool1d / 2d / 3d (Derived: the module, S: its size type).
template <class Derived, class S>
class MaxUnpoolNdImpl : public Cloneable<Derived> {
 public:
  /// The module `type_name` from options.
  MaxUnpoolNdImpl(const char* type_name, const MaxUnpoolOptions<S>& options)
      : Cloneable<Derived>(type_name), options(options) {}
  /// Nothing to rebuild: no parameters.
  void reset() override {}
  /// Input's values written at `indices` of a zero output; output_size: its spatial sizes (none: the pool's input).
  Tensor forward(const Tensor& input, const Tensor& indices,
                 const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
  /// The options the layer was built with.
  MaxUnpoolOptions<S> options;
};

/// The shared body of LPPool1d / 2d / 3d (Derived: the module, S: its size type).
template <class Derived, class S>
class LPPoolNdImpl : public Cloneable<Derived> {
 public:
  /// The module `type_name` from options.
  LPPoolNdImpl(const char* type_name, const LPPoolOptions<S>& options)
      : Cloneable<Derived>(type_name), options(options) {}
  /// Nothing to rebuild: no parameters.
  void reset() override {}
  /// The power-average pooling of x.
  Tensor forward(const Tensor& x);
  /// The options the layer was built with.
  LPPoolOptions<S> options;
};

/// The 1-D partial inverse of max pooling (torch.nn.MaxUnpool1d).
class MaxUnpool1dImpl : public MaxUnpoolNdImpl<MaxUnpool1dImpl, int64_t> {
 public:
  /// A MaxUnpool1d from options.
  explicit MaxUnpool1dImpl(const MaxUnpool1dOptions& options) : MaxUnpoolNdImpl("MaxUnpool1d", options) {}
  /// MaxUnpool1d(kernel_size) with the default options.
  explicit MaxUnpool1dImpl(int64_t kernel_size) : MaxUnpool1dImpl(MaxUnpool1dOptions(kernel_size)) {}
};
/// The holder of MaxUnpool1dImpl.
VNN_MODULE(MaxUnpool1d);

/// The 2-D partial inverse of max pooling (torch.nn.MaxUnpool2d).
class MaxUnpool2dImpl : public MaxUnpoolNdImpl<MaxUnpool2dImpl, Size2> {
 public:
  /// A MaxUnpool2d from options.
  explicit MaxUnpool2dImpl(const MaxUnpool2dOptions& options) : MaxUnpoolNdImpl("MaxUnpool2d", options) {}
  /// MaxUnpool2d(kernel_size) with the default options.
  explicit MaxUnpool2dImpl(Size2 kernel_size) : MaxUnpool2dImpl(MaxUnpool2dOptions(kernel_size)) {}
};
/// The holder of MaxUnpool2dImpl.
VNN_MODULE(MaxUnpool2d);

/// The 3-D partial inverse of max pooling (torch.nn.MaxUnpool3d).
class MaxUnpool3dImpl : public MaxUnpoolNdImpl<MaxUnpool3dImpl, Size3> {
 public:
  /// A MaxUnpool3d from options.
  explicit MaxUnpool3dImpl(const MaxUnpool3dOptions& options) : MaxUnpoolNdImpl("MaxUnpool3d", options) {}
  /// MaxUnpool3d(kernel_size) with the default options.
  explicit MaxUnpool3dImpl(Size3 kernel_size) : MaxUnpool3dImpl(MaxUnpool3dOptions(kernel_size)) {}
};
/// The holder of MaxUnpool3dImpl.
VNN_MODULE(MaxUnpool3d);

/// The 1-D power-average pooling (torch.nn.LPPool1d).
class LPPool1dImpl : public LPPoolNdImpl<LPPool1dImpl, int64_t> {
 public:
  /// A LPPool1d from options.
  explicit LPPool1dImpl(const LPPool1dOptions& options) : LPPoolNdImpl("LPPool1d", options) {}
};
/// The holder of LPPool1dImpl.
VNN_MODULE(LPPool1d);

/// The 2-D power-average pooling (torch.nn.LPPool2d).
class LPPool2dImpl : public LPPoolNdImpl<LPPool2dImpl, Size2> {
 public:
  /// A LPPool2d from options.
  explicit LPPool2dImpl(const LPPool2dOptions& options) : LPPoolNdImpl("LPPool2d", options) {}
};
/// The holder of LPPool2dImpl.
VNN_MODULE(LPPool2d);

/// The 3-D power-average pooling (torch.nn.LPPool3d).
class LPPool3dImpl : public LPPoolNdImpl<LPPool3dImpl, Size3> {
 public:
  /// A LPPool3d from options.
  explicit LPPool3dImpl(const LPPool3dOptions& options) : LPPoolNdImpl("LPPool3d", options) {}
};
/// The holder of LPPool3dImpl.
VNN_MODULE(LPPool3d);

}  // namespace vnn::nn

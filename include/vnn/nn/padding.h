// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Padding layers (torch.nn.ZeroPad1d/2d/3d, ConstantPad*, ReflectionPad*,
// ReplicationPad*, CircularPad*), with LibTorch's options:
//   vnn::nn::ReflectionPad2d pad(vnn::nn::ReflectionPad2dOptions({1, 1, 2, 0}));   // or ReflectionPad2d(2)
//   vnn::nn::ConstantPad1d cp(vnn::nn::ConstantPad1dOptions(3, 0.5));
// The padding lists pairs from the last dim backwards ({left, right, top,
// bottom, front, back}); one number pads every side. A D-d layer takes
// inputs of D + 1 dims (unbatched) or D + 2 dims ([N, C, ...]). Each runs
// functional::pad (differentiable, every device).
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "vnn/nn/functional.h"
#include "vnn/nn/module.h"
#include "vnn/nn/options.h"

namespace vnn::nn {

/// 2 * D pads (LibTorch's ExpandingArray<2 * D>): one number for every side, or the 2 * D values.
template <size_t D>
struct PadArray {
  /// The pads as given, (before, after) pairs from the last dim backwards.
  std::vector<int64_t> values;
  /// Every side padded by `v`.
  PadArray(int64_t v) : values(2 * D, v) {}  // NOLINT: implicit, as LibTorch's
  /// The 2 * D pads (ValueError for another count).
  PadArray(std::initializer_list<int64_t> v) : PadArray(std::vector<int64_t>(v)) {}  // NOLINT: implicit
  /// The 2 * D pads (ValueError for another count).
  PadArray(std::vector<int64_t> v);  // NOLINT: implicit, as LibTorch's
};

/// Options of the constant-padding layers: padding and the fill value.
template <size_t D>
struct ConstantPadOptions {
  /// Pads `padding` filled with `value`.
  ConstantPadOptions(PadArray<D> padding, double value) : padding_(std::move(padding)), value_(value) {}
  /// The pads ((before, after) pairs from the last dim backwards).
  VNN_ARG(PadArray<D>, padding);
  /// The fill value.
  VNN_ARG(double, value);

 public:
  /// kConstant.
  PadMode pad_mode() const { return kConstant; }
  /// value().
  double pad_value() const { return value_; }
};

/// Options of the padding layers of one mode (zero, reflection, replication, circular): the padding.
template <size_t D, PadMode M>
struct ModePadOptions {
  /// Pads `padding`.
  ModePadOptions(PadArray<D> padding) : padding_(std::move(padding)) {}  // NOLINT: implicit, as LibTorch's
  /// The pads ((before, after) pairs from the last dim backwards).
  VNN_ARG(PadArray<D>, padding);

 public:
  /// The layer's mode.
  PadMode pad_mode() const { return M; }
  /// 0 (the fill of zero padding).
  double pad_value() const { return 0.0; }
};
/// Options of ZeroPad{1,2,3}d.
template <size_t D>
using ZeroPadOptions = ModePadOptions<D, PadMode::constant>;
/// Options of ReflectionPad{1,2,3}d.
template <size_t D>
using ReflectionPadOptions = ModePadOptions<D, PadMode::reflect>;
/// Options of ReplicationPad{1,2,3}d.
template <size_t D>
using ReplicationPadOptions = ModePadOptions<D, PadMode::replicate>;
/// Options of CircularPad{1,2,3}d.
template <size_t D>
using CircularPadOptions = ModePadOptions<D, PadMode::circular>;

namespace detail {
/// The forward of every padding layer: checks that x has D + 1 or D + 2 dims, then functional::pad.
Tensor pad_layer_forward(const Tensor& x, const char* layer, int D, const std::vector<int64_t>& pads, PadMode mode,
                         double value);
/// "ReflectionPad2d((1, 1, 2, 0))".
std::string pad_layer_describe(const std::string& layer, const std::vector<int64_t>& pads, PadMode mode,
                               double value);
}  // namespace detail

/// The base of the padding layers: Derived names the layer, Options carries the pads and the mode.
template <size_t D, class Derived, class Options>
class PadImplBase : public Cloneable<Derived> {
 public:
  /// The layer named `name` from options.
  PadImplBase(const char* name, const Options& options) : Cloneable<Derived>(name), options(options) {}
  /// Nothing to rebuild: a padding layer has no parameters.
  void reset() override {}
  /// functional::pad(x, padding, the layer's mode, value) for x of D + 1 or D + 2 dims (ShapeError otherwise).
  Tensor forward(const Tensor& x) {
    return detail::pad_layer_forward(x, this->type_name().c_str(), int(D), options.padding().values,
                                     options.pad_mode(), options.pad_value());
  }
  /// "ReflectionPad2d((1, 1, 2, 0))", as PyTorch prints the layer.
  std::string describe() const override {
    return detail::pad_layer_describe(this->type_name(), options.padding().values, options.pad_mode(),
                                      options.pad_value());
  }
  /// The options the layer was built with.
  Options options;
};

// One class per layer, as LibTorch's (ReflectionPad2dImpl ...), and its holder.
/// Declares torch.nn's padding layer Name over D dims (NameImpl, NameOptions and its holder).
#define VNN_PAD_LAYER(Name, D, Opts)                                                                  \
  /** torch.nn.Name. */                                                                               \
  class Name##Impl : public PadImplBase<D, Name##Impl, Opts<D>> {                                     \
   public:                                                                                            \
    /** The layer from options. */                                                                    \
    explicit Name##Impl(const Opts<D>& options) : PadImplBase<D, Name##Impl, Opts<D>>(#Name, options) {} \
    /** The layer from the pads (and the value of a constant pad), as LibTorch's. */                 \
    template <class... A, class = std::enable_if_t<std::is_constructible_v<Opts<D>, PadArray<D>, A...>>> \
    explicit Name##Impl(PadArray<D> padding, A... rest)                                              \
        : PadImplBase<D, Name##Impl, Opts<D>>(#Name, Opts<D>(std::move(padding), rest...)) {}        \
  };                                                                                                  \
  /** Options of Name. */                                                                             \
  using Name##Options = Opts<D>;                                                                      \
  /** The holder of Name##Impl. */                                                                    \
  VNN_MODULE(Name)

VNN_PAD_LAYER(ZeroPad1d, 1, ZeroPadOptions);
VNN_PAD_LAYER(ZeroPad2d, 2, ZeroPadOptions);
VNN_PAD_LAYER(ZeroPad3d, 3, ZeroPadOptions);
VNN_PAD_LAYER(ConstantPad1d, 1, ConstantPadOptions);
VNN_PAD_LAYER(ConstantPad2d, 2, ConstantPadOptions);
VNN_PAD_LAYER(ConstantPad3d, 3, ConstantPadOptions);
VNN_PAD_LAYER(ReflectionPad1d, 1, ReflectionPadOptions);
VNN_PAD_LAYER(ReflectionPad2d, 2, ReflectionPadOptions);
VNN_PAD_LAYER(ReflectionPad3d, 3, ReflectionPadOptions);
VNN_PAD_LAYER(ReplicationPad1d, 1, ReplicationPadOptions);
VNN_PAD_LAYER(ReplicationPad2d, 2, ReplicationPadOptions);
VNN_PAD_LAYER(ReplicationPad3d, 3, ReplicationPadOptions);
VNN_PAD_LAYER(CircularPad1d, 1, CircularPadOptions);
VNN_PAD_LAYER(CircularPad2d, 2, CircularPadOptions);
VNN_PAD_LAYER(CircularPad3d, 3, CircularPadOptions);
#undef VNN_PAD_LAYER

}  // namespace vnn::nn

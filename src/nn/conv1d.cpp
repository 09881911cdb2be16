// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The 1-D layers of include/vnn/nn/conv1d.h: each runs the 2-D op (conv2d,
// max/avg/adaptive pooling) on a [N, C, 1, L] view, so it has the 2-D op's
// kernels on every device and its backward. padding="same" splits the total
// padding dilation * (k - 1) as PyTorch: the extra zero of an odd total goes
// on the right.
#include "vnn/nn/conv1d.h"

#include "nn/conv_nd.hpp"

#include <cmath>
#include <string>

#include "nn/conv_nd.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::nn {

Conv1dPadding::Conv1dPadding(const std::string& s) {
  if (s == "same") kind = ConvPaddingKind::same;
  else if (s == "valid") kind = ConvPaddingKind::valid;
  else VNN_THROW(ValueError, "conv1d: padding \"", s, "\" must be a number, \"same\" or \"valid\"");
}

namespace {

// (left, right) padding of a 1-D convolution.
std::pair<int64_t, int64_t> c1_sides(const char* op, const Conv1dPadding& p, int64_t kernel, int64_t stride,
                                         int64_t dilation) {
  if (!p.kind) {
    VNN_CHECK(ValueError, p.amount >= 0, op, ": padding must be >= 0, got ", p.amount);
    return {p.amount, p.amount};
  }
  if (*p.kind == ConvPaddingKind::valid) return {0, 0};
  VNN_CHECK(ValueError, stride == 1, op, ": padding=\"same\" is not supported for strided convolutions (stride ",
            stride, "); give the padding as a number");
  const int64_t total = dilation * (kernel - 1);
  return {total / 2, total - total / 2};
}

// [C, L] -> [1, C, L] (and back): the unbatched forms.
Tensor c1_batched(const Tensor& x, const char* op, bool* unbatched) {
  VNN_CHECK(ValueError, x.defined(), op, ": argument 'input' is an undefined tensor");
  VNN_CHECK(ShapeError, x.dim() == 2 || x.dim() == 3, op, ": expects a 2-D (unbatched [C, L]) or 3-D ([N, C, L]) "
            "input, got shape ", x.sizes());
  *unbatched = x.dim() == 2;
  return *unbatched ? x.unsqueeze(0) : x;
}
Tensor c1_unbatch(const Tensor& y, bool unbatched) { return unbatched ? y.squeeze(0) : y; }

void c1_check_pool(const char* op, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation) {
  VNN_CHECK(ValueError, kernel > 0 && stride >= 0 && dilation > 0, op, ": kernel_size (", kernel, ") and dilation (",
            dilation, ") must be positive and stride (", stride, ") >= 0");
  VNN_CHECK(ValueError, padding >= 0 && 2 * padding <= kernel, op, ": padding ", padding,
            " must be between 0 and half the kernel size ", kernel);
}

}  // namespace

namespace functional {

Tensor conv1d(const Tensor& input, const Tensor& weight, const Conv1dFuncOptions& o) {
  bool unb = false;
  Tensor x = c1_batched(input, "conv1d", &unb);
  VNN_CHECK(ValueError, weight.defined(), "conv1d: argument 'weight' is an undefined tensor");
  VNN_CHECK(ShapeError, weight.dim() == 3, "conv1d: weight must be 3-D [out_channels, in_channels / groups, "
            "kernel_size], got shape ", weight.sizes());
  const int64_t g = o.groups();
  VNN_CHECK(ValueError, g > 0, "conv1d: groups must be positive, got ", g);
  VNN_CHECK(ShapeError, x.size(1) == weight.size(1) * g, "conv1d: input ", input.sizes(), " has ", x.size(1),
            " channels, but weight ", weight.sizes(), " with groups=", g, " expects ", weight.size(1) * g);
  VNN_CHECK(ValueError, weight.size(0) % g == 0, "conv1d: out_channels ", weight.size(0),
            " of weight ", weight.sizes(), " must be divisible by groups (", g, ")");
  VNN_CHECK(ValueError, o.stride() > 0 && o.dilation() > 0, "conv1d: stride (", o.stride(), ") and dilation (",
            o.dilation(), ") must be positive");
  auto [left, right] = c1_sides("conv1d", o.padding(), weight.size(2), o.stride(), o.dilation());
  int64_t p = left;
  if (left != right) {
    x = pad(x, PadFuncOptions({left, right}));
    p = 0;
  }
  Tensor y = vnn::conv2d(x.unsqueeze(2), weight.unsqueeze(2), o.bias(), Size2(1, o.stride()), Size2(0, p),
                         Size2(1, o.dilation()), g);
  return c1_unbatch(y.squeeze(2), unb);
}

std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const MaxPool1dFuncOptions& o) {
  c1_check_pool("max_pool1d", o.kernel_size(), o.stride(), o.padding(), o.dilation());
  bool unb = false;
  Tensor x = c1_batched(input, "max_pool1d", &unb);
  auto [v, i] = vnn::max_pool2d_with_indices(x.unsqueeze(2), Size2(1, o.kernel_size()),
                                             Size2(1, o.stride() ? o.stride() : o.kernel_size()),
                                             Size2(0, o.padding()), Size2(1, o.dilation()));
  return {c1_unbatch(v.squeeze(2), unb), c1_unbatch(i.squeeze(2), unb)};
}

Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& o) {
  return std::get<0>(max_pool1d_with_indices(input, o));
}

Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& o) {
  c1_check_pool("avg_pool1d", o.kernel_size(), o.stride(), o.padding(), 1);
  bool unb = false;
  Tensor x = c1_batched(input, "avg_pool1d", &unb);
  Tensor y = vnn::avg_pool2d(x.unsqueeze(2), Size2(1, o.kernel_size()),
                             Size2(1, o.stride() ? o.stride() : o.kernel_size()), Size2(0, o.padding()),
                             o.count_include_pad());
  return c1_unbatch(y.squeeze(2), unb);
}

Tensor adaptive_avg_pool1d(const Tensor& input, const AdaptiveAvgPool1dFuncOptions& o) {
  VNN_CHECK(ValueError, o.output_size() > 0, "adaptive_avg_pool1d: output_size must be positive, got ",
            o.output_size());
  bool unb = false;
  Tensor x = c1_batched(input, "adaptive_avg_pool1d", &unb);
  return c1_unbatch(vnn::adaptive_avg_pool2d(x.unsqueeze(2), Size2(1, o.output_size())).squeeze(2), unb);
}

std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool1dFuncOptions& o) {
  VNN_CHECK(ValueError, o.output_size() > 0, "adaptive_max_pool1d: output_size must be positive, got ",
            o.output_size());
  bool unb = false;
  Tensor x = c1_batched(input, "adaptive_max_pool1d", &unb);
  auto [v, i] = vnn::adaptive_max_pool2d(x.unsqueeze(2), Size2(1, o.output_size()));
  return {c1_unbatch(v.squeeze(2), unb), c1_unbatch(i.squeeze(2), unb)};
}

Tensor adaptive_max_pool1d(const Tensor& input, const AdaptiveMaxPool1dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool1d_with_indices(input, o));
}

}  // namespace functional

Conv1dImpl::Conv1dImpl(const Conv1dOptions& opt, Generator* gen) : Cloneable("Conv1d"), options(opt) {
  const int64_t in = opt.in_channels(), out = opt.out_channels(), k = opt.kernel_size(), groups = opt.groups();
  VNN_CHECK(ValueError, in > 0 && out > 0 && k > 0 && groups > 0 && opt.stride() > 0 && opt.dilation() > 0,
            "Conv1d: channels, kernel_size, stride, dilation and groups must be positive, got in_channels=", in,
            ", out_channels=", out, ", kernel_size=", k, ", stride=", opt.stride(), ", dilation=", opt.dilation(),
            ", groups=", groups);
  VNN_CHECK(ValueError, in % groups == 0 && out % groups == 0, "Conv1d: in_channels (", in, ") and out_channels (",
            out, ") must both be divisible by groups (", groups, ")");
  c1_sides("Conv1d", opt.padding(), k, opt.stride(), opt.dilation());  // checks "same" against the stride
  build(gen);
}

void Conv1dImpl::build(Generator* gen) {
  conv_nd::register_conv_parameters(*this, {options.out_channels(), options.in_channels() / options.groups(),
                                            options.kernel_size()}, options.out_channels(), options.bias(), gen,
                                    &weight, &bias);
}

Tensor Conv1dImpl::forward(const Tensor& x) {
  functional::Conv1dFuncOptions fo;
  fo.bias(bias).stride(options.stride()).dilation(options.dilation()).groups(options.groups());
  if (options.padding_mode() == PadMode::constant) return functional::conv1d(x, weight, fo.padding(options.padding()));
  // reflect / replicate / circular: pad explicitly, then convolve without padding (PyTorch's order).
  auto [left, right] =
      c1_sides("Conv1d", options.padding(), options.kernel_size(), options.stride(), options.dilation());
  VNN_CHECK(ShapeError, x.defined() && (x.dim() == 2 || x.dim() == 3), "Conv1d: expects a 2-D (unbatched [C, L]) or "
            "3-D ([N, C, L]) input, got shape ", x.defined() ? x.sizes() : Shape{});
  Tensor padded = functional::pad(x, functional::PadFuncOptions({left, right}).mode(options.padding_mode()));
  return functional::conv1d(padded, weight, fo.padding(0));
}

std::string Conv1dImpl::describe() const {
  const Conv1dPadding& p = options.padding();
  std::string pad = !p.kind ? std::to_string(p.amount) : *p.kind == ConvPaddingKind::same ? "same" : "valid";
  return ::vnn::detail::str_cat("Conv1d(", options.in_channels(), ", ", options.out_channels(),
                                ", kernel_size=(", options.kernel_size(), ",), stride=(", options.stride(),
                                ",), padding=", pad, options.groups() != 1 ? ", groups=" : "",
                                options.groups() != 1 ? std::to_string(options.groups()) : std::string(), ")");
}

std::string MaxPool1dImpl::describe() const {
  return ::vnn::detail::str_cat("MaxPool1d(kernel_size=", options.kernel_size(), ", stride=",
                                options.stride() ? options.stride() : options.kernel_size(), ")");
}
std::string AvgPool1dImpl::describe() const {
  return ::vnn::detail::str_cat("AvgPool1d(kernel_size=(", options.kernel_size(), ",), stride=(",
                                options.stride() ? options.stride() : options.kernel_size(), ",))");
}

}  // namespace vnn::nn

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Conv3d as F::unfold over depth + one conv2d (include/vnn/nn/conv3d.h):
// the depth taps of every output depth are unfolded into channels,
// [N, C, D, H, W] -> [N*OD, C*kd, H, W], and weight [O, C/g, kd, kh, kw]
// viewed as [O, C/g*kd, kh, kw] convolves them in 2-D. The column the 2-D
// convolution builds is the 3-D im2col's, so the GEMM work is the same as a
// direct 3-D im2col; the extra cost is the depth unfold (kd copies of the
// input). Autograd comes from the composed ops.
#include "vnn/nn/conv3d.h"

#include <cmath>
#include <string>

#include "nn/conv_nd.hpp"
#include "vnn/nn/fold.h"
#include "vnn/nn/functional.h"

namespace vnn::nn {

using conv_nd::Dims;
using conv_nd::text;

namespace {

// (before, after) padding per dim of a 3-D convolution: numbers, "valid" or "same" (stride 1 only; the extra zero
// of an odd total goes after, as PyTorch).
std::pair<Dims, Dims> c3_sides(const char* op, const Conv3dPadding& p, const Dims& kernel, const Dims& stride,
                               const Dims& dilation) {
  if (!p.kind) {
    Dims a = conv_nd::dims(p.amount);
    for (int64_t v : a) VNN_CHECK(ValueError, v >= 0, op, ": padding must be >= 0, got ", text(a));
    return {a, a};
  }
  if (*p.kind == ConvPaddingKind::valid) return {Dims(3, 0), Dims(3, 0)};
  Dims before(3), after(3);
  for (size_t i = 0; i < 3; ++i) {
    VNN_CHECK(ValueError, stride[i] == 1, op, ": padding=\"same\" is not supported for strided convolutions (stride ",
              text(stride), "); give the padding as numbers");
    const int64_t total = dilation[i] * (kernel[i] - 1);
    before[i] = total / 2, after[i] = total - total / 2;
  }
  return {before, after};
}

// The convolution of batched x with symmetric zero padding `pad`.
Tensor conv3d_symmetric(const Tensor& x, const Tensor& w, const Tensor& bias, const Dims& s, const Dims& pad,
                        const Dims& d, int64_t groups) {
  const int64_t N = x.size(0), C = x.size(1), D = x.size(2), H = x.size(3), W = x.size(4);
  const int64_t O = w.size(0), kd = w.size(2);
  const int64_t span = d[0] * (kd - 1) + 1;
  VNN_CHECK(ShapeError, D + 2 * pad[0] >= span, "conv3d: the dilated kernel depth ", span,
            " is larger than the padded input depth ", D + 2 * pad[0], " of input ", x.sizes());
  const int64_t OD = (D + 2 * pad[0] - span) / s[0] + 1;
  Tensor planes;  // [N*OD, C*kd, H, W]: the depth taps of each output depth as channels
  if (kd == 1 && s[0] == 1 && pad[0] == 0) {
    planes = x.permute({0, 2, 1, 3, 4}).reshape({N * D, C, H, W});
  } else {
    Tensor cols = functional::unfold(x.permute({0, 1, 3, 4, 2}).reshape({N, C * H * W, D, 1}),
                                     functional::UnfoldFuncOptions(Size2(kd, 1))
                                         .dilation(Size2(d[0], 1)).padding(Size2(pad[0], 0)).stride(Size2(s[0], 1)));
    planes = cols.view({N, C, H, W, kd, OD}).permute({0, 5, 1, 4, 2, 3}).reshape({N * OD, C * kd, H, W});
  }
  Tensor y = conv2d(planes, w.reshape({O, w.size(1) * kd, w.size(3), w.size(4)}), bias, Size2(s[1], s[2]),
                    Size2(pad[1], pad[2]), Size2(d[1], d[2]), groups);
  return y.view({N, OD, O, y.size(2), y.size(3)}).permute({0, 2, 1, 3, 4}).contiguous();
}

}  // namespace

namespace functional {

Tensor conv3d(const Tensor& input, const Tensor& weight, const Conv3dFuncOptions& o) {
  const char* op = "conv3d";
  bool unb = false;
  Tensor x = conv_nd::batched(input, 3, op, &unb);
  VNN_CHECK(ValueError, weight.defined(), op, ": argument 'weight' is undefined");
  VNN_CHECK(ShapeError, weight.dim() == 5, op, ": weight must be 5-D [out_channels, in_channels / groups, kd, kh, kw]"
            ", got ", weight.sizes());
  const int64_t g = o.groups();
  VNN_CHECK(ValueError, g > 0, op, ": groups must be positive, got ", g);
  VNN_CHECK(ShapeError, x.size(1) == weight.size(1) * g, op, ": input ", input.sizes(), " has ", x.size(1),
            " channels, but weight ", weight.sizes(), " with groups=", g, " expects ", weight.size(1) * g);
  VNN_CHECK(ValueError, weight.size(0) % g == 0, op, ": out_channels ", weight.size(0), " of weight ",
            weight.sizes(), " must be divisible by groups (", g, ")");
  const Dims s = conv_nd::dims(o.stride()), d = conv_nd::dims(o.dilation());
  conv_nd::check_positive(op, "stride", s);
  conv_nd::check_positive(op, "dilation", d);
  const Dims k{weight.size(2), weight.size(3), weight.size(4)};
  conv_nd::check_positive(op, "kernel_size", k);
  auto [before, after] = c3_sides(op, o.padding(), k, s, d);
  if (before != after) {
    x = pad(x, PadFuncOptions(conv_nd::pad_pairs(before, after)));
    before = Dims(3, 0);
  }
  return conv_nd::unbatch(conv3d_symmetric(x, weight, o.bias(), s, before, d, g), unb);
}

}  // namespace functional

Conv3dImpl::Conv3dImpl(const Conv3dOptions& opt, Generator* gen) : Cloneable("Conv3d"), options(opt) {
  const int64_t in = opt.in_channels(), out = opt.out_channels(), groups = opt.groups();
  VNN_CHECK(ValueError, in > 0 && out > 0 && groups > 0, "Conv3d: channels and groups must be positive, got "
            "in_channels=", in, ", out_channels=", out, ", groups=", groups);
  conv_nd::check_positive("Conv3d", "kernel_size", conv_nd::dims(opt.kernel_size()));
  conv_nd::check_positive("Conv3d", "stride", conv_nd::dims(opt.stride()));
  conv_nd::check_positive("Conv3d", "dilation", conv_nd::dims(opt.dilation()));
  VNN_CHECK(ValueError, in % groups == 0 && out % groups == 0, "Conv3d: in_channels (", in, ") and out_channels (",
            out, ") must both be divisible by groups (", groups, ")");
  c3_sides("Conv3d", opt.padding(), conv_nd::dims(opt.kernel_size()), conv_nd::dims(opt.stride()),
           conv_nd::dims(opt.dilation()));  // checks "same" against the stride
  build(gen);
}

void Conv3dImpl::build(Generator* gen) {
  const Size3 k = options.kernel_size();
  conv_nd::register_conv_parameters(*this, {options.out_channels(), options.in_channels() / options.groups(), k.d, k.h,
                                            k.w}, options.out_channels(), options.bias(), gen, &weight, &bias);
}

Tensor Conv3dImpl::forward(const Tensor& x) {
  functional::Conv3dFuncOptions fo;
  fo.bias(bias).stride(options.stride()).dilation(options.dilation()).groups(options.groups());
  if (options.padding_mode() == PadMode::constant) return functional::conv3d(x, weight, fo.padding(options.padding()));
  // reflect / replicate / circular: pad explicitly, then convolve without padding (PyTorch's order).
  auto [before, after] = c3_sides("Conv3d", options.padding(), conv_nd::dims(options.kernel_size()),
                                  conv_nd::dims(options.stride()), conv_nd::dims(options.dilation()));
  bool unb = false;
  Tensor xb = conv_nd::batched(x, 3, "Conv3d", &unb);
  Tensor padded = functional::pad(xb, functional::PadFuncOptions(conv_nd::pad_pairs(before, after))
                                          .mode(options.padding_mode()));
  return conv_nd::unbatch(functional::conv3d(padded, weight, fo.padding(0)), unb);
}

std::string Conv3dImpl::describe() const {
  const Conv3dPadding& p = options.padding();
  std::string pad = !p.kind ? text(conv_nd::dims(p.amount)) : *p.kind == ConvPaddingKind::same ? "same" : "valid";
  return ::vnn::detail::str_cat("Conv3d(", options.in_channels(), ", ", options.out_channels(), ", kernel_size=",
                                text(conv_nd::dims(options.kernel_size())), ", stride=",
                                text(conv_nd::dims(options.stride())), ", padding=", pad,
                                options.groups() != 1 ? ", groups=" : "",
                                options.groups() != 1 ? std::to_string(options.groups()) : std::string(), ")");
}

}  // namespace vnn::nn

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The transposed convolutions of include/vnn/nn/conv_transpose.h. The 2-D
// core is conv2d's input gradient (conv2d_backward_input: COL2IM after one
// GEMM per group, or the backend's whole backward-data pass), recorded as
// one node whose input gradient is conv2d and whose weight gradient is
// conv2d_backward_weight with input and gradient swapped. It needs
// output_padding < stride (the output must map back onto the input); an
// output_padding only below the dilation runs with no padding and the
// output is then cropped / zero-extended by F::pad. 1-D runs on a
// [N, C, 1, L] view; 3-D puts the depth taps into the 2-D core's output
// channels and sums them into depth with F::fold (col2im along depth).
#include "vnn/nn/conv_transpose.h"

#include <cmath>
#include <string>
#include <vector>

#include "autograd/autograd.hpp"
#include "nn/conv_nd.hpp"
#include "vnn/nn/fold.h"
#include "vnn/nn/functional.h"
#include "vnn/nn_ops.h"

namespace vnn::nn {

using conv_nd::Dims;
using conv_nd::text;

namespace {

// The transposed 2-D convolution of 4-D x (output_padding < stride), without bias.
Tensor conv_transpose2d_core(const Tensor& x, const Tensor& w, Size2 s, Size2 p, Size2 op, Size2 d, int64_t groups) {
  const int64_t OH = (x.size(2) - 1) * s.h - 2 * p.h + d.h * (w.size(2) - 1) + op.h + 1;
  const int64_t OW = (x.size(3) - 1) * s.w - 2 * p.w + d.w * (w.size(3) - 1) + op.w + 1;
  const Shape out_sizes{x.size(0), w.size(1) * groups, OH, OW};
  Tensor y;
  {
    autograd::NoGradGuard no_grad;
    y = conv2d_backward_input(x, w, out_sizes, s, p, d, groups);
  }
  if (::vnn::detail::needs_grad({&x, &w})) {
    const Tensor xs = x.detach(), ws = w.detach();
    const Shape w_sizes = w.sizes();
    const bool need_x = x.requires_grad(), need_w = w.requires_grad();
    ::vnn::detail::record("conv_transpose2d", y, {&x, &w}, [=](const Tensor& gy) {
      Tensor gx = need_x ? conv2d(gy, ws, Tensor(), s, p, d, groups) : Tensor();
      Tensor gw = need_w ? conv2d_backward_weight(xs, gy, w_sizes, s, p, d, groups) : Tensor();
      return std::vector<Tensor>{gx, gw};
    }, {&x, &w});
  }
  return y;
}

// The 3-D one: the 2-D core over [N*D, C, H, W] with weight [C, O/g*kd, kh, kw] gives every depth tap as a
// channel; F::fold along depth (a [N, O*OH*OW*kd, D] column) sums the taps into the output depths.
Tensor conv_transpose3d_core(const Tensor& x, const Tensor& w, const Dims& s, const Dims& p, const Dims& op,
                             const Dims& d, int64_t groups) {
  const int64_t N = x.size(0), C = x.size(1), D = x.size(2), kd = w.size(2), O = w.size(1) * groups;
  Tensor z = conv_transpose2d_core(x.permute({0, 2, 1, 3, 4}).reshape({N * D, C, x.size(3), x.size(4)}),
                                   w.reshape({C, w.size(1) * kd, w.size(3), w.size(4)}), Size2(s[1], s[2]),
                                   Size2(p[1], p[2]), Size2(op[1], op[2]), Size2(d[1], d[2]), groups);
  const int64_t OH = z.size(2), OW = z.size(3);
  if (kd == 1 && s[0] == 1 && p[0] == 0)  // one tap, no stride: the depths map one to one
    return z.view({N, D, O, OH, OW}).permute({0, 2, 1, 3, 4}).contiguous();
  const int64_t OD = (D - 1) * s[0] - 2 * p[0] + d[0] * (kd - 1) + op[0] + 1;
  Tensor cols = z.view({N, D, O, kd, OH, OW}).permute({0, 2, 4, 5, 3, 1}).reshape({N, O * OH * OW * kd, D});
  Tensor y = functional::fold(cols, functional::FoldFuncOptions(Size2(OD, 1), Size2(kd, 1))
                                        .stride(Size2(s[0], 1)).padding(Size2(p[0], 0)).dilation(Size2(d[0], 1)));
  return y.view({N, O, OH, OW, OD}).permute({0, 1, 4, 2, 3}).contiguous();
}

// Checks the per-dim sizes of a transposed convolution (ValueError naming what to change).
void check_transpose_sizes(const char* op, const Dims& k, const Dims& s, const Dims& p, const Dims& opad, const Dims& d) {
  conv_nd::check_positive(op, "kernel_size", k);
  conv_nd::check_positive(op, "stride", s);
  conv_nd::check_positive(op, "dilation", d);
  for (size_t i = 0; i < s.size(); ++i) {
    VNN_CHECK(ValueError, p[i] >= 0, op, ": padding must be non-negative, got ", text(p));
    VNN_CHECK(ValueError, opad[i] >= 0 && (opad[i] < s[i] || opad[i] < d[i]), op, ": output_padding ", text(opad),
              " must be non-negative and smaller than either stride ", text(s), " or dilation ", text(d),
              " in each dim; lower output_padding (or raise the stride)");
  }
}

// The transposed convolution of n = stride.size() spatial dims.
Tensor conv_transpose_nd(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias, const Dims& s,
                         const Dims& p, const Dims& opad, const Dims& d, int64_t groups) {
  const size_t n = s.size();
  bool unb = false;
  Tensor x = conv_nd::batched(input, n, op, &unb);
  VNN_CHECK(ValueError, weight.defined(), op, ": argument 'weight' is undefined");
  VNN_CHECK(ShapeError, weight.dim() == int64_t(n) + 2, op, ": weight must be ", n + 2,
            "-D [in_channels, out_channels / groups, kernel...], got ", weight.sizes());
  VNN_CHECK(ValueError, groups > 0, op, ": groups must be positive, got ", groups);
  VNN_CHECK(ShapeError, x.size(1) == weight.size(0), op, ": input ", input.sizes(), " has ", x.size(1),
            " channels, but weight ", weight.sizes(), " expects ", weight.size(0), " (its first dim)");
  VNN_CHECK(ValueError, weight.size(0) % groups == 0, op, ": groups (", groups, ") must divide the in_channels ",
            weight.size(0), " of weight ", weight.sizes());
  Dims k(n);
  for (size_t i = 0; i < n; ++i) k[i] = weight.size(int(i) + 2);
  check_transpose_sizes(op, k, s, p, opad, d);
  const int64_t O = weight.size(1) * groups;
  for (size_t i = 0; i < n; ++i) {
    const int64_t out = (x.size(int(i) + 2) - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + opad[i] + 1;
    VNN_CHECK(ShapeError, x.size(int(i) + 2) > 0 && out > 0, op, ": input ", input.sizes(), " with padding ",
              text(p), " gives an empty output (size ", out, " in spatial dim ", i, "); lower the padding");
  }
  if (bias.defined())
    VNN_CHECK(ShapeError, bias.dim() == 1 && bias.size(0) == O, op, ": bias must have shape [", O, "] for weight ",
              weight.sizes(), " and groups ", groups, ", got ", bias.sizes());
  Tensor y;
  bool fits = true;  // output_padding < stride in every dim: the core maps the output back onto the input
  for (size_t i = 0; i < n; ++i) fits = fits && opad[i] < s[i];
  if (!fits) {
    // Full output (no padding), then crop `padding` before and padding - output_padding after (extend if negative).
    Tensor full = conv_transpose_nd(op, x, weight, Tensor(), s, Dims(n, 0), Dims(n, 0), d, groups);
    Dims before(n), after(n);
    for (size_t i = 0; i < n; ++i) before[i] = -p[i], after[i] = opad[i] - p[i];
    y = functional::pad(full, functional::PadFuncOptions(conv_nd::pad_pairs(before, after)));
  } else if (n == 1) {
    y = conv_transpose2d_core(x.unsqueeze(2), weight.unsqueeze(2), Size2(1, s[0]), Size2(0, p[0]),
                              Size2(0, opad[0]), Size2(1, d[0]), groups)
            .squeeze(2);
  } else if (n == 2) {
    y = conv_transpose2d_core(x, weight, Size2(s[0], s[1]), Size2(p[0], p[1]), Size2(opad[0], opad[1]),
                              Size2(d[0], d[1]), groups);
  } else {
    y = conv_transpose3d_core(x, weight, s, p, opad, d, groups);
  }
  if (bias.defined()) {
    Shape bshape(std::vector<int64_t>(n + 2, 1));
    bshape[1] = O;
    y = y + bias.view(bshape);
  }
  return conv_nd::unbatch(y, unb);
}

template <class S>
Tensor conv_transpose_func(const char* op, const Tensor& x, const Tensor& w,
                           const functional::ConvTransposeFuncOptions<S>& o) {
  return conv_transpose_nd(op, x, w, o.bias(), conv_nd::dims(o.stride()), conv_nd::dims(o.padding()),
                           conv_nd::dims(o.output_padding()), conv_nd::dims(o.dilation()), o.groups());
}

}  // namespace

namespace functional {

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const ConvTranspose1dFuncOptions& options) {
  return conv_transpose_func("conv_transpose1d", input, weight, options);
}
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const ConvTranspose2dFuncOptions& options) {
  return conv_transpose_func("conv_transpose2d", input, weight, options);
}
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const ConvTranspose3dFuncOptions& options) {
  return conv_transpose_func("conv_transpose3d", input, weight, options);
}

}  // namespace functional

template <class Derived, class S>
ConvTransposeNdImpl<Derived, S>::ConvTransposeNdImpl(const char* type_name, const ConvTransposeOptions<S>& opt,
                                                     Generator* gen)
    : Cloneable<Derived>(type_name), options(opt) {
  const int64_t in = opt.in_channels(), out = opt.out_channels(), groups = opt.groups();
  VNN_CHECK(ValueError, in > 0 && out > 0 && groups > 0, type_name, ": channels and groups must be positive, got "
            "in_channels=", in, ", out_channels=", out, ", groups=", groups);
  VNN_CHECK(ValueError, in % groups == 0 && out % groups == 0, type_name, ": in_channels (", in,
            ") and out_channels (", out, ") must both be divisible by groups (", groups, ")");
  VNN_CHECK(ValueError, opt.padding_mode() == PadMode::constant, type_name,
            ": only padding_mode kZeros is supported (as in PyTorch)");
  check_transpose_sizes(type_name, conv_nd::dims(opt.kernel_size()), conv_nd::dims(opt.stride()), conv_nd::dims(opt.padding()),
              conv_nd::dims(opt.output_padding()), conv_nd::dims(opt.dilation()));
  build(gen);
}

template <class Derived, class S>
void ConvTransposeNdImpl<Derived, S>::build(Generator* gen) {
  std::vector<int64_t> sizes{options.in_channels(), options.out_channels() / options.groups()};
  for (int64_t k : conv_nd::dims(options.kernel_size())) sizes.push_back(k);
  conv_nd::register_conv_parameters(*this, Shape(sizes), options.out_channels(), options.bias(), gen, &weight, &bias);
}

template <class Derived, class S>
Tensor ConvTransposeNdImpl<Derived, S>::forward(const Tensor& x) {
  return conv_transpose_nd(this->type_name().c_str(), x, weight, bias, conv_nd::dims(options.stride()),
                           conv_nd::dims(options.padding()), conv_nd::dims(options.output_padding()),
                           conv_nd::dims(options.dilation()), options.groups());
}

template <class Derived, class S>
Tensor ConvTransposeNdImpl<Derived, S>::forward(const Tensor& x, const std::vector<int64_t>& output_size) {
  const Dims s = conv_nd::dims(options.stride()), p = conv_nd::dims(options.padding()),
             d = conv_nd::dims(options.dilation()), k = conv_nd::dims(options.kernel_size());
  const size_t n = s.size();
  const std::string op = this->type_name();
  VNN_CHECK(ValueError, output_size.size() == n || output_size.size() == n + 2, op, ": output_size must have ", n,
            " or ", n + 2, " entries, got ", output_size.size());
  VNN_CHECK(ShapeError, x.defined() && size_t(x.dim()) >= n, op, ": input must have ", n, " spatial dims");
  Dims opad(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = x.size(int(x.dim() - int64_t(n) + int64_t(i)));
    const int64_t base = (in - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + 1;
    opad[i] = output_size[output_size.size() - n + i] - base;
    VNN_CHECK(ValueError, opad[i] >= 0 && (opad[i] < s[i] || opad[i] < d[i]), op, ": output_size ",
              text(Dims(output_size)), " is not reachable from input ", x.sizes(), ": spatial dim ", i,
              " can be from ", base, " to ", base + std::max(s[i], d[i]) - 1);
  }
  return conv_transpose_nd(op.c_str(), x, weight, bias, s, p, opad, d, options.groups());
}

template <class Derived, class S>
std::string ConvTransposeNdImpl<Derived, S>::describe() const {
  return ::vnn::detail::str_cat(this->type_name(), "(", options.in_channels(), ", ", options.out_channels(),
                                ", kernel_size=", text(conv_nd::dims(options.kernel_size())),
                                ", stride=", text(conv_nd::dims(options.stride())),
                                ", padding=", text(conv_nd::dims(options.padding())),
                                ", output_padding=", text(conv_nd::dims(options.output_padding())),
                                options.groups() != 1 ? ", groups=" : "",
                                options.groups() != 1 ? std::to_string(options.groups()) : std::string(), ")");
}

template class ConvTransposeNdImpl<ConvTranspose1dImpl, int64_t>;
template class ConvTransposeNdImpl<ConvTranspose2dImpl, Size2>;
template class ConvTransposeNdImpl<ConvTranspose3dImpl, Size3>;

}  // namespace vnn::nn

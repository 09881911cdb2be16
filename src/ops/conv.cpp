// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// conv2d and its gradients: IM2COL unfolds the image into columns laid out
// [C*kh*kw, N*OH*OW] (batch folded into the GEMM's N dimension: one large
// GEMM per group instead of N small ones, which is what BLAS is fast at);
// the [O, N, L] product is permuted to [N, O, L] in one pass with the bias.
// Backward: the gradient permuted once to [O, N*L] rows; input gradient =
// W^T @ grad folded by COL2IM (a gather per pixel, race-free), weight
// gradient = grad @ col^T.
// A backend with a convolution library of its own (oneDNN in the CPU
// plugin) runs whole passes instead: VNN_OP_CONV2D / _BACKWARD_DATA /
// _BACKWARD_WEIGHT are tried first, and a backend answering
// VNN_STATUS_UNSUPPORTED (no library, float64, its selection rule) gets the
// IM2COL + MATMUL path above.
#include <array>
#include <string>

#include "amp/autocast.hpp"
#include "autograd/autograd.hpp"
#include "ops/low_precision.hpp"
#include "ops/size2_text.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/linalg.h"
#include "vnn/nn_ops.h"
#include "vnn/reduction.h"

namespace vnn {

using ops_text::pair_str;

namespace {


struct ConvGeom {
  int64_t N, C, H, W, O, Cg, kh, kw, OH, OW, groups;
  Size2 stride, padding, dilation;
};

void check_args(const char* op, Size2 stride, Size2 padding, Size2 dilation, int64_t groups) {
  if (stride.h <= 0 || stride.w <= 0) VNN_THROW(ValueError, op, ": stride must be positive, got ", pair_str(stride));
  if (padding.h < 0 || padding.w < 0)
    VNN_THROW(ValueError, op, ": padding must be non-negative, got ", pair_str(padding));
  if (dilation.h <= 0 || dilation.w <= 0)
    VNN_THROW(ValueError, op, ": dilation must be positive, got ", pair_str(dilation));
  if (groups <= 0) VNN_THROW(ValueError, op, ": groups must be positive, got ", groups);
}

void check_float(const char* op, const char* arg, const Tensor& t) {
  VNN_CHECK(DTypeError, is_floating(t.dtype()), op, ": ", arg, " must be float32, float64, float16 or bfloat16, got ",
            name(t.dtype()), "; convert with .to(vnn::kFloat32)");
}

// Validates input / weight shapes (as sizes) and derives the output size.
ConvGeom geometry(const char* op, const Shape& in, const Shape& w, Size2 stride, Size2 padding, Size2 dilation,
                  int64_t groups) {
  check_args(op, stride, padding, dilation, groups);
  VNN_CHECK(ShapeError, in.size() == 4, op, ": expected a 4-D input [N, C, H, W], got input ", in.str());
  VNN_CHECK(ShapeError, w.size() == 4, op, ": expected a 4-D weight [O, C/groups, kh, kw], got weight ", w.str());
  ConvGeom g{in[0], in[1], in[2], in[3], w[0], w[1], w[2], w[3], 0, 0, groups, stride, padding, dilation};
  if (g.C % groups != 0 || g.O % groups != 0)
    VNN_THROW(ShapeError, op, ": groups ", groups, " must divide the input channels of input ", in.str(),
              " and the output channels of weight ", w.str());
  VNN_CHECK(ShapeError, g.Cg * groups == g.C, op, ": weight ", w.str(), " expects ", g.Cg * groups,
            " input channels (C/groups = ", g.Cg, ", groups = ", groups, ") but input ", in.str(), " has ", g.C);
  if (g.kh <= 0 || g.kw <= 0) VNN_THROW(ShapeError, op, ": weight ", w.str(), " has an empty kernel");
  // User arguments: every product and sum checked (a huge dilation or
  // padding must not wrap into a small output size).
  const int64_t eh = detail::checked_product(op, {dilation.h, g.kh - 1}, "dilation * (kernel - 1)") + 1;
  const int64_t ew = detail::checked_product(op, {dilation.w, g.kw - 1}, "dilation * (kernel - 1)") + 1;
  const int64_t ph = detail::checked_sum(op, {g.H, padding.h, padding.h}, "padded height");
  const int64_t pw = detail::checked_sum(op, {g.W, padding.w, padding.w}, "padded width");
  if (ph < eh || pw < ew)
    VNN_THROW(ShapeError, op, ": kernel of weight ", w.str(), " (dilated ", eh, "x", ew,
              ") is larger than the padded input ", in.str(), " with padding ", pair_str(padding));
  g.OH = (ph - eh) / stride.h + 1;
  g.OW = (pw - ew) / stride.w + 1;
  // The column buffer [C*kh*kw, N, OH*OW] and the GEMM sizes below multiply
  // these; make_empty checks the whole product.
  detail::checked_product(op, {g.C, g.kh, g.kw}, "column rows C * kh * kw");
  detail::checked_product(op, {g.N, g.OH, g.OW}, "column width N * OH * OW");
  return g;
}

// The op's geometry ints (vnn_conv2d_pack: the ABI's field order); IM2COL /
// COL2IM send the first VNN_IM2COL_NUM_INTS, the CONV2D kinds all of them.
std::array<int64_t, VNN_CONV2D_NUM_INTS> conv_ints(const ConvGeom& g) {
  vnn_conv2d_params p{};
  p.kernel_h = g.kh, p.kernel_w = g.kw;
  p.stride_h = g.stride.h, p.stride_w = g.stride.w;
  p.pad_h = g.padding.h, p.pad_w = g.padding.w;
  p.dilation_h = g.dilation.h, p.dilation_w = g.dilation.w;
  p.groups = g.groups;
  std::array<int64_t, VNN_CONV2D_NUM_INTS> ints;
  vnn_conv2d_pack(&p, ints.data());
  return ints;
}

// Columns of input in the [C*kh*kw, N, OH*OW] layout, so that one GEMM
// covers the whole batch. IM2COL takes any output strides: it writes through
// the [N, CK, L] view of this buffer.
Tensor im2col_rows(const Tensor& input, const ConvGeom& g) {
  Tensor col = detail::make_empty(input.impl()->ctx(), {g.C * g.kh * g.kw, g.N, g.OH * g.OW}, input.dtype(),
                                  "conv2d (column buffer)");
  Tensor view = col.permute({1, 0, 2});
  const auto ints = conv_ints(g);
  detail::enqueue(VNN_OP_IM2COL, "conv2d (im2col)", {&input}, {&view}, {},
                  detail::Span<int64_t>(ints.data(), VNN_IM2COL_NUM_INTS));
  return col;
}

// Runs one whole-pass conv op; false when the backend does not take it
// (VNN_STATUS_UNSUPPORTED), and the caller computes it with IM2COL + MATMUL.
bool run_whole(vnn_op_kind kind, const char* name, std::initializer_list<const Tensor*> inputs,
               std::initializer_list<const Tensor*> outputs, const ConvGeom& g) {
  const auto ints = conv_ints(g);
  try {
    detail::enqueue(kind, name, inputs, outputs, {}, detail::Span<int64_t>(ints.data(), ints.size()));
  } catch (const Unsupported&) {
    return false;
  }
  return true;
}

// weight as [O, C/groups*kh*kw] rows, group gi's block.
Tensor group_rows(const Tensor& weight, const ConvGeom& g, int64_t gi) {
  int64_t og = g.O / g.groups, ck = g.Cg * g.kh * g.kw;
  return weight.reshape({g.O, ck}).narrow(0, gi * og, og);
}

// grad_output [N, O, OH, OW] as contiguous [O, N*OH*OW] rows (one permuting
// copy), the layout both backward GEMMs read.
Tensor grad_rows(const Tensor& grad_output, const ConvGeom& g) {
  int64_t L = g.OH * g.OW;
  return grad_output.reshape({g.N, g.O, L}).permute({1, 0, 2}).contiguous().view({g.O, g.N * L});
}

// dx from the [O, N*L] gradient rows.
Tensor backward_input_rows(const Tensor& gy, const Tensor& weight, const ConvGeom& g, const Shape& input_sizes) {
  int64_t og = g.O / g.groups, ck = g.Cg * g.kh * g.kw, L = g.OH * g.OW;
  Tensor dcol;  // [C*kh*kw, N*L]
  if (g.groups == 1) {
    dcol = matmul(group_rows(weight, g, 0).transpose(0, 1), gy);
  } else {
    dcol = detail::make_empty(gy.impl()->ctx(), {g.C * g.kh * g.kw, g.N * L}, gy.dtype());
    for (int64_t gi = 0; gi < g.groups; ++gi)
      dcol.narrow(0, gi * ck, ck).copy_(matmul(group_rows(weight, g, gi).transpose(0, 1), gy.narrow(0, gi * og, og)));
  }
  Tensor cols = dcol.view({g.C * g.kh * g.kw, g.N, L}).permute({1, 0, 2});  // [N, CK, L] view
  Tensor gx = detail::make_empty(gy.impl()->ctx(), input_sizes, gy.dtype());
  const auto ints = conv_ints(g);
  detail::enqueue(VNN_OP_COL2IM, "conv2d_backward_input (col2im)", {&cols}, {&gx}, {},
                  detail::Span<int64_t>(ints.data(), VNN_IM2COL_NUM_INTS));
  return gx;
}

// dx from grad_output [N, O, OH, OW]: the backend's whole pass, else the
// gradient rows (made once by rows()) through GEMM and COL2IM.
template <class Rows>
Tensor backward_input(const Tensor& grad_output, const Tensor& weight, const ConvGeom& g, const Shape& input_sizes,
                      Rows&& rows) {
  Tensor gx = detail::make_empty(grad_output.impl()->ctx(), input_sizes, grad_output.dtype());
  if (run_whole(VNN_OP_CONV2D_BACKWARD_DATA, "conv2d_backward_input", {&grad_output, &weight}, {&gx}, g)) return gx;
  return backward_input_rows(rows(), weight, g, input_sizes);
}

// col: the forward pass's [C*kh*kw, N*L] columns.
Tensor backward_weight_rows(const Tensor& gy, const Tensor& col, const ConvGeom& g, const Shape& weight_sizes) {
  int64_t og = g.O / g.groups, ck = g.Cg * g.kh * g.kw;
  Tensor gw;
  if (g.groups == 1) {
    gw = matmul(gy, col.transpose(0, 1));
  } else {
    gw = detail::make_empty(col.impl()->ctx(), {g.O, ck}, col.dtype());
    for (int64_t gi = 0; gi < g.groups; ++gi)
      gw.narrow(0, gi * og, og).copy_(matmul(gy.narrow(0, gi * og, og), col.narrow(0, gi * ck, ck).transpose(0, 1)));
  }
  return gw.view(weight_sizes);
}

// dw (and db where gb is non-null) through the backend's whole pass; false
// when it does not take it.
bool backward_weight_whole(const Tensor& grad_output, const Tensor& input, const ConvGeom& g,
                           const Shape& weight_sizes, Tensor* gw, Tensor* gb) {
  detail::DeviceContext& ctx = grad_output.impl()->ctx();
  Tensor w = detail::make_empty(ctx, weight_sizes, grad_output.dtype());
  Tensor b = gb ? detail::make_empty(ctx, {g.O}, grad_output.dtype()) : Tensor();
  bool ok = gb ? run_whole(VNN_OP_CONV2D_BACKWARD_WEIGHT, "conv2d_backward_weight", {&grad_output, &input}, {&w, &b}, g)
               : run_whole(VNN_OP_CONV2D_BACKWARD_WEIGHT, "conv2d_backward_weight", {&grad_output, &input}, {&w}, g);
  if (!ok) return false;
  *gw = w;
  if (gb) *gb = b;
  return true;
}

// Validates conv2d's arguments and returns the geometry.
ConvGeom forward_geometry(const Tensor& input, const Tensor& weight, const Tensor& bias, Size2 stride,
                          Size2 padding, Size2 dilation, int64_t groups) {
  const char* op = "conv2d";
  if (!input.defined() || !weight.defined())
    VNN_THROW(ValueError, op, ": argument '", (input.defined() ? "weight" : "input"), "' is undefined");
  detail::check_same_device(input, weight, op, "weight");
  check_float(op, "input", input);
  VNN_CHECK(DTypeError, weight.dtype() == input.dtype(), op, ": input (", name(input.dtype()), ") and weight (",
            name(weight.dtype()), ") must have the same dtype");
  ConvGeom g = geometry(op, input.sizes(), weight.sizes(), stride, padding, dilation, groups);
  if (bias.defined()) {
    detail::check_same_device(input, bias, op, "bias");
    if (bias.dim() != 1 || bias.sizes()[0] != g.O)
      VNN_THROW(ShapeError, op, ": bias must have shape [", g.O, "] for weight ", weight.sizes(), ", got bias ",
                bias.sizes());
    VNN_CHECK(DTypeError, bias.dtype() == input.dtype(), op, ": bias dtype ", name(bias.dtype()),
              " differs from input dtype ", name(input.dtype()));
  }
  return g;
}

// The forward pass proper: the backend's whole pass where it takes it (then
// *col_out stays undefined); else one GEMM per group, W [Og, CK] @ col [CK, N*L]
// into [O, N, L], then one permuting pass to [N, O, L] that also adds the
// bias. conv2d() below runs it without recording and records one node.
// The columns come back in *col_out for the weight gradient (kept instead
// of unfolding the input a second time in backward).
Tensor conv2d_forward(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvGeom& g,
                      Tensor* col_out) {
  {
    Tensor out = detail::make_empty(input.impl()->ctx(), {g.N, g.O, g.OH, g.OW}, input.dtype());
    bool ok = bias.defined() ? run_whole(VNN_OP_CONV2D, "conv2d", {&input, &weight, &bias}, {&out}, g)
                             : run_whole(VNN_OP_CONV2D, "conv2d", {&input, &weight}, {&out}, g);
    if (ok) return out;
  }
  int64_t og = g.O / g.groups, ck = g.Cg * g.kh * g.kw, L = g.OH * g.OW;
  Tensor col = im2col_rows(input, g).view({g.C * g.kh * g.kw, g.N * L});
  if (col_out) *col_out = col;
  Tensor rows;  // [O, N*L]
  if (g.groups == 1) {
    rows = matmul(group_rows(weight, g, 0), col);
  } else {
    rows = detail::make_empty(input.impl()->ctx(), {g.O, g.N * L}, input.dtype());
    for (int64_t gi = 0; gi < g.groups; ++gi)
      rows.narrow(0, gi * og, og).copy_(matmul(group_rows(weight, g, gi), col.narrow(0, gi * ck, ck)));
  }
  Tensor nol = rows.view({g.O, g.N, L}).permute({1, 0, 2});
  Tensor out = bias.defined() ? add(nol, bias.view({1, g.O, 1})) : nol.contiguous();
  return out.view({g.N, g.O, g.OH, g.OW});
}

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Size2 stride, Size2 padding,
              Size2 dilation, int64_t groups) {
  if (autocast::detail::OpScope s{autocast::detail::Policy::lower, {&input, &weight, &bias}})
    return conv2d(s[0], s[1], s[2], stride, padding, dilation, groups);
  ConvGeom geom = forward_geometry(input, weight, bias, stride, padding, dilation, groups);
  if (detail::is_low_precision(input.dtype()))  // float32 accumulation (ops/low_precision.hpp)
    return detail::round_to(conv2d(detail::upcast_low(input), detail::upcast_low(weight), detail::upcast_low(bias),
                                   stride, padding, dilation, groups),
                            input.dtype());
  bool track = detail::needs_grad({&input, &weight, &bias});
  bool need_w = track && weight.requires_grad();
  Tensor out, col;
  {
    autograd::NoGradGuard no_grad;
    out = conv2d_forward(input, weight, bias, geom, need_w ? &col : nullptr);
  }
  if (track) {
    // The input (or the columns, where forward made them) is kept for the
    // weight gradient; its version is still checked: an in-place change
    // after forward makes either stale.
    Tensor w = weight.detach();
    Tensor x = need_w ? input.detach() : Tensor();
    Shape x_sizes = input.sizes(), w_sizes = weight.sizes();
    bool need_x = input.requires_grad();
    bool need_b = bias.defined() && bias.requires_grad();
    detail::record("conv2d", out, {&input, &weight, &bias},
                   [=](const Tensor& g) {
                     // The GEMM path's permuted gradient copy, made once for
                     // whichever of the three needs it.
                     Tensor gy;
                     auto rows = [&]() -> const Tensor& {
                       if (!gy.defined()) gy = grad_rows(g, geom);
                       return gy;
                     };
                     Tensor gx = need_x ? backward_input(g, w, geom, x_sizes, rows) : Tensor();
                     Tensor gw, gb;
                     if (need_w && !backward_weight_whole(g, x, geom, w_sizes, &gw, need_b ? &gb : nullptr)) {
                       Tensor c = col.defined() ? col
                                                : im2col_rows(x, geom).view({geom.C * geom.kh * geom.kw,
                                                                             geom.N * geom.OH * geom.OW});
                       gw = backward_weight_rows(rows(), c, geom, w_sizes);
                     }
                     if (need_b && !gb.defined()) gb = gy.defined() ? sum(gy, 1) : conv2d_backward_bias(g);
                     return std::vector<Tensor>{gx, gw, gb};
                   },
                   {&input, &weight});
  }
  return out;
}

Tensor conv2d_backward_input(const Tensor& grad_output, const Tensor& weight, const Shape& input_sizes,
                             Size2 stride, Size2 padding, Size2 dilation, int64_t groups) {
  const char* op = "conv2d_backward_input";
  detail::check_same_device(grad_output, weight, op, "weight");
  check_float(op, "grad_output", grad_output);
  VNN_CHECK(DTypeError, weight.dtype() == grad_output.dtype(), op, ": grad_output and weight must have the same dtype");
  ConvGeom g = geometry(op, input_sizes, weight.sizes(), stride, padding, dilation, groups);
  VNN_CHECK(ShapeError, (grad_output.sizes() == Shape{g.N, g.O, g.OH, g.OW}), op, ": grad_output ", grad_output.sizes(),
            " does not match the output [", g.N, ", ", g.O, ", ", g.OH, ", ", g.OW, "] of input ", input_sizes.str(),
            " and weight ", weight.sizes());
  if (detail::is_low_precision(grad_output.dtype())) {  // float32 accumulation, rounded once
    const Tensor gy = grad_output.to(kFloat32), w = weight.to(kFloat32);
    return backward_input(gy, w, g, input_sizes, [&] { return grad_rows(gy, g); }).to(grad_output.dtype());
  }
  return backward_input(grad_output, weight, g, input_sizes, [&] { return grad_rows(grad_output, g); });
}

Tensor conv2d_backward_weight(const Tensor& grad_output, const Tensor& input, const Shape& weight_sizes,
                              Size2 stride, Size2 padding, Size2 dilation, int64_t groups) {
  const char* op = "conv2d_backward_weight";
  detail::check_same_device(grad_output, input, op, "input");
  check_float(op, "input", input);
  VNN_CHECK(DTypeError, input.dtype() == grad_output.dtype(), op, ": grad_output and input must have the same dtype");
  ConvGeom g = geometry(op, input.sizes(), weight_sizes, stride, padding, dilation, groups);
  VNN_CHECK(ShapeError, (grad_output.sizes() == Shape{g.N, g.O, g.OH, g.OW}), op, ": grad_output ", grad_output.sizes(),
            " does not match the output of input ", input.sizes(), " and weight ", weight_sizes.str());
  if (detail::is_low_precision(input.dtype()))
    return conv2d_backward_weight(grad_output.to(kFloat32), input.to(kFloat32), weight_sizes, stride, padding,
                                  dilation, groups)
        .to(input.dtype());
  Tensor gw;
  if (backward_weight_whole(grad_output, input, g, weight_sizes, &gw, nullptr)) return gw;
  Tensor col = im2col_rows(input, g).view({g.C * g.kh * g.kw, g.N * g.OH * g.OW});
  return backward_weight_rows(grad_rows(grad_output, g), col, g, weight_sizes);
}

Tensor conv2d_backward_bias(const Tensor& grad_output) {
  VNN_CHECK(ShapeError, grad_output.dim() == 4, "conv2d_backward_bias: expected a 4-D grad_output [N, O, OH, OW], got ",
            grad_output.sizes());
  // Two reductions over contiguous runs ([N, O, L] -> [N, O] -> [O]) instead
  // of one over the strided dims {0, 2, 3}, which walks the gradient
  // element by element (several times slower on the CPU).
  const int64_t N = grad_output.size(0), O = grad_output.size(1), L = grad_output.size(2) * grad_output.size(3);
  return sum(sum(grad_output.reshape({N, O, L}), 2), 0);
}

}  // namespace vnn

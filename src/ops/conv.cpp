// conv2d and its gradients: IM2COL unfolds the image into columns
// [N, C*kh*kw, OH*OW]; each group is then one batched MATMUL with the
// group's weight rows (broadcast over N by a stride-0 batch dim). The input
// gradient runs the transposed product and folds with COL2IM (a gather per
// pixel, race-free); the weight gradient multiplies with the columns.
#include <string>

#include "tensor/tensor_impl.hpp"
#include "vnn/error.h"
#include "vnn/linalg.h"
#include "vnn/nn_ops.h"
#include "vnn/reduction.h"

namespace vnn {

namespace {

std::string pair_str(Size2 s) { return "(" + std::to_string(s.h) + ", " + std::to_string(s.w) + ")"; }

struct ConvGeom {
  int64_t N, C, H, W, O, Cg, kh, kw, OH, OW, groups;
  Size2 stride, padding, dilation;
};

void check_args(const char* op, Size2 stride, Size2 padding, Size2 dilation, int64_t groups) {
  if (stride.h <= 0 || stride.w <= 0)
    throw ValueError(std::string(op) + ": stride must be positive, got " + pair_str(stride));
  if (padding.h < 0 || padding.w < 0)
    throw ValueError(std::string(op) + ": padding must be non-negative, got " + pair_str(padding));
  if (dilation.h <= 0 || dilation.w <= 0)
    throw ValueError(std::string(op) + ": dilation must be positive, got " + pair_str(dilation));
  if (groups <= 0) throw ValueError(std::string(op) + ": groups must be positive, got " + std::to_string(groups));
}

void check_float(const char* op, const char* arg, const Tensor& t) {
  if (t.dtype() != kFloat32 && t.dtype() != kFloat64)
    throw DTypeError(std::string(op) + ": " + arg + " must be float32 or float64, got " + name(t.dtype()) +
                     "; convert with .to(vnn::kFloat32)");
}

// Validates input / weight shapes (as sizes) and derives the output size.
ConvGeom geometry(const char* op, const Shape& in, const Shape& w, Size2 stride, Size2 padding, Size2 dilation,
                  int64_t groups) {
  check_args(op, stride, padding, dilation, groups);
  if (in.size() != 4)
    throw ShapeError(std::string(op) + ": expected a 4-D input [N, C, H, W], got input " + in.str());
  if (w.size() != 4)
    throw ShapeError(std::string(op) + ": expected a 4-D weight [O, C/groups, kh, kw], got weight " + w.str());
  ConvGeom g{in[0], in[1], in[2], in[3], w[0], w[1], w[2], w[3], 0, 0, groups, stride, padding, dilation};
  if (g.C % groups != 0 || g.O % groups != 0)
    throw ShapeError(std::string(op) + ": groups " + std::to_string(groups) + " must divide the input channels of input " +
                     in.str() + " and the output channels of weight " + w.str());
  if (g.Cg * groups != g.C)
    throw ShapeError(std::string(op) + ": weight " + w.str() + " expects " + std::to_string(g.Cg * groups) +
                     " input channels (C/groups = " + std::to_string(g.Cg) + ", groups = " + std::to_string(groups) +
                     ") but input " + in.str() + " has " + std::to_string(g.C));
  if (g.kh <= 0 || g.kw <= 0) throw ShapeError(std::string(op) + ": weight " + w.str() + " has an empty kernel");
  int64_t eh = dilation.h * (g.kh - 1) + 1, ew = dilation.w * (g.kw - 1) + 1;
  if (g.H + 2 * padding.h < eh || g.W + 2 * padding.w < ew)
    throw ShapeError(std::string(op) + ": kernel of weight " + w.str() + " (dilated " + std::to_string(eh) + "x" +
                     std::to_string(ew) + ") is larger than the padded input " + in.str() + " with padding " +
                     pair_str(padding));
  g.OH = (g.H + 2 * padding.h - eh) / stride.h + 1;
  g.OW = (g.W + 2 * padding.w - ew) / stride.w + 1;
  return g;
}

// [N, C*kh*kw, OH*OW] columns of input.
Tensor im2col(const Tensor& input, const ConvGeom& g) {
  Tensor col = detail::make_empty(input.impl()->ctx(), {g.N, g.C * g.kh * g.kw, g.OH * g.OW}, input.dtype());
  detail::enqueue(VNN_OP_IM2COL, "conv2d (im2col)", {&input}, col, {},
                  {g.kh, g.kw, g.stride.h, g.stride.w, g.padding.h, g.padding.w, g.dilation.h, g.dilation.w});
  return col;
}

// Group gi's weight as [N (stride 0), Og, Cg*kh*kw]; transposed: [N, CgK, Og].
Tensor group_weight(const Tensor& weight, const ConvGeom& g, int64_t gi, bool transposed) {
  int64_t og = g.O / g.groups, k = g.Cg * g.kh * g.kw;
  Tensor w2 = weight.reshape({g.O, k}).narrow(0, gi * og, og);
  if (transposed) w2 = w2.transpose(0, 1);
  Shape s = w2.sizes();
  return w2.expand({g.N, s[0], s[1]});  // a leading stride-0 batch dim
}

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Size2 stride, Size2 padding,
              Size2 dilation, int64_t groups) {
  const char* op = "conv2d";
  if (!input.defined() || !weight.defined())
    throw ValueError(std::string(op) + ": argument '" + (input.defined() ? "weight" : "input") + "' is undefined");
  detail::check_same_device(input, weight, op, "weight");
  check_float(op, "input", input);
  if (weight.dtype() != input.dtype())
    throw DTypeError(std::string(op) + ": input (" + name(input.dtype()) + ") and weight (" + name(weight.dtype()) +
                     ") must have the same dtype");
  ConvGeom g = geometry(op, input.sizes(), weight.sizes(), stride, padding, dilation, groups);
  if (bias.defined()) {
    detail::check_same_device(input, bias, op, "bias");
    if (bias.dim() != 1 || bias.sizes()[0] != g.O)
      throw ShapeError(std::string(op) + ": bias must have shape [" + std::to_string(g.O) + "] for weight " +
                       weight.sizes().str() + ", got bias " + bias.sizes().str());
    if (bias.dtype() != input.dtype())
      throw DTypeError(std::string(op) + ": bias dtype " + name(bias.dtype()) + " differs from input dtype " +
                       name(input.dtype()));
  }
  int64_t og = g.O / groups, ck = g.Cg * g.kh * g.kw, L = g.OH * g.OW;
  Tensor out;
  if (groups == 1 && bias.defined()) {
    // The bias rides in the GEMM: a ones row under the columns and the bias
    // as an extra weight column (one pass instead of a broadcast add).
    auto& ctx = input.impl()->ctx();
    Tensor col = detail::make_empty(ctx, {g.N, ck + 1, L}, input.dtype());
    col.narrow(1, ck, 1).fill_(1.0);
    Tensor body = col.narrow(1, 0, ck);
    detail::enqueue(VNN_OP_IM2COL, "conv2d (im2col)", {&input}, body, {},
                    {g.kh, g.kw, stride.h, stride.w, padding.h, padding.w, dilation.h, dilation.w});
    Tensor w = detail::make_empty(ctx, {g.O, ck + 1}, input.dtype());
    w.narrow(1, 0, ck).copy_(weight.reshape({g.O, ck}));
    w.narrow(1, ck, 1).copy_(bias.view({g.O, 1}));
    out = matmul(w.expand({g.N, g.O, ck + 1}), col);
    return out.view({g.N, g.O, g.OH, g.OW});
  }
  Tensor col = im2col(input, g);
  if (groups == 1) {
    out = matmul(group_weight(weight, g, 0, false), col);
  } else {
    out = detail::make_empty(input.impl()->ctx(), {g.N, g.O, L}, input.dtype());
    for (int64_t gi = 0; gi < groups; ++gi)
      out.narrow(1, gi * og, og).copy_(matmul(group_weight(weight, g, gi, false), col.narrow(1, gi * ck, ck)));
  }
  out = out.view({g.N, g.O, g.OH, g.OW});
  if (bias.defined()) out.add_(bias.view({1, g.O, 1, 1}));
  return out;
}

Tensor conv2d_backward_input(const Tensor& grad_output, const Tensor& weight, const Shape& input_sizes,
                             Size2 stride, Size2 padding, Size2 dilation, int64_t groups) {
  const char* op = "conv2d_backward_input";
  detail::check_same_device(grad_output, weight, op, "weight");
  check_float(op, "grad_output", grad_output);
  if (weight.dtype() != grad_output.dtype())
    throw DTypeError(std::string(op) + ": grad_output and weight must have the same dtype");
  ConvGeom g = geometry(op, input_sizes, weight.sizes(), stride, padding, dilation, groups);
  if (grad_output.sizes() != Shape{g.N, g.O, g.OH, g.OW})
    throw ShapeError(std::string(op) + ": grad_output " + grad_output.sizes().str() + " does not match the output [" +
                     std::to_string(g.N) + ", " + std::to_string(g.O) + ", " + std::to_string(g.OH) + ", " +
                     std::to_string(g.OW) + "] of input " + input_sizes.str() + " and weight " + weight.sizes().str());
  int64_t og = g.O / groups, ck = g.Cg * g.kh * g.kw, L = g.OH * g.OW;
  Tensor gy = grad_output.reshape({g.N, g.O, L});
  Tensor dcol;
  if (groups == 1) {
    dcol = matmul(group_weight(weight, g, 0, true), gy);
  } else {
    dcol = detail::make_empty(grad_output.impl()->ctx(), {g.N, g.C * g.kh * g.kw, L}, grad_output.dtype());
    for (int64_t gi = 0; gi < groups; ++gi)
      dcol.narrow(1, gi * ck, ck).copy_(matmul(group_weight(weight, g, gi, true), gy.narrow(1, gi * og, og)));
  }
  Tensor gx = detail::make_empty(grad_output.impl()->ctx(), input_sizes, grad_output.dtype());
  detail::enqueue(VNN_OP_COL2IM, "conv2d_backward_input (col2im)", {&dcol}, gx, {},
                  {g.kh, g.kw, stride.h, stride.w, padding.h, padding.w, dilation.h, dilation.w});
  return gx;
}

Tensor conv2d_backward_weight(const Tensor& grad_output, const Tensor& input, const Shape& weight_sizes,
                              Size2 stride, Size2 padding, Size2 dilation, int64_t groups) {
  const char* op = "conv2d_backward_weight";
  detail::check_same_device(grad_output, input, op, "input");
  check_float(op, "input", input);
  if (input.dtype() != grad_output.dtype())
    throw DTypeError(std::string(op) + ": grad_output and input must have the same dtype");
  ConvGeom g = geometry(op, input.sizes(), weight_sizes, stride, padding, dilation, groups);
  if (grad_output.sizes() != Shape{g.N, g.O, g.OH, g.OW})
    throw ShapeError(std::string(op) + ": grad_output " + grad_output.sizes().str() +
                     " does not match the output of input " + input.sizes().str() + " and weight " +
                     weight_sizes.str());
  int64_t og = g.O / groups, ck = g.Cg * g.kh * g.kw, L = g.OH * g.OW;
  Tensor col = im2col(input, g);
  Tensor gy = grad_output.reshape({g.N, g.O, L});
  Tensor gw;
  if (groups == 1) {
    gw = sum(matmul(gy, col.transpose(1, 2)), 0);
  } else {
    gw = detail::make_empty(input.impl()->ctx(), {g.O, ck}, input.dtype());
    for (int64_t gi = 0; gi < groups; ++gi)
      gw.narrow(0, gi * og, og)
          .copy_(sum(matmul(gy.narrow(1, gi * og, og), col.narrow(1, gi * ck, ck).transpose(1, 2)), 0));
  }
  return gw.view(weight_sizes);
}

Tensor conv2d_backward_bias(const Tensor& grad_output) {
  if (grad_output.dim() != 4)
    throw ShapeError("conv2d_backward_bias: expected a 4-D grad_output [N, O, OH, OW], got " +
                     grad_output.sizes().str());
  return sum(grad_output, std::vector<int64_t>{0, 2, 3});
}

}  // namespace vnn

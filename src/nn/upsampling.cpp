// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Upsample, PixelShuffle and PixelUnshuffle (include/vnn/nn/upsampling.h):
// interpolate, and reshape / permute with PyTorch's element order.
#include "vnn/nn/upsampling.h"

#include <string>
#include <vector>

#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::nn {

namespace functional {

namespace {
// Shape helpers: the leading (batch) dims of a [*, C, H, W] tensor.
std::vector<int64_t> ps_leading(const Tensor& x) {
  std::vector<int64_t> lead;
  for (int i = 0; i < x.dim() - 3; ++i) lead.push_back(x.size(i));
  return lead;
}
Shape ps_shape(std::vector<int64_t> lead, std::initializer_list<int64_t> tail) {
  lead.insert(lead.end(), tail.begin(), tail.end());
  return Shape(lead);
}
}  // namespace

Tensor pixel_shuffle(const Tensor& input, const PixelShuffleFuncOptions& o) {
  VNN_CHECK(ValueError, input.defined(), "pixel_shuffle: argument 'input' is an undefined tensor");
  const int64_t r = o.upscale_factor();
  VNN_CHECK(ValueError, r >= 1, "pixel_shuffle: upscale_factor must be >= 1, got ", r);
  VNN_CHECK(ShapeError, input.dim() >= 3, "pixel_shuffle: input must have at least 3 dims [*, C, H, W], got shape ",
            input.sizes());
  const int n = input.dim();
  const int64_t c = input.size(n - 3), h = input.size(n - 2), w = input.size(n - 1);
  VNN_CHECK(ShapeError, c % (r * r) == 0, "pixel_shuffle: channels ", c, " of input ", input.sizes(),
            " must be divisible by upscale_factor^2 = ", r * r);
  const int64_t oc = c / (r * r);
  std::vector<int64_t> lead = ps_leading(input);
  const int b = int(lead.size());
  Tensor x = input.reshape(ps_shape(lead, {oc, r, r, h, w}));
  std::vector<int64_t> perm;
  for (int i = 0; i < b; ++i) perm.push_back(i);
  for (int i : {0, 3, 1, 4, 2}) perm.push_back(b + i);  // [*, oc, h, r, w, r]
  return x.permute(Shape(perm)).reshape(ps_shape(lead, {oc, h * r, w * r}));
}

Tensor pixel_unshuffle(const Tensor& input, const PixelUnshuffleFuncOptions& o) {
  VNN_CHECK(ValueError, input.defined(), "pixel_unshuffle: argument 'input' is an undefined tensor");
  const int64_t r = o.downscale_factor();
  VNN_CHECK(ValueError, r >= 1, "pixel_unshuffle: downscale_factor must be >= 1, got ", r);
  VNN_CHECK(ShapeError, input.dim() >= 3, "pixel_unshuffle: input must have at least 3 dims [*, C, H, W], got shape ",
            input.sizes());
  const int n = input.dim();
  const int64_t c = input.size(n - 3), h = input.size(n - 2), w = input.size(n - 1);
  VNN_CHECK(ShapeError, h % r == 0 && w % r == 0, "pixel_unshuffle: height ", h, " and width ", w, " of input ",
            input.sizes(), " must be divisible by downscale_factor ", r);
  std::vector<int64_t> lead = ps_leading(input);
  const int b = int(lead.size());
  Tensor x = input.reshape(ps_shape(lead, {c, h / r, r, w / r, r}));
  std::vector<int64_t> perm;
  for (int i = 0; i < b; ++i) perm.push_back(i);
  for (int i : {0, 2, 4, 1, 3}) perm.push_back(b + i);  // [*, c, r, r, h/r, w/r]
  return x.permute(Shape(perm)).reshape(ps_shape(lead, {c * r * r, h / r, w / r}));
}

}  // namespace functional

Tensor UpsampleImpl::forward(const Tensor& x) {
  functional::InterpolateFuncOptions fo;
  if (options.size()) fo.size(*options.size());
  if (options.scale_factor()) fo.scale_factor(*options.scale_factor());
  fo.mode(options.mode()).align_corners(options.align_corners());
  return functional::interpolate(x, fo);
}

std::string UpsampleImpl::describe() const {
  std::string s = "Upsample(";
  if (options.size()) {
    s += "size=(";
    for (size_t i = 0; i < options.size()->size(); ++i) s += (i ? ", " : "") + std::to_string((*options.size())[i]);
    s += ")";
  } else if (options.scale_factor()) {
    s += "scale_factor=(";
    for (size_t i = 0; i < options.scale_factor()->size(); ++i)
      s += ::vnn::detail::str_cat(i ? ", " : "", (*options.scale_factor())[i]);
    s += ")";
  }
  return s + ")";
}

PixelShuffleImpl::PixelShuffleImpl(const PixelShuffleOptions& o) : Cloneable("PixelShuffle"), options(o) {
  VNN_CHECK(ValueError, o.upscale_factor() >= 1, "PixelShuffle: upscale_factor must be >= 1, got ",
            o.upscale_factor());
}
std::string PixelShuffleImpl::describe() const {
  return ::vnn::detail::str_cat("PixelShuffle(upscale_factor=", options.upscale_factor(), ")");
}
PixelUnshuffleImpl::PixelUnshuffleImpl(const PixelUnshuffleOptions& o) : Cloneable("PixelUnshuffle"), options(o) {
  VNN_CHECK(ValueError, o.downscale_factor() >= 1, "PixelUnshuffle: downscale_factor must be >= 1, got ",
            o.downscale_factor());
}
std::string PixelUnshuffleImpl::describe() const {
  return ::vnn::detail::str_cat("PixelUnshuffle(downscale_factor=", options.downscale_factor(), ")");
}

}  // namespace vnn::nn

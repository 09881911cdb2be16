// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Transforms run on worker threads: host loops only, no backend ops.
#include <cstring>

#include "data/host_util.hpp"
#include "vnn/data/transforms.h"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::data {

using detail::host_contiguous;
using detail::host_empty;
using detail::host_ptr;
using detail::require_host;

void RandomKey::words(uint32_t out[4]) const {
  out[0] = uint32_t(uint64_t(index));
  out[1] = uint32_t(uint64_t(index) >> 32);
  out[2] = uint32_t(uint64_t(epoch));
  out[3] = (uint32_t(uint64_t(epoch) >> 32) << 8) ^ slot;
  philox4x32_10(out, uint32_t(seed), uint32_t(seed >> 32));
}

namespace {
void need_hw(const Tensor& x, const char* what) {
  require_host(x, what);
  if (x.dim() < 2) VNN_THROW(ShapeError, what, ": expected a tensor [..., H, W], got shape ", x.shape_str());
}
}  // namespace

Normalize::Normalize(std::vector<double> mean, std::vector<double> std) : mean_(std::move(mean)), std_(std::move(std)) {
  if (mean_.empty() || mean_.size() != std_.size())
    VNN_THROW(ValueError, "Normalize: mean and std need the same non-zero length (got ", mean_.size(), " and ",
              std_.size(), ")");
  for (double s : std_) VNN_CHECK(ValueError, s != 0, "Normalize: std contains 0");
}

Tensor Normalize::apply(const Tensor& x_in, const RandomKey&) const {
  require_host(x_in, "Normalize");
  Tensor x = host_contiguous(x_in);
  int64_t c = x.dim() >= 3 ? x.size(-3) : 1;
  if (mean_.size() != 1 && int64_t(mean_.size()) != c)
    VNN_THROW(ShapeError, "Normalize: ", mean_.size(), " means for ", c, " channels (input shape ", x.shape_str(), ")");
  int64_t plane = x.dim() >= 2 ? x.size(-1) * x.size(-2) : x.numel();
  DType out_t = x.dtype() == kFloat64 ? kFloat64 : kFloat32;
  if (x.dtype() != kFloat32 && x.dtype() != kFloat64 && x.dtype() != kUInt8)
    VNN_THROW(DTypeError, "Normalize: expected float32, float64 or uint8 input, got ", name(x.dtype()));
  Tensor out = host_empty(x.sizes(), out_t);
  int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) {
    size_t ch = mean_.size() == 1 ? 0 : size_t((i / plane) % c);
    double v = x.dtype() == kFloat32 ? double(static_cast<const float*>(host_ptr(x))[i])
             : x.dtype() == kFloat64 ? static_cast<const double*>(host_ptr(x))[i]
                                     : double(static_cast<const uint8_t*>(host_ptr(x))[i]);
    double r = (v - mean_[ch]) / std_[ch];
    if (out_t == kFloat32) static_cast<float*>(host_ptr(out))[i] = float(r);
    else static_cast<double*>(host_ptr(out))[i] = r;
  }
  return out;
}

RandomCrop::RandomCrop(int64_t size, int64_t padding) : size_(size), padding_(padding) {
  if (size <= 0 || padding < 0)
    VNN_THROW(ValueError, "RandomCrop: size must be > 0 and padding >= 0 (got size ", size, ", padding ", padding, ")");
}

Tensor RandomCrop::apply(const Tensor& x_in, const RandomKey& key) const {
  need_hw(x_in, "RandomCrop");
  Tensor x = host_contiguous(x_in);
  int64_t h = x.size(-2), w = x.size(-1);
  int64_t ph = h + 2 * padding_, pw = w + 2 * padding_;
  if (size_ > ph || size_ > pw)
    VNN_THROW(ShapeError, "RandomCrop: crop ", size_, " is larger than the padded input ", ph, "x", pw);
  uint32_t r[4];
  key.words(r);
  int64_t top = int64_t(r[0] % uint32_t(ph - size_ + 1)) - padding_;
  int64_t left = int64_t(r[1] % uint32_t(pw - size_ + 1)) - padding_;
  Shape shape = x.sizes();
  shape[shape.size() - 2] = size_;
  shape[shape.size() - 1] = size_;
  Tensor out = host_empty(shape, x.dtype());
  size_t isz = itemsize(x.dtype());
  int64_t planes = x.numel() / (h * w);
  const char* src = static_cast<const char*>(host_ptr(x));
  char* dst = static_cast<char*>(host_ptr(out));
  std::memset(dst, 0, out.nbytes());  // the padding
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < size_; ++i) {
      int64_t sy = top + i;
      if (sy < 0 || sy >= h) continue;
      int64_t x0 = std::max<int64_t>(0, -left), x1 = std::min<int64_t>(size_, w - left);
      if (x1 <= x0) continue;
      std::memcpy(dst + size_t((p * size_ + i) * size_ + x0) * isz, src + size_t((p * h + sy) * w + left + x0) * isz,
                  size_t(x1 - x0) * isz);
    }
  return out;
}

RandomHorizontalFlip::RandomHorizontalFlip(double p) : p_(p) {
  VNN_CHECK(ValueError, p >= 0 && p <= 1, "RandomHorizontalFlip: p must be in [0, 1], got ", p);
}

Tensor RandomHorizontalFlip::apply(const Tensor& x_in, const RandomKey& key) const {
  need_hw(x_in, "RandomHorizontalFlip");
  uint32_t r[4];
  key.words(r);
  double u = double(r[0]) * (1.0 / 4294967296.0);
  if (!(u < p_)) return x_in;
  Tensor x = host_contiguous(x_in);
  Tensor out = host_empty(x.sizes(), x.dtype());
  int64_t w = x.size(-1), rows = x.numel() / std::max<int64_t>(w, 1);
  size_t isz = itemsize(x.dtype());
  const char* src = static_cast<const char*>(host_ptr(x));
  char* dst = static_cast<char*>(host_ptr(out));
  for (int64_t rr = 0; rr < rows; ++rr)
    for (int64_t j = 0; j < w; ++j)
      std::memcpy(dst + size_t(rr * w + j) * isz, src + size_t(rr * w + (w - 1 - j)) * isz, isz);
  return out;
}

Compose::Compose(std::vector<TransformPtr> parts) : parts_(std::move(parts)) {
  for (auto& p : parts_) VNN_CHECK(ValueError, p, "Compose: a transform is null");
}

Tensor Compose::apply(const Tensor& x, const RandomKey& key) const {
  Tensor y = x;
  for (size_t i = 0; i < parts_.size(); ++i) {
    RandomKey k = key;
    k.slot = key.slot * 64 + uint32_t(i) + 1;  // nested Composes still get distinct slots
    y = parts_[i]->apply(y, k);
  }
  return y;
}

TransformDataset::TransformDataset(DatasetPtr base, TransformPtr transform, uint64_t seed)
    : base_(std::move(base)), transform_(std::move(transform)), seed_(seed) {
  if (!base_ || !transform_) VNN_THROW(ValueError, "TransformDataset: dataset and transform must be non-null");
}

Example TransformDataset::get_for_epoch(int64_t index, int64_t epoch) const {
  Example e = base_->get_for_epoch(index, epoch);
  RandomKey key;
  key.seed = seed_;
  key.epoch = epoch;
  key.index = index;
  e.data = transform_->apply(e.data, key);
  return e;
}

}  // namespace vnn::data

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Per-example transforms on host tensors shaped [..., H, W] (usually
// [C, H, W]). Random ones draw from Philox4x32-10 keyed by (seed, epoch,
// index, position in a Compose), so an example gets the same augmentation
// in a given epoch whatever the worker count or order.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "vnn/data/dataset.h"

namespace vnn::data {

/// What a random transform's draw depends on: (seed, epoch, index, slot), never the thread.
struct RandomKey {
  /// The dataset's transform seed.
  uint64_t seed = 0;
  /// The epoch being loaded.
  int64_t epoch = 0;
  /// The example's index.
  int64_t index = 0;
  /// Which transform of a Compose draws (its position).
  uint32_t slot = 0;  // which transform of a Compose
  /// Four random 32-bit words for this key.
  void words(uint32_t out[4]) const;
};

/// The interface of a per-example transform of host tensors shaped [..., H, W].
class Transform {
 public:
  /// Virtual: transforms are shared through TransformPtr.
  virtual ~Transform() = default;
  /// The transformed x; random transforms draw only from `key`.
  virtual Tensor apply(const Tensor& x, const RandomKey& key) const = 0;
};
/// A shared, immutable transform.
using TransformPtr = std::shared_ptr<const Transform>;

/// (x - mean[c]) / std[c] per channel c = dim -3 (one value: all channels).
/// Floating output (float32 unless x is float64).
class Normalize : public Transform {
 public:
  /// Per-channel `mean` and `std` (one value each, or one per channel; ValueError for a zero std).
  Normalize(std::vector<double> mean, std::vector<double> std);
  Tensor apply(const Tensor& x, const RandomKey& key) const override;

 private:
  std::vector<double> mean_, std_;
};

/// Zero-pads H and W by `padding` on every side, then cuts a random
/// size x size window.
class RandomCrop : public Transform {
 public:
  /// Windows of `size` x `size` after zero-padding by `padding` (apply throws ShapeError when the window does not fit).
  explicit RandomCrop(int64_t size, int64_t padding = 0);
  Tensor apply(const Tensor& x, const RandomKey& key) const override;

 private:
  int64_t size_, padding_;
};

/// Mirrors W with probability p.
class RandomHorizontalFlip : public Transform {
 public:
  /// Flips with probability `p` in [0, 1].
  explicit RandomHorizontalFlip(double p = 0.5);
  Tensor apply(const Tensor& x, const RandomKey& key) const override;

 private:
  double p_;
};

/// Applies each in turn; transform i draws with slot = i.
class Compose : public Transform {
 public:
  /// The transforms in order.
  explicit Compose(std::vector<TransformPtr> parts);
  Tensor apply(const Tensor& x, const RandomKey& key) const override;

 private:
  std::vector<TransformPtr> parts_;
};

/// base with `transform` applied to each example's data.
class TransformDataset : public Dataset {
 public:
  /// `base` with `transform` applied, drawing with `seed`.
  TransformDataset(DatasetPtr base, TransformPtr transform, uint64_t seed = 0);
  int64_t size() const override { return base_->size(); }
  Example get(int64_t index) const override { return get_for_epoch(index, 0); }
  Example get_for_epoch(int64_t index, int64_t epoch) const override;

 private:
  DatasetPtr base_;
  TransformPtr transform_;
  uint64_t seed_;
};

}  // namespace vnn::data

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Datasets: indexable collections of (data, target) examples on the host.
//
//   auto ds = std::make_shared<vnn::data::TensorDataset>(x, y);
//   auto parts = vnn::data::random_split(ds, {50000, 10000}, gen);
//
// get() must be safe to call from several threads at once (DataLoader
// workers do): datasets here are immutable after construction.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vnn/random.h"
#include "vnn/tensor.h"

namespace vnn::data {

/// One example: a data tensor and its target, on the host.
struct Example {
  /// The input (an image, a feature row, ...).
  Tensor data;
  /// The label or regression target; may be undefined (unlabelled data).
  Tensor target;  // may be undefined (unlabelled data)
};

/// The interface of an indexable dataset; get() must be safe to call from several threads at once.
class Dataset {
 public:
  /// Virtual: datasets are shared through DatasetPtr.
  virtual ~Dataset() = default;
  /// Number of examples.
  virtual int64_t size() const = 0;
  /// Example `index` in [0, size()) (IndexError otherwise).
  virtual Example get(int64_t index) const = 0;
  /// The example as seen in a given epoch: random transforms draw from
  /// (seed, epoch, index), so results do not depend on which thread asks.
  virtual Example get_for_epoch(int64_t index, int64_t epoch) const {
    (void)epoch;
    return get(index);
  }
};
/// A shared, immutable dataset, as DataLoader and Subset hold it.
using DatasetPtr = std::shared_ptr<const Dataset>;

/// Throws IndexError unless 0 <= index < size ("<what>: index 12 out of range for 10 examples").
void check_index(int64_t index, int64_t size, const char* what);

/// Rows of data (and targets) along dim 0; both are copied to the host.
class TensorDataset : public Dataset {
 public:
  /// One example per row of `data` (and of `targets`, which must have as many rows when given).
  explicit TensorDataset(Tensor data, Tensor targets = Tensor());
  int64_t size() const override { return n_; }
  Example get(int64_t index) const override;
  /// All rows of data, on the host.
  const Tensor& data() const { return data_; }
  /// All targets, on the host (undefined when none were given).
  const Tensor& targets() const { return targets_; }

 private:
  Tensor data_, targets_;
  int64_t n_ = 0;
};

/// The examples of base at the given indices (each checked against base).
class Subset : public Dataset {
 public:
  /// The examples of `base` at `indices` (IndexError for an index outside base).
  Subset(DatasetPtr base, std::vector<int64_t> indices);
  int64_t size() const override { return int64_t(indices_.size()); }
  Example get(int64_t index) const override;
  Example get_for_epoch(int64_t index, int64_t epoch) const override;
  /// The indices into the base dataset.
  const std::vector<int64_t>& indices() const { return indices_; }

 private:
  DatasetPtr base_;
  std::vector<int64_t> indices_;
};

/// Datasets one after another.
class ConcatDataset : public Dataset {
 public:
  /// The examples of `parts` one after another.
  explicit ConcatDataset(std::vector<DatasetPtr> parts);
  int64_t size() const override { return ends_.empty() ? 0 : ends_.back(); }
  Example get(int64_t index) const override { return get_for_epoch(index, 0); }
  Example get_for_epoch(int64_t index, int64_t epoch) const override;

 private:
  std::vector<DatasetPtr> parts_;
  std::vector<int64_t> ends_;  // cumulative sizes
};

/// Disjoint random subsets of the given lengths (summing to base->size()),
/// from a permutation drawn with gen (randperm), as torch.utils.data.random_split.
std::vector<std::shared_ptr<Subset>> random_split(DatasetPtr base, const std::vector<int64_t>& lengths, Generator& gen);
/// Fractions summing to 1: lengths floor(f * n), the remainder handed out
/// one by one from the first part on (PyTorch's rule).
std::vector<std::shared_ptr<Subset>> random_split(DatasetPtr base, const std::vector<double>& fractions, Generator& gen);

}  // namespace vnn::data

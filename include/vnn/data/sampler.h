// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Samplers: the example order a DataLoader follows, epoch by epoch.
//
//   auto sampler = std::make_shared<vnn::data::DistributedSampler>(
//       train_set->size(), vnn::data::DistributedSamplerOptions{}.replicas(world, rank).with_seed(0));
//   vnn::data::DataLoaderOptions o;
//   o.batch_size = 64; o.sampler = sampler;     // instead of o.shuffle
//   vnn::data::DataLoader loader(train_set, o);
//   for (int64_t epoch = 0; epoch < epochs; ++epoch) {
//     sampler->set_epoch(epoch);                 // as in PyTorch (optional here)
//     for (auto& batch : loader) ...
//   }
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace vnn::data {

/// The order a DataLoader visits a dataset, epoch by epoch (instead of shuffle).
class Sampler {
 public:
  /// Virtual: samplers are shared through SamplerPtr.
  virtual ~Sampler() = default;
  /// The dataset indices of one epoch, in order. `epoch` is the DataLoader's
  /// (its pass count, or what DataLoader::set_epoch chose).
  virtual std::vector<int64_t> indices(int64_t epoch) const = 0;
  /// How many indices every epoch has.
  virtual int64_t size() const = 0;
};
/// A shared sampler, as DataLoaderOptions::sampler holds it.
using SamplerPtr = std::shared_ptr<Sampler>;

/// Options of DistributedSampler (torch's DistributedSampler arguments), with chained setters.
struct DistributedSamplerOptions {
  /// Number of ranks sharing the dataset (the world size).
  int64_t num_replicas = 1;  // the world size
  /// This process's rank, in [0, num_replicas).
  int64_t rank = 0;          // this process's rank, in [0, num_replicas)
  /// Reshuffle every epoch (default true).
  bool shuffle = true;
  /// Seed of the shuffle; must be the same on every rank.
  uint64_t seed = 0;         // the same on every rank
  /// Drop the tail instead of padding, so every rank gets floor(size / num_replicas).
  bool drop_last = false;

  /// Sets num_replicas and rank.
  DistributedSamplerOptions& replicas(int64_t n, int64_t r) {
    num_replicas = n;
    rank = r;
    return *this;
  }
  /// Sets shuffle.
  DistributedSamplerOptions& with_shuffle(bool s) {
    shuffle = s;
    return *this;
  }
  /// Sets seed.
  DistributedSamplerOptions& with_seed(uint64_t s) {
    seed = s;
    return *this;
  }
  /// Sets drop_last.
  DistributedSamplerOptions& with_drop_last(bool d) {
    drop_last = d;
    return *this;
  }
};

/// This rank's share of a dataset: the same partitions as PyTorch's
/// torch.utils.data.DistributedSampler for the same arguments.
/// - shuffle: one permutation of all indices per epoch, torch.randperm with a
///   torch.Generator seeded with seed + epoch (the same on every rank), then
///   every rank takes indices rank, rank + num_replicas, ...
/// - drop_last = false: the list is padded by repeating its start until all
///   ranks get ceil(size / num_replicas); drop_last = true: its tail is
///   dropped, each rank getting floor(size / num_replicas).
/// Throws ValueError for num_replicas < 1, rank outside [0, num_replicas) or
/// a negative dataset size.
class DistributedSampler : public Sampler {
 public:
  /// The share of a dataset of `dataset_size` examples for options.rank (ValueError for invalid options).
  DistributedSampler(int64_t dataset_size, DistributedSamplerOptions options);

  std::vector<int64_t> indices(int64_t epoch) const override;
  int64_t size() const override { return num_samples_; }
  /// The indices of the epoch set_epoch chose (0 if never called).
  std::vector<int64_t> indices() const { return indices(epoch_.value_or(0)); }

  /// As PyTorch's set_epoch: every later epoch of a DataLoader uses this one
  /// until it is called again. Without it the DataLoader's epoch is used, so
  /// each pass reshuffles even when it is never called.
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  /// The epoch set_epoch chose, if any.
  std::optional<int64_t> epoch() const { return epoch_; }

  /// Size of the whole dataset.
  int64_t dataset_size() const { return dataset_size_; }
  /// Indices over all ranks per epoch (padded or dropped to a multiple of num_replicas).
  int64_t total_size() const { return num_samples_ * options_.num_replicas; }
  /// The options the sampler was built with.
  const DistributedSamplerOptions& options() const { return options_; }

 private:
  int64_t dataset_size_;
  DistributedSamplerOptions options_;
  int64_t num_samples_ = 0;
  std::optional<int64_t> epoch_;
};

/// torch.randperm(n, generator=torch.Generator().manual_seed(seed)) of
/// PyTorch's CPU generator, bit for bit: an mt19937 seeded with the low 32
/// bits of seed, and for i = 0 .. n-2 a swap of i with i + (next() % (n - i)).
std::vector<int64_t> torch_randperm(int64_t n, uint64_t seed);

}  // namespace vnn::data

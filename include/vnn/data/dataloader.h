// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Batches from a Dataset, optionally shuffled, assembled by worker threads.
//
//   vnn::data::DataLoaderOptions o;
//   o.batch_size = 64; o.shuffle = true; o.num_workers = 2;
//   o.pin_memory = true; o.device = vnn::best_device(); o.non_blocking = true;
//   vnn::data::DataLoader loader(train_set, o);
//   for (int epoch = 0; epoch < 3; ++epoch)
//     for (auto& batch : loader) step(batch.data, batch.target);
//
// - Order depends only on (seed, epoch): the same for any num_workers; with
//   a sampler, on what the sampler returns for the epoch.
//   Each pass (begin()) uses the next epoch unless set_epoch() chose one.
// - Workers assemble batches ahead, at most num_workers * prefetch_factor
//   beyond the one the loop holds; batches come out in order.
// - Leaving the loop early, or destroying the loader, stops and joins the
//   workers (each finishes at most the batch it is building).
// - An exception thrown while building a batch is rethrown, unchanged, in
//   the loop when that batch is due.
// - With a device, batch k+1 is already queued for copying (non_blocking,
//   from pinned memory when pin_memory) while the loop works on batch k.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "vnn/data/dataset.h"
#include "vnn/data/sampler.h"

namespace vnn::data {

/// Options of DataLoader: batching, order, workers, pinning and the delivery device.
struct DataLoaderOptions {
  /// Examples per batch.
  int64_t batch_size = 1;
  /// Reshuffle the order every epoch (seeded by seed and the epoch).
  bool shuffle = false;
  /// Seed of the shuffle.
  uint64_t seed = 0;
  /// Drop a last batch smaller than batch_size.
  bool drop_last = false;
  /// Worker threads building batches (0: built in the calling thread).
  int num_workers = 0;       // 0: batches are built in the calling thread
  /// Batches in flight per worker.
  int prefetch_factor = 2;   // batches in flight per worker
  /// Build host batches in page-locked memory (faster, asynchronous copies to a GPU).
  bool pin_memory = false;   // host batches in page-locked memory
  /// Device the batches are delivered on (default: the host).
  std::optional<Device> device;  // where batches are delivered (default: host)
  /// Copy batches to `device` asynchronously, the next batch queued while the loop works.
  bool non_blocking = false;
  /// Where the order comes from instead of shuffle (e.g. DistributedSampler);
  /// it is asked once per epoch with the loader's epoch. Not with shuffle.
  SamplerPtr sampler;
};

/// Stacked examples: data [B, ...], target [B, ...] (undefined when the
/// dataset has no targets).
struct Batch {
  /// The examples' data stacked along a new dim 0.
  Tensor data;
  /// The targets stacked along a new dim 0 (undefined when the dataset has none).
  Tensor target;
};

/// Batches of a Dataset in sampler or shuffled order, built by worker threads and prefetched to a device.
class DataLoader {
  struct Epoch;

 public:
  /// A loader over `dataset` with `options` (ValueError for invalid options such as shuffle with a sampler).
  DataLoader(DatasetPtr dataset, DataLoaderOptions options);
  /// Destroys the loader; a running epoch is owned (and its workers joined) by its iterators.
  ~DataLoader();
  /// Not copyable (it owns worker threads).
  DataLoader(const DataLoader&) = delete;
  /// Not assignable.
  DataLoader& operator=(const DataLoader&) = delete;

  /// Input iterator over one epoch's batches; advancing waits for the next batch.
  class Iterator {
   public:
    /// The end iterator.
    Iterator() = default;
    /// The current batch.
    const Batch& operator*() const { return batch_; }
    /// The current batch.
    const Batch* operator->() const { return &batch_; }
    /// Moves to the next batch (waits for it; rethrows a worker's exception).
    Iterator& operator++();
    /// Equal when both are at the end or both are not.
    bool operator==(const Iterator& o) const { return at_end() == o.at_end(); }
    /// Not operator==.
    bool operator!=(const Iterator& o) const { return !(*this == o); }

   private:
    friend class DataLoader;
    bool at_end() const;
    std::shared_ptr<Epoch> epoch_;
    int64_t k_ = 0;
    Batch batch_;
  };

  /// Starts an epoch (the next one, see set_epoch) and returns its first batch.
  Iterator begin();
  /// The end of any epoch.
  Iterator end() { return Iterator(); }

  /// Batches per epoch (with drop_last, full batches only).
  int64_t num_batches() const;
  /// The options the loader was built with.
  const DataLoaderOptions& options() const { return options_; }
  /// The next begin() runs this epoch (then counting on from it).
  void set_epoch(int64_t epoch) { next_epoch_ = epoch; }
  /// The epoch the next begin() runs.
  int64_t next_epoch() const { return next_epoch_; }
  /// The example order of an epoch.
  std::vector<int64_t> order(int64_t epoch) const;

 private:
  DatasetPtr dataset_;
  DataLoaderOptions options_;
  int64_t next_epoch_ = 0;
  std::weak_ptr<Epoch> running_;
};

/// Builds one host batch from dataset examples (what workers run): sample
/// bytes are copied straight into one preallocated buffer. Throws
/// ShapeError / DTypeError naming the sample that does not match sample 0.
Batch collate(const Dataset& dataset, const std::vector<int64_t>& indices, int64_t epoch);

}  // namespace vnn::data

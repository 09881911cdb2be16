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

struct DataLoaderOptions {
  int64_t batch_size = 1;
  bool shuffle = false;
  uint64_t seed = 0;
  bool drop_last = false;
  int num_workers = 0;       // 0: batches are built in the calling thread
  int prefetch_factor = 2;   // batches in flight per worker
  bool pin_memory = false;   // host batches in page-locked memory
  std::optional<Device> device;  // where batches are delivered (default: host)
  bool non_blocking = false;
  // Where the order comes from instead of shuffle (e.g. DistributedSampler);
  // it is asked once per epoch with the loader's epoch. Not with shuffle.
  SamplerPtr sampler;
};

// Stacked examples: data [B, ...], target [B, ...] (undefined when the
// dataset has no targets).
struct Batch {
  Tensor data;
  Tensor target;
};

class DataLoader {
  struct Epoch;

 public:
  DataLoader(DatasetPtr dataset, DataLoaderOptions options);
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  class Iterator {
   public:
    Iterator() = default;
    const Batch& operator*() const { return batch_; }
    const Batch* operator->() const { return &batch_; }
    Iterator& operator++();
    bool operator==(const Iterator& o) const { return at_end() == o.at_end(); }
    bool operator!=(const Iterator& o) const { return !(*this == o); }

   private:
    friend class DataLoader;
    bool at_end() const;
    std::shared_ptr<Epoch> epoch_;
    int64_t k_ = 0;
    Batch batch_;
  };

  Iterator begin();
  Iterator end() { return Iterator(); }

  int64_t num_batches() const;
  const DataLoaderOptions& options() const { return options_; }
  // The next begin() runs this epoch (then counting on from it).
  void set_epoch(int64_t epoch) { next_epoch_ = epoch; }
  int64_t next_epoch() const { return next_epoch_; }
  // The example order of an epoch.
  std::vector<int64_t> order(int64_t epoch) const;

 private:
  DatasetPtr dataset_;
  DataLoaderOptions options_;
  int64_t next_epoch_ = 0;
  std::weak_ptr<Epoch> running_;
};

// Builds one host batch from dataset examples (what workers run): sample
// bytes are copied straight into one preallocated buffer. Throws
// ShapeError / DTypeError naming the sample that does not match sample 0.
Batch collate(const Dataset& dataset, const std::vector<int64_t>& indices, int64_t epoch);

}  // namespace vnn::data

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DataLoader: a per-epoch state shared by the loop's iterator, with worker
// threads that claim batch numbers in order and park results in a map.
// Workers only touch host memory (see host_util.hpp); with pin_memory they
// stack each batch straight into a pinned block (one copy, not two), taken
// from the thread-safe pinned host cache. Device transfers happen in the
// loop's thread.
#include "vnn/data/dataloader.h"

#include <condition_variable>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <typeinfo>

#include "data/host_util.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/data/readers.h"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/profiler.h"

namespace vnn::data {

using detail::host_empty;
using detail::host_ptr;

namespace {
// A new host batch buffer: pinned when pinner is set.
Tensor batch_buffer(const Shape& shape, DType dtype, vnn::detail::DeviceContext* pinner) {
  return pinner ? vnn::detail::pinned_empty(*pinner, shape, dtype) : host_empty(shape, dtype, "DataLoader (collate)");
}

// Rows `indices` of a contiguous host tensor [N, ...] into a new batch
// [B, ...]: one memcpy per example.
Tensor gather_rows(const Tensor& src, const std::vector<int64_t>& indices, vnn::detail::DeviceContext* pinner) {
  Shape shape = src.sizes();
  const int64_t n = shape[0];
  shape[0] = int64_t(indices.size());
  Tensor out = batch_buffer(shape, src.dtype(), pinner);
  const size_t row = n > 0 ? src.nbytes() / size_t(n) : 0;
  const char* from = static_cast<const char*>(host_ptr(src));
  char* dst = static_cast<char*>(host_ptr(out));
  for (size_t k = 0; k < indices.size(); ++k) std::memcpy(dst + k * row, from + size_t(indices[k]) * row, row);
  return out;
}

// Datasets of exactly these types, whose example i is row i of a host
// tensor, are collated by copying those rows: no per-example tensors, the
// loader's CPU per batch halves (bench/loader_bench.cpp). Subclasses
// (which may override get) and every other dataset go example by example.
bool collate_rows(const Dataset& dataset, const std::vector<int64_t>& indices, vnn::detail::DeviceContext* pinner,
                  Batch& b) {
  Tensor data, target;
  const char* what = nullptr;
  if (typeid(dataset) == typeid(FashionMNIST)) {
    const auto& f = static_cast<const FashionMNIST&>(dataset);
    data = f.images(), target = f.labels(), what = "FashionMNIST::get";
  } else if (typeid(dataset) == typeid(TensorDataset)) {
    const auto& t = static_cast<const TensorDataset&>(dataset);
    data = t.data(), target = t.targets(), what = "TensorDataset::get";
  } else {
    return false;
  }
  if (data.dim() < 1 || !data.is_contiguous() || (target.defined() && (target.dim() < 1 || !target.is_contiguous())))
    return false;
  for (int64_t i : indices) check_index(i, dataset.size(), what);
  b.data = gather_rows(data, indices, pinner);
  if (target.defined()) b.target = gather_rows(target, indices, pinner);
  return true;
}

// Stacks the samples into a new host tensor: pinned when pinner is set.
Tensor stack(const std::vector<Tensor>& parts, const std::vector<int64_t>& indices, const char* what,
             vnn::detail::DeviceContext* pinner) {
  const Tensor& first = parts[0];
  for (size_t i = 0; i < parts.size(); ++i) {
    detail::require_host(parts[i], what);
    VNN_CHECK(ShapeError, parts[i].sizes() == first.sizes(), "DataLoader: ", what, " of sample ", i, " (dataset index ",
              indices[i], ") has shape ", parts[i].shape_str(), " but sample 0 has ", first.shape_str(),
              "; batched examples need equal shapes");
    VNN_CHECK(DTypeError, parts[i].dtype() == first.dtype(), "DataLoader: ", what, " of sample ", i, " (dataset index ",
              indices[i], ") is ", name(parts[i].dtype()), " but sample 0 is ", name(first.dtype()));
  }
  Shape shape;
  shape.push_back(int64_t(parts.size()));
  for (auto s : first.sizes()) shape.push_back(s);
  Tensor out = batch_buffer(shape, first.dtype(), pinner);
  char* dst = static_cast<char*>(host_ptr(out));
  size_t bytes = first.nbytes();
  for (size_t i = 0; i < parts.size(); ++i) detail::copy_to_buffer(parts[i], dst + i * bytes);
  return out;
}

Batch collate_into(const Dataset& dataset, const std::vector<int64_t>& indices, int64_t epoch,
                   vnn::detail::DeviceContext* pinner) {
  VNN_CHECK(ValueError, !indices.empty(), "DataLoader: cannot collate an empty batch");
  Batch rows;
  if (collate_rows(dataset, indices, pinner, rows)) return rows;
  std::vector<Tensor> data, target;
  data.reserve(indices.size());
  target.reserve(indices.size());
  for (auto i : indices) {
    Example e = dataset.get_for_epoch(i, epoch);
    data.push_back(std::move(e.data));
    target.push_back(std::move(e.target));
  }
  Batch b;
  b.data = stack(data, indices, "data", pinner);
  bool labelled = target[0].defined();
  for (size_t i = 0; i < target.size(); ++i)
    VNN_CHECK(ValueError, target[i].defined() == labelled, "DataLoader: sample ", i, " (dataset index ", indices[i],
              ") ", (labelled ? "has no target" : "has a target"), " unlike sample 0");
  if (labelled) b.target = stack(target, indices, "target", pinner);
  return b;
}
}  // namespace

Batch collate(const Dataset& dataset, const std::vector<int64_t>& indices, int64_t epoch) {
  return collate_into(dataset, indices, epoch, nullptr);
}

struct DataLoader::Epoch {
  DatasetPtr dataset;
  DataLoaderOptions opt;
  int64_t epoch = 0;
  std::vector<int64_t> order;
  int64_t batches = 0;
  vnn::detail::DeviceContext* pinner = nullptr;  // pin_memory: who pins (resolved on the loop's thread)

  std::mutex m;
  std::condition_variable work_cv, ready_cv;
  int64_t next_claim = 0, next_deliver = 0;
  std::map<int64_t, std::pair<Batch, std::exception_ptr>> done;
  bool stop = false;
  std::vector<std::thread> threads;
  int64_t staged_k = -1;  // batch already handed to the device (overlap)
  Batch staged;

  std::vector<int64_t> indices(int64_t k) const {
    int64_t b = opt.batch_size, start = k * b, end = std::min<int64_t>(start + b, int64_t(order.size()));
    return std::vector<int64_t>(order.begin() + start, order.begin() + end);
  }

  void start() {
    for (int w = 0; w < opt.num_workers; ++w)
      threads.emplace_back([this, w] {
        profiler::set_thread_name("dataloader worker " + std::to_string(w));  // its own trace track
        work();
      });
  }

  void work() {
    int64_t depth = int64_t(opt.num_workers) * std::max(1, opt.prefetch_factor);
    for (;;) {
      int64_t k;
      {
        std::unique_lock<std::mutex> lock(m);
        work_cv.wait(lock, [&] { return stop || next_claim >= batches || next_claim < next_deliver + depth; });
        if (stop || next_claim >= batches) return;
        k = next_claim++;
      }
      std::pair<Batch, std::exception_ptr> r;
      try {
        profiler::Range range("data");
        r.first = collate_into(*dataset, indices(k), epoch, pinner);
      } catch (...) {
        r.second = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(m);
      done.emplace(k, std::move(r));
      ready_cv.notify_all();
    }
  }

  // Host batch k (built here when there are no workers).
  std::pair<Batch, std::exception_ptr> take(int64_t k, bool wait) {
    if (threads.empty()) {
      if (!wait) return {};
      try {
        profiler::Range range("data");
        return {collate_into(*dataset, indices(k), epoch, pinner), nullptr};
      } catch (...) {
        return {Batch(), std::current_exception()};
      }
    }
    std::unique_lock<std::mutex> lock(m);
    if (wait) ready_cv.wait(lock, [&] { return done.count(k) > 0 || stop; });
    auto it = done.find(k);
    if (it == done.end()) {
      VNN_CHECK(Error, !wait, "DataLoader: this pass was ended by a newer begin() on the same loader");
      return {};
    }
    auto r = std::move(it->second);
    done.erase(it);
    next_deliver = k + 1;
    work_cv.notify_all();
    return r;
  }

  Batch to_device(Batch b) const {
    if (opt.pin_memory) {  // already pinned by collate_into where a device pins
      b.data = b.data.pin_memory();
      if (b.target.defined()) b.target = b.target.pin_memory();
    }
    if (opt.device) {
      b.data = b.data.to(*opt.device, opt.non_blocking);
      if (b.target.defined()) b.target = b.target.to(*opt.device, opt.non_blocking);
    }
    return b;
  }

  Batch next(int64_t k) {
    Batch out;
    if (staged_k == k) {
      out = std::move(staged);
      staged = Batch();
      staged_k = -1;
    } else {
      auto r = take(k, true);
      if (r.second) std::rethrow_exception(r.second);
      out = to_device(std::move(r.first));
    }
    // Queue the next batch's copy now, so it overlaps the caller's step.
    if (opt.device && opt.non_blocking && !threads.empty() && k + 1 < batches) {
      auto r = take(k + 1, false);
      if (r.second) {
        std::lock_guard<std::mutex> lock(m);
        done.emplace(k + 1, std::move(r));  // surfaces when batch k+1 is due
      } else if (r.first.data.defined()) {
        staged = to_device(std::move(r.first));
        staged_k = k + 1;
      }
    }
    return out;
  }

  ~Epoch() {
    {
      std::lock_guard<std::mutex> lock(m);
      stop = true;
    }
    work_cv.notify_all();
    for (auto& t : threads) t.join();
  }
};

DataLoader::DataLoader(DatasetPtr dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  VNN_CHECK(ValueError, dataset_, "DataLoader: dataset is null");
  if (options_.batch_size <= 0) VNN_THROW(ValueError, "DataLoader: batch_size must be > 0, got ", options_.batch_size);
  if (options_.num_workers < 0 || options_.num_workers > 256)
    VNN_THROW(ValueError, "DataLoader: num_workers must be in [0, 256], got ", options_.num_workers);
  if (options_.prefetch_factor < 1)
    VNN_THROW(ValueError, "DataLoader: prefetch_factor must be >= 1, got ", options_.prefetch_factor);
  if (options_.sampler && options_.shuffle)
    VNN_THROW(ValueError,
              "DataLoader: sampler and shuffle = true exclude each other; the sampler decides the order "
              "(DistributedSampler shuffles itself)");
  if (options_.device) (void)device_info(*options_.device);  // DeviceNotFound now, not mid-epoch
}

DataLoader::~DataLoader() = default;  // running epochs are owned (and joined) by their iterators

int64_t DataLoader::num_batches() const {
  int64_t n = options_.sampler ? options_.sampler->size() : dataset_->size(), b = options_.batch_size;
  return options_.drop_last ? n / b : (n + b - 1) / b;
}

std::vector<int64_t> DataLoader::order(int64_t epoch) const {
  int64_t n = dataset_->size();
  if (options_.sampler) {
    std::vector<int64_t> o = options_.sampler->indices(epoch);
    if (int64_t(o.size()) != options_.sampler->size())
      VNN_THROW(ValueError, "DataLoader: the sampler returned ", o.size(), " indices for epoch ", epoch,
                " but its size() is ", options_.sampler->size());
    for (int64_t i : o)
      if (i < 0 || i >= n)
        VNN_THROW(IndexError, "DataLoader: the sampler gave index ", i, " for a dataset of ", n,
                  " examples; was it made for another dataset?");
    return o;
  }
  if (!options_.shuffle) {
    std::vector<int64_t> o(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) o[size_t(i)] = i;
    return o;
  }
  // One generator per (seed, epoch): the order never depends on workers.
  Generator gen(options_.seed * 0x9E3779B97F4A7C15ull + uint64_t(epoch) * 0xBF58476D1CE4E5B9ull + 1);
  return randperm(n, TensorOptions(kInt64), &gen).to_vector<int64_t>();
}

DataLoader::Iterator DataLoader::begin() {
  // A new pass ends the previous one (its workers stop once its iterators go).
  if (auto old = running_.lock()) {
    std::lock_guard<std::mutex> lock(old->m);
    old->stop = true;
    old->work_cv.notify_all();
    old->ready_cv.notify_all();
  }
  auto e = std::make_shared<Epoch>();
  e->dataset = dataset_;
  e->opt = options_;
  e->epoch = next_epoch_++;
  e->order = order(e->epoch);
  e->batches = num_batches();
  e->order.resize(size_t(std::min<int64_t>(int64_t(e->order.size()), e->batches * options_.batch_size)));
  if (options_.pin_memory) e->pinner = vnn::detail::pinning_context();
  running_ = e;
  Iterator it;
  it.epoch_ = e;
  if (e->batches == 0) return it;
  e->start();
  it.batch_ = e->next(0);
  return it;
}

bool DataLoader::Iterator::at_end() const { return !epoch_ || k_ >= epoch_->batches; }

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  if (at_end()) return *this;
  ++k_;
  batch_ = Batch();
  if (k_ < epoch_->batches) {
    batch_ = epoch_->next(k_);
  } else {
    epoch_.reset();  // joins the workers now, not when the iterator dies
  }
  return *this;
}

}  // namespace vnn::data

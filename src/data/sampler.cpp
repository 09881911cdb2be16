// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DistributedSampler, PyTorch's partitions (torch/utils/data/distributed.py,
// torch 1.13) and its CPU randperm (aten/src/ATen/native/TensorFactories.cpp).
#include "vnn/data/sampler.h"

#include <random>
#include <string>

#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::data {

std::vector<int64_t> torch_randperm(int64_t n, uint64_t seed) {
  if (n < 0) VNN_THROW(ValueError, "torch_randperm: n must be >= 0, got ", n);
  std::vector<int64_t> r(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) r[size_t(i)] = i;
  // at::mt19937 is the standard engine with the standard 32-bit seeding
  // (CPUGeneratorImpl keeps seed & 0xffffffff), so std::mt19937 matches it.
  std::mt19937 gen(static_cast<uint32_t>(seed & 0xffffffffu));
  for (int64_t i = 0; i + 1 < n; ++i) {
    // torch takes a 32-bit draw modulo (n - i), bias and all: kept for parity.
    int64_t z = int64_t(uint64_t(gen()) % uint64_t(n - i));
    std::swap(r[size_t(i)], r[size_t(i + z)]);
  }
  return r;
}

DistributedSampler::DistributedSampler(int64_t dataset_size, DistributedSamplerOptions options)
    : dataset_size_(dataset_size), options_(options) {
  const int64_t n = dataset_size, w = options.num_replicas, r = options.rank;
  if (n < 0) VNN_THROW(ValueError, "DistributedSampler: dataset_size must be >= 0, got ", n);
  if (w < 1) VNN_THROW(ValueError, "DistributedSampler: num_replicas must be >= 1 (the world size), got ", w);
  if (r < 0 || r >= w)
    VNN_THROW(ValueError, "DistributedSampler: invalid rank ", r, ", rank should be in the interval [0, ", w - 1, "]");
  // PyTorch: ceil((n - w) / w) when dropping an uneven tail, else ceil(n / w)
  // (math.ceil of a negative fraction is 0 when n < w).
  if (options.drop_last && n % w != 0)
    num_samples_ = n >= w ? (n - w + w - 1) / w : 0;
  else
    num_samples_ = (n + w - 1) / w;
}

std::vector<int64_t> DistributedSampler::indices(int64_t loader_epoch) const {
  const int64_t epoch = epoch_.value_or(loader_epoch);
  const int64_t n = dataset_size_, w = options_.num_replicas, total = total_size();
  std::vector<int64_t> all;
  if (options_.shuffle) {
    all = torch_randperm(n, options_.seed + uint64_t(epoch));
  } else {
    all.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i) all[size_t(i)] = i;
  }
  // Padding repeats the list from its start (cyclically when it is shorter
  // than the padding); drop_last cuts it to total.
  std::vector<int64_t> out;
  out.reserve(size_t(num_samples_));
  for (int64_t k = options_.rank; k < total; k += w) out.push_back(all[size_t(k % n)]);
  return out;
}

}  // namespace vnn::data

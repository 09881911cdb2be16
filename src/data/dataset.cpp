// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <algorithm>
#include <cmath>

#include "data/host_util.hpp"
#include "vnn/data/dataset.h"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::data {

void check_index(int64_t index, int64_t size, const char* what) {
  if (index < 0 || index >= size)
    VNN_THROW(IndexError, what, ": index ", index, " out of range for ", size, " examples");
}

TensorDataset::TensorDataset(Tensor data, Tensor targets) {
  if (!data.defined() || data.dim() == 0)
    VNN_THROW(ShapeError, "TensorDataset: data needs a leading example dimension");
  data_ = data.detach().cpu();
  n_ = data_.size(0);
  if (targets.defined()) {
    if (targets.dim() == 0 || targets.size(0) != n_)
      VNN_THROW(ShapeError, "TensorDataset: data has ", n_, " examples (shape ", data.shape_str(),
                ") but targets have shape ", targets.shape_str());
    targets_ = targets.detach().cpu();
  }
  synchronize(Device("cpu", 0));  // workers read these bytes directly
}

Example TensorDataset::get(int64_t index) const {
  check_index(index, n_, "TensorDataset::get");
  return {data_.select(0, index), targets_.defined() ? targets_.select(0, index) : Tensor()};
}

Subset::Subset(DatasetPtr base, std::vector<int64_t> indices) : base_(std::move(base)), indices_(std::move(indices)) {
  VNN_CHECK(ValueError, base_, "Subset: base dataset is null");
  int64_t n = base_->size();
  for (auto i : indices_) check_index(i, n, "Subset");
}

Example Subset::get(int64_t index) const {
  check_index(index, size(), "Subset::get");
  return base_->get(indices_[size_t(index)]);
}

Example Subset::get_for_epoch(int64_t index, int64_t epoch) const {
  check_index(index, size(), "Subset::get");
  return base_->get_for_epoch(indices_[size_t(index)], epoch);
}

ConcatDataset::ConcatDataset(std::vector<DatasetPtr> parts) : parts_(std::move(parts)) {
  int64_t total = 0;
  for (auto& p : parts_) {
    VNN_CHECK(ValueError, p, "ConcatDataset: a part is null");
    total += p->size();
    ends_.push_back(total);
  }
}

Example ConcatDataset::get_for_epoch(int64_t index, int64_t epoch) const {
  check_index(index, size(), "ConcatDataset::get");
  size_t part = size_t(std::upper_bound(ends_.begin(), ends_.end(), index) - ends_.begin());
  int64_t start = part == 0 ? 0 : ends_[part - 1];
  return parts_[part]->get_for_epoch(index - start, epoch);
}

std::vector<std::shared_ptr<Subset>> random_split(DatasetPtr base, const std::vector<int64_t>& lengths, Generator& gen) {
  VNN_CHECK(ValueError, base, "random_split: dataset is null");
  int64_t total = 0;
  for (auto l : lengths) {
    if (l < 0) VNN_THROW(ValueError, "random_split: negative length ", l);
    total += l;
  }
  if (total != base->size())
    VNN_THROW(ValueError, "random_split: lengths sum to ", total, " but the dataset has ", base->size(), " examples");
  std::vector<int64_t> perm = randperm(total, TensorOptions(kInt64), &gen).to_vector<int64_t>();
  std::vector<std::shared_ptr<Subset>> out;
  int64_t at = 0;
  for (auto l : lengths) {
    out.push_back(std::make_shared<Subset>(base, std::vector<int64_t>(perm.begin() + at, perm.begin() + at + l)));
    at += l;
  }
  return out;
}

std::vector<std::shared_ptr<Subset>> random_split(DatasetPtr base, const std::vector<double>& fractions, Generator& gen) {
  VNN_CHECK(ValueError, base, "random_split: dataset is null");
  double sum = 0;
  for (double f : fractions) {
    VNN_CHECK(ValueError, f >= 0 && f <= 1, "random_split: fraction ", f, " is not in [0, 1]");
    sum += f;
  }
  if (std::fabs(sum - 1.0) > 1e-9) VNN_THROW(ValueError, "random_split: fractions sum to ", sum, ", not 1");
  int64_t n = base->size(), given = 0;
  std::vector<int64_t> lengths;
  for (double f : fractions) {
    lengths.push_back(int64_t(std::floor(f * double(n))));
    given += lengths.back();
  }
  for (size_t i = 0; given < n && !lengths.empty(); i = (i + 1) % lengths.size(), ++given) ++lengths[i];
  return random_split(base, lengths, gen);
}

}  // namespace vnn::data

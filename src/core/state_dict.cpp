// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "vnn/detail/message.h"
#include "vnn/state_dict.h"

#include "vnn/error.h"

namespace vnn {

StateDict::StateDict(std::initializer_list<value_type> items) {
  items_.reserve(items.size());
  for (auto& i : items) push_back(i);
}

StateDict::StateDict(const container& items) {
  items_.reserve(items.size());
  for (auto& i : items) push_back(i);
}

StateDict::StateDict(const pair_vector& items) {
  items_.reserve(items.size());
  for (auto& i : items) push_back(i);
}

StateDict::StateDict(const std::map<std::string, Tensor>& items) {
  items_.reserve(items.size());
  for (auto& i : items) push_back(i);
}

StateDict::operator std::map<std::string, Tensor>() const { return {items_.begin(), items_.end()}; }

void StateDict::push_back(value_type item) {
  VNN_CHECK(ValueError, !contains(item.first), "StateDict: the name '", item.first,
            "' is already present (names are unique)");
  index_.emplace(item.first, items_.size());
  items_.push_back(std::move(item));
}

void StateDict::pop_back() {
  index_.erase(items_.back().first);
  items_.pop_back();
}

Tensor& StateDict::operator[](const std::string& name) {
  auto it = find(name);
  if (it != end()) return it->second;
  index_.emplace(name, items_.size());
  items_.emplace_back(name, Tensor());
  return items_.back().second;
}

const Tensor& StateDict::at(const std::string& name) const {
  auto it = find(name);
  if (it != end()) return it->second;
  std::string known;
  for (auto& i : items_) known += (known.empty() ? "" : ", ") + i.first;
  VNN_THROW(ValueError, "StateDict: no entry '", name, "' (names: ", (known.empty() ? "none" : known), ")");
}

StateDict::iterator StateDict::find(const std::string& name) {
  auto it = index_.find(name);
  return it == index_.end() ? items_.end() : items_.begin() + std::ptrdiff_t(it->second);
}

StateDict::const_iterator StateDict::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? items_.end() : items_.begin() + std::ptrdiff_t(it->second);
}

size_t StateDict::erase(const std::string& name) {
  auto it = index_.find(name);
  if (it == index_.end()) return 0;
  size_t pos = it->second;
  index_.erase(it);
  items_.erase(items_.begin() + std::ptrdiff_t(pos));
  for (size_t i = pos; i < items_.size(); ++i) index_[items_[i].first] = i;  // later entries moved up by one
  return 1;
}

std::vector<std::string> StateDict::keys() const {
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (auto& i : items_) out.push_back(i.first);
  return out;
}

}  // namespace vnn

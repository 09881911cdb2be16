// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn::StateDict: named tensors in order, the one type Module::state_dict()
// returns and io::save / io::load take and give (io::TensorMap is this
// type), so a checkpoint needs no conversion either way:
//   vnn::io::save("model.safetensors", model->state_dict());
//   model->load_state_dict(vnn::io::load("model.safetensors", device));   // map_location
// Keys are unique (adding one twice throws ValueError) and hashed, so a
// file of 100k tensors loads in linear time; rename an entry with erase +
// push_back, not by assigning to .first. It reads like both a
// vector of (name, tensor) pairs (sd[0].first, push_back, iteration in
// order) and a map (sd["fc.weight"], at, find, contains), and converts to
// and from std::map<std::string, Tensor> and the vector of pairs.
#pragma once
#include <cstddef>
#include <initializer_list>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vnn/tensor.h"

namespace vnn {

/// One entry of a StateDict: a (name, tensor) pair that also reads as
/// LibTorch's OrderedDict item (`item.key()`, `item.value()`); structured
/// bindings work too: `for (auto& [name, t] : model->named_parameters())`.
struct StateDictItem : std::pair<std::string, Tensor> {
  using std::pair<std::string, Tensor>::pair;
  /// An empty name and an undefined tensor.
  StateDictItem() = default;
  /// From a (name, tensor) pair.
  StateDictItem(const std::pair<std::string, Tensor>& p) : std::pair<std::string, Tensor>(p) {}  // NOLINT: implicit
  /// From a (name, tensor) pair.
  StateDictItem(std::pair<std::string, Tensor>&& p) : std::pair<std::string, Tensor>(std::move(p)) {}  // NOLINT
  /// The name (first).
  const std::string& key() const { return first; }
  /// The tensor (second).
  Tensor& value() { return second; }
  /// The tensor (second).
  const Tensor& value() const { return second; }
};

/// Named tensors in insertion order with unique, hashed names: both a vector of pairs and a map.
class StateDict {
 public:
  /// One entry: (name, tensor), with key() / value() as LibTorch's OrderedDict items.
  using value_type = StateDictItem;
  /// The ordered storage.
  using container = std::vector<value_type>;
  /// The vector-of-pairs form StateDict converts to and from.
  using pair_vector = std::vector<std::pair<std::string, Tensor>>;
  /// Iterator over the entries in order.
  using iterator = container::iterator;
  /// Const iterator over the entries in order.
  using const_iterator = container::const_iterator;

  /// An empty state dict.
  StateDict() = default;
  /// The given entries in order (ValueError for a repeated name).
  StateDict(std::initializer_list<value_type> items);
  /// The entries of a vector of items, in order (ValueError for a repeated name).
  StateDict(const container& items);                       // NOLINT: implicit
  /// The entries of a vector of pairs, in order (ValueError for a repeated name).
  StateDict(const pair_vector& items);                     // NOLINT: implicit, the former vector form
  /// The entries of a map, in name order.
  StateDict(const std::map<std::string, Tensor>& items);   // NOLINT: implicit, the former map form (name order)
  /// The entries as a vector of items.
  operator const container&() const { return items_; }    // NOLINT: implicit
  /// The entries as a vector of pairs (a copy).
  operator pair_vector() const { return pair_vector(items_.begin(), items_.end()); }  // NOLINT: implicit
  /// The entries as a std::map (by name).
  operator std::map<std::string, Tensor>() const;         // NOLINT: implicit

  // In order.
  /// Number of entries.
  size_t size() const { return items_.size(); }
  /// Whether there are no entries.
  bool empty() const { return items_.empty(); }
  /// First entry.
  iterator begin() { return items_.begin(); }
  /// Past the last entry.
  iterator end() { return items_.end(); }
  /// First entry.
  const_iterator begin() const { return items_.begin(); }
  /// Past the last entry.
  const_iterator end() const { return items_.end(); }
  /// Entry `i` in order (std::out_of_range past the end).
  value_type& operator[](size_t i) { return items_.at(i); }
  /// Entry `i` in order (std::out_of_range past the end).
  const value_type& operator[](size_t i) const { return items_.at(i); }
  /// The first entry.
  value_type& front() { return items_.front(); }
  /// The last entry.
  value_type& back() { return items_.back(); }
  /// Appends an entry; ValueError when the name exists.
  void push_back(value_type item);                         // ValueError when the name exists
  /// Appends (name, tensor); ValueError when the name exists.
  void emplace_back(std::string name, Tensor tensor) { push_back({std::move(name), std::move(tensor)}); }
  /// Removes the last entry.
  void pop_back();
  /// Removes every entry.
  void clear() {
    items_.clear();
    index_.clear();
  }
  /// Reserves room for `n` entries.
  void reserve(size_t n) { items_.reserve(n); }

  // By name.
  /// The tensor named `name`, adding an undefined one at the end when missing.
  Tensor& operator[](const std::string& name);             // adds an undefined tensor when missing
  /// The tensor named `name`; ValueError naming the keys when missing.
  const Tensor& at(const std::string& name) const;         // ValueError naming the keys when missing
  /// The entry named `name`, or end().
  iterator find(const std::string& name);
  /// The entry named `name`, or end().
  const_iterator find(const std::string& name) const;
  /// Whether an entry is named `name`.
  bool contains(const std::string& name) const { return find(name) != end(); }
  /// 1 if an entry is named `name`, else 0.
  size_t count(const std::string& name) const { return contains(name) ? 1 : 0; }
  /// Removes the entry named `name` (later entries keep their order); returns how many were removed.
  size_t erase(const std::string& name);
  /// The names in order.
  std::vector<std::string> keys() const;

 private:
  container items_;
  std::unordered_map<std::string, size_t> index_;  // name -> position in items_
};

}  // namespace vnn

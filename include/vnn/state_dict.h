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

class StateDict {
 public:
  using value_type = std::pair<std::string, Tensor>;
  using container = std::vector<value_type>;
  using iterator = container::iterator;
  using const_iterator = container::const_iterator;

  StateDict() = default;
  StateDict(std::initializer_list<value_type> items);
  StateDict(const container& items);                       // NOLINT: implicit, the former vector form
  StateDict(const std::map<std::string, Tensor>& items);   // NOLINT: implicit, the former map form (name order)
  operator const container&() const { return items_; }    // NOLINT: implicit
  operator std::map<std::string, Tensor>() const;         // NOLINT: implicit

  // In order.
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  value_type& operator[](size_t i) { return items_.at(i); }
  const value_type& operator[](size_t i) const { return items_.at(i); }
  value_type& front() { return items_.front(); }
  value_type& back() { return items_.back(); }
  void push_back(value_type item);                         // ValueError when the name exists
  void emplace_back(std::string name, Tensor tensor) { push_back({std::move(name), std::move(tensor)}); }
  void pop_back();
  void clear() {
    items_.clear();
    index_.clear();
  }
  void reserve(size_t n) { items_.reserve(n); }

  // By name.
  Tensor& operator[](const std::string& name);             // adds an undefined tensor when missing
  const Tensor& at(const std::string& name) const;         // ValueError naming the keys when missing
  iterator find(const std::string& name);
  const_iterator find(const std::string& name) const;
  bool contains(const std::string& name) const { return find(name) != end(); }
  size_t count(const std::string& name) const { return contains(name) ? 1 : 0; }
  size_t erase(const std::string& name);
  std::vector<std::string> keys() const;

 private:
  container items_;
  std::unordered_map<std::string, size_t> index_;  // name -> position in items_
};

}  // namespace vnn

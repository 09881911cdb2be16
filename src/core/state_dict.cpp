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

StateDict::StateDict(const std::map<std::string, Tensor>& items) : items_(items.begin(), items.end()) {}

StateDict::operator std::map<std::string, Tensor>() const { return {items_.begin(), items_.end()}; }

void StateDict::push_back(value_type item) {
  if (contains(item.first))
    throw ValueError("StateDict: the name '" + item.first + "' is already present (names are unique)");
  items_.push_back(std::move(item));
}

Tensor& StateDict::operator[](const std::string& name) {
  auto it = find(name);
  if (it != end()) return it->second;
  items_.emplace_back(name, Tensor());
  return items_.back().second;
}

const Tensor& StateDict::at(const std::string& name) const {
  auto it = find(name);
  if (it != end()) return it->second;
  std::string known;
  for (auto& i : items_) known += (known.empty() ? "" : ", ") + i.first;
  throw ValueError("StateDict: no entry '" + name + "' (names: " + (known.empty() ? "none" : known) + ")");
}

StateDict::iterator StateDict::find(const std::string& name) {
  for (auto it = items_.begin(); it != items_.end(); ++it)
    if (it->first == name) return it;
  return items_.end();
}

StateDict::const_iterator StateDict::find(const std::string& name) const {
  for (auto it = items_.begin(); it != items_.end(); ++it)
    if (it->first == name) return it;
  return items_.end();
}

size_t StateDict::erase(const std::string& name) {
  auto it = find(name);
  if (it == end()) return 0;
  items_.erase(it);
  return 1;
}

std::vector<std::string> StateDict::keys() const {
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (auto& i : items_) out.push_back(i.first);
  return out;
}

}  // namespace vnn

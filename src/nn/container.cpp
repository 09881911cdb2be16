#include "vnn/nn/container.h"

#include "vnn/error.h"

namespace vnn::nn {

Sequential::Sequential(std::initializer_list<ModulePtr> modules) : Module("Sequential") {
  for (auto& m : modules) push_back(m);
}
Sequential::Sequential(const std::vector<ModulePtr>& modules) : Module("Sequential") {
  for (auto& m : modules) push_back(m);
}
void Sequential::push_back(ModulePtr m) {
  add_child(std::to_string(modules_.size()), m);
  modules_.push_back(std::move(m));
}
Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (auto& m : modules_) x = m->forward(x);
  return x;
}
ModulePtr Sequential::operator[](size_t i) const {
  if (i >= modules_.size())
    throw IndexError("Sequential: index " + std::to_string(i) + " is out of range (size " +
                     std::to_string(modules_.size()) + ")");
  return modules_[i];
}

ModuleList::ModuleList(std::initializer_list<ModulePtr> modules) : Module("ModuleList") {
  for (auto& m : modules) push_back(m);
}
void ModuleList::push_back(ModulePtr m) {
  add_child(std::to_string(modules_.size()), m);
  modules_.push_back(std::move(m));
}
ModulePtr ModuleList::operator[](size_t i) const {
  if (i >= modules_.size())
    throw IndexError("ModuleList: index " + std::to_string(i) + " is out of range (size " +
                     std::to_string(modules_.size()) + ")");
  return modules_[i];
}

void ModuleDict::insert(const std::string& key, ModulePtr m) { add_child(key, std::move(m)); }
bool ModuleDict::contains(const std::string& key) const {
  for (auto& c : named_children())
    if (c.first == key) return true;
  return false;
}
std::vector<std::string> ModuleDict::keys() const {
  std::vector<std::string> out;
  for (auto& c : named_children()) out.push_back(c.first);
  return out;
}
ModulePtr ModuleDict::operator[](const std::string& key) const {
  for (auto& c : named_children())
    if (c.first == key) return c.second;
  std::string known;
  for (auto& k : keys()) known += (known.empty() ? "" : ", ") + k;
  throw ValueError("ModuleDict: no key '" + key + "' (keys: " + (known.empty() ? "none" : known) + ")");
}

}  // namespace vnn::nn

// Containers: Sequential, ModuleList, ModuleDict.
#pragma once
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "vnn/nn/module.h"

namespace vnn::nn {

using ModulePtr = std::shared_ptr<Module>;

// Runs its children in order; children are named "0", "1", ...
class Sequential : public Module {
 public:
  Sequential() : Module("Sequential") {}
  Sequential(std::initializer_list<ModulePtr> modules);
  explicit Sequential(const std::vector<ModulePtr>& modules);
  void push_back(ModulePtr m);
  Tensor forward(const Tensor& input) override;
  size_t size() const { return modules_.size(); }
  ModulePtr operator[](size_t i) const;

 private:
  std::vector<ModulePtr> modules_;
};

// Holds submodules (registered, so their parameters are found) without
// defining forward.
class ModuleList : public Module {
 public:
  ModuleList() : Module("ModuleList") {}
  ModuleList(std::initializer_list<ModulePtr> modules);
  void push_back(ModulePtr m);
  size_t size() const { return modules_.size(); }
  ModulePtr operator[](size_t i) const;
  std::vector<ModulePtr>::const_iterator begin() const { return modules_.begin(); }
  std::vector<ModulePtr>::const_iterator end() const { return modules_.end(); }

 private:
  std::vector<ModulePtr> modules_;
};

class ModuleDict : public Module {
 public:
  ModuleDict() : Module("ModuleDict") {}
  void insert(const std::string& key, ModulePtr m);
  ModulePtr operator[](const std::string& key) const;  // throws ValueError listing the keys
  bool contains(const std::string& key) const;
  std::vector<std::string> keys() const;
};

}  // namespace vnn::nn

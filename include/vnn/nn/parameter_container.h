// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ParameterList and ParameterDict (torch::nn::ParameterList / ParameterDict):
// modules that only hold parameters, under the keys "0", "1", ... or the
// names given, so a model's state dict carries them:
//   vnn::nn::ParameterList pl;  pl->append(vnn::randn({3}));  pl[0];
//   vnn::nn::ParameterDict pd;  pd->insert("scale", vnn::ones({4}));  pd["scale"];
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "vnn/nn/module.h"

namespace vnn::nn {

namespace detail {
/// What ParameterList and ParameterDict share: parameters registered in
/// order, each recreated by reset() (for clone()) from its recorded shape.
template <class Derived>
class ParameterContainerBase : public Cloneable<Derived> {
 public:
  using Cloneable<Derived>::Cloneable;
  /// Re-registers every parameter with its shape, dtype and device (clone() then copies the values).
  void reset() override;
  /// Number of parameters held.
  size_t size() const { return specs_.size(); }
  /// Whether none is held.
  bool is_empty() const { return specs_.empty(); }
  /// The parameters in insertion order.
  std::vector<Tensor> values() const { return this->parameters(false); }

 protected:
  // Registers t under name and records it for reset().
  Tensor add(const std::string& name, Tensor t);
  // The parameter at position i (IndexError outside [-size, size)).
  Tensor at(int64_t i) const;

 private:
  std::vector<std::pair<std::string, Tensor>> specs_;
};
}  // namespace detail

/// A list of parameters, registered as "0", "1", ... (torch.nn.ParameterList).
class ParameterListImpl : public detail::ParameterContainerBase<ParameterListImpl> {
 public:
  /// An empty list.
  ParameterListImpl() : ParameterContainerBase("ParameterList") {}
  /// A list of `params`.
  explicit ParameterListImpl(const std::vector<Tensor>& params);
  /// Registers `param` under the next index (a leaf is shared, as register_parameter).
  void append(const Tensor& param);
  /// Appends each of `params`.
  void extend(const std::vector<Tensor>& params);
  /// The parameter at `index` (negative counts from the end; IndexError outside).
  Tensor operator[](int64_t index) const { return at(index); }
  /// Not callable: ValueError, as LibTorch's (a list has no forward).
  Tensor forward(const Tensor& x);
};
/// The holder of ParameterListImpl.
VNN_MODULE(ParameterList);

/// Parameters by name, in insertion order (torch.nn.ParameterDict).
class ParameterDictImpl : public detail::ParameterContainerBase<ParameterDictImpl> {
 public:
  /// An empty dict.
  ParameterDictImpl() : ParameterContainerBase("ParameterDict") {}
  /// A dict of (name, parameter) pairs in this order.
  explicit ParameterDictImpl(const std::vector<std::pair<std::string, Tensor>>& params);
  /// Registers `param` as `key` (ValueError when the key exists or is not a valid name).
  void insert(const std::string& key, const Tensor& param);
  /// The keys in insertion order.
  std::vector<std::string> keys() const;
  /// Whether `key` is held.
  bool contains(const std::string& key) const;
  /// The parameter `key` (KeyError-style ValueError when absent).
  Tensor get(const std::string& key) const;
  /// The parameter `key`.
  Tensor operator[](const std::string& key) const { return get(key); }
  /// Not callable: ValueError, as LibTorch's (a dict has no forward).
  Tensor forward(const Tensor& x);
};
/// The holder of ParameterDictImpl.
VNN_MODULE(ParameterDict);

}  // namespace vnn::nn

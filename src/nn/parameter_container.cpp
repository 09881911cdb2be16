// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ParameterList and ParameterDict of include/vnn/nn/parameter_container.h.
#include "vnn/nn/parameter_container.h"

#include <algorithm>

#include "vnn/autograd.h"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::nn {

namespace detail {

template <class D>
void ParameterContainerBase<D>::reset() {
  // clone(): the copy's registry is empty; register same-shaped tensors that
  // copy_state_from then fills with the source's values.
  // The specs are plain copies: never bound to the registration (see Tensor's copy rules).
  for (auto& [name, t] : specs_) {
    Tensor reg = this->register_parameter(name, zeros(t.sizes(), TensorOptions(t.device()).dtype(t.dtype())),
                                          t.requires_grad());
    t = reg;
  }
}

template <class D>
Tensor ParameterContainerBase<D>::add(const std::string& name, Tensor t) {
  VNN_CHECK(ValueError, t.defined(), this->type_name(), ": parameter '", name, "' is an undefined tensor");
  Tensor reg = this->register_parameter(name, std::move(t));
  specs_.emplace_back(name, reg);
  return reg;
}

template <class D>
Tensor ParameterContainerBase<D>::at(int64_t i) const {
  const int64_t n = int64_t(specs_.size());
  VNN_CHECK(IndexError, i >= -n && i < n, this->type_name(), ": index ", i, " is out of range for ", n,
            " parameters");
  return this->parameters(false)[size_t(i < 0 ? i + n : i)];
}

template class ParameterContainerBase<ParameterListImpl>;
template class ParameterContainerBase<ParameterDictImpl>;

}  // namespace detail

ParameterListImpl::ParameterListImpl(const std::vector<Tensor>& params) : ParameterListImpl() { extend(params); }

void ParameterListImpl::append(const Tensor& param) { add(std::to_string(size()), param); }

void ParameterListImpl::extend(const std::vector<Tensor>& params) {
  for (const Tensor& p : params) append(p);
}

Tensor ParameterListImpl::forward(const Tensor&) {
  VNN_THROW(ValueError, "ParameterList is not callable; index it (list[i]) or iterate values()");
}

ParameterDictImpl::ParameterDictImpl(const std::vector<std::pair<std::string, Tensor>>& params)
    : ParameterDictImpl() {
  for (const auto& [k, v] : params) insert(k, v);
}

void ParameterDictImpl::insert(const std::string& key, const Tensor& param) { add(key, param); }

std::vector<std::string> ParameterDictImpl::keys() const { return named_parameters(false).keys(); }

bool ParameterDictImpl::contains(const std::string& key) const {
  std::vector<std::string> k = keys();
  return std::find(k.begin(), k.end(), key) != k.end();
}

Tensor ParameterDictImpl::get(const std::string& key) const {
  std::vector<std::string> k = keys();
  auto it = std::find(k.begin(), k.end(), key);
  VNN_CHECK(ValueError, it != k.end(), "ParameterDict: no parameter named '", key, "'");
  return parameters(false)[size_t(it - k.begin())];
}

Tensor ParameterDictImpl::forward(const Tensor&) {
  VNN_THROW(ValueError, "ParameterDict is not callable; look a parameter up (dict[\"name\"]) or iterate values()");
}

}  // namespace vnn::nn

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One registered parameter or buffer of a module (Module's registry entry),
// kept in agreement with the module member that received the registration:
// while a member is bound, the registry reads the member, so assigning the
// member (`lm_head->weight = wte->weight`) re-points the registration as
// PyTorch's attribute assignment does; once the member is gone, the entry
// keeps the member's last tensor. See Tensor's registration_ field.
#pragma once
#include <cstdint>

#include "vnn/tensor.h"

namespace vnn::detail {

struct RegisteredTensor {
  RegisteredTensor() = default;
  RegisteredTensor(const RegisteredTensor&) = delete;
  RegisteredTensor& operator=(const RegisteredTensor&) = delete;
  ~RegisteredTensor() {
    if (member_) member_->registration_ = 0;
  }

  // The registered tensor: the bound member's, else the one kept here.
  const Tensor& get() const { return member_ ? *member_ : value_; }
  // Whether a module member is bound to this entry.
  bool bound() const { return member_ != nullptr; }
  // Re-points the registration (and the bound member) at t.
  void set(const Tensor& t) {
    if (member_) *member_ = t;
    else value_ = t;
  }
  // The registration's result: a handle of t bound to this entry and marked
  // pending, so the member it is assigned to (or constructed from) becomes
  // the bound member. Discarded, it hands t back to this entry.
  Tensor bind_result(const Tensor& t) {
    if (member_) {  // an earlier result still bound: it lets go, keeping its tensor
      member_->end_registration();
    }
    Tensor out(t);
    out.registration_ = reinterpret_cast<std::uintptr_t>(this) | Tensor::kPendingRegistration;
    member_ = &out;
    value_ = Tensor();
    return out;  // NRVO, or a move that keeps the binding pending
  }

 private:
  friend class ::vnn::Tensor;
  Tensor value_;
  Tensor* member_ = nullptr;
};

}  // namespace vnn::detail

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// VNN_ARG: one option of an options class with a chained setter, as
// LibTorch's TORCH_ARG:
//   struct LinearOptions { LinearOptions(int64_t in, int64_t out); VNN_ARG(bool, bias) = true; ... };
//   LinearOptions(784, 10).bias(false);   o.bias() reads it, o.bias() = true writes it.
#pragma once

/// Declares option `name` of type T with chained setter name(v) and getters name(); `= default` may follow.
#define VNN_ARG(T, name)                                      \
 public:                                                      \
  auto& name(const T& new_##name) {                           \
    this->name##_ = new_##name;                               \
    return *this;                                             \
  }                                                           \
  const T& name() const noexcept { return this->name##_; }    \
  T& name() noexcept { return this->name##_; }                \
                                                              \
 private:                                                     \
  T name##_

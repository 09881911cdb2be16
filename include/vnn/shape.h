// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A small fixed-capacity list of sizes or strides (no heap allocation on the
// per-op hot path).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace vnn {

/// The most dims a tensor can have (equals VNN_MAX_DIMS of the plugin ABI).
inline constexpr int kMaxDims = 8;  // equals VNN_MAX_DIMS of the plugin ABI

/// Sizes or strides of up to kMaxDims dims, stored inline (no heap allocation).
class Shape {
 public:
  /// No dims (the shape of a 0-dim tensor).
  Shape() = default;
  /// The given dims: `Shape{2, 3}`.
  Shape(std::initializer_list<int64_t> dims);
  /// The given dims.
  Shape(const std::vector<int64_t>& dims);
  /// The dims in [first, last).
  template <class It> Shape(It first, It last) { for (; first != last; ++first) push_back(*first); }

  /// Number of dims.
  int size() const { return ndim_; }
  /// Whether there are no dims.
  bool empty() const { return ndim_ == 0; }
  /// Dim `i` (unchecked; i in [0, size())).
  int64_t operator[](int i) const { return d_[i]; }
  /// Dim `i`, writable (unchecked).
  int64_t& operator[](int i) { return d_[i]; }
  /// Start of the dims, for range-for.
  const int64_t* begin() const { return d_; }
  /// End of the dims, for range-for.
  const int64_t* end() const { return d_ + ndim_; }
  /// Pointer to the dims (size() of them).
  const int64_t* data() const { return d_; }
  /// Appends a dim; ShapeError beyond kMaxDims.
  void push_back(int64_t v);
  /// Sets the number of dims to `n` (ShapeError outside [0, kMaxDims]), new dims set to `fill`.
  void resize(int n, int64_t fill = 0);
  /// Product; 1 for a scalar. Throws ShapeError for a negative size and
  /// ValueError when the product does not fit int64 (checked_size.h).
  int64_t numel() const;
  /// The product in double as text ("1.8e+19"), for error messages about sizes that overflow.
  std::string approx_numel() const;  // the product in double, "1.8e+19", for messages
  /// The dims as a std::vector.
  std::vector<int64_t> vec() const { return {begin(), end()}; }
  /// The dims as text: "[2, 3]".
  std::string str() const;  // "[2, 3]"

  /// Same number of dims and equal dims.
  bool operator==(const Shape& o) const;
  /// Not operator==.
  bool operator!=(const Shape& o) const { return !(*this == o); }

 private:
  int ndim_ = 0;
  int64_t d_[kMaxDims] = {};
};

/// std::cout << x.sizes() prints "[2, 3]".
std::ostream& operator<<(std::ostream& os, const Shape& s);

/// The dims a reduction runs over, passed as LibTorch passes an IntArrayRef:
/// one dim (`t.sum(1)`), a braced list (`t.sum({0, 1})`; `{}` for every dim)
/// or a std::vector<int64_t>. One parameter type for all three, so that
/// `t.mean({1})` meets no one-dim overload (clang warns about braces around a
/// scalar there) and a port's spelling compiles as it is.
class Dims {
 public:
  /// No dims: the reductions read it as every dim.
  Dims() = default;
  /// One dim (negative counts from the end); any integer type but bool.
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  Dims(I dim) : dims_{int64_t(dim)} {}
  /// The listed dims: `{0, 1}`.
  Dims(std::initializer_list<int64_t> dims) : dims_(dims) {}
  /// The given dims.
  Dims(std::vector<int64_t> dims) : dims_(std::move(dims)) {}
  /// The dims, in the order given.
  const std::vector<int64_t>& vec() const { return dims_; }

 private:
  std::vector<int64_t> dims_;
};

}  // namespace vnn

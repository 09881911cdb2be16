// A small fixed-capacity list of sizes or strides (no heap allocation on the
// per-op hot path).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <vector>

namespace vnn {

inline constexpr int kMaxDims = 8;  // equals VNN_MAX_DIMS of the plugin ABI

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  Shape(const std::vector<int64_t>& dims);
  template <class It> Shape(It first, It last) { for (; first != last; ++first) push_back(*first); }

  int size() const { return ndim_; }
  bool empty() const { return ndim_ == 0; }
  int64_t operator[](int i) const { return d_[i]; }
  int64_t& operator[](int i) { return d_[i]; }
  const int64_t* begin() const { return d_; }
  const int64_t* end() const { return d_ + ndim_; }
  const int64_t* data() const { return d_; }
  void push_back(int64_t v);
  void resize(int n, int64_t fill = 0);
  // Product; 1 for a scalar. Throws ShapeError for a negative size and
  // ValueError when the product does not fit int64 (checked_size.h).
  int64_t numel() const;
  std::string approx_numel() const;  // the product in double, "1.8e+19", for messages
  std::vector<int64_t> vec() const { return {begin(), end()}; }
  std::string str() const;  // "[2, 3]"

  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }

 private:
  int ndim_ = 0;
  int64_t d_[kMaxDims] = {};
};

// std::cout << x.sizes() prints "[2, 3]".
std::ostream& operator<<(std::ostream& os, const Shape& s);

}  // namespace vnn

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "vnn/detail/message.h"
#include "vnn/shape.h"

#include <cstdio>
#include <ostream>

#include "vnn/checked_size.h"
#include "vnn/error.h"

namespace vnn {

Shape::Shape(std::initializer_list<int64_t> dims) {
  for (auto d : dims) push_back(d);
}
Shape::Shape(const std::vector<int64_t>& dims) {
  for (auto d : dims) push_back(d);
}

void Shape::push_back(int64_t v) {
  VNN_CHECK(ShapeError, ndim_ != kMaxDims, "Shape: more than ", kMaxDims,
            " dimensions are not supported; reshape to fewer dimensions");
  d_[ndim_++] = v;
}

void Shape::resize(int n, int64_t fill) {
  if (n < 0 || n > kMaxDims) VNN_THROW(ShapeError, "Shape: cannot hold ", n, " dimensions (max ", kMaxDims, ")");
  for (int i = ndim_; i < n; ++i) d_[i] = fill;
  ndim_ = n;
}

int64_t Shape::numel() const {
  int64_t n;
  if (checked::numel(d_, ndim_, &n)) return n;
  // Tensors never hold such a shape (make_empty and the views check it):
  // this is a caller's own Shape.
  for (int i = 0; i < ndim_; ++i)
    if (d_[i] < 0) VNN_THROW(ShapeError, "Shape::numel: shape ", str(), " has a negative size");
  VNN_THROW(ValueError, "Shape::numel: shape ", str(), " has ", approx_numel(),
            " elements, more than an int64 index can address");
}

std::string Shape::approx_numel() const {
  double n = 1;
  for (int i = 0; i < ndim_; ++i) n *= double(d_[i]);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", n);
  return buf;
}

std::ostream& operator<<(std::ostream& os, const Shape& s) { return os << s.str(); }

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < ndim_; ++i) {
    if (i) s += ", ";
    s += std::to_string(d_[i]);
  }
  return s + "]";
}

bool Shape::operator==(const Shape& o) const {
  if (ndim_ != o.ndim_) return false;
  for (int i = 0; i < ndim_; ++i)
    if (d_[i] != o.d_[i]) return false;
  return true;
}

}  // namespace vnn

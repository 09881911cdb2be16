// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Creation ops: values are built on the host in float64 (exact for every
// integer dtype up to 2^53), copied once, then converted on the device.
#include "vnn/creation.h"

#include <cmath>
#include <string>
#include <vector>

#include "tensor/tensor_impl.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn {

namespace {

Tensor from_doubles(const std::vector<double>& v, const Shape& shape, const TensorOptions& opt) {
  return detail::finish_creation(from_vector(v, shape, opt.device()).to(opt.dtype()), opt);
}

TensorOptions options_of(const Tensor& t, const char* op) {
  VNN_CHECK(ValueError, t.defined(), op, ": argument 'input' is an undefined tensor");
  return TensorOptions(t.device()).with(t.dtype());
}

}  // namespace

Tensor linspace(double start, double end, int64_t steps, const TensorOptions& opt) {
  if (steps < 0) VNN_THROW(ValueError, "linspace: number of steps must be non-negative, got ", steps);
  if (!std::isfinite(start) || !std::isfinite(end))
    VNN_THROW(ValueError, "linspace: start and end must be finite (start=", start, ", end=", end, ")");
  std::vector<double> v = detail::host_vector<double>(steps, "linspace");
  if (steps == 1) v[0] = start;
  if (steps > 1) {
    double step = (end - start) / double(steps - 1);
    // Symmetric like PyTorch: the first half counts up from start, the second
    // down from end, so both endpoints are exact.
    int64_t half = steps / 2;
    for (int64_t i = 0; i < steps; ++i)
      v[size_t(i)] = i < half ? start + step * double(i) : end - step * double(steps - 1 - i);
  }
  return from_doubles(v, {steps}, opt);
}

Tensor eye(int64_t n, int64_t m, const TensorOptions& opt) {
  if (m < 0) m = n;
  if (n < 0) VNN_THROW(ValueError, "eye: n must be non-negative, got ", n);
  std::vector<double> v = detail::host_vector<double>(detail::checked_product("eye", {n, m}, "n * m"), "eye");
  for (int64_t i = 0; i < n && i < m; ++i) v[size_t(i * m + i)] = 1.0;
  return from_doubles(v, {n, m}, opt);
}

Tensor empty_like(const Tensor& t, DType d) { return empty(t.sizes(), options_of(t, "empty_like").with(d)); }
Tensor empty_like(const Tensor& t, const Device& dev) { return empty(t.sizes(), options_of(t, "empty_like").with(dev)); }
Tensor empty_like(const Tensor& t, const TensorOptions& opt) {
  options_of(t, "empty_like");
  return empty(t.sizes(), opt);
}
Tensor zeros_like(const Tensor& t, DType d) { return zeros(t.sizes(), options_of(t, "zeros_like").with(d)); }
Tensor zeros_like(const Tensor& t, const Device& dev) { return zeros(t.sizes(), options_of(t, "zeros_like").with(dev)); }
Tensor zeros_like(const Tensor& t, const TensorOptions& opt) {
  options_of(t, "zeros_like");
  return zeros(t.sizes(), opt);
}
Tensor ones_like(const Tensor& t, DType d) { return ones(t.sizes(), options_of(t, "ones_like").with(d)); }
Tensor ones_like(const Tensor& t, const Device& dev) { return ones(t.sizes(), options_of(t, "ones_like").with(dev)); }
Tensor ones_like(const Tensor& t, const TensorOptions& opt) {
  options_of(t, "ones_like");
  return ones(t.sizes(), opt);
}
Tensor full_like(const Tensor& t, double v, DType d) { return full(t.sizes(), v, options_of(t, "full_like").with(d)); }
Tensor full_like(const Tensor& t, double v, const Device& dev) {
  return full(t.sizes(), v, options_of(t, "full_like").with(dev));
}
Tensor full_like(const Tensor& t, double v, const TensorOptions& opt) {
  options_of(t, "full_like");
  return full(t.sizes(), v, opt);
}

Tensor tensor(std::initializer_list<double> values, const TensorOptions& opt) {
  return from_doubles(std::vector<double>(values), {int64_t(values.size())}, opt);
}

Tensor tensor(std::initializer_list<std::initializer_list<double>> rows, const TensorOptions& opt) {
  int64_t r = int64_t(rows.size()), c = r > 0 ? int64_t(rows.begin()->size()) : 0;
  std::vector<double> v;
  v.reserve(size_t(r * c));
  int64_t i = 0;
  for (const auto& row : rows) {
    VNN_CHECK(ShapeError, int64_t(row.size()) == c, "tensor: row ", i, " has ", row.size(), " values, expected ", c,
              " like row 0 (rows must have equal lengths)");
    v.insert(v.end(), row.begin(), row.end());
    ++i;
  }
  return from_doubles(v, {r, c}, opt);
}

}  // namespace vnn

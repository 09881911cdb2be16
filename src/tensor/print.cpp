// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// PyTorch-like printing: tensor([[1.0000, 2.0000]], device='opencl:0', dtype=float64)
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "tensor/tensor_impl.hpp"

namespace vnn {

namespace {

constexpr int64_t kSummarizeAbove = 1000;  // elements, as torch's threshold
constexpr int64_t kEdgeItems = 3;

std::string format_value(double v, DType t, bool scientific) {
  char buf[64];
  if (t == kBool) return v != 0 ? "True" : "False";
  if (!is_floating(t)) {
    std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(v));
  } else if (std::isnan(v)) {
    return "nan";
  } else if (std::isinf(v)) {
    return v > 0 ? "inf" : "-inf";
  } else if (scientific) {
    std::snprintf(buf, sizeof(buf), "%.4e", v);
  } else {
    std::snprintf(buf, sizeof(buf), "%.4f", v);
  }
  return buf;
}

void print_dim(std::ostream& os, const std::vector<double>& v, const Shape& sizes, int d, int64_t base,
               const std::vector<int64_t>& strides, DType t, bool sci, bool summarize, size_t width, int indent) {
  os << '[';
  int64_t n = sizes[d];
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
      os << "...";
      i = n - kEdgeItems - 1;
      os << (d + 1 == sizes.size() ? ", " : ",\n" + std::string(size_t(indent + 1), ' '));
      continue;
    }
    int64_t off = base + i * strides[size_t(d)];
    if (d + 1 == sizes.size()) {
      std::string s = format_value(v[size_t(off)], t, sci);
      os << std::string(width > s.size() ? width - s.size() : 0, ' ') << s;
    } else {
      print_dim(os, v, sizes, d + 1, off, strides, t, sci, summarize, width, indent + 1);
    }
    if (i + 1 < n) {
      if (d + 1 == sizes.size()) os << ", ";
      else os << ',' << std::string(size_t(sizes.size() - d - 1), '\n') << std::string(size_t(indent + 1), ' ');
    }
  }
  os << ']';
}

}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "tensor(undefined)";
  std::vector<double> v = to_vector<double>();
  bool sci = false;
  double maxabs = 0;
  for (double x : v)
    if (std::isfinite(x)) maxabs = std::max(maxabs, std::fabs(x));
  if (is_floating(dtype()) && (maxabs >= 1e8 || (maxabs > 0 && maxabs < 1e-4))) sci = true;
  size_t width = 0;
  for (double x : v) width = std::max(width, format_value(x, dtype(), sci).size());
  std::vector<int64_t> strides(static_cast<size_t>(dim()));
  int64_t acc = 1;
  for (int i = dim() - 1; i >= 0; --i) {
    strides[size_t(i)] = acc;
    acc *= sizes()[i];
  }
  std::ostringstream os;
  os << "tensor(";
  if (dim() == 0) os << format_value(v[0], dtype(), sci);
  else if (numel() == 0) os << "[]";
  else print_dim(os, v, sizes(), 0, 0, strides, dtype(), sci, numel() > kSummarizeAbove, width, 7);
  if (numel() == 0 && dim() > 1) os << ", size=" << sizes().str();
  if (!device().is_cpu()) os << ", device='" << device().str() << "'";
  if (dtype() != kFloat32) os << ", dtype=" << name(dtype());
  os << ')';
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.str(); }

}  // namespace vnn

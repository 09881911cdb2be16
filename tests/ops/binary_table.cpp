// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Every line of the binary op table (vnn/ops/binary.def), on the device
// under test, driven by the table itself: values in float32 and float64
// (same shapes, a broadcast row and a scalar operand) against the line's
// function evaluated on the host in double, the integer rule on int8,
// int16, int32, int64 and bool operands, the in-place form, the gradients of both
// operands against float64 finite differences, and the line's row in
// docs/ops.md.
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <string>

#include "ops/op_table_docs.hpp"
#include "support/device_under_test.hpp"
#include "vnn/op_names.h"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

namespace ref {
using std::acos, std::atan2, std::copysign, std::cos, std::cosh, std::erf, std::erfc, std::exp, std::exp2, std::fabs,
    std::floor, std::fmod, std::hypot, std::lgamma, std::log, std::log1p, std::log2, std::nextafter, std::pow,
    std::sin, std::sinh, std::sqrt, std::tan, std::trunc;
// The special functions (VNN_SP) in double, as in unary_table.cpp.
#define VNN_SPFN inline
#define VNN_SPT double
#define VNN_F(f) ref::f
#include "vnn/ops/special_functions.def"
#undef VNN_SPFN
#undef VNN_SPT
#undef VNN_F
int64_t idiv(int64_t a, int64_t b) { return b == 0 ? 0 : a / b; }
int64_t ifmod(int64_t a, int64_t b) { return b == 0 ? 0 : a % b; }
int64_t imod(int64_t a, int64_t b) {
  int64_t r = ifmod(a, b);
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}
int64_t ifloordiv(int64_t a, int64_t b) {
  int64_t q = idiv(a, b);
  return b != 0 && ifmod(a, b) != 0 && ((a < 0) != (b < 0)) ? q - 1 : q;
}
// Shifts of int64 values; the operands here are small, so a count of
// 64 or more only comes as a negative one: 0, or the sign for >>.
int64_t ishl(int64_t a, int64_t b) { return b < 0 || b >= 64 ? 0 : int64_t(uint64_t(a) << b); }
int64_t ishr(int64_t a, int64_t b) { return b < 0 || b >= 64 ? (a < 0 ? -1 : 0) : a >> b; }
uint64_t magnitude(int64_t a) { return a < 0 ? uint64_t(0) - uint64_t(a) : uint64_t(a); }
int64_t igcd(int64_t a, int64_t b) { return int64_t(std::gcd(magnitude(a), magnitude(b))); }
int64_t ilcm(int64_t a, int64_t b) { return int64_t(std::lcm(magnitude(a), magnitude(b))); }
int64_t ipow(int64_t a, int64_t b) {
  if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
  int64_t r = 1;
  for (int64_t i = 0; i < b; ++i) r *= a;
  return r;
}
}  // namespace ref

#define VNN_K(v) C(v)
#define VNN_F(f) ref::f
#define VNN_SEL(c, x, y) ((c) ? (x) : (y))
#define VNN_WADD(x, y) ((x) + (y))
#define VNN_WMUL(x, y) ((x) * (y))
#define VNN_WNEG(x) (-(x))
#define VNN_IDIV(x, y) ref::idiv(x, y)
#define VNN_IPOW(x, y) ref::ipow(x, y)
#define VNN_IFMOD(x, y) ref::ifmod(x, y)
#define VNN_IMOD(x, y) ref::imod(x, y)
#define VNN_IFLOORDIV(x, y) ref::ifloordiv(x, y)
#define VNN_SP(f) ref::vnn_sp_##f
#define VNN_ISHL(x, y) ref::ishl(x, y)
#define VNN_ISHR(x, y) ref::ishr(x, y)
#define VNN_IGCD(x, y) ref::igcd(x, y)
#define VNN_ILCM(x, y) ref::ilcm(x, y)

struct Line {
  vnn_binary_fn fn;
  const char* name;
  const char* domain;
  const char* grad_a;
  Tensor (*free)(const Tensor&, const Tensor&);  // null for CUSTOM lines
  Tensor (*free_scalar)(const Tensor&, double);
  Tensor& (Tensor::*inplace)(const Tensor&);
  double (*host)(double, double);
  int64_t (*host_int)(int64_t, int64_t);
};

#define VNN_BINARY_FREE_PLAIN(NAME) static_cast<Tensor (*)(const Tensor&, const Tensor&)>(&vnn::NAME)
#define VNN_BINARY_FREE_CUSTOM(NAME) nullptr
#define VNN_BINARY_SCALAR_PLAIN(NAME) static_cast<Tensor (*)(const Tensor&, double)>(&vnn::NAME)
#define VNN_BINARY_SCALAR_CUSTOM(NAME) nullptr
#define VNN_BINARY_INPLACE_PLAIN(NAME) static_cast<Tensor& (Tensor::*)(const Tensor&)>(&Tensor::NAME##_)
#define VNN_BINARY_INPLACE_CUSTOM(NAME) nullptr
#define VNN_BINARY_OP(ID, NAME, SIG, RULE, DOMAIN, DOC, GA, GB, FE, IE) \
  Line{VNN_BINARY_##ID,                                                 \
       #NAME,                                                           \
       #DOMAIN,                                                         \
       #GA,                                                             \
       VNN_BINARY_FREE_##SIG(NAME),                                     \
       VNN_BINARY_SCALAR_##SIG(NAME),                                   \
       VNN_BINARY_INPLACE_##SIG(NAME),                                  \
       [](double a, double b) -> double {                               \
         using C = double;                                              \
         const C alpha = 1;                                             \
         (void)a, (void)b, (void)alpha;                                 \
         return double(FE);                                             \
       },                                                               \
       [](int64_t a, int64_t b) -> int64_t {                            \
         using C = int64_t;                                             \
         const C alpha = 1;                                             \
         (void)a, (void)b, (void)alpha;                                 \
         return int64_t(IE);                                            \
       }},
const std::vector<Line>& lines() {
  static const std::vector<Line> all = {
#include "vnn/ops/binary.def"
  };
  return all;
}
#undef VNN_BINARY_OP

Tensor call(const Line& l, const Tensor& a, const Tensor& b) {
  if (l.free) return l.free(a, b);
  switch (l.fn) {
    case VNN_BINARY_ADD: return add(a, b);
    case VNN_BINARY_SUB: return sub(a, b);
    case VNN_BINARY_MUL: return mul(a, b);
    case VNN_BINARY_DIV: return div(a, b);
    case VNN_BINARY_MAXIMUM: return maximum(a, b);
    case VNN_BINARY_MINIMUM: return minimum(a, b);
    case VNN_BINARY_POW: return pow(a, b);
    case VNN_BINARY_EQ: return eq(a, b);
    case VNN_BINARY_NE: return ne(a, b);
    case VNN_BINARY_LT: return lt(a, b);
    case VNN_BINARY_LE: return le(a, b);
    case VNN_BINARY_GT: return gt(a, b);
    case VNN_BINARY_GE: return ge(a, b);
    case VNN_BINARY_LOGICAL_AND: return logical_and(a, b);
    case VNN_BINARY_LOGICAL_OR: return logical_or(a, b);
    case VNN_BINARY_LOGICAL_XOR: return logical_xor(a, b);
    case VNN_BINARY_GELU_BACKWARD: return gelu_backward(a, b);
    case VNN_BINARY_DIV_TRUNC: return div(a, b, "trunc");
    default: FAIL("no call for custom line " << l.name); return Tensor();
  }
}

std::vector<double> values(const std::string& domain, size_t n, uint32_t seed, bool second) {
  if (domain == "POS") return vnn::test::lcg_values(n, seed, second ? 57u : 31u, 0.1, 2);
  if (domain == "ZETA") return vnn::test::lcg_values(n, seed, second ? 57u : 31u, second ? 0.1 : 1.1, second ? 2 : 3);
  if (domain == "DEGREE" && second) {  // integer degrees -1..6: the polynomials truncate b
    std::vector<double> v = vnn::test::lcg_values(n, seed, 57u, -1, 7);
    for (double& e : v) e = std::floor(e);
    return v;
  }
  std::vector<double> v = vnn::test::lcg_values(n, seed, second ? 57u : 31u, -2, 2);
  if (domain == "NONZERO" && second)
    for (double& e : v) e = (e < 0 ? -0.5 : 0.5) + e * 0.75;  // |b| in (0.5, 2)
  if (!second) v[0] = v[1];  // ties for maximum / minimum / the comparisons
  return v;
}

bool bool_out(vnn_binary_fn fn) {
  return vnn_binary_rules[fn] == VNN_BRULE_COMPARE || vnn_binary_rules[fn] == VNN_BRULE_LOGICAL;
}

}  // namespace

TEST_CASE("the binary op table: one line per ABI code, names and rules from it") {
  REQUIRE(lines().size() == size_t(VNN_BINARY_COUNT_));
  for (size_t i = 0; i < lines().size(); ++i) {
    CHECK(int(lines()[i].fn) == int(i));
    CHECK(std::string(vnn_binary_names[i]) == lines()[i].name);
  }
}

TEST_CASE("every binary table line: float values (same shape, broadcast, scalar) and in place") {
  Device dev = device_under_test();
  for (const Line& l : lines()) {
    if (vnn_binary_rules[l.fn] == VNN_BRULE_INTEGRAL) continue;
    for (DType dt : {kFloat32, kFloat64}) {
      INFO(l.name << " on " << name(dt));
      const int64_t rows = 5, cols = 7;
      auto va = values(l.domain, size_t(rows * cols), 3, false), vb = values(l.domain, size_t(rows * cols), 4, true);
      if (l.fn == VNN_BINARY_POW) vb = vnn::test::lcg_values(size_t(rows * cols), 4, 57u, -2, 2);
      Tensor a = from_vector(va, {rows, cols}).to(dt).to(dev), b = from_vector(vb, {rows, cols}).to(dt).to(dev);
      Tensor y = call(l, a, b);
      REQUIRE(y.dtype() == (bool_out(l.fn) ? kBool : dt));
      auto as = a.to(Device("cpu", 0)).to(kFloat64).to_vector<double>();
      auto bs = b.to(Device("cpu", 0)).to(kFloat64).to_vector<double>();
      auto ys = y.to(Device("cpu", 0)).to(kFloat64).to_vector<double>();
      const double tol = dt == kFloat32 ? 4e-6 : 1e-13;
      double worst = 0;
      for (size_t i = 0; i < as.size(); ++i) {
        const double want = l.host(as[i], bs[i]);
        worst = std::max(worst, std::fabs(ys[i] - want) / std::max(1.0, std::fabs(want)));
      }
      CHECK(worst <= tol);
      // b as a broadcast row [1, cols]: row 0 of b against every row of a.
      Tensor row = b.narrow(0, 0, 1);
      auto yr = call(l, a, row).to(Device("cpu", 0)).to(kFloat64).to_vector<double>();
      worst = 0;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          const double want = l.host(as[size_t(r * cols + c)], bs[size_t(c)]);
          worst = std::max(worst, std::fabs(yr[size_t(r * cols + c)] - want) / std::max(1.0, std::fabs(want)));
        }
      CHECK(worst <= tol);
      if (l.free_scalar) {
        const double s = bs[3];
        auto ysc = l.free_scalar(a, s).to(Device("cpu", 0)).to(kFloat64).to_vector<double>();
        worst = 0;
        for (size_t i = 0; i < as.size(); ++i) {
          const double want = l.host(as[i], dt == kFloat32 ? double(float(s)) : s);
          worst = std::max(worst, std::fabs(ysc[i] - want) / std::max(1.0, std::fabs(want)));
        }
        CHECK(worst <= tol * 4);  // the scalar stays double until the kernel's type
      }
      if (l.inplace && !bool_out(l.fn)) {
        Tensor z = a.clone();
        (z.*l.inplace)(b);
        CHECK(max_abs_diff(z, y) == 0);
      }
    }
  }
}

TEST_CASE("every plain binary table line: its rule on int8, int16, int32, int64 and bool operands") {
  Device dev = device_under_test();
  for (const Line& l : lines()) {
    if (!l.free) continue;
    const int rule = vnn_binary_rules[l.fn];
    for (DType dt : {kInt8, kInt16, kInt32, kInt64, kBool}) {
      INFO(l.name << " on " << name(dt));
      std::vector<int64_t> va = {0, 1, 7, 9, -7, -9, 5, 3}, vb = {3, -2, 2, -4, 2, -4, 0, 3};
      if (dt == kBool) va = {0, 1, 1, 0, 1, 1, 0, 1}, vb = {0, 0, 1, 1, 1, 0, 1, 1};
      Tensor a = from_vector(va, {8}).to(dt).to(dev), b = from_vector(vb, {8}).to(dt).to(dev);
      if (rule == VNN_BRULE_FLOATING || rule == VNN_BRULE_TRUEDIV) {  // integers computed in float32
        Tensor y = l.free(a, b);
        CHECK(y.dtype() == kFloat32);
        CHECK(max_abs_diff(y, l.free(a.to(kFloat32), b.to(kFloat32))) == 0);
        continue;
      }
      if (rule == VNN_BRULE_FLOATONLY) {
        CHECK_THROWS_AS(l.free(a, b), DTypeError);
        continue;
      }
      if (dt == kBool && rule == VNN_BRULE_ARITH) continue;  // arithmetic on bool: not PyTorch's either
      Tensor y = l.free(a, b);
      REQUIRE(y.dtype() == dt);
      auto as = a.to(Device("cpu", 0)).to(kInt64).to_vector<int64_t>();
      auto bs = b.to(Device("cpu", 0)).to(kInt64).to_vector<int64_t>();
      auto ys = y.to(Device("cpu", 0)).to(kInt64).to_vector<int64_t>();
      for (size_t i = 0; i < as.size(); ++i) {
        int64_t want = l.host_int(as[i], bs[i]);
        if (dt == kBool) want = want != 0;
        if (dt == kInt8) want = int8_t(want);  // the result wraps at the width
        if (dt == kInt16) want = int16_t(want);
        CHECK(ys[i] == want);
      }
    }
    if (rule == VNN_BRULE_INTEGRAL) CHECK_THROWS_AS(l.free(ones({2}, TensorOptions(dev)), ones({2}, TensorOptions(dev))), DTypeError);
  }
}

TEST_CASE("every differentiable binary table line: gradients against float64 finite differences") {
  Device dev = device_under_test();
  for (const Line& l : lines()) {
    const int rule = vnn_binary_rules[l.fn];
    if (std::string(l.grad_a) == "VNN_NO_GRAD" || rule == VNN_BRULE_INTEGRAL) continue;
    INFO(l.name);
    auto va = values(l.domain, 6, 8, false), vb = values(l.domain, 6, 9, true);
    va[0] += 0.3;  // no ties: maximum's and fmax's gradients jump there
    Tensor a = from_vector(va, {6}).to(dev).requires_grad_(), b = from_vector(vb, {6}).to(dev).requires_grad_();
    if (std::string(l.grad_a) == "zeros_like(g)") {  // piecewise constant
      call(l, a, b).sum().backward();
      CHECK(max_abs_diff(a.grad(), zeros_like(a)) == 0);
      continue;
    }
    auto r = autograd::gradcheck([&](const std::vector<Tensor>& in) { return call(l, in[0], in[1]); }, {a, b});
    INFO(r.message);
    CHECK(r.ok);
  }
}

TEST_CASE("every binary table line has its row in docs/ops.md") { vnn::test::check_docs_rows(VNN_DOCS_OPS_MD, lines()); }

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Every line of the unary op table (vnn/ops/unary.def), on the device under
// test, driven by the table itself: values in float32 and float64 against
// the line's scalar function evaluated on the host in double with the C
// library, the integer rule on int32 / int64 / bool inputs, the in-place
// form, the gradient against float64 finite differences, and the line's row
// in docs/ops.md. A new line is tested by being there.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <string>

#include "ops/op_table_docs.hpp"
#include "support/device_under_test.hpp"
#include "vnn/op_names.h"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

// The table's scalar vocabulary on the host, in double (or int64 for the
// integer expressions): the reference each kernel is held to.
namespace ref {
double h_sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double h_gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double h_silu(double x) { return x * h_sigmoid(x); }
double rsqrt(double x) { return 1.0 / std::sqrt(x); }
using std::copysign, std::acos, std::acosh, std::asin, std::asinh, std::atan, std::atanh, std::ceil, std::cos, std::cosh,
    std::erf, std::erfc, std::exp, std::exp2, std::expm1, std::fabs, std::floor, std::lgamma, std::log, std::log10,
    std::log1p, std::log2, std::pow, std::rint, std::sin, std::sinh, std::sqrt, std::tan, std::tanh, std::trunc;
// The special functions (VNN_SP) in double: the kernels' own code, so this
// checks the devices and float32 against it; test_opdb holds them to PyTorch.
#define VNN_SPFN inline
#define VNN_SPT double
#define VNN_F(f) ref::f
#include "vnn/ops/special_functions.def"
#undef VNN_SPFN
#undef VNN_SPT
#undef VNN_F
}  // namespace ref

struct Params {
  double s0 = 0.1, s1 = 0.5;
  bool has0 = true, has1 = true;
};

#define VNN_K(v) C(v)
#define VNN_F(f) ref::f
#define VNN_SIGMOID(v) ref::h_sigmoid(v)
#define VNN_GELU(v) ref::h_gelu(v)
#define VNN_SILU(v) ref::h_silu(v)
#define VNN_S0 C(p.s0)
#define VNN_S1 C(p.s1)
#define VNN_HAS0 p.has0
#define VNN_HAS1 p.has1
#define VNN_LO C(p.has0 ? p.s0 : -INFINITY)
#define VNN_HI C(p.has1 ? p.s1 : INFINITY)
#define VNN_NEG(v) (-(v))
#define VNN_SEL(c, a, b) ((c) ? (a) : (b))
#define VNN_SP(f) ref::vnn_sp_##f

// One table line: what the test needs of it.
struct Line {
  vnn_unary_fn fn;
  const char* name;
  const char* sig;
  const char* domain;
  const char* grad;
  Tensor (*free)(const Tensor&);       // null for CUSTOM lines
  Tensor& (Tensor::*inplace)();        // null for CUSTOM lines
  double (*host)(double, const Params&);
  int64_t (*host_int)(int64_t, const Params&);
};

#define VNN_UNARY_FREE_PLAIN(NAME) static_cast<Tensor (*)(const Tensor&)>(&vnn::NAME)
#define VNN_UNARY_FREE_FP32(NAME) VNN_UNARY_FREE_PLAIN(NAME)
#define VNN_UNARY_FREE_CUSTOM(NAME) nullptr
#define VNN_UNARY_INPLACE_PLAIN(NAME) &Tensor::NAME##_
#define VNN_UNARY_INPLACE_FP32(NAME) VNN_UNARY_INPLACE_PLAIN(NAME)
#define VNN_UNARY_INPLACE_CUSTOM(NAME) nullptr
#define VNN_UNARY_OP(ID, NAME, SIG, RULE, DOMAIN, DOC, GRAD, FE, IE)                             \
  Line{VNN_UNARY_##ID,                                                                           \
       #NAME,                                                                                    \
       #SIG,                                                                                     \
       #DOMAIN,                                                                                  \
       #GRAD,                                                                                    \
       VNN_UNARY_FREE_##SIG(NAME),                                                               \
       VNN_UNARY_INPLACE_##SIG(NAME),                                                            \
       [](double x, const Params& p) -> double {                                                 \
         using C = double;                                                                       \
         (void)sizeof(C);                                                                        \
         (void)p;                                                                                \
         return double(FE);                                                                      \
       },                                                                                        \
       [](int64_t x, const Params& p) -> int64_t {                                               \
         using C = int64_t;                                                                      \
         (void)sizeof(C);                                                                        \
         (void)x;                                                                                \
         (void)p;                                                                                \
         return int64_t(IE);                                                                     \
       }},
const std::vector<Line>& lines() {
  static const std::vector<Line> all = {
#include "vnn/ops/unary.def"
  };
  return all;
}
#undef VNN_UNARY_OP

// Inputs in the line's domain, one of them exact (0, or 1 for GT1) and a
// few negative zeros and integers where the domain has them.
std::vector<double> domain_values(const std::string& domain, size_t n, uint32_t seed) {
  double lo = -2, hi = 2;
  if (domain == "POS") lo = 0.1, hi = 2;
  if (domain == "UNIT") lo = -0.9, hi = 0.9;
  if (domain == "GT1") lo = 1.1, hi = 3;
  if (domain == "PROB") lo = 0.05, hi = 0.95;
  std::vector<double> v = vnn::test::lcg_values(n, seed, 977u, lo, hi);
  if (domain == "ANY") v[0] = 0.0, v[1] = -1.0, v[2] = 1.5;
  return v;
}

// The result the line's rule gives for an integer or bool tensor.
enum class IntOutcome { float_result, copy, rejected, integer, boolean };
IntOutcome int_outcome(vnn_unary_fn fn, DType t) {
  switch (vnn_unary_rules[fn]) {
    case VNN_RULE_PROMOTE: return IntOutcome::float_result;
    case VNN_RULE_IDENTITY: return IntOutcome::copy;
    case VNN_RULE_REJECT: return IntOutcome::rejected;
    case VNN_RULE_KEEP: return t == kBool ? IntOutcome::rejected : IntOutcome::integer;
    case VNN_RULE_BOOLOUT: return IntOutcome::boolean;
    default: return t == kBool ? IntOutcome::boolean : IntOutcome::integer;  // INTEGRAL (bool: logical not)
  }
}

Tensor call(const Line& l, const Tensor& x) {
  if (l.free) return l.free(x);
  switch (l.fn) {
    case VNN_UNARY_LEAKY_RELU: return leaky_relu(x, 0.1);
    case VNN_UNARY_GELU: return gelu(x);
    case VNN_UNARY_CLAMP: return clamp(x, 0.1, 0.5);
    case VNN_UNARY_FREXP_MANTISSA: return std::get<0>(frexp(x));
    case VNN_UNARY_FREXP_EXPONENT: return std::get<1>(frexp(x)).to(x.dtype());
    default: FAIL("no call for custom line " << l.name); return Tensor();
  }
}

}  // namespace

TEST_CASE("the unary op table: one line per ABI code, names and rules from it") {
  REQUIRE(lines().size() == size_t(VNN_UNARY_COUNT_));
  for (size_t i = 0; i < lines().size(); ++i) {
    CHECK(int(lines()[i].fn) == int(i));
    CHECK(std::string(vnn_unary_names[i]) == lines()[i].name);
  }
}

TEST_CASE("every table line: float32 and float64 values against the host reference, and in place") {
  Device dev = device_under_test();
  const Params p;
  for (const Line& l : lines()) {
    if (vnn_unary_rules[l.fn] == VNN_RULE_INTEGRAL) continue;  // no floating form
    for (DType dt : {kFloat32, kFloat64}) {
      INFO(l.name << " on " << name(dt));
      std::vector<double> v = domain_values(l.domain, 67, 11);
      Tensor x = from_vector(v, {int64_t(v.size())}).to(dt).to(dev);
      Tensor y = call(l, x);
      const bool bool_out = vnn_unary_rules[l.fn] == VNN_RULE_BOOLOUT;
      REQUIRE(y.dtype() == (bool_out ? kBool : dt));
      auto xs = x.to(Device("cpu", 0)).to(kFloat64).to_vector<double>();
      auto ys = y.to(Device("cpu", 0)).to(kFloat64).to_vector<double>();
      const double tol = dt == kFloat32 ? 2e-6 : 1e-13;
      double worst = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        const double want = l.host(xs[i], p);
        const double err = std::fabs(ys[i] - want) / std::max(1.0, std::fabs(want));
        worst = std::max(worst, err);
      }
      CHECK(worst <= tol);
      // Strided input (every other element of a larger tensor): the same values.
      std::vector<double> pairs;
      for (double e : v) pairs.insert(pairs.end(), {e, 0.0});
      Tensor strided = from_vector(pairs, {int64_t(v.size()), 2}).to(dt).to(dev).select(1, 0);
      REQUIRE(strided.stride(0) == 2);
      CHECK(max_abs_diff(call(l, strided), y) <= tol * 128);  // |values| < 128; a fast contiguous path may differ by an ulp
      if (l.inplace && !bool_out) {
        Tensor z = x.clone();
        (z.*l.inplace)();
        CHECK(max_abs_diff(z, y) == 0);
      }
    }
  }
}

TEST_CASE("every table line: its integer rule on int32, int64 and bool inputs") {
  Device dev = device_under_test();
  const Params p;
  for (const Line& l : lines()) {
    if (!l.free) continue;  // custom lines test their own integer behaviour
    for (DType dt : {kInt32, kInt64, kBool}) {
      INFO(l.name << " on " << name(dt));
      std::vector<int64_t> v = {0, 1, 2, 5, 7, 9};
      if (dt != kBool) v.insert(v.end(), {-1, -3, -8});
      Tensor x = from_vector(v, {int64_t(v.size())}).to(dt).to(dev);
      const IntOutcome o = int_outcome(l.fn, dt);
      if (o == IntOutcome::rejected) {
        CHECK_THROWS_AS(l.free(x), DTypeError);
        continue;
      }
      Tensor y = l.free(x);
      auto xs = x.to(Device("cpu", 0)).to(kInt64).to_vector<int64_t>();
      switch (o) {
        case IntOutcome::float_result: {
          CHECK(y.dtype() == kFloat32);
          CHECK(max_abs_diff(y, l.free(x.to(kFloat32))) == 0);
          break;
        }
        case IntOutcome::copy:
          CHECK(y.dtype() == dt);
          CHECK(max_abs_diff(y, x) == 0);
          break;
        case IntOutcome::boolean: {
          REQUIRE(y.dtype() == kBool);
          auto ys = y.to(Device("cpu", 0)).to(kInt64).to_vector<int64_t>();
          for (size_t i = 0; i < xs.size(); ++i) {
            // bitwise_not of bool is logical not
            int64_t want = dt == kBool && l.fn == VNN_UNARY_BITWISE_NOT ? int64_t(xs[i] == 0) : l.host_int(xs[i], p) != 0;
            CHECK(ys[i] == want);
          }
          break;
        }
        default: {
          REQUIRE(y.dtype() == dt);
          auto ys = y.to(Device("cpu", 0)).to(kInt64).to_vector<int64_t>();
          for (size_t i = 0; i < xs.size(); ++i) CHECK(ys[i] == l.host_int(xs[i], p));
        }
      }
    }
    // Floating input to an integer-only line.
    if (vnn_unary_rules[l.fn] == VNN_RULE_INTEGRAL) CHECK_THROWS_AS(l.free(ones({2}, TensorOptions(dev))), DTypeError);
  }
}

TEST_CASE("every differentiable table line: gradient against float64 finite differences") {
  Device dev = device_under_test();
  for (const Line& l : lines()) {
    const int rule = vnn_unary_rules[l.fn];
    if (std::string(l.grad) == "VNN_NO_GRAD" || rule == VNN_RULE_INTEGRAL) continue;
    INFO(l.name);
    std::vector<double> v = domain_values(l.domain, 9, 5);
    for (double& e : v)  // away from kinks and jumps (0, integers, the clamp bounds)
      if (std::fabs(e) < 0.05 || std::fabs(e - std::round(e)) < 0.05 || std::fabs(e - 0.1) < 0.05 ||
          std::fabs(e - 0.5) < 0.05)
        e += 0.13;
    Tensor x = from_vector(v, {int64_t(v.size())}).to(dev).requires_grad_();
    if (std::string(l.grad) == "zeros_like(g)") {  // piecewise constant: zero almost everywhere
      call(l, x).sum().backward();
      CHECK(max_abs_diff(x.grad(), zeros_like(x)) == 0);
      continue;
    }
    auto r = autograd::gradcheck([&](const std::vector<Tensor>& in) { return call(l, in[0]); }, {x});
    INFO(r.message);
    CHECK(r.ok);
  }
}

TEST_CASE("every table line has its row in docs/ops.md") { vnn::test::check_docs_rows(VNN_DOCS_OPS_MD, lines()); }

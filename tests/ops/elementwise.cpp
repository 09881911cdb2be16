// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Elementwise ops on the device under test, checked against the same op on
// the CPU reference device and against plain C++ math.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>

#include "support/device_under_test.hpp"
#include "vnn/elementwise.h"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

std::vector<float> sample(int n, float lo, float hi) { return vnn::test::spread_values(n, lo, hi); }

}  // namespace

TEST_CASE("binary ops with broadcasting match the CPU reference") {
  Device dev = device_under_test();
  for (int n : {5, 70000}) {  // below and above the inline grain
    auto av = sample(n * 3, -2.f, 2.f);
    auto bv = sample(n, 0.5f, 3.f);
    Tensor a_ref = from_vector(av, {3, n});
    Tensor b_ref = from_vector(bv, {1, n});
    Tensor a = a_ref.to(dev), b = b_ref.to(dev);
    using Fn = std::function<Tensor(const Tensor&, const Tensor&)>;
    std::vector<std::pair<const char*, Fn>> ops = {
        {"add", [](auto& x, auto& y) { return add(x, y, 0.5); }},
        {"sub", [](auto& x, auto& y) { return sub(x, y); }},
        {"mul", [](auto& x, auto& y) { return x * y; }},
        {"div", [](auto& x, auto& y) { return x / y; }},
        {"maximum", [](auto& x, auto& y) { return maximum(x, y); }},
        {"minimum", [](auto& x, auto& y) { return minimum(x, y); }},
    };
    for (auto& [name, op] : ops) {
      INFO("op " << name << " n=" << n << " on " << dev);
      Tensor got = op(a, b);
      CHECK(got.device() == dev);
      CHECK(got.sizes() == Shape{3, n});
      CHECK(max_abs_diff(got, op(a_ref, b_ref)) <= 1e-6);
    }
    // Against plain math for one of them, so the reference itself is checked.
    auto sum = add(a, b, 0.5).to_vector<float>();
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < n; c += 997) REQUIRE(sum[size_t(r * n + c)] == Approx(av[size_t(r * n + c)] + 0.5f * bv[size_t(c)]));
  }
}

TEST_CASE("unary ops match std math") {
  Device dev = device_under_test();
  auto v = sample(1000, 0.1f, 4.f);
  Tensor x = from_vector(v, {1000}).to(dev);
  struct Case { const char* name; std::function<Tensor(const Tensor&)> op; std::function<double(double)> ref; };
  std::vector<Case> cases = {
      {"neg", [](auto& t) { return neg(t); }, [](double a) { return -a; }},
      {"abs", [](auto& t) { return abs(neg(t)); }, [](double a) { return a; }},
      {"exp", [](auto& t) { return exp(t); }, [](double a) { return std::exp(a); }},
      {"log", [](auto& t) { return log(t); }, [](double a) { return std::log(a); }},
      {"sqrt", [](auto& t) { return sqrt(t); }, [](double a) { return std::sqrt(a); }},
      {"relu", [](auto& t) { return relu(add(t, -2.0)); }, [](double a) { return std::max(a - 2.0, 0.0); }},
      {"sigmoid", [](auto& t) { return sigmoid(t); }, [](double a) { return 1.0 / (1.0 + std::exp(-a)); }},
      {"tanh", [](auto& t) { return tanh(t); }, [](double a) { return std::tanh(a); }},
  };
  for (auto& c : cases) {
    INFO("op " << c.name << " on " << dev);
    auto got = c.op(x).to_vector<double>();
    for (size_t i = 0; i < v.size(); ++i) {
      double want = c.ref(double(v[i]));
      REQUIRE(std::fabs(got[i] - want) <= 1e-5 * std::max(1.0, std::fabs(want)));
    }
  }
}

TEST_CASE("integer and float64 arithmetic, promotion and in-place ops") {
  Device dev = device_under_test();
  Tensor i = from_vector<int32_t>({1, -2, 3, 7}, {4}).to(dev);
  Tensor j = from_vector<int32_t>({2, 2, 2, 0}, {4}).to(dev);
  CHECK((i * j).dtype() == kInt32);
  CHECK((i * j).to_vector<int32_t>() == std::vector<int32_t>{2, -4, 6, 0});
  Tensor q = i / j;  // true division promotes to float32
  CHECK(q.dtype() == kFloat32);
  CHECK(q.to_vector<float>()[0] == Approx(0.5f));
  CHECK(std::isinf(q.to_vector<float>()[3]));
  Tensor f = from_vector<double>({0.25, 1e-300}, {2}).to(dev);
  if (is_available(dev) && dev.backend() == "opencl") {
    bool fp64 = false;
    for (auto& [k, val] : device_info(dev).properties) fp64 |= k == "fp64" && val == "yes";
    if (!fp64) {
      CHECK_THROWS_AS(f * f, Unsupported);
      return;
    }
  }
  CHECK((f * f).dtype() == kFloat64);
  CHECK((f * f).to_vector<double>()[0] == 0.0625);
  CHECK(promote_types(i.dtype(), f.dtype()) == kFloat64);
  CHECK((i + f.narrow(0, 0, 1)).to_vector<double>()[1] == Approx(-1.75));

  Tensor acc = zeros({4}, dev);
  acc.add_(ones({4}, dev), 2.0);
  acc.mul_(3.0);
  CHECK(acc.to_vector<float>() == std::vector<float>{6, 6, 6, 6});
  CHECK_THROWS_AS(i.add_(ones({4}, dev)), DTypeError);  // float into int32 in place
}

TEST_CASE("operands on different devices throw DeviceMismatch naming both") {
  Device dev = device_under_test();
  if (dev.is_cpu()) {
    SUCCEED("needs a second device");
    return;
  }
  Tensor a = ones({2}, dev), b = ones({2});
  try {
    (void)(a + b);
    FAIL("no throw");
  } catch (const DeviceMismatch& e) {
    std::string m = e.what();
    CHECK(m.find(dev.str()) != std::string::npos);
    CHECK(m.find("cpu:0") != std::string::npos);
    CHECK(m.find("add") != std::string::npos);
  }
}

namespace {

bool has_fp64(const Device& dev) {
  if (dev.backend() != "opencl") return true;
  for (auto& [k, val] : device_info(dev).properties)
    if (k == "fp64" && val == "yes") return true;
  return false;
}

// |got - want| within a relative (floats: per dtype) tolerance; NaN must
// match NaN and infinities must match exactly.
bool close(double got, double want, double tol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= tol * std::max(1.0, std::fabs(want));
}

}  // namespace

TEST_CASE("new unary math matches std math in float64, float32 and float64, contiguous or not") {
  Device dev = device_under_test();
  struct Case {
    const char* name;
    std::function<Tensor(const Tensor&)> op;
    std::function<double(double)> ref;
    float lo, hi;
  };
  const double s2 = std::sqrt(2.0);
  std::vector<Case> cases = {
      {"log1p", [](auto& t) { return log1p(t); }, [](double a) { return std::log1p(a); }, -0.9f, 5.f},
      {"rsqrt", [](auto& t) { return rsqrt(t); }, [](double a) { return 1.0 / std::sqrt(a); }, 0.01f, 9.f},
      {"sin", [](auto& t) { return sin(t); }, [](double a) { return std::sin(a); }, -6.f, 6.f},
      {"cos", [](auto& t) { return cos(t); }, [](double a) { return std::cos(a); }, -6.f, 6.f},
      {"erf", [](auto& t) { return erf(t); }, [](double a) { return std::erf(a); }, -3.f, 3.f},
      {"reciprocal", [](auto& t) { return reciprocal(t); }, [](double a) { return 1.0 / a; }, 0.1f, 7.f},
      {"leaky_relu", [](auto& t) { return leaky_relu(t, 0.2); }, [](double a) { return a > 0 ? a : 0.2 * a; }, -4.f, 4.f},
      {"gelu", [](auto& t) { return gelu(t); }, [s2](double a) { return 0.5 * a * (1 + std::erf(a / s2)); }, -5.f, 5.f},
      {"silu", [](auto& t) { return silu(t); }, [](double a) { return a / (1 + std::exp(-a)); }, -8.f, 8.f},
      {"floor", [](auto& t) { return floor(t); }, [](double a) { return std::floor(a); }, -4.f, 4.f},
      {"ceil", [](auto& t) { return ceil(t); }, [](double a) { return std::ceil(a); }, -4.f, 4.f},
      {"round", [](auto& t) { return round(t); }, [](double a) { return std::nearbyint(a); }, -4.f, 4.f},
      {"sign", [](auto& t) { return sign(t); }, [](double a) { return double((a > 0) - (a < 0)); }, -2.f, 2.f},
      {"clamp", [](auto& t) { return clamp(t, -0.5, 1.25); }, [](double a) { return std::min(std::max(a, -0.5), 1.25); }, -3.f, 3.f},
      {"clamp_min", [](auto& t) { return clamp_min(t, 0.25); }, [](double a) { return std::max(a, 0.25); }, -3.f, 3.f},
      {"clamp_max", [](auto& t) { return clamp_max(t, 0.25); }, [](double a) { return std::min(a, 0.25); }, -3.f, 3.f},
  };
  std::vector<DType> dtypes = {kFloat32};
  if (has_fp64(dev)) dtypes.push_back(kFloat64);
  for (int n : {6, 40000}) {  // below and above the inline grain (n * 2 elements)
    for (auto& c : cases) {
      auto v = sample(2 * n, c.lo, c.hi);
      Tensor host = from_vector(v, {n, 2});
      for (DType dt : dtypes) {
        const double tol = dt == kFloat32 ? 2e-6 : 1e-12;
        Tensor x = host.to(dev, dt);
        for (bool strided : {false, true}) {
          INFO(c.name << " n=" << n << " " << name(dt) << (strided ? " transposed" : "") << " on " << dev);
          Tensor in = strided ? x.transpose(0, 1) : x;  // [2, n] view with strides (1, 2)
          Tensor got = c.op(in);
          REQUIRE(got.dtype() == dt);
          REQUIRE(got.sizes() == in.sizes());
          auto g = got.contiguous().to_vector<double>();
          auto xs = in.contiguous().to_vector<double>();  // the inputs as rounded to dt
          for (size_t i = 0; i < g.size(); ++i) REQUIRE(close(g[i], c.ref(xs[i]), tol));
          CHECK(max_abs_diff(got, c.op(in.cpu())) <= tol * 10);
        }
      }
    }
  }
}

TEST_CASE("gelu and its fused gradient gelu_backward match float64 over [-12, 12], contiguous or not") {
  // Contiguous float32 on the CPU takes the vectorised loops (kernels/gelu_host.hpp), in chunks of 4096:
  // n covers several chunks and a remainder; the transposed view takes the generic functors.
  Device dev = device_under_test();
  const int64_t n = 3 * 4096 + 77;
  std::vector<double> xv(size_t(2 * n)), gv(size_t(2 * n));
  for (int64_t i = 0; i < 2 * n; ++i) {
    xv[size_t(i)] = -12.0 + 24.0 * double(i) / double(2 * n - 1);
    gv[size_t(i)] = 0.5 + double((i * 37) % 11) / 8.0;
  }
  xv[5] = 0.0, xv[6] = -0.0, xv[7] = 1e-30, xv[8] = -1e-30, xv[9] = 0.70710678, xv[10] = -0.70710678;
  const auto phi = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  const auto pdf = [](double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI); };
  std::vector<DType> dtypes = {kFloat32};
  if (has_fp64(dev)) dtypes.push_back(kFloat64);
  for (DType dt : dtypes) {
    const double tol = dt == kFloat32 ? 3e-6 : 1e-12;
    Tensor x = from_vector(xv, {n, 2}).to(dev, dt), g = from_vector(gv, {n, 2}).to(dev, dt);
    for (bool strided : {false, true}) {
      INFO(name(dt) << (strided ? " transposed" : "") << " on " << dev);
      Tensor xi = strided ? x.transpose(0, 1) : x, gi = strided ? g.transpose(0, 1) : g;
      auto xs = xi.contiguous().to_vector<double>(), gs = gi.contiguous().to_vector<double>();
      auto y = gelu(xi).contiguous().to_vector<double>();
      auto dy = gelu_backward(gi, xi).contiguous().to_vector<double>();
      for (size_t i = 0; i < xs.size(); ++i) {
        INFO("x = " << xs[i]);
        REQUIRE(close(y[i], xs[i] * phi(xs[i]), tol));
        REQUIRE(close(dy[i], gs[i] * (phi(xs[i]) + xs[i] * pdf(xs[i])), tol));
      }
    }
  }
  const float nan = std::nanf(""), inf = INFINITY;
  auto special = gelu(from_vector<float>({nan, inf, 0.f}, {3}).to(dev)).to_vector<float>();
  CHECK(std::isnan(special[0]));
  CHECK(special[1] == inf);
  CHECK(special[2] == 0.f);
  CHECK_THROWS_AS(gelu_backward(ones({2}, dev), from_vector<int32_t>({1, 2}, {2}).to(dev)), DTypeError);
}

TEST_CASE("round is half to even; NaN and infinities pass through the float functions") {
  Device dev = device_under_test();
  Tensor r = round(from_vector<float>({0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.4f}, {7}).to(dev));
  CHECK(r.to_vector<float>() == std::vector<float>{0, 2, 2, -0.f, -2, -2, 2});
  const float nan = std::nanf(""), inf = INFINITY;
  Tensor x = from_vector<float>({nan, inf, -inf}, {3}).to(dev);
  CHECK(std::isnan(sign(x).to_vector<float>()[0]));
  CHECK(sign(x).to_vector<float>()[1] == 1.f);
  CHECK(std::isnan(clamp(x, -1, 1).to_vector<float>()[0]));  // NaN stays NaN
  CHECK(clamp(x, -1, 1).to_vector<float>()[2] == -1.f);
  CHECK(std::isnan(floor(x).to_vector<float>()[0]));
  CHECK(silu(x).to_vector<float>()[1] == inf);
  CHECK(gelu(x).to_vector<float>()[1] == inf);
  CHECK(clamp(from_vector<float>({0.f, 5.f}, {2}).to(dev), 3, 1).to_vector<float>() == std::vector<float>{1, 1});
}

TEST_CASE("round(t, decimals): PyTorch's rint(t * 10^d) / 10^d in t's dtype, negative d to tens") {
  Device dev = device_under_test();
  const std::vector<double> v = {1.2345, -2.5, 0.125, 1234.5678, -0.0049, 15.0, 25.0, 1e-9};
  for (DType dt : {kFloat32, kFloat64}) {
    Tensor x = from_vector(v, {8}, dev).to(dt);
    const std::vector<double> xs = x.to_vector<double>();  // the inputs as stored in dt
    for (int64_t d : {2, 3, -1, -2}) {
      INFO("dtype " << dt << " decimals " << d);
      std::vector<double> got = round(x, d).to_vector<double>();
      REQUIRE(got.size() == xs.size());
      for (size_t i = 0; i < xs.size(); ++i) {
        double want;
        if (dt == kFloat32) {  // the product and quotient rounded to float32, as PyTorch computes them
          const float p = float(std::pow(10.0, double(std::abs(d)))), xf = float(xs[i]);
          want = d > 0 ? double(std::nearbyint(xf * p) / p) : double(std::nearbyint(xf / p) * p);
        } else {
          const double p = std::pow(10.0, double(std::abs(d)));
          want = d > 0 ? std::nearbyint(xs[i] * p) / p : std::nearbyint(xs[i] / p) * p;
        }
        CHECK(got[i] == want);
      }
    }
  }
  Tensor x = from_vector<double>({0.125, 2.5}, {2}, dev);
  CHECK(round(x, 0).to_vector<double>() == std::vector<double>{0, 2});  // decimals 0: round(t)
  CHECK(round(x, 2).to_vector<double>() == std::vector<double>{0.12, 2.5});  // half to even at the last place
  CHECK(round(from_vector<int64_t>({15}, {1}).to(dev), 0).to_vector<int64_t>() == std::vector<int64_t>{15});
  CHECK_THROWS_AS(round(from_vector<int64_t>({15}, {1}).to(dev), -1), DTypeError);
  CHECK_THROWS_AS(round(Tensor(), 2), ValueError);
  Tensor g = x.detach().requires_grad_();
  round(g, 1).sum().backward();
  CHECK(g.grad().to_vector<double>() == std::vector<double>{0, 0});  // piecewise constant
}

TEST_CASE("unary dtype rules: ints compute in float32, rounding is identity, activations need floats") {
  Device dev = device_under_test();
  Tensor i = from_vector<int32_t>({-3, 0, 4, 9}, {4}).to(dev);
  for (auto op : {+[](const Tensor& t) { return sin(t); }, +[](const Tensor& t) { return log1p(t + 3); },
                  +[](const Tensor& t) { return erf(t); }, +[](const Tensor& t) { return reciprocal(t); }}) {
    Tensor r = op(i);
    CHECK(r.dtype() == kFloat32);
  }
  auto s = sin(i).to_vector<double>();
  auto iv = i.to_vector<int32_t>();
  for (size_t k = 0; k < s.size(); ++k) CHECK(close(s[k], std::sin(double(iv[k])), 2e-6));
  CHECK(std::isinf(reciprocal(i).to_vector<float>()[1]));
  for (auto op : {+[](const Tensor& t) { return floor(t); }, +[](const Tensor& t) { return ceil(t); },
                  +[](const Tensor& t) { return round(t); }}) {
    Tensor r = op(i);
    CHECK(r.dtype() == kInt32);
    CHECK(r.to_vector<int32_t>() == iv);
  }
  CHECK(sign(i).dtype() == kInt32);
  CHECK(sign(i).to_vector<int32_t>() == std::vector<int32_t>{-1, 0, 1, 1});
  CHECK(sign(from_vector<uint8_t>({0, 7}, {2}).to(dev)).to_vector<int32_t>() == std::vector<int32_t>{0, 1});
  Tensor b = from_vector<bool>({true, false}, {2}).to(dev);
  CHECK_THROWS_AS(sign(b), DTypeError);
  CHECK_THROWS_AS(clamp(b, 0, 1), DTypeError);
  for (auto op : {+[](const Tensor& t) { return gelu(t); }, +[](const Tensor& t) { return silu(t); },
                  +[](const Tensor& t) { return leaky_relu(t); }}) {
    try {
      (void)op(i);
      FAIL("no throw");
    } catch (const DTypeError& e) {
      CHECK(std::string(e.what()).find("int32") != std::string::npos);
    }
  }
  // clamp on integers: integral bounds keep the dtype (out-of-range bounds
  // saturate), a fractional bound gives float32.
  CHECK(clamp(i, 0, 5).dtype() == kInt32);
  CHECK(clamp(i, 0, 5).to_vector<int32_t>() == std::vector<int32_t>{0, 0, 4, 5});
  CHECK(clamp(i, -1e12, 1e12).to_vector<int32_t>() == iv);
  CHECK(clamp_min(from_vector<int64_t>({-5, 5}, {2}).to(dev), 0).to_vector<int64_t>() == std::vector<int64_t>{0, 5});
  Tensor cf = clamp(i, 0.5, 5);
  CHECK(cf.dtype() == kFloat32);
  CHECK(cf.to_vector<float>() == std::vector<float>{0.5f, 0.5f, 4, 5});
  // float16 computes in float32 and returns float16 (as PyTorch).
  CHECK(gelu(ones({3}, dev).to(kFloat16)).dtype() == kFloat16);
}

TEST_CASE("pow: tensor and scalar exponents, integer powers, promotion") {
  Device dev = device_under_test();
  for (int n : {7, 70000}) {
    auto av = sample(n, 0.1f, 3.f), ev = sample(n, -2.f, 2.f);
    Tensor a = from_vector(av, {n}).to(dev), e = from_vector(ev, {n}).to(dev);
    auto p = pow(a, e).to_vector<float>();
    auto p2 = pow(a, 2.5).to_vector<float>();
    for (int i = 0; i < n; i += (n > 100 ? 101 : 1)) {
      REQUIRE(close(p[size_t(i)], std::pow(double(av[size_t(i)]), double(ev[size_t(i)])), 4e-6));
      REQUIRE(close(p2[size_t(i)], std::pow(double(av[size_t(i)]), 2.5), 4e-6));
    }
    CHECK(max_abs_diff(pow(a, e), pow(a.cpu(), e.cpu())) <= 1e-5);
  }
  Tensor i = from_vector<int64_t>({2, -3, 0, 1, -1, 10}, {6}).to(dev);
  CHECK(pow(i, 3).dtype() == kInt64);
  CHECK(pow(i, 3).to_vector<int64_t>() == std::vector<int64_t>{8, -27, 0, 1, -1, 1000});
  Tensor ie = from_vector<int64_t>({-1, -1, 2, -5, -3, 0}, {6}).to(dev);
  CHECK(pow(i, ie).to_vector<int64_t>() == std::vector<int64_t>{0, 0, 0, 1, -1, 1});
  CHECK_THROWS_AS(pow(i, -2), ValueError);
  CHECK(pow(i, 0.5).dtype() == kFloat32);  // fractional scalar: float32
  CHECK(pow(i.to(kInt32), from_vector<float>({2.f}, {1}).to(dev)).dtype() == kFloat32);
  // broadcasting
  Tensor base = from_vector<float>({1, 2, 3}, {3, 1}).to(dev);
  Tensor ex = from_vector<float>({0, 1, 2, 3}, {1, 4}).to(dev);
  Tensor pb = pow(base, ex);
  CHECK(pb.sizes() == Shape{3, 4});
  CHECK(pb.to_vector<float>()[11] == 27.f);
}

TEST_CASE("scalar operator forms and rsub/rdiv") {
  Device dev = device_under_test();
  Tensor a = from_vector<float>({1, 2, 4}, {3}).to(dev);
  CHECK((a - 1.0).to_vector<float>() == std::vector<float>{0, 1, 3});
  CHECK((a / 2.0).to_vector<float>() == std::vector<float>{0.5f, 1, 2});
  CHECK((10.0 - a).to_vector<float>() == std::vector<float>{9, 8, 6});
  CHECK((2.0 * a).to_vector<float>() == std::vector<float>{2, 4, 8});
  CHECK((1.0 + a).to_vector<float>() == std::vector<float>{2, 3, 5});
  CHECK((8.0 / a).to_vector<float>() == std::vector<float>{8, 4, 2});
  Tensor i = from_vector<int32_t>({1, 2, 4}, {3}).to(dev);
  CHECK((i - 1).dtype() == kInt32);
  CHECK((i / 2).dtype() == kFloat32);  // true division
  CHECK((i / 2).to_vector<float>() == std::vector<float>{0.5f, 1, 2});
  CHECK((5 - i).to_vector<int32_t>() == std::vector<int32_t>{4, 3, 1});
  CHECK((i - 0.5).dtype() == kFloat32);
  Tensor h = from_vector<float>({1, 2}, {2}).to(dev).to(kFloat16);
  // float16 result, the scalar not rounded to float16 first: one rounding of 1 - 0.1.
  CHECK((h - 0.1).dtype() == kFloat16);
  CHECK((h - 0.1).to_vector<float>()[0] == from_vector<float>({0.9f}, {1}).to(kFloat16).to_vector<float>()[0]);
}

TEST_CASE("in-place sub_, div_, pow_, clamp_, relu_ keep self's dtype") {
  Device dev = device_under_test();
  for (int n : {5, 50000}) {
    auto v = sample(n, -3.f, 3.f);
    Tensor x = from_vector(v, {n}).to(dev);
    Tensor y = x.clone();
    y.sub_(x, 2.0).div_(-1.0);  // x - 2x = -x; / -1 = x
    CHECK(max_abs_diff(y, x) <= 1e-6);
    Tensor z = x.clone();
    z.clamp_(-1, 1);
    CHECK(max_abs_diff(z, clamp(x, -1, 1)) == 0);
    z.relu_();
    CHECK(max_abs_diff(z, clamp(x, 0, 1)) == 0);
    Tensor w = x.clone();
    w.pow_(2.0);
    auto wv = w.to_vector<float>();
    for (int k = 0; k < n; k += 97) REQUIRE(close(wv[size_t(k)], double(v[size_t(k)]) * v[size_t(k)], 2e-6));
  }
  // non-contiguous self: only the viewed elements change
  Tensor m = zeros({3, 4}, dev);
  Tensor col = m.narrow(1, 1, 2);
  col.sub_(1.0);
  CHECK(m.to_vector<float>() == std::vector<float>{0, -1, -1, 0, 0, -1, -1, 0, 0, -1, -1, 0});
  Tensor i = from_vector<int32_t>({4, 9}, {2}).to(dev);
  CHECK_THROWS_AS(i.div_(2.0), DTypeError);  // true division into int32
  CHECK_THROWS_AS(i.sub_(0.5), DTypeError);
  CHECK_THROWS_AS(i.clamp_(0.5, 3), DTypeError);
  CHECK_THROWS_AS(i.pow_(-1.0), ValueError);
  i.pow_(2.0).clamp_(0, 50).sub_(1.0);
  CHECK(i.to_vector<int32_t>() == std::vector<int32_t>{15, 49});
  CHECK(i.dtype() == kInt32);
  CHECK_THROWS_AS(i.sub_(ones({3}, kInt32).to(dev)), ShapeError);
  Tensor h = from_vector<float>({-1, 3}, {2}).to(dev).to(kFloat16);
  h.relu_().clamp_max_(2.0);
  CHECK(h.dtype() == kFloat16);
  CHECK(h.to_vector<float>() == std::vector<float>{0, 2});
}

TEST_CASE("float64 pow with a zero base in the same vector gives every lane's exact power") {
  // PoCL's double vector pow got lane 3 of [6 8 2 2 8 2 0 4] wrong (2^-9 for
  // 2^9); the OpenCL plugin runs float64 pow a lane per item.
  Device dev = device_under_test();
  std::vector<double> base = {5, 1, 6, 5, 6, 4, 2, 5, 5, 9, 3, 1, 4, 2, 3, 2, 6, 8, 2, 2, 8, 2, 0, 4, 9};
  Tensor x = from_vector(base, {int64_t(base.size())}).to(dev);
  std::vector<double> got = pow(x, scalar_tensor(9.0, TensorOptions(kFloat64).device(dev))).cpu().to_vector<double>();
  for (size_t i = 0; i < base.size(); ++i) CHECK(got[i] == std::pow(base[i], 9.0));
}

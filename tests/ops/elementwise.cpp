// Elementwise ops on the device under test, checked against the same op on
// the CPU reference device and against plain C++ math.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

std::vector<float> sample(int n, float lo, float hi) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[size_t(i)] = lo + (hi - lo) * float((i * 7919) % n) / float(n);
  return v;
}

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

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The composite ops (vnn/composite.h) on the device under test: values
// against plain loops, PyTorch's integer and bool rules, float64 gradient
// checks, and the errors for bad input. test_opdb replays PyTorch's own
// samples for each of them too.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "support/device_under_test.hpp"
#include "support/op_checks.hpp"
#include "vnn/composite.h"
#include "vnn/vnn.h"

using namespace vnn;
using vnn::test::check_error;
using vnn::test::check_grad;
using vnn::test::device_under_test;

namespace {
Tensor vec(const std::vector<double>& v, const Device& dev) {
  return from_vector(v, {int64_t(v.size())}).to(dev);
}
Tensor leaf(const Shape& s, const Device& dev, uint32_t seed) {
  auto v = vnn::test::lcg_values(size_t(s.numel()), seed, 7, -1.0, 1.0);
  return from_vector(v, s).to(dev).requires_grad_(true);
}
}  // namespace

TEST_CASE("pointwise composites give plain-loop values") {
  Device dev = device_under_test();
  Tensor a = vec({1, 2, 3}, dev), b = vec({4, 5, 6}, dev), c = vec({2, 4, 8}, dev);
  CHECK(addcmul(a, b, c, 0.5).cpu().to_vector<double>() == std::vector<double>{5, 12, 27});
  CHECK(addcdiv(a, b, c, 2.0).cpu().to_vector<double>() == std::vector<double>{5, 4.5, 4.5});
  CHECK(lerp(a, b, 0.25).cpu().to_vector<double>() == std::vector<double>{1.75, 2.75, 3.75});
  CHECK(lerp(a, b, 1.0).cpu().to_vector<double>() == std::vector<double>{4, 5, 6});  // exact at 1
  CHECK(rsub(a, b, 2.0).cpu().to_vector<double>() == std::vector<double>{2, 1, 0});
  CHECK(float_power(a.to(kInt64), 2.0).dtype() == kFloat64);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  Tensor odd = vec({nan, inf, -inf, 1}, dev).to(kFloat32);
  auto fixed = nan_to_num(odd, 0.5).cpu().to_vector<float>();
  CHECK(fixed == std::vector<float>{0.5f, std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest(), 1});
  CHECK(isposinf(odd).cpu().to_vector<bool>() == std::vector<bool>{false, true, false, false});
  CHECK(isneginf(odd).cpu().to_vector<bool>() == std::vector<bool>{false, false, true, false});
  CHECK(logit(vec({0.5, 0.25}, dev)).cpu().to_vector<double>()[1] == Approx(std::log(1.0 / 3.0)));
  CHECK(isin(vec({1, 7, 3, 9}, dev), vec({3, 1, 5}, dev)).cpu().to_vector<bool>() ==
        std::vector<bool>{true, false, true, false});
  CHECK(isin(vec({1, 7}, dev), vec({1}, dev), false, true).cpu().to_vector<bool>() == std::vector<bool>{false, true});
  CHECK(isin(vec({1, 7}, dev), vec({}, dev)).cpu().to_vector<bool>() == std::vector<bool>{false, false});
}

TEST_CASE("products, calculus and reshaping sums give plain-loop values and PyTorch's dtypes") {
  Device dev = device_under_test();
  Tensor a = vec({1, 2, 3}, dev), b = vec({4, 5, 6}, dev);
  CHECK(dot(a, b).item() == 32);
  CHECK(dot(a.to(kInt64), b.to(kInt64)).dtype() == kInt64);
  Tensor m = from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3}).to(dev);
  CHECK(mv(m, a).cpu().to_vector<double>() == std::vector<double>{14, 32});
  CHECK(addmv(vec({1, 1}, dev), m, a, 2.0, 0.5).cpu().to_vector<double>() == std::vector<double>{9, 18});
  // Integer tensors: beta and alpha act truncated, the result stays int64.
  Tensor mi = m.to(kInt64);
  Tensor r = addmv(vec({1, 1}, dev).to(kInt64), mi, a.to(kInt64), 2.6, 1.0);
  CHECK(r.dtype() == kInt64);
  CHECK(r.cpu().to_vector<int64_t>() == std::vector<int64_t>{16, 34});
  Tensor bools = addr(zeros({2, 2}, TensorOptions(kBool).device(dev)), vec({1, 0}, dev).to(kBool),
                      vec({1, 1}, dev).to(kBool));
  CHECK(bools.dtype() == kBool);
  CHECK(bools.cpu().to_vector<bool>() == std::vector<bool>{true, true, false, false});
  Tensor b1 = ones({2, 2, 3}, TensorOptions(kFloat64).device(dev)), b2 = ones({2, 3, 2}, TensorOptions(kFloat64).device(dev));
  CHECK(addbmm(zeros({2, 2}, TensorOptions(kFloat64).device(dev)), b1, b2).cpu().to_vector<double>() ==
        std::vector<double>{6, 6, 6, 6});
  CHECK(baddbmm(zeros({1}, TensorOptions(kFloat64).device(dev)), b1, b2, 0.0).sizes() == Shape{2, 2, 2});
  CHECK(dist(a, b).item() == Approx(std::sqrt(27.0)));
  CHECK(diff(vec({1, 4, 9, 16}, dev)).cpu().to_vector<double>() == std::vector<double>{3, 5, 7});
  CHECK(diff(vec({1, 4, 9, 16}, dev), 2).cpu().to_vector<double>() == std::vector<double>{2, 2});
  CHECK(diff(a, 1, -1, vec({0}, dev), vec({10}, dev)).cpu().to_vector<double>() == std::vector<double>{1, 1, 1, 7});
  CHECK(trapezoid(vec({1, 2, 3}, dev)).item() == 4.0);
  CHECK(trapezoid(vec({1, 2, 3}, dev), vec({0, 1, 3}, dev)).item() == 6.5);
  CHECK(cumulative_trapezoid(vec({1, 2, 3}, dev), 2.0).cpu().to_vector<double>() == std::vector<double>{3, 8});
  CHECK(sum_to_size(ones({2, 3}, TensorOptions(kFloat64).device(dev)), Shape{1, 3}).cpu().to_vector<double>() ==
        std::vector<double>{2, 2, 2});
  Tensor big = from_vector(std::vector<double>{3, 4, 0.3, 0.4}, {2, 2}).to(dev);
  auto rn = renorm(big, 2.0, 0, 1.0).cpu().to_vector<double>();
  CHECK(rn[0] == Approx(0.6).epsilon(1e-6));
  CHECK(rn[2] == 0.3);  // a row under maxnorm is unchanged
  CHECK(logspace(0, 2, 3, 10.0, TensorOptions(kFloat64).device(dev)).cpu().to_vector<double>() ==
        std::vector<double>{1, 10, 100});
}

TEST_CASE("composite ops have float64 gradients that match finite differences") {
  Device dev = device_under_test();
  Tensor x = leaf({3, 4}, dev, 1), y = leaf({3, 4}, dev, 2), w = leaf({3, 4}, dev, 3);
  check_grad("addcdiv", [](const std::vector<Tensor>& v) { return addcdiv(v[0], v[1], add(v[2], 3.0), 0.5); },
             {x, y, w});
  check_grad("lerp", [](const std::vector<Tensor>& v) { return lerp(v[0], v[1], v[2]); }, {x, y, w});
  check_grad("logit", [](const std::vector<Tensor>& v) { return logit(add(mul(v[0], 0.3), 0.5)); }, {x});
  check_grad("trapezoid", [](const std::vector<Tensor>& v) { return trapezoid(v[0], 0.5, 1); }, {x});
  check_grad("cumulative_trapezoid", [](const std::vector<Tensor>& v) { return cumulative_trapezoid(v[0], 1.5, 0); },
             {x});
  check_grad("renorm", [](const std::vector<Tensor>& v) { return renorm(v[0], 2.0, 0, 0.5); }, {x});
  Tensor m = leaf({3, 4}, dev, 4), u = leaf({4}, dev, 5), s = leaf({3}, dev, 6);
  check_grad("addmv", [](const std::vector<Tensor>& v) { return addmv(v[0], v[1], v[2], 0.5, 2.0); }, {s, m, u});
  check_grad("diff", [](const std::vector<Tensor>& v) { return diff(v[0], 2, 1); }, {x});
}

TEST_CASE("composite ops refuse bad input with a typed error naming the op") {
  Device dev = device_under_test();
  Tensor a = vec({1, 2, 3}, dev), ai = a.to(kInt64);
  check_error<DTypeError>([&] { addcdiv(a, ai, ai); }, "addcdiv");
  check_error<DTypeError>([&] { lerp(a, a.to(kFloat32), 0.5); }, "lerp");
  check_error<ShapeError>([&] { dot(a, vec({1, 2}, dev)); }, "dot");
  check_error<DTypeError>([&] { dot(a, ai); }, "dot");
  check_error<ShapeError>([&] { mv(a, a); }, "mv");
  check_error<ValueError>([&] { diff(a, -1); }, "diff");
  check_error<ShapeError>([&] { trapezoid(a, vec({0, 1}, dev)); }, "trapezoid");
  check_error<ShapeError>([&] { sum_to_size(a, Shape{2}); }, "sum_to_size");
  check_error<ValueError>([&] { renorm(a, -1.0, 0, 1.0); }, "renorm");
  check_error<ShapeError>([&] { addbmm(a, a, a); }, "addbmm");
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// scatter_reduce and index_reduce (vnn/scatter_reduce.h) on the device under
// test: every reduction against a plain loop, with and without self, on
// float, double and integer data with colliding indices, NaN in amax/amin,
// float64 gradient checks (ties and zeros included), and typed errors.
// test_opdb replays PyTorch's samples for both as well.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"
#include "support/op_checks.hpp"
#include "vnn/vnn.h"

using namespace vnn;
using vnn::test::check_error;
using vnn::test::check_grad;
using vnn::test::device_under_test;

namespace {
// The plain loop: 2-D self [R, C], index and src [I, C], along dim 0.
std::vector<double> reference(const std::vector<double>& self, const std::vector<int64_t>& index,
                              const std::vector<double>& src, int64_t cols, const std::string& reduce,
                              bool include_self, bool integer) {
  std::vector<double> out = self, count(self.size(), include_self ? 1.0 : 0.0);
  std::vector<bool> reached(self.size(), false);
  for (size_t i = 0; i < index.size(); ++i) {
    size_t at = size_t(index[i] * cols + int64_t(i % size_t(cols)));
    double v = src[i];
    if (!include_self && !reached[at]) {
      out[at] = v;
      reached[at] = true;
      count[at] = 1;
      continue;
    }
    reached[at] = true;
    count[at] += 1;
    if (reduce == "sum" || reduce == "mean") out[at] += v;
    else if (reduce == "prod") out[at] *= v;
    else if (reduce == "amax") out[at] = std::isnan(out[at]) || std::isnan(v) ? NAN : std::max(out[at], v);
    else out[at] = std::isnan(out[at]) || std::isnan(v) ? NAN : std::min(out[at], v);
  }
  if (reduce == "mean")
    for (size_t k = 0; k < out.size(); ++k)
      if (count[k] > 0) out[k] = integer ? std::floor(out[k] / count[k]) : out[k] / count[k];
  return out;
}

void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    INFO("element " << k);
    if (std::isnan(want[k])) CHECK(std::isnan(got[k]));
    else CHECK(got[k] == Approx(want[k]).epsilon(tol).margin(tol));
  }
}
}  // namespace

TEST_CASE("scatter_reduce and index_reduce give plain-loop values") {
  Device dev = device_under_test();
  const std::vector<double> self_v = {1, -2, 3, 0.5, 2, -1, 4, 1.5};  // [4, 2]
  const std::vector<int64_t> idx_v = {0, 1, 3, 0, 0, 3, 2, 1, 0, 0};  // [5, 2]: collisions
  const std::vector<double> src_v = {2, 3, -1, 0.5, 4, -2, 1.5, 2, -3, 5};
  for (DType t : {kFloat32, kFloat64, kInt64, kInt32}) {
    const bool integer = !is_floating(t);
    std::vector<double> self_t = self_v, src_t = src_v;
    if (integer)
      for (auto* v : {&self_t, &src_t})
        for (double& x : *v) x = std::round(x * 2);
    Tensor self = from_vector(self_t, {4, 2}).to(t).to(dev), src = from_vector(src_t, {5, 2}).to(t).to(dev);
    Tensor index = from_vector(idx_v, {5, 2}).to(dev);
    for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"})
      for (bool include_self : {true, false}) {
        INFO(name(t) << " " << reduce << " include_self " << include_self);
        Tensor out = scatter_reduce(self, 0, index, src, reduce, include_self);
        CHECK(out.dtype() == t);
        check_close(out.cpu().to(kFloat64).to_vector<double>(),
                    reference(self_t, idx_v, src_t, 2, reduce, include_self, integer), t == kFloat32 ? 1e-5 : 1e-12);
        Tensor in_place = self.clone();
        scatter_reduce_(in_place, 0, index, src, reduce, include_self);
        CHECK(equal(in_place, out));
      }
  }
  // index_reduce: whole slices along dim 1 of [2, 3] at index {2, 0, 2, 1}.
  Tensor self = from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}).to(dev);
  Tensor source = from_vector<double>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4}).to(dev);
  Tensor index = from_vector<int64_t>({2, 0, 2, 1}, {4}).to(dev);
  CHECK(index_reduce(self, 1, index, source, "prod").cpu().to_vector<double>() ==
        std::vector<double>{2, 8, 9, 24, 40, 210});
  CHECK(index_reduce(self, 1, index, source, "amax", false).cpu().to_vector<double>() ==
        std::vector<double>{2, 4, 3, 6, 8, 7});
  CHECK(index_reduce(self, 1, index, source, "mean").cpu().to_vector<double>() ==
        std::vector<double>{1.5, 3, 7.0 / 3, 5, 6.5, 6});
}

TEST_CASE("scatter's number and reduce= forms") {
  Device dev = device_under_test();
  Tensor self = from_vector<double>({1, 2, 3}, {3}).to(dev);
  Tensor index = from_vector<int64_t>({2, 0, 2}, {3}).to(dev);
  Tensor src = from_vector<double>({4, 5, 6}, {3}).to(dev);
  CHECK(scatter(self, 0, index, 9.0).cpu().to_vector<double>() == std::vector<double>{9, 2, 9});
  CHECK(scatter(self, 0, index, src, "add").cpu().to_vector<double>() == std::vector<double>{6, 2, 13});
  CHECK(scatter(self, 0, index, src, "multiply").cpu().to_vector<double>() == std::vector<double>{5, 2, 72});
  CHECK(scatter(self, 0, index, 2.0, "multiply").cpu().to_vector<double>() == std::vector<double>{2, 2, 12});
  Tensor t = self.clone();
  scatter_(t, 0, index, -1.0);
  CHECK(t.cpu().to_vector<double>() == std::vector<double>{-1, 2, -1});
  check_error<ValueError>([&] { scatter(self, 0, index, src, "mean"); }, "scatter");
}

TEST_CASE("scatter_reduce's amax and amin propagate NaN, on every element that meets one") {
  Device dev = device_under_test();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor self = from_vector<float>({0, 0, 0}, {3}).to(dev);
  Tensor src = from_vector<double>({1, nan, 5, -2}, {4}).to(kFloat32).to(dev);
  Tensor index = from_vector<int64_t>({0, 0, 1, 2}, {4}).to(dev);
  std::vector<double> mx = scatter_reduce(self, 0, index, src, "amax").cpu().to(kFloat64).to_vector<double>();
  CHECK(std::isnan(mx[0]));
  CHECK(mx[1] == 5);
  CHECK(mx[2] == 0);
  std::vector<double> mn = scatter_reduce(self, 0, index, src, "amin", false).cpu().to(kFloat64).to_vector<double>();
  CHECK(std::isnan(mn[0]));
  CHECK(mn[2] == -2);
}

TEST_CASE("scatter_reduce and index_reduce gradients match finite differences") {
  Device dev = device_under_test();
  auto leaf = [&](std::vector<double> v, Shape s) { return from_vector(v, s).to(dev).requires_grad_(true); };
  Tensor index = from_vector<int64_t>({0, 1, 2, 0, 0, 2}, {3, 2}).to(dev);
  // Distinct values (no ties) for the finite differences of amax / amin; a
  // single zero for prod's exclusive-product rule.
  Tensor self = leaf({0.3, -0.7, 1.1, 0.9, -0.4, 0.0}, {3, 2});
  Tensor src = leaf({0.5, 1.3, -0.2, 0.8, 0.25, -1.6}, {3, 2});
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"})
    for (bool include_self : {true, false}) {
      std::string what = std::string("scatter_reduce ") + reduce + (include_self ? "" : " without self");
      check_grad(what.c_str(),
                 [&](const std::vector<Tensor>& in) {
                   return scatter_reduce(in[0], 0, index, in[1], reduce, include_self);
                 },
                 {self, src});
    }
  Tensor bigger = leaf({0.5, 1.3, -0.2, 0.8, 0.25, -1.6, 2.0, 3.0}, {4, 2});  // src larger than index
  check_grad("scatter_reduce with a larger src",
             [&](const std::vector<Tensor>& in) { return scatter_reduce(in[0], 0, index, in[1], "prod"); },
             {self, bigger});
  Tensor s2 = leaf({1, 2, 3, 4, 5, 6}, {2, 3}), source = leaf({1.5, -2, 3.5, 0.4, -5, 6.5, 7.5, 0.8}, {2, 4});
  Tensor index1 = from_vector<int64_t>({2, 0, 2, 1}, {4}).to(dev);
  for (const char* reduce : {"prod", "mean", "amax", "amin"})
    check_grad(reduce, [&](const std::vector<Tensor>& in) { return index_reduce(in[0], 1, index1, in[1], reduce); },
               {s2, source});
}

TEST_CASE("scatter_reduce's bad input throws typed errors naming the op") {
  Device dev = device_under_test();
  Tensor self = zeros({3, 2}, dev), src = ones({2, 2}, dev);
  Tensor index = from_vector<int64_t>({0, 3, 1, 1}, {2, 2}).to(dev);
  check_error<IndexError>([&] { scatter_reduce(self, 0, index, src, "sum"); }, "scatter_reduce");
  Tensor ok_index = from_vector<int64_t>({0, 2, 1, 1}, {2, 2}).to(dev);
  check_error<ValueError>([&] { scatter_reduce(self, 0, ok_index, src, "max"); }, "scatter_reduce");
  check_error<DTypeError>([&] { scatter_reduce(self, 0, ok_index, src.to(kFloat64), "sum"); }, "scatter_reduce");
  check_error<ShapeError>([&] { scatter_reduce(self, 0, ok_index, ones({2}, dev), "sum"); }, "scatter_reduce");
  Tensor one = from_vector<int64_t>({0}, {1}).to(dev), two = from_vector<int64_t>({0, 1}, {2}).to(dev);
  check_error<ValueError>([&] { index_reduce(self, 0, one, ones({1, 2}, dev), "sum"); }, "index_reduce");
  check_error<ShapeError>([&] { index_reduce(self, 0, two, ones({1, 2}, dev), "prod"); }, "index_reduce");
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn against LibTorch: each op runs on the same inputs in vnn (device under
// test) and in LibTorch (CPU); values, shapes and result dtypes must agree.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"

using vnn::test::device_under_test;

namespace {

vnn::DType from_torch(c10::ScalarType t) {
  switch (t) {
    case torch::kFloat32: return vnn::kFloat32;
    case torch::kFloat64: return vnn::kFloat64;
    case torch::kInt32: return vnn::kInt32;
    case torch::kInt64: return vnn::kInt64;
    case torch::kUInt8: return vnn::kUInt8;
    case torch::kBool: return vnn::kBool;
    case torch::kFloat16: return vnn::kFloat16;
    default: return vnn::kBFloat16;
  }
}

// The same float64 values as a vnn tensor on dev and a torch tensor.
struct Pair {
  vnn::Tensor v;
  torch::Tensor t;
};

Pair make(const std::vector<int64_t>& shape, int salt, double lo, double hi, const vnn::Device& dev) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> d(static_cast<size_t>(n));
  uint64_t x = uint64_t(salt) * 0x9E3779B97F4A7C15ull + 1;
  for (auto& e : d) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    e = lo + (hi - lo) * double(x >> 11) / double(1ull << 53);
  }
  vnn::Shape vs;
  for (int64_t s : shape) vs.push_back(s);
  torch::Tensor t = torch::from_blob(d.data(), shape, torch::kFloat64).clone().to(torch::kFloat32);
  return {vnn::from_vector(d, vs).to(dev).to(vnn::kFloat32), t};
}

void compare(const std::string& what, const vnn::Tensor& got, const torch::Tensor& want, double tol) {
  INFO(what);
  std::vector<int64_t> ws(want.sizes().begin(), want.sizes().end());
  std::vector<int64_t> gs;
  for (int i = 0; i < got.dim(); ++i) gs.push_back(got.size(i));
  REQUIRE(gs == ws);
  CHECK(vnn::name(got.dtype()) == std::string(vnn::name(from_torch(want.scalar_type()))));
  auto g = got.to_vector<double>();
  torch::Tensor w = want.to(torch::kFloat64).contiguous();
  const double* wp = w.data_ptr<double>();
  double worst = 0;
  size_t bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if ((std::isnan(g[i]) && std::isnan(wp[i])) || g[i] == wp[i]) continue;
    double err = std::fabs(g[i] - wp[i]) / (std::fabs(wp[i]) + 1.0);
    if (err > worst) worst = err, bad = i;
  }
  INFO("worst relative error " << worst << " at element " << bad);
  CHECK(worst <= tol);
}

}  // namespace

TEST_CASE("elementwise, reductions, softmax and matmul agree with LibTorch") {
  vnn::Device dev = device_under_test();
  for (int64_t cols : {int64_t(7), int64_t(40000)}) {  // below and above the inline grain
    INFO("cols=" << cols << " on " << dev);
    Pair a = make({4, cols}, 1, -3, 3, dev), b = make({4, cols}, 2, -3, 3, dev), p = make({4, cols}, 3, 0.1, 4, dev);
    Pair at{a.v.transpose(0, 1), a.t.transpose(0, 1)};  // non-contiguous
    const double f = 2e-6;
    compare("add alpha", vnn::add(a.v, b.v, 0.5), torch::add(a.t, b.t, 0.5), f);
    compare("sub", a.v - b.v, a.t - b.t, f);
    compare("mul", a.v * b.v, a.t * b.t, f);
    compare("div", a.v / p.v, a.t / p.t, f);
    compare("maximum", vnn::maximum(a.v, b.v), torch::maximum(a.t, b.t), 0);
    compare("exp", vnn::exp(a.v), torch::exp(a.t), f);
    compare("log", vnn::log(p.v), torch::log(p.t), f);
    compare("sqrt", vnn::sqrt(p.v), torch::sqrt(p.t), f);
    compare("tanh", vnn::tanh(a.v), torch::tanh(a.t), f);
    compare("sigmoid", vnn::sigmoid(at.v), torch::sigmoid(at.t), f);
    compare("relu", vnn::relu(at.v), torch::relu(at.t), 0);
    compare("abs", vnn::abs(a.v), torch::abs(a.t), 0);
    compare("sum", vnn::sum(a.v), torch::sum(a.t), 1e-5);
    compare("sum dim 1", vnn::sum(a.v, 1), torch::sum(a.t, {1}), 1e-5);
    compare("mean dim 0 keepdim", vnn::mean(at.v, 0, true), torch::mean(at.t, {0}, true), 1e-5);
    compare("prod dim 0", vnn::prod(a.v, 0), torch::prod(a.t, 0), 1e-5);
    compare("amax", vnn::amax(a.v, {1}), torch::amax(a.t, {1}), 0);
    compare("amin keepdim", vnn::amin(at.v, {0}, true), torch::amin(at.t, {0}, true), 0);
    compare("argmax", vnn::argmax(a.v, 1), torch::argmax(a.t, 1), 0);
    compare("argmin", vnn::argmin(at.v, 0), torch::argmin(at.t, 0), 0);
    compare("var", vnn::var(a.v, 1), torch::var(a.t, {1}, true), 1e-5);
    compare("var population keepdim", vnn::var(at.v, {0}, 0, true), torch::var(at.t, {0}, false, true), 1e-5);
    compare("std", vnn::std(a.v, {0, 1}), torch::std(a.t), 1e-5);
    compare("norm 2", vnn::norm(a.v, 2, {1}), torch::norm(a.t, 2, {1}), 1e-5);
    compare("norm 1", vnn::norm(a.v, 1), torch::norm(a.t, 1), 1e-5);
    compare("norm 3", vnn::norm(a.v, 3, {1}), torch::norm(a.t, 3, {1}), 1e-4);
    compare("norm inf", vnn::norm(at.v, INFINITY, {0}), torch::norm(at.t, INFINITY, {0}), 0);
    compare("logsumexp", vnn::logsumexp(a.v, 1), torch::logsumexp(a.t, {1}), 1e-5);
    compare("logsumexp keepdim", vnn::logsumexp(at.v, {0}, true), torch::logsumexp(at.t, {0}, true), 1e-5);
    compare("softmax", vnn::softmax(a.v, 1), torch::softmax(a.t, 1), 1e-6);
    compare("log_softmax", vnn::log_softmax(at.v, 0), torch::log_softmax(at.t, 0), 1e-5);
    compare("any", vnn::any(vnn::relu(a.v), 1), torch::any(torch::relu(a.t), 1), 0);
    compare("all", vnn::all(vnn::relu(at.v), 0), torch::all(torch::relu(at.t), 0), 0);
    compare("to float64", a.v.to(vnn::kFloat64), a.t.to(torch::kFloat64), 0);
    compare("to int32", a.v.to(vnn::kInt32), a.t.to(torch::kInt32), 0);
    compare("to float16", a.v.to(vnn::kFloat16), a.t.to(torch::kFloat16), 0);
    compare("to bfloat16", a.v.to(vnn::kBFloat16), a.t.to(torch::kBFloat16), 0);
    compare("contiguous of transpose", at.v.contiguous(), at.t.contiguous(), 0);
  }
  // Batched matmul with broadcasting batch dims.
  Pair x = make({3, 1, 17, 33}, 4, -1, 1, dev), w = make({2, 33, 9}, 5, -1, 1, dev);
  compare("matmul batched", vnn::matmul(x.v, w.v), torch::matmul(x.t, w.t), 1e-5);
  // Integer reductions give int64 in both.
  compare("sum int32", vnn::sum(vnn::arange(0, 100, 1, vnn::TensorOptions(dev).with(vnn::kInt32))),
          torch::sum(torch::arange(0, 100, torch::kInt32)), 0);
  // Creation.
  compare("linspace", vnn::linspace(-2, 5, 11, vnn::TensorOptions(dev)), torch::linspace(-2, 5, 11), 1e-7);
  compare("eye", vnn::eye(3, 5, vnn::TensorOptions(dev)), torch::eye(3, 5), 0);
}

// Issue 15: LibTorch's indexing semantics for t[i], index({...}) with
// integers, Slice, None and Ellipsis, t(), mT(), index_put_ and the compound
// operators; gradients through the views compared with torch's autograd.
TEST_CASE("indexing views and compound assignment agree with LibTorch") {
  vnn::Device dev = device_under_test();
  namespace vi = vnn::indexing;
  namespace ti = torch::indexing;
  Pair a = make({4, 5, 6}, 11, -2, 2, dev);
  compare("t[1]", a.v[1], a.t[1], 0);
  compare("t[-1][-2]", a.v[-1][-2], a.t[-1][-2], 0);
  compare("t[2][0][5]", a.v[2][0][5], a.t[2][0][5], 0);
  struct Form {
    const char* what;
    std::vector<vi::TensorIndex> v;
    std::vector<ti::TensorIndex> t;
  };
  const std::vector<Form> forms = {
      {"{Slice(0, 2), 1}", {vi::Slice(0, 2), 1}, {ti::Slice(0, 2), 1}},
      {"{Slice(), Slice(1, None, 2)}", {vi::Slice(), vi::Slice(1, vi::None, 2)}, {ti::Slice(), ti::Slice(1, ti::None, 2)}},
      {"{Slice(-3)}", {vi::Slice(-3)}, {ti::Slice(-3)}},
      {"{Slice(None, -1), -1}", {vi::Slice(vi::None, -1), -1}, {ti::Slice(ti::None, -1), -1}},
      {"{Slice(-100, 100, 3)} (clamped)", {vi::Slice(-100, 100, 3)}, {ti::Slice(-100, 100, 3)}},
      {"{Slice(3, 1)} (empty)", {vi::Slice(3, 1)}, {ti::Slice(3, 1)}},
      {"{None, 0, Slice(1, 4)}", {vi::None, 0, vi::Slice(1, 4)}, {ti::None, 0, ti::Slice(1, 4)}},
      {"{Ellipsis, 2}", {vi::Ellipsis, 2}, {ti::Ellipsis, 2}},
      {"{\"...\", None}", {"...", vi::None}, {"...", ti::None}},
      {"{1, Ellipsis, Slice(None, None, 4)}", {1, vi::Ellipsis, vi::Slice(vi::None, vi::None, 4)},
       {1, ti::Ellipsis, ti::Slice(ti::None, ti::None, 4)}},
      {"{-2, -1, -3}", {-2, -1, -3}, {-2, -1, -3}},
  };
  for (const Form& f : forms) compare(std::string("index") + f.what, a.v.index(f.v), a.t.index(f.t), 0);
  Pair m = make({3, 4}, 12, -2, 2, dev);
  compare("t()", m.v.t(), m.t.t(), 0);
  compare("mT() of 3-D", a.v.mT(), a.t.mT(), 0);
  // Bad input throws in both.
  CHECK_THROWS(a.t[4]);
  CHECK_THROWS_AS(a.v[4], vnn::IndexError);
  CHECK_THROWS(a.t.index({0, 5}));
  CHECK_THROWS_AS(a.v.index({0, 5}), vnn::IndexError);
  CHECK_THROWS(a.t.index({ti::Slice(0, 4, 0)}));
  CHECK_THROWS_AS(a.v.index({vi::Slice(0, 4, 0)}), vnn::ValueError);

  // index_put_ and compound assignment through views.
  torch::Tensor tt = a.t.clone();
  vnn::Tensor vt = a.v.clone();
  tt.index_put_({ti::Slice(), 1, ti::Slice(0, 6, 2)}, 3.5);
  vt.index_put_({vi::Slice(), 1, vi::Slice(0, 6, 2)}, 3.5);
  tt[0] += tt[1];
  vt[0] += vt[1];
  tt[-1][2] *= 2.0;
  vt[-1][2] *= 2.0;
  tt.index({ti::Ellipsis, 0}) -= 1;
  vt.index({vi::Ellipsis, 0}) -= 1;
  tt /= 4.0;
  vt /= 4.0;
  compare("index_put_ and += -= *= /= through views", vt, tt, 1e-7);

  // Gradients through the views and an in-place +=, against torch's.
  Pair g = make({4, 6}, 13, -1, 1, dev);
  torch::Tensor tx = g.t.to(torch::kFloat64).requires_grad_();
  vnn::Tensor vx = g.v.to(vnn::kFloat64).requires_grad_();
  auto tf = [&](const torch::Tensor& x) {
    torch::Tensor y = x.index({ti::Slice(1, ti::None, 2), ti::Slice(0, 5)}) * x[0].index({ti::Slice(1)});
    y += x.t().index({ti::Slice(0, 5), 3});
    return (y * y).sum();
  };
  auto vf = [&](const vnn::Tensor& x) {
    vnn::Tensor y = vnn::mul(x.index({vi::Slice(1, vi::None, 2), vi::Slice(0, 5)}), x[0].index({vi::Slice(1)}));
    y += x.t().index({vi::Slice(0, 5), 3});
    return vnn::sum(vnn::mul(y, y));
  };
  tf(tx).backward();
  vf(vx).backward();
  compare("d/dx through slices, t() and +=", vx.grad(), tx.grad(), 1e-12);
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Views share storage and never copy; their errors name the shapes.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;

TEST_CASE("views share storage") {
  Device dev = device_under_test();
  Tensor x = zeros({2, 6}, dev);
  Tensor v = x.view({3, 4});
  CHECK(v.raw_data() == x.raw_data());
  v.narrow(0, 1, 1).fill_(5.0);  // row 1 of the 3x4 view = elements 4..7
  auto got = x.to_vector<float>();
  for (int i = 0; i < 12; ++i) REQUIRE(got[size_t(i)] == (i >= 4 && i < 8 ? 5.0f : 0.0f));
  CHECK(x.view({-1}).sizes() == Shape{12});
  CHECK(x.transpose(0, 1).is_contiguous() == false);
  CHECK(x.transpose(0, 1).reshape({12}).is_contiguous());
  CHECK(x.select(0, -1).sizes() == Shape{6});
  CHECK(x.expand({4, 2, 6}).stride(0) == 0);
  CHECK(x.flatten().sizes() == Shape{12});
}

TEST_CASE("view errors name shapes and dims") {
  Device dev = device_under_test();
  Tensor x = zeros({2, 6}, dev);
  CHECK_THROWS_AS(x.view({5, 5}), ShapeError);
  CHECK_THROWS_AS(x.view({-1, -1}), ShapeError);
  CHECK_THROWS_AS(x.transpose(0, 1).view({12}), ShapeError);
  CHECK_THROWS_AS(x.transpose(0, 2), IndexError);
  CHECK_THROWS_AS(x.narrow(1, 4, 3), IndexError);
  CHECK_THROWS_AS(x.select(0, 2), IndexError);
  CHECK_THROWS_AS(x.expand({3, 6}), ShapeError);
  CHECK_THROWS_AS(x.permute({0, 0}), ShapeError);
  try {
    (void)x.view({5, 5});
  } catch (const ShapeError& e) {
    CHECK(std::string(e.what()).find("[5, 5]") != std::string::npos);
  }
  CHECK_THROWS_AS(Tensor().sizes(), ValueError);
  CHECK_THROWS_AS(x.item(), ValueError);
}

TEST_CASE("printing shows values, device and dtype") {
  Device dev = device_under_test();
  Tensor x = arange(0.0, 4, 1, dev).view({2, 2});
  std::string s = x.str();
  CHECK(s.find("tensor([[0.0000, 1.0000],") == 0);
  if (!dev.is_cpu()) CHECK(s.find("device='" + dev.str() + "'") != std::string::npos);
  CHECK(x.to(kInt32).str().find("dtype=int32") != std::string::npos);
  CHECK(full({}, 2.5, dev).str().find("tensor(2.5000") == 0);
  CHECK(full({}, 2.5, dev).item() == 2.5);
  CHECK(zeros({2000}, dev).str().find("...") != std::string::npos);
}

// PyTorch's view rule (at::detail::computeStride): each group of input dims
// merged or split into new dims must be contiguous within itself. Every row
// is PyTorch's answer (the strides of x.view(new), or "no view": it raises).
namespace {
struct ViewCase {
  const char* what;
  std::function<Tensor(const Tensor&)> make;  // from arange(0, 72) as [2, 3, 12]
  Shape target;
  bool viewable;
  Shape strides;  // PyTorch's strides of the view
};
}  // namespace

TEST_CASE("view follows PyTorch's stride rule (table of PyTorch's answers)") {
  Device dev = device_under_test();
  Tensor base = arange(0.0, 72.0, 1.0, TensorOptions(dev)).view({2, 3, 12});
  const std::vector<ViewCase> cases = {
      // A split along the last dim (nanoGPT's q, k, v): [2, 3, 4] strides [36, 12, 1].
      {"split -> heads", [](const Tensor& x) { return x.split(4, 2)[0]; }, {2, 3, 2, 2}, true, {36, 12, 2, 1}},
      {"split -> merge leading", [](const Tensor& x) { return x.split(4, 2)[1]; }, {6, 4}, true, {12, 1}},
      {"split -> merge across the cut", [](const Tensor& x) { return x.split(4, 2)[0]; }, {2, 12}, false, {}},
      {"split -> flat", [](const Tensor& x) { return x.split(4, 2)[2]; }, {-1}, false, {}},
      // transpose(1, 2): [2, 12, 3] strides [36, 1, 12].
      {"transpose, same shape", [](const Tensor& x) { return x.transpose(1, 2); }, {2, 12, 3}, true, {36, 1, 12}},
      {"transpose, split a dim", [](const Tensor& x) { return x.transpose(1, 2); }, {2, 3, 4, 3}, true,
       {36, 4, 1, 12}},
      {"transpose, merge swapped", [](const Tensor& x) { return x.transpose(1, 2); }, {2, 36}, false, {}},
      {"transpose, merge leading", [](const Tensor& x) { return x.transpose(1, 2); }, {24, 3}, false, {}},
      // transpose(0, 1): [3, 2, 12] strides [12, 36, 1]: the last dim splits and merges freely.
      {"transpose01, merge inner", [](const Tensor& x) { return x.transpose(0, 1); }, {3, 2, 3, 4}, true,
       {12, 36, 4, 1}},
      {"transpose01, merge outer", [](const Tensor& x) { return x.transpose(0, 1); }, {6, 12}, false, {}},
      // narrow along dim 0 keeps a contiguous block; along the last dim it does not.
      {"narrow dim 0", [](const Tensor& x) { return x.narrow(0, 1, 1); }, {36}, true, {1}},
      {"narrow last, split dim 1", [](const Tensor& x) { return x.narrow(2, 2, 6); }, {2, 3, 2, 3}, true,
       {36, 12, 3, 1}},
      {"narrow last, merge", [](const Tensor& x) { return x.narrow(2, 2, 6); }, {2, 18}, false, {}},
      // size-1 dims do not break a chunk; new size-1 dims can go anywhere.
      {"size-1 dims", [](const Tensor& x) { return x.narrow(0, 0, 1).transpose(0, 1); }, {36}, true, {1}},
      {"new size-1 dims", [](const Tensor& x) { return x.view({6, 12}).t(); }, {12, 1, 6}, true, {1, 72, 12}},
      // expanded (stride 0) dims split into stride-0 dims.
      {"expand split", [](const Tensor& x) { return x.narrow(2, 0, 1).expand({2, 3, 4}); }, {2, 3, 2, 2}, true,
       {36, 12, 0, 0}},
      {"expand merge", [](const Tensor& x) { return x.narrow(2, 0, 1).expand({2, 3, 4}); }, {2, 12}, false, {}},
      // permute(2, 0, 1): [12, 2, 3] strides [1, 36, 12]: dims 1 and 2 form one chunk.
      {"permute merge chunk", [](const Tensor& x) { return x.permute({2, 0, 1}); }, {12, 6}, true, {1, 12}},
      {"permute merge across", [](const Tensor& x) { return x.permute({2, 0, 1}); }, {24, 3}, false, {}},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    Tensor x = c.make(base);
    if (!c.viewable) {
      CHECK_THROWS_AS(x.view(c.target), ShapeError);
      Tensor r = x.reshape(c.target);  // a copy, with the values in x's order
      CHECK(r.raw_data() != x.raw_data());
      CHECK(r.to_vector<double>() == x.contiguous().to_vector<double>());
      continue;
    }
    Tensor v = x.view(c.target);
    CHECK(v.strides() == c.strides);
    CHECK(v.raw_data() == x.raw_data());  // shares storage
    CHECK(v.storage_offset() == x.storage_offset());
    CHECK(v.to_vector<double>() == x.contiguous().to_vector<double>());
    Tensor r = x.reshape(c.target);  // reshape views too: no copy
    CHECK(r.raw_data() == x.raw_data());
    CHECK(r.strides() == c.strides);
  }
}

TEST_CASE("view: nanoGPT's heads from a split, int forms, zero-size and 0-dim tensors, errors") {
  Device dev = device_under_test();
  const int64_t B = 2, T = 3, C = 8, H = 2;
  Tensor qkv = randn({B, T, 3 * C}, dev).requires_grad_(true);
  auto parts = qkv.split(C, 2);
  Tensor q = parts[1].view({B, T, H, C / H}).transpose(1, 2);  // [B, H, T, E]
  CHECK(q.sizes() == Shape{B, H, T, C / H});
  CHECK(q.raw_data() == qkv.raw_data());
  CHECK(parts[1].view(B, T, H, C / H).strides() == Shape{T * 3 * C, 3 * C, C / H, 1});  // the variadic form
  // The gradient flows back through the view into the right third of qkv.
  sum(mul(q, q)).backward();
  Tensor expected = zeros({B, T, 3 * C}, dev);
  expected.narrow(2, C, C).copy_(mul(parts[1].detach(), 2.0));
  CHECK(vnn::test::max_abs_diff(qkv.grad(), expected) < 1e-6);

  Tensor x = arange(0.0, 12.0, 1.0, TensorOptions(dev)).view(3, 4);
  CHECK(x.view(-1).sizes() == Shape{12});
  CHECK(x.view(2, -1).sizes() == Shape{2, 6});
  CHECK(x.reshape(-1).sizes() == Shape{12});
  CHECK(x.t().reshape(4, 3).raw_data() == x.raw_data());  // the same shape: always a view
  CHECK(x.t().reshape(-1).raw_data() != x.raw_data());    // no view exists: a copy
  CHECK(x.contiguous().impl() == x.impl());               // contiguous() of a contiguous tensor is itself

  Tensor empty = zeros({0, 3}, dev);
  CHECK(empty.view({0, 3}).strides() == Shape{3, 1});  // same shape: the strides kept
  CHECK(empty.view({3, 0}).strides() == Shape{1, 1});  // PyTorch: as a fresh tensor's, size 0 counted as 1
  CHECK(empty.transpose(0, 1).view({-1}).sizes() == Shape{0});
  CHECK_THROWS_AS(empty.view({0, -1}), ShapeError);  // -1 could be anything
  Tensor scalar = full({}, 4.0, dev);
  CHECK(scalar.view({1, 1}).strides() == Shape{1, 1});
  CHECK(scalar.view({1}).item() == 4.0);
  CHECK(full({1}, 4.0, dev).view({}).dim() == 0);

  // The error names the dims that stop the view and points to reshape.
  Tensor tr = arange(0.0, 24.0, 1.0, TensorOptions(dev)).view({2, 3, 4}).transpose(1, 2);
  try {
    (void)tr.view({2, 12});
    FAIL("view across transposed dims must throw");
  } catch (const ShapeError& e) {
    std::string msg = e.what();
    CHECK(msg.find("dims 1 and 2") != std::string::npos);
    CHECK(msg.find("reshape") != std::string::npos);
    CHECK(msg.find("[2, 4, 3]") != std::string::npos);
  }
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Advanced indexing (vnn/advanced_index.h) on the device under test: index
// and index_put by integer tensors (broadcast, negative) and by a bool
// mask, accumulate with repeated indices, gradients, and typed errors.
#include <catch2/catch.hpp>
#include <vector>

#include "support/device_under_test.hpp"
#include "support/op_checks.hpp"
#include "vnn/advanced_index.h"
#include "vnn/vnn.h"

using namespace vnn;
using vnn::test::check_error;
using vnn::test::check_grad;
using vnn::test::device_under_test;

namespace {
Tensor iota(const Shape& s, const Device& dev) {
  return arange(0.0, double(s.numel()), 1.0, TensorOptions(kFloat64)).view(s).to(dev);
}
Tensor ints(const std::vector<int64_t>& v, const Device& dev) {
  return from_vector(v, {int64_t(v.size())}).to(dev);
}
}  // namespace

TEST_CASE("index picks rows by integer tensors and bool masks, as PyTorch's advanced indexing") {
  Device dev = device_under_test();
  Tensor x = iota({4, 3}, dev);
  // x[[2, -1]]: rows 2 and 3.
  CHECK(index(x, {ints({2, -1}, dev)}).cpu().to_vector<double>() == std::vector<double>{6, 7, 8, 9, 10, 11});
  // x[[0, 3], [2, 1]]: two elements; the indices broadcast.
  CHECK(index(x, {ints({0, 3}, dev), ints({2, 1}, dev)}).cpu().to_vector<double>() == std::vector<double>{2, 10});
  Tensor rows = ints({1, 2}, dev).view({2, 1}), cols = ints({0, 2}, dev);
  Tensor grid = index(x, {rows, cols});
  CHECK(grid.sizes() == Shape{2, 2});
  CHECK(grid.cpu().to_vector<double>() == std::vector<double>{3, 5, 6, 8});
  Tensor mask = from_vector(std::vector<bool>{true, false, false, true}, {4}).to(dev);
  CHECK(index(x, {mask}).cpu().to_vector<double>() == std::vector<double>{0, 1, 2, 9, 10, 11});
}

TEST_CASE("index_put writes or accumulates at the indexed places") {
  Device dev = device_under_test();
  Tensor x = zeros({3, 2}, TensorOptions(kFloat64).device(dev));
  Tensor v = from_vector(std::vector<double>{1, 2}, {2}).to(dev);
  // Repeated row 0: accumulate adds both writes.
  Tensor acc = index_put(x, {ints({0, 0, 2}, dev)}, v, true);
  CHECK(acc.cpu().to_vector<double>() == std::vector<double>{2, 4, 0, 0, 1, 2});
  Tensor set = index_put(x, {ints({1}, dev), ints({-1}, dev)}, scalar_tensor(7.0, TensorOptions(kFloat64).device(dev)));
  CHECK(set.cpu().to_vector<double>() == std::vector<double>{0, 0, 0, 7, 0, 0});
  Tensor m = from_vector(std::vector<bool>{false, true, true}, {3}).to(dev);
  Tensor y = x.clone();
  index_put_(y, {m}, v);
  CHECK(y.cpu().to_vector<double>() == std::vector<double>{0, 0, 1, 2, 1, 2});
  CHECK(x.cpu().to_vector<double>() == std::vector<double>(6, 0.0));  // the out-of-place form copies
}

TEST_CASE("index and index_put have float64 gradients that match finite differences") {
  Device dev = device_under_test();
  Tensor x = iota({4, 3}, dev).requires_grad_(true);
  Tensor v = ones({2, 3}, TensorOptions(kFloat64).device(dev)).requires_grad_(true);
  Tensor idx = ints({3, 1}, dev);
  check_grad("index", [&](const std::vector<Tensor>& a) { return index(a[0], {idx}); }, {x});
  check_grad("index_put", [&](const std::vector<Tensor>& a) { return index_put(a[0], {idx}, a[1], true); }, {x, v});
}

TEST_CASE("advanced indexing refuses bad indices with a typed error naming the op") {
  Device dev = device_under_test();
  Tensor x = iota({4, 3}, dev);
  check_error<IndexError>([&] { index(x, {ints({4}, dev)}); }, "index");
  check_error<IndexError>([&] { index(x, {ints({-5}, dev)}); }, "index");
  check_error<DTypeError>([&] { index(x, {ones({1}, TensorOptions(kFloat32).device(dev))}); }, "index");
  check_error<IndexError>([&] { index(x, {from_vector(std::vector<bool>{true, false}, {2}).to(dev)}); }, "index");
  check_error<ShapeError>([&] { index_put(x, {ints({0}, dev)}, ones({2}, TensorOptions(kFloat64).device(dev))); },
                          "index_put");
  check_error<IndexError>([&] { index(x, {std::nullopt, ints({0}, dev)}); }, "index");
}

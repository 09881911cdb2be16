// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Convergence: a small MLP and a small CNN learn synthetic problems on cpu,
// and the loss curve on the device under test matches cpu's.
#include <catch2/catch.hpp>

#include "support/device_under_test.hpp"
#include "vnn/nn.h"
#include "vnn/optim.h"

using namespace vnn;
using vnn::test::device_under_test;

namespace {

// Two Gaussian blobs per class in 2-D, 3 classes.
std::pair<Tensor, Tensor> blobs(int64_t n) {
  Generator g(42);
  Tensor labels = randint(0, 3, {n}, TensorOptions().with(kInt64), &g);
  Tensor centers = from_vector<float>({-2, 0, 2, 2, 0, -2}, {3, 2});
  Tensor x = add(index_select(centers, 0, labels), mul(randn({n, 2}, TensorOptions(), &g), 0.5));
  return {x, labels};
}

std::vector<double> train_mlp(const Device& dev, int steps) {
  Generator g(7);
  auto net = nn::Sequential(std::initializer_list<nn::ModulePtr>{
      nn::Linear(2, 16, true, &g), nn::ReLU(),
      nn::Linear(16, 3, true, &g)});
  net->to(dev);
  auto [x, y] = blobs(256);
  x = x.to(dev);
  y = y.to(dev);
  optim::Adam opt(net->parameters(), optim::AdamOptions(0.05));
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    Tensor loss = nn::cross_entropy(net->forward(x), y);
    loss.backward();
    opt.step();
    losses.push_back(loss.item());
  }
  return losses;
}

std::vector<double> train_cnn(const Device& dev, int steps) {
  // Images with a bright bar either horizontal (class 0) or vertical (class 1).
  Generator g(11);
  int64_t n = 32;
  Tensor labels = randint(0, 2, {n}, TensorOptions().with(kInt64), &g);
  std::vector<float> img(size_t(n * 64), 0.f);
  auto lv = labels.to_vector<int64_t>();
  for (int64_t i = 0; i < n; ++i)
    for (int k = 0; k < 8; ++k) img[size_t(i * 64 + (lv[size_t(i)] ? k * 8 + 3 : 3 * 8 + k))] = 1.f;
  Tensor x = add(from_vector(img, {n, 1, 8, 8}), mul(randn({n, 1, 8, 8}, TensorOptions(), &g), 0.1)).to(dev);
  Tensor y = labels.to(dev);
  nn::Sequential net{nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1), &g), nn::ReLU(), nn::MaxPool2d(2),
                     nn::Flatten(), nn::Linear(64, 2, true, &g)};
  net->to(dev);
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    Tensor loss = nn::cross_entropy(net->forward(x), y);
    loss.backward();
    opt.step();
    losses.push_back(loss.item());
  }
  return losses;
}

}  // namespace

TEST_CASE("an MLP learns three blobs; the device follows cpu's loss curve") {
  auto ref = train_mlp(Device("cpu"), 60);
  CHECK(ref.back() < 0.1);
  CHECK(ref.back() < ref.front() / 5);
  auto got = train_mlp(device_under_test(), 60);
  for (size_t i = 0; i < ref.size(); i += 10) CHECK(got[i] == Approx(ref[i]).epsilon(1e-3).margin(1e-4));
}

TEST_CASE("a CNN learns bar orientation; the device follows cpu's loss curve") {
  auto ref = train_cnn(Device("cpu"), 40);
  CHECK(ref.back() < 0.05);
  auto got = train_cnn(device_under_test(), 40);
  for (size_t i = 0; i < ref.size(); i += 10) CHECK(got[i] == Approx(ref[i]).epsilon(1e-3).margin(1e-4));
}

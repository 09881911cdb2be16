// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Several host threads using one device at once (docs/threads.md): each
// thread's results equal the same work run alone, and, under the TSan build
// (ctest label tsan), no data race is reported. Sizes are above the CPU
// plugin's inline grain so that the parallel path runs, not only the inline
// one.
#include <catch2/catch.hpp>

#include <exception>
#include <thread>
#include <vector>

#include "support/device_under_test.hpp"
#include "vnn/nn.h"
#include "vnn/optim.h"

using namespace vnn;
using vnn::test::device_under_test;

namespace {

// A few Adam steps of a 64-128-4 MLP on a batch of 512 (hidden activations
// 65536 elements: the OpenMP path on cpu), every tensor from its own seed.
std::vector<double> train(const Device& dev, uint64_t seed, int steps) {
  Generator g(seed);
  // Braces: the layers draw from `g` left to right.
  nn::Sequential net{nn::Linear(64, 128, true, &g), nn::ReLU(), nn::Linear(128, 4, true, &g)};
  net->to(dev);
  Tensor x = randn({512, 64}, TensorOptions(), &g).to(dev);
  Tensor y = randint(0, 4, {512}, TensorOptions().with(kInt64), &g).to(dev);
  optim::Adam opt(net->parameters(), optim::AdamOptions(0.01));
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

// Large elementwise work (fill, binary, copy, random) with a known result.
double elementwise_sum(const Device& dev, uint64_t seed) {
  Generator g(seed);
  Tensor a = full({1 << 17}, 1.5, TensorOptions().with(dev));
  Tensor r = rand({1 << 17}, TensorOptions().with(dev), &g);
  Tensor b = add(mul(a, 2.0), sub(r, r));  // 3.0 everywhere
  Tensor c = b.clone();
  c.add_(a);  // 4.5 everywhere
  return sum(c).item();
}

// Runs f on a new thread; join() rethrows what it threw here (an exception
// escaping a std::thread would terminate the test program).
class Worker {
 public:
  template <class F>
  explicit Worker(F f) : thread_([this, f] {
      try {
        f();
      } catch (...) {
        error_ = std::current_exception();
      }
    }) {}
  void join() {
    thread_.join();
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace

TEST_CASE("two host threads train at once on one device, each as if alone", "[threads]") {
  Device dev = device_under_test();
  const int steps = 4;
  std::vector<double> alone1 = train(dev, 1, steps);
  std::vector<double> alone2 = train(dev, 2, steps);
  std::vector<double> got1, got2;
  Worker t1([&] { got1 = train(dev, 1, steps); });
  Worker t2([&] { got2 = train(dev, 2, steps); });
  t1.join();
  t2.join();
  REQUIRE(got1.size() == alone1.size());
  REQUIRE(got2.size() == alone2.size());
  for (size_t i = 0; i < alone1.size(); ++i) {
    CHECK(got1[i] == Approx(alone1[i]).epsilon(1e-5));
    CHECK(got2[i] == Approx(alone2[i]).epsilon(1e-5));
  }
  // The two seeds train different models: equal curves would mean one
  // thread's results leaked into the other's.
  CHECK(alone1[0] != alone2[0]);
}

TEST_CASE("the main thread and a second thread run large kernels at once", "[threads]") {
  Device dev = device_under_test();
  const double expect = 4.5 * (1 << 17);
  double other = 0;
  Worker t([&] {
    for (int i = 0; i < 3; ++i) other += elementwise_sum(dev, 10 + uint64_t(i));
  });
  double here = 0;
  for (int i = 0; i < 3; ++i) here += elementwise_sum(dev, 20 + uint64_t(i));
  t.join();
  CHECK(here == Approx(3 * expect));
  CHECK(other == Approx(3 * expect));
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A resumed run continues exactly: model, optimizer, scheduler, RNG and
// progress come back from one checkpoint, across devices.
#include <catch2/catch.hpp>

#include <cstdio>

#include "support/device_under_test.hpp"
#include "vnn/io/checkpoint.h"
#include "vnn/nn.h"
#include "vnn/optim.h"

using namespace vnn;
using vnn::test::device_under_test;

namespace {

struct Run {
  nn::Sequential model;
  std::unique_ptr<optim::Adam> opt;
  std::unique_ptr<optim::StepLR> sched;
  Tensor x, y;

  explicit Run(uint64_t init_seed) {
    Generator g(init_seed);
    model = nn::Sequential(std::initializer_list<nn::ModulePtr>{
        nn::Linear(6, 16, true, &g), nn::ReLU(), nn::Dropout(0.3),
        nn::Linear(16, 4, true, &g)});
    model->to(device_under_test());
    opt = std::make_unique<optim::Adam>(model->parameters(), optim::AdamOptions(0.01));
    sched = std::make_unique<optim::StepLR>(*opt, 3, 0.5);
    Generator data(123);
    x = randn({32, 6}, TensorOptions(), &data).to(device_under_test());
    y = randint(0, 4, {32}, TensorOptions().with(kInt64), &data).to(device_under_test());
  }
  double step() {
    opt->zero_grad();
    Tensor loss = nn::cross_entropy(model->forward(x), y);  // dropout draws from the default generator
    loss.backward();
    opt->step();
    sched->step();
    return loss.item();
  }
};

}  // namespace

TEST_CASE("save at step 5, resume in a fresh process state, same losses as an uninterrupted run") {
  std::string path = "vnn_test_ckpt_" + device_under_test().backend() + ".safetensors";
  manual_seed(2024);
  Run full(1);
  std::vector<double> want;
  for (int i = 0; i < 10; ++i) want.push_back(full.step());

  manual_seed(2024);
  Run first(1);
  for (int i = 0; i < 5; ++i) REQUIRE(first.step() == want[size_t(i)]);
  io::save_training_checkpoint(path, *first.model, first.opt.get(), first.sched.get(), {0, 5, {{"note", "half"}}});

  manual_seed(999);  // a different RNG state and different weights: the checkpoint must override both
  Run resumed(77);
  auto progress = io::load_training_checkpoint(path, *resumed.model, resumed.opt.get(), resumed.sched.get());
  CHECK(progress.step == 5);
  CHECK(progress.extra["note"] == "half");
  CHECK(resumed.sched->get_last_lr()[0] == Approx(first.sched->get_last_lr()[0]));
  for (int i = 5; i < 10; ++i) CHECK(resumed.step() == Approx(want[size_t(i)]).epsilon(1e-6));
  std::remove(path.c_str());
}

TEST_CASE("a checkpoint written on the device loads onto the cpu (map_location)") {
  std::string path = "vnn_test_map_" + device_under_test().backend() + ".safetensors";
  Run on_device(5);
  on_device.step();
  io::save_training_checkpoint(path, *on_device.model, on_device.opt.get());
  Generator g(8);
  auto cpu_model = nn::Sequential(std::initializer_list<nn::ModulePtr>{
      nn::Linear(6, 16, true, &g), nn::ReLU(), nn::Dropout(0.3),
      nn::Linear(16, 4, true, &g)});
  io::load_training_checkpoint(path, *cpu_model);
  on_device.model->eval();
  cpu_model->eval();
  Tensor x = randn({3, 6});
  CHECK(cpu_model->parameters()[0].device() == Device("cpu"));
  CHECK(test::max_abs_diff(cpu_model->forward(x), on_device.model->forward(x.to(device_under_test())).cpu()) < 1e-6);
  CHECK_THROWS_AS(io::load_training_checkpoint("does-not-exist.safetensors", *cpu_model), Error);
  io::save(path, {{"w", ones({2})}});
  CHECK_THROWS_AS(io::load_training_checkpoint(path, *cpu_model), FormatError);  // plain tensors, not a checkpoint
  std::remove(path.c_str());
}

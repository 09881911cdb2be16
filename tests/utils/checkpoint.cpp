// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Activation checkpointing (vnn/utils/checkpoint.h): gradients of the
// inputs and of every parameter equal the plain run's bit for bit (dropout
// in train mode draws the same masks when recomputed), in float32 and
// float64, for per-block checkpoints, checkpoint_sequential with 1, 2 and 4
// segments, checkpoints nested inside a module's forward, several outputs
// and autograd::grad; and the activation memory of a 16-block stack drops.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"
#include "vnn/nn.h"
#include "vnn/utils/checkpoint.h"
#include "vnn/vnn.h"

using namespace vnn;
using vnn::test::device_under_test;

namespace {

// A residual MLP block: x + dropout(fc2(gelu(fc1(layer_norm(x))))); x is
// used twice, so its gradient is a sum.
struct BlockImpl : nn::Module {
  BlockImpl(int64_t d, int64_t hidden, double p, Generator* g) : Module("Block") {
    ln = register_module("ln", nn::LayerNorm(Shape{d}));
    fc1 = register_module("fc1", nn::Linear(d, hidden, true, g));
    fc2 = register_module("fc2", nn::Linear(hidden, d, true, g));
    drop = register_module("drop", nn::Dropout(p));
  }
  Tensor forward(const Tensor& x) { return add(x, drop(fc2(gelu(fc1(ln(x)))))); }
  nn::LayerNorm ln{nullptr};
  nn::Linear fc1{nullptr}, fc2{nullptr};
  nn::Dropout drop{nullptr};
};
VNN_MODULE(Block);

// A stack of blocks and a head, in train mode (dropout on).
nn::Sequential make_stack(int64_t blocks, int64_t d, int64_t hidden, const Device& dev, DType dtype) {
  Generator g(17);
  nn::Sequential seq;
  for (int64_t i = 0; i < blocks; ++i) seq->push_back(Block(d, hidden, 0.25, &g));
  seq->push_back(nn::Linear(d, 8, true, &g));
  seq->to(dev, dtype);
  seq->train();
  return seq;
}

struct Result {
  Tensor out, x_grad;
  std::vector<Tensor> grads;  // one per parameter, in parameters() order
};

// One forward/backward from a fixed RNG state; `forward` is the plain or a
// checkpointed spelling of the same computation.
template <class F>
Result run(nn::Module& model, const Tensor& x0, const Tensor& target, F forward) {
  model.zero_grad();
  manual_seed(2024);
  Tensor x = x0.detach().clone().requires_grad_(true);
  Result r;
  r.out = forward(x);
  nn::mse_loss(r.out, target).backward();
  r.out = r.out.detach();
  r.x_grad = x.grad();
  for (const Tensor& p : model.parameters()) r.grads.push_back(p.grad());
  return r;
}

// Exactly equal, element by element (float32 values are exact in double).
bool same_bits(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.sizes() != b.sizes() || a.dtype() != b.dtype()) return false;
  return a.to_vector<double>() == b.to_vector<double>();
}

void check_same(const Result& plain, const Result& ck) {
  CHECK(same_bits(plain.out, ck.out));
  CHECK(same_bits(plain.x_grad, ck.x_grad));
  REQUIRE(plain.grads.size() == ck.grads.size());
  for (size_t i = 0; i < plain.grads.size(); ++i) {
    INFO("parameter " << i);
    REQUIRE(plain.grads[i].defined());
    CHECK(same_bits(plain.grads[i], ck.grads[i]));
  }
}

}  // namespace

TEST_CASE("checkpoint: per-block and checkpoint_sequential gradients equal the plain run bit for bit") {
  const Device dev = device_under_test();
  for (DType dtype : {kFloat32, kFloat64}) {
    INFO("dtype " << name(dtype));
    nn::Sequential model = make_stack(4, 16, 48, dev, dtype);
    Generator g(3);
    Tensor x0 = randn({12, 16}, TensorOptions(dtype), &g).to(dev);
    Tensor target = randn({12, 8}, TensorOptions(dtype), &g).to(dev);
    const Result plain = run(*model, x0, target, [&](const Tensor& x) { return model->forward(x); });
    // Dropout really is on: the same input gives another output with another seed.
    manual_seed(7);
    {
      NoGradGuard no_grad;
      CHECK_FALSE(same_bits(model->forward(x0), plain.out));
    }
    SECTION("each block checkpointed") {
      const Result ck = run(*model, x0, target, [&](const Tensor& x) {
        Tensor h = x;
        for (size_t i = 0; i + 1 < model->size(); ++i) {
          nn::ModulePtr block = (*model)[i];
          h = utils::checkpoint([block](const Tensor& t) { return (*block)(t); }, h);
          CHECK(h.requires_grad());
        }
        return model->any_module(model->size() - 1).forward(h);
      });
      check_same(plain, ck);
    }
    for (int64_t segments : {1, 2, 4}) {
      DYNAMIC_SECTION("checkpoint_sequential, " << segments << " segments") {
        const Result ck = run(*model, x0, target,
                              [&](const Tensor& x) { return utils::checkpoint_sequential(model, segments, x); });
        check_same(plain, ck);
      }
    }
    SECTION("the backward leaves the default generator where it found it") {
      model->zero_grad();
      manual_seed(99);
      Tensor x = x0.detach().clone().requires_grad_(true);
      Tensor loss = nn::mse_loss(utils::checkpoint_sequential(model, 4, x), target);
      const uint64_t after_forward = default_generator().offset();
      loss.backward();
      CHECK(default_generator().offset() == after_forward);
      CHECK(default_generator().seed() == 99);
    }
  }
}

namespace {

// A module that checkpoints its two blocks inside its own forward, one
// checkpoint within the other.
struct PairImpl : nn::Module {
  PairImpl(int64_t d, int64_t hidden, Generator* g) : Module("Pair") {
    a = register_module("a", Block(d, hidden, 0.25, g));
    b = register_module("b", Block(d, hidden, 0.25, g));
  }
  Tensor forward(const Tensor& x) {
    if (!checkpointed) return b(a(x));
    return utils::checkpoint(
        [this](const Tensor& t) { return b(utils::checkpoint([this](const Tensor& u) { return a(u); }, t)); }, x);
  }
  Block a{nullptr}, b{nullptr};
  bool checkpointed = false;
};
VNN_MODULE(Pair);

}  // namespace

TEST_CASE("checkpoint: nested inside a module's forward, and that module checkpointed again") {
  const Device dev = device_under_test();
  for (DType dtype : {kFloat32, kFloat64}) {
    INFO("dtype " << name(dtype));
    Generator g(5);
    nn::Sequential model;
    std::vector<Pair> pairs;
    for (int i = 0; i < 3; ++i) {
      pairs.push_back(Pair(16, 32, &g));
      model->push_back(pairs.back());
    }
    model->push_back(nn::Linear(16, 8, true, &g));
    model->to(dev, dtype);
    model->train();
    Tensor x0 = randn({10, 16}, TensorOptions(dtype), &g).to(dev);
    Tensor target = randn({10, 8}, TensorOptions(dtype), &g).to(dev);
    const Result plain = run(*model, x0, target, [&](const Tensor& x) { return model->forward(x); });
    for (auto& p : pairs) p->checkpointed = true;
    check_same(plain, run(*model, x0, target, [&](const Tensor& x) { return model->forward(x); }));
    // Three levels: checkpoint_sequential over modules that checkpoint inside.
    check_same(plain, run(*model, x0, target, [&](const Tensor& x) { return utils::checkpoint_sequential(model, 2, x); }));
  }
}

TEST_CASE("checkpoint: with grad mode off it just runs fn") {
  const Device dev = device_under_test();
  nn::Sequential model = make_stack(2, 8, 16, dev, kFloat32);
  Tensor x = randn({4, 8}).to(dev).requires_grad_(true);
  NoGradGuard no_grad;
  manual_seed(11);
  Tensor plain = model->forward(x);
  const uint64_t offset = default_generator().offset();
  manual_seed(11);
  int calls = 0;
  Tensor ck = utils::checkpoint(
      [&](const Tensor& t) {
        ++calls;
        return model->forward(t);
      },
      x);
  CHECK(calls == 1);
  CHECK(same_bits(plain, ck));
  CHECK_FALSE(ck.requires_grad());
  CHECK(default_generator().offset() == offset);
  manual_seed(11);
  CHECK(same_bits(plain, utils::checkpoint_sequential(model, 2, x)));
}

TEST_CASE("checkpoint: several outputs, an integer one, an unused one; autograd::grad leaves .grad alone") {
  const Device dev = device_under_test();
  Generator g(23);
  Block block(12, 24, 0.25, &g);
  block->to(dev, kFloat64);
  Tensor x0 = randn({6, 12}, TensorOptions(kFloat64), &g).to(dev);
  Tensor w0 = randn({6, 12}, TensorOptions(kFloat64), &g).to(dev);
  auto fn = [block](const std::vector<Tensor>& in) {
    Tensor h = block(in[0]);
    return std::vector<Tensor>{mul(h, in[1]), argmax(h, 1), relu(h), tanh(h)};
  };
  auto loss_of = [](const std::vector<Tensor>& o) { return add(sum(mul(o[0], o[0])), sum(o[2])); };  // o[3] unused
  // Plain.
  block->zero_grad();
  manual_seed(31);
  Tensor x = x0.clone().requires_grad_(true), w = w0.clone().requires_grad_(true);
  std::vector<Tensor> plain = fn({x, w});
  loss_of(plain).backward();
  Tensor px = x.grad(), pw = w.grad(), pfc1 = block->fc1->weight.grad();
  // Checkpointed.
  block->zero_grad();
  manual_seed(31);
  Tensor x2 = x0.clone().requires_grad_(true), w2 = w0.clone().requires_grad_(true);
  std::vector<Tensor> ck = utils::checkpoint(fn, {x2, w2});
  REQUIRE(ck.size() == 4);
  CHECK(ck[0].requires_grad());
  CHECK_FALSE(ck[1].requires_grad());  // int64: no gradient
  CHECK(same_bits(ck[1], plain[1]));
  loss_of(ck).backward();
  CHECK(same_bits(x2.grad(), px));
  CHECK(same_bits(w2.grad(), pw));
  CHECK(same_bits(block->fc1->weight.grad(), pfc1));
  // autograd::grad through a checkpoint: the same numbers, no .grad written.
  block->zero_grad();
  manual_seed(31);
  Tensor x3 = x0.clone().requires_grad_(true), w3 = w0.clone().requires_grad_(true);
  std::vector<Tensor> ck3 = utils::checkpoint(fn, {x3, w3});
  std::vector<Tensor> gs = autograd::grad({loss_of(ck3)}, {x3, block->fc1->weight});
  CHECK(same_bits(gs[0], px));
  CHECK(same_bits(gs[1], pfc1));
  CHECK_FALSE(x3.grad().defined());
  CHECK_FALSE(block->fc1->weight.grad().defined());
  CHECK_FALSE(block->fc2->weight.grad().defined());
}

TEST_CASE("checkpoint: errors name what is wrong") {
  const Device dev = device_under_test();
  Tensor x = randn({3, 4}).to(dev).requires_grad_(true);
  CHECK_THROWS_AS(utils::checkpoint([](const std::vector<Tensor>&) { return std::vector<Tensor>{}; }, {x}),
                  ValueError);
  nn::Sequential seq{nn::Linear(4, 4), nn::ReLU()};
  seq->to(dev);
  CHECK_THROWS_AS(utils::checkpoint_sequential(seq, 0, x), ValueError);
  // An input changed in place between the forward and the backward.
  Tensor h = mul(x, 2.0);
  Tensor y = utils::checkpoint([](const Tensor& t) { return sin(t); }, h);
  {
    NoGradGuard no_grad;
    h.add_(1.0);
  }
  CHECK_THROWS_WITH(sum(y).backward(), Catch::Contains("CheckpointBackward") && Catch::Contains("in-place"));
}

TEST_CASE("checkpoint: peak activation memory of a 16-block stack") {
  const Device dev = device_under_test();
  const int64_t blocks = 16, batch = 256, d = 64, hidden = 256;
  nn::Sequential model = make_stack(blocks, d, hidden, dev, kFloat32);
  Generator g(41);
  Tensor x0 = randn({batch, d}, TensorOptions(), &g).to(dev);
  Tensor target = randn({batch, 8}, TensorOptions(), &g).to(dev);
  struct Figures {
    uint64_t after_forward = 0, peak = 0;
  };
  // Bytes held by the graph after the forward, and the step's peak, both
  // above what was live before (parameters, their gradients, the data).
  auto measure = [&](auto forward) {
    Result warm = run(*model, x0, target, forward);  // gradients exist from here on
    (void)warm;
    model->zero_grad(false);                         // keep the .grad tensors: same base for both
    manual_seed(2024);
    Tensor x = x0.detach().clone().requires_grad_(true);
    empty_cache(dev);
    const uint64_t base = memory_stats(dev).allocated;
    reset_peak_memory_stats(dev);
    Figures f;
    {
      Tensor loss = nn::mse_loss(forward(x), target);
      f.after_forward = memory_stats(dev).allocated - base;
      loss.backward();
    }
    f.peak = memory_stats(dev).peak_allocated - base;
    return f;
  };
  const Figures plain = measure([&](const Tensor& x) { return model->forward(x); });
  const Figures per_block = measure([&](const Tensor& x) { return utils::checkpoint_sequential(model, blocks, x); });
  const Figures four = measure([&](const Tensor& x) { return utils::checkpoint_sequential(model, 4, x); });
  const uint64_t act = uint64_t(batch * d * 4);  // one block input: 64 KiB
  std::printf(
      "checkpoint memory on %s, 16 blocks [%lld x %lld -> %lld], block input %llu KiB:\n"
      "  plain:                       held after forward %7.2f MiB, step peak %7.2f MiB\n"
      "  checkpoint_sequential(16):   held after forward %7.2f MiB, step peak %7.2f MiB\n"
      "  checkpoint_sequential(4):    held after forward %7.2f MiB, step peak %7.2f MiB\n",
      dev.str().c_str(), (long long)batch, (long long)d, (long long)hidden, (unsigned long long)(act / 1024),
      plain.after_forward / 1048576.0, plain.peak / 1048576.0, per_block.after_forward / 1048576.0,
      per_block.peak / 1048576.0, four.after_forward / 1048576.0, four.peak / 1048576.0);
  // Plain: every block keeps about a dozen block-input-sized tensors
  // (layer-norm input and output, fc1 and gelu outputs at 4x, the dropout
  // mask, the residual sum).
  CHECK(plain.after_forward >= uint64_t(blocks) * 10 * act);
  // 16 segments: 15 checkpointed blocks keep their inputs; the last block
  // and the head run plainly.
  CHECK(per_block.after_forward <= 15 * act + plain.after_forward / 16 + 64 * 1024);
  CHECK(per_block.after_forward * 6 <= plain.after_forward);
  // 4 segments: 3 inputs kept, the last 4 blocks plain.
  CHECK(four.after_forward <= 3 * act + plain.after_forward / 4 + 64 * 1024);
  // The step's peak: at most one block recomputed at a time.
  CHECK(per_block.peak * 3 <= plain.peak);
  CHECK(four.peak < plain.peak);
}

TEST_CASE("checkpoint: the recompute casts as the autocast forward did") {
  const Device dev = device_under_test();
  nn::Sequential model = make_stack(3, 16, 32, dev, kFloat32);
  Generator g(8);
  Tensor x0 = randn({8, 16}, TensorOptions(), &g).to(dev);
  Tensor target = randn({8, 8}, TensorOptions(), &g).to(dev);
  auto autocast_forward = [&](auto forward) {
    return [&, forward](const Tensor& x) {
      AutocastGuard autocast(dev, kBFloat16);
      return forward(x).to(kFloat32);
    };
  };
  const Result plain =
      run(*model, x0, target, autocast_forward([&](const Tensor& x) { return model->forward(x); }));
  const Result ck = run(*model, x0, target, autocast_forward([&](const Tensor& x) {
                          return utils::checkpoint_sequential(model, 3, x);
                        }));
  check_same(plain, ck);
  CHECK(autocast::cache_size() == 0);  // the recompute's weight casts are not kept
}

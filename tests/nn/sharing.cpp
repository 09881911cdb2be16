// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared parameters and modules with PyTorch's semantics (issue 31): a
// tensor registered at several places (nanoGPT's lm_head.weight = wte.weight)
// is one leaf with one gradient, listed once by parameters() and optimizers,
// under every name by state_dict(); a module registered twice likewise.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"
#include "vnn/vnn.h"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

// nanoGPT's weight tying in LibTorch's spelling: the head reuses the token
// embedding's matrix.
struct TiedLMImpl : nn::Cloneable<TiedLMImpl> {
  TiedLMImpl(int64_t vocab, int64_t dim) : Cloneable("TiedLM"), vocab(vocab), dim(dim) { reset(); }
  void reset() override {
    wte = register_module("wte", nn::Embedding(vocab, dim));
    lm_head = register_module("lm_head", nn::Linear(nn::LinearOptions(dim, vocab).bias(false)));
    lm_head->weight = wte->weight;  // the tie
  }
  Tensor forward(const Tensor& idx) { return lm_head(tanh(wte(idx))); }
  int64_t vocab, dim;
  nn::Embedding wte{nullptr};
  nn::Linear lm_head{nullptr};
};
VNN_MODULE(TiedLM);

// The same computation with the two uses of the matrix as separate leaves.
Tensor untied_forward(const Tensor& w_embed, const Tensor& w_head, const Tensor& idx) {
  return linear(tanh(embedding(w_embed, idx)), w_head);
}

Tensor loss_of(const Tensor& logits, const Tensor& target) { return nn::cross_entropy(logits, target); }

// A module holding one submodule under two names.
struct TwiceImpl : nn::Module {
  TwiceImpl() : Module("Twice") {
    inner = nn::Linear(3, 2);
    register_module("a", inner);
    register_module("b", inner);
  }
  Tensor forward(const Tensor& x) { return inner(matmul(inner(x), ones({2, 3}, x.device()))); }
  nn::Linear inner{nullptr};
};

// A user module with its own registrations, LibTorch's way.
struct OwnParamsImpl : nn::Module {
  OwnParamsImpl() : Module("OwnParams") {
    w = register_parameter("w", randn({2, 2}));
    scale = register_buffer("scale", ones({2}));
  }
  Tensor w, scale;
};

}  // namespace

TEST_CASE("tied weights: one parameter tensor, every name in state_dict") {
  Device dev = device_under_test();
  manual_seed(1);
  TiedLM model(11, 4);
  model->to(dev);
  CHECK(model->wte->weight.impl() == model->lm_head->weight.impl());
  auto params = model->parameters();
  REQUIRE(params.size() == 1);  // PyTorch: 1 tensor for the two
  CHECK(params[0].impl() == model->wte->weight.impl());
  CHECK(model->num_parameters() == 11 * 4);
  auto named = model->named_parameters();
  REQUIRE(named.size() == 1);
  CHECK(named[0].first == "wte.weight");
  auto all_names = model->named_parameters(true, false);
  REQUIRE(all_names.size() == 2);
  CHECK(all_names[1].first == "lm_head.weight");
  auto sd = model->state_dict();
  REQUIRE(sd.size() == 2);
  CHECK(sd.contains("wte.weight"));
  CHECK(sd.contains("lm_head.weight"));
  CHECK(sd.at("wte.weight").impl() == sd.at("lm_head.weight").impl());
  CHECK(model->lm_head->parameters().size() == 1);
  CHECK(model->lm_head->parameters()[0].impl() == model->wte->weight.impl());
  CHECK(model->wte->weight.is_leaf());
  CHECK(model->wte->weight.requires_grad());
  CHECK(model->wte->weight.device() == dev);
}

TEST_CASE("tied weights: the gradient is the sum of both uses', one Adam step moves both names alike") {
  Device dev = device_under_test();
  manual_seed(2);
  TiedLM model(13, 6);
  model->to(dev);
  Tensor idx = from_vector<int64_t>({0, 3, 12, 5, 3, 7, 1, 9}, {2, 4}).to(dev);
  Tensor target = from_vector<int64_t>({1, 2, 3, 4, 5, 6, 7, 8}, {8}).to(dev);

  // The untied reference: two leaves with the same values, gradients summed by hand.
  Tensor start = model->wte->weight.detach().clone();
  Tensor w1 = start.clone().requires_grad_(true), w2 = start.clone().requires_grad_(true);
  loss_of(untied_forward(w1, w2, idx).view({8, 13}), target).backward();
  Tensor expected_grad = add(w1.grad(), w2.grad());

  Tensor loss = loss_of(model(idx).view({8, 13}), target);
  loss.backward();
  Tensor g = model->wte->weight.grad();
  REQUIRE(g.defined());
  CHECK(model->lm_head->weight.grad().impl() == g.impl());  // one leaf, one gradient
  CHECK(max_abs_diff(g, expected_grad) < 1e-6);
  CHECK(max_abs_diff(g, w1.grad()) > 1e-4);  // both uses contribute

  // One Adam step over parameters() against Adam on the reference with the summed gradient.
  optim::Adam opt(model->parameters(), optim::AdamOptions(0.05));
  REQUIRE(opt.param_groups()[0].params.size() == 1);
  opt.step();
  Tensor ref = start.clone().requires_grad_(true);
  ref.set_grad(expected_grad);
  optim::Adam ref_opt({ref}, optim::AdamOptions(0.05));
  ref_opt.step();
  CHECK(max_abs_diff(model->wte->weight, ref) < 1e-6);
  CHECK(max_abs_diff(model->lm_head->weight, ref) < 1e-6);
  CHECK(max_abs_diff(model->wte->weight, start) > 1e-3);

  // clip_grad_norm_ and zero_grad see it once, even from a list naming it twice.
  Tensor norm_once = optim::clip_grad_norm_({model->wte->weight}, 1e9);
  Tensor norm_twice = optim::clip_grad_norm_({model->wte->weight, model->lm_head->weight}, 1e9);
  CHECK(norm_once.item() == Approx(norm_twice.item()));
  Tensor before = model->wte->weight.grad().clone();
  double n = norm_once.item();
  nn::utils::clip_grad_norm_({model->wte->weight, model->lm_head->weight}, n / 2);
  CHECK(max_abs_diff(model->wte->weight.grad(), mul(before, 0.5)) < 1e-5);  // scaled once, not twice
  model->zero_grad();
  CHECK_FALSE(model->wte->weight.grad().defined());
}

TEST_CASE("tied weights: strict load keeps the tie, either name writes the one storage") {
  Device dev = device_under_test();
  manual_seed(3);
  TiedLM a(7, 3), b(7, 3);
  b->to(dev);
  b->load_state_dict(a->state_dict());  // strict: both keys present, both known
  CHECK(b->wte->weight.impl() == b->lm_head->weight.impl());
  CHECK(max_abs_diff(b->wte->weight, a->wte->weight) == 0);
  CHECK(b->wte->weight.device() == dev);
  CHECK(b->parameters().size() == 1);

  // Only one of the two names: strict load misses the other, a partial load writes the one tensor.
  nn::StateDict one{{"lm_head.weight", full({7, 3}, 0.25)}};
  CHECK_THROWS_AS(b->load_state_dict(one), ValueError);
  b->load_state_dict(one, false);
  CHECK(b->wte->weight.impl() == b->lm_head->weight.impl());
  CHECK(max_abs_diff(b->wte->weight, full({7, 3}, 0.25)) == 0);

  // A checkpoint with both keys and different values: the later key wins, as PyTorch's in-place copies.
  nn::StateDict both{{"wte.weight", full({7, 3}, 1.0)}, {"lm_head.weight", full({7, 3}, 2.0)}};
  b->load_state_dict(both);
  CHECK(max_abs_diff(b->lm_head->weight, full({7, 3}, 2.0)) == 0);
  CHECK(b->wte->weight.impl() == b->lm_head->weight.impl());

  // A round trip through a safetensors file keeps both keys, and loads tied.
  std::string path = "vnn_test_tied_" + std::to_string(::getpid()) + ".safetensors";
  io::save(path, a->state_dict());
  TiedLM c(7, 3);
  c->load_state_dict(io::load(path));
  std::remove(path.c_str());
  CHECK(c->wte->weight.impl() == c->lm_head->weight.impl());
  CHECK(max_abs_diff(c->lm_head->weight, a->wte->weight) == 0);
}

TEST_CASE("tied weights: a training checkpoint restores one tensor and its optimizer state") {
  Device dev = device_under_test();
  manual_seed(4);
  TiedLM a(9, 3), b(9, 3);
  a->to(dev);
  b->to(dev);
  Tensor idx = from_vector<int64_t>({1, 4, 8}, {3}).to(dev), target = from_vector<int64_t>({2, 0, 5}, {3}).to(dev);
  optim::Adam opt_a(a->parameters(), optim::AdamOptions(0.1)), opt_b(b->parameters(), optim::AdamOptions(0.1));
  loss_of(a(idx), target).backward();
  opt_a.step();
  std::string path = "vnn_test_tied_ckpt_" + std::to_string(::getpid()) + ".safetensors";
  io::save_training_checkpoint(path, *a, &opt_a, nullptr, {0, 1, {}});
  io::load_training_checkpoint(path, *b, &opt_b);
  std::remove(path.c_str());
  CHECK(b->wte->weight.impl() == b->lm_head->weight.impl());
  CHECK(max_abs_diff(b->wte->weight, a->wte->weight) == 0);
  REQUIRE(opt_b.state(b->wte->weight) != nullptr);
  CHECK(opt_b.state(b->wte->weight)->step == 1);
  // The next step of both is the same.
  for (auto* m : {&a, &b}) {
    (*m)->zero_grad();
    loss_of((*m)(idx), target).backward();
  }
  opt_a.step();
  opt_b.step();
  CHECK(max_abs_diff(b->lm_head->weight, a->lm_head->weight) == 0);
}

TEST_CASE("tied weights: clone keeps the tie inside the copy") {
  Device dev = device_under_test();
  TiedLM a(5, 2);
  auto copy = std::dynamic_pointer_cast<TiedLMImpl>(a->clone(dev));
  REQUIRE(copy);
  CHECK(copy->wte->weight.impl() == copy->lm_head->weight.impl());
  CHECK(copy->wte->weight.impl() != a->wte->weight.impl());
  CHECK(copy->parameters().size() == 1);
  CHECK(max_abs_diff(copy->lm_head->weight, a->wte->weight) == 0);
  CHECK(copy->wte->weight.device() == dev);
}

TEST_CASE("member assignment re-points the registration; register_parameter shares a leaf") {
  nn::Linear fc(3, 2);
  Tensor w = randn({2, 3}).requires_grad_(true);
  fc->weight = w;  // PyTorch: fc.weight = nn.Parameter(...)
  REQUIRE(fc->parameters().size() == 2);
  CHECK(fc->parameters()[0].impl() == w.impl());
  CHECK(fc->state_dict().at("weight").impl() == w.impl());
  fc->bias = Tensor();  // PyTorch: fc.bias = None drops it
  CHECK(fc->parameters().size() == 1);
  CHECK_FALSE(fc->state_dict().contains("bias"));
  CHECK(fc(ones({1, 3})).sizes() == Shape{1, 2});

  // A copy of a member is not the member: assigning the copy changes nothing registered.
  Tensor copy = fc->weight;
  copy = zeros({2, 3});
  CHECK(fc->parameters()[0].impl() == w.impl());

  // register_parameter of an existing leaf that requires grad shares it (no second leaf).
  nn::Linear other(3, 2);
  auto holder = std::make_shared<nn::Module>("Holder");
  Tensor shared = holder->register_parameter("w", other->weight);
  CHECK(shared.impl() == other->weight.impl());
  CHECK(holder->parameters()[0].impl() == other->weight.impl());
  // A fresh leaf is registered itself and made to require grad; an op's result is detached into a new leaf.
  Tensor fresh = zeros({2});
  holder->register_parameter("fresh", fresh);
  CHECK(holder->parameters()[1].impl() == fresh.impl());
  CHECK(fresh.requires_grad());
  Tensor made = mul(other->weight, 2.0);
  Tensor leaf = holder->register_parameter("made", made);
  CHECK(leaf.is_leaf());
  CHECK(leaf.impl() != made.impl());
  // requires_grad = false on a tensor that requires grad: a frozen leaf on the same storage.
  Tensor frozen = holder->register_parameter("frozen", other->weight, false);
  CHECK_FALSE(frozen.requires_grad());
  CHECK(other->weight.requires_grad());
  CHECK(frozen.raw_data() == other->weight.raw_data());

  // A user module's own registrations follow its members too.
  auto own = std::make_shared<OwnParamsImpl>();
  own->w = full({2, 2}, 3.0).requires_grad_(true);
  CHECK(own->parameters()[0].impl() == own->w.impl());
  own->scale = full({2}, 4.0);
  CHECK(own->buffers()[0].impl() == own->scale.impl());
  own->to(kFloat64);
  CHECK(own->w.dtype() == kFloat64);
  CHECK(own->scale.dtype() == kFloat64);
}

TEST_CASE("registrations outlive or are outlived by the handles bound to them") {
  Tensor kept;
  {
    auto m = std::make_shared<nn::Module>("Temp");
    kept = m->register_parameter("w", ones({3}));
    CHECK(m->parameters()[0].impl() == kept.impl());
  }  // the module goes first: kept stays a valid tensor
  CHECK(sum(kept).item() == 3.0);
  auto m = std::make_shared<nn::Module>("Temp2");
  {
    Tensor local = m->register_parameter("w", full({2}, 5.0));
    local = full({2}, 6.0);  // bound: the registration follows
    CHECK(m->parameters()[0].impl() == local.impl());
  }  // the handle goes first: the registration keeps its last tensor
  CHECK(sum(m->parameters()[0]).item() == 12.0);
  m->register_parameter("discarded", full({1}, 7.0));  // a result never assigned
  CHECK(m->parameters()[1].item() == 7.0);
  // A vector of registered members (moved while it grows) keeps every tensor.
  std::vector<Tensor> members;
  for (int i = 0; i < 9; ++i) members.push_back(m->register_parameter("p" + std::to_string(i), full({1}, i)));
  REQUIRE(m->parameters().size() == 11);
  for (int i = 0; i < 9; ++i) CHECK(m->parameters()[size_t(2 + i)].item() == i);
}

TEST_CASE("a module registered twice: parameters once, every name in state_dict") {
  Device dev = device_under_test();
  auto twice = std::make_shared<TwiceImpl>();
  twice->to(dev);
  CHECK(twice->parameters().size() == 2);
  auto names = twice->named_parameters();
  REQUIRE(names.size() == 2);
  CHECK(names[0].first == "a.weight");
  CHECK(names[1].first == "a.bias");
  auto sd = twice->state_dict();
  REQUIRE(sd.size() == 4);
  CHECK(sd.contains("b.weight"));
  CHECK(sd.contains("b.bias"));
  CHECK(twice->named_modules().size() == 2);  // the module itself and inner, once
  auto fresh = std::make_shared<TwiceImpl>();
  fresh->load_state_dict(sd);  // strict: every key PyTorch would save
  CHECK(max_abs_diff(fresh->inner->weight, twice->inner->weight) == 0);
  int calls = 0;
  twice->apply([&](nn::Module&) { ++calls; });
  CHECK(calls == 2);
  optim::SGD opt(twice->parameters(), optim::SGDOptions(0.1));
  Tensor x = ones({4, 3}, dev);
  sum(twice->forward(x)).backward();
  opt.step();  // one update per tensor
  CHECK(twice->inner->weight.grad().defined());
}

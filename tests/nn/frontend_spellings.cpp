// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// LibTorch's module and optimizer spellings a port reaches for (issue 31):
// blocks whose forward takes Tensor by value inside a Sequential,
// ModuleDict / ModuleList from pairs and lists, Module::apply,
// named_parameters() items with key() / value(), AdamWOptions betas({..}),
// OptimizerParamGroup, nn::utils::clip_grad_norm_, vnn::NoGradGuard and
// mutable_grad(). Each is checked by its result on the device under test.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "support/device_under_test.hpp"
#include "vnn/vnn.h"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

// LibTorch's usual block signature: forward takes its Tensor by value.
struct ScaleByValueImpl : nn::Cloneable<ScaleByValueImpl> {
  explicit ScaleByValueImpl(double k = 2.0) : Cloneable("ScaleByValue"), k(k) { reset(); }
  void reset() override {}
  Tensor forward(Tensor x) { return mul(x, k); }
  double k;
};
VNN_MODULE(ScaleByValue);

// forward(const Tensor&) with a defaulted second argument, not an override either.
struct ShiftImpl : nn::Cloneable<ShiftImpl> {
  ShiftImpl() : Cloneable("Shift") { reset(); }
  void reset() override {}
  Tensor forward(const Tensor& x, double by = 1.0) { return add(x, by); }
};
VNN_MODULE(Shift);

// nanoGPT's GPT.__init__ in LibTorch's spelling: a ModuleDict of named
// parts, a ModuleList of blocks, and apply(_init_weights) in the constructor.
struct TinyGPTImpl : nn::Module {
  TinyGPTImpl() : Module("TinyGPT") {
    nn::ModuleList h;
    for (int i = 0; i < 2; ++i) h->push_back(nn::Linear(4, 4));
    transformer = register_module(
        "transformer", nn::ModuleDict({{"wte", nn::Embedding(10, 4)}, {"h", h}, {"ln_f", nn::LayerNorm(nn::LayerNormOptions({4}))}}));
    lm_head = register_module("lm_head", nn::Linear(nn::LinearOptions(4, 10).bias(false)));
    apply([](nn::Module& m) {  // _init_weights
      if (auto* fc = m.as<nn::Linear>()) {
        nn::init::normal_(fc->weight, 0.0, 0.02);
        if (fc->bias.defined()) nn::init::zeros_(fc->bias);
      } else if (auto* emb = m.as<nn::Embedding>()) {
        nn::init::normal_(emb->weight, 0.0, 0.02);
      }
    });
  }
  nn::ModuleDict transformer{nullptr};
  nn::Linear lm_head{nullptr};
};

}  // namespace

TEST_CASE("Sequential calls each child's own forward, by value or with defaulted arguments") {
  Device dev = device_under_test();
  Tensor x = arange(0.0, 6.0, 1.0, TensorOptions(dev)).view(2, 3);
  nn::Sequential seq(ScaleByValue(3.0), Shift(), nn::ReLU());
  Tensor y = seq(x);
  CHECK(max_abs_diff(y, add(mul(x, 3.0), 1.0)) == 0);
  nn::Sequential braced{ScaleByValue(2.0), nn::Tanh()};
  braced->push_back(Shift());
  braced->push_back(std::make_shared<ShiftImpl>());
  CHECK(max_abs_diff(braced(x), add(tanh(mul(x, 2.0)), 2.0)) < 1e-6);
  // clone() keeps each child's forward.
  auto copy = std::dynamic_pointer_cast<nn::SequentialImpl>(braced->clone());
  REQUIRE(copy);
  CHECK(max_abs_diff(copy->forward(x), braced(x)) == 0);
  // A plain ModulePtr reaches its class's forward, by value or not.
  nn::ModulePtr as_base = ScaleByValue(2.0).ptr();
  nn::Sequential through_base;
  through_base->push_back(as_base);
  CHECK(max_abs_diff(through_base(x), mul(x, 2.0)) == 0);
  CHECK(max_abs_diff((*as_base)(x), mul(x, 2.0)) == 0);
}

namespace {
// forward(const Tensor&) returning a tuple: LibTorch code that did not
// compile while Module declared a virtual forward(const Tensor&).
struct SplitHalvesImpl : nn::Module {
  SplitHalvesImpl() : Module("SplitHalves") {}
  std::tuple<Tensor, Tensor> forward(const Tensor& x) {
    auto parts = x.chunk(2, 1);
    return {parts[0], parts[1]};
  }
};
VNN_MODULE(SplitHalves);

// A block deriving from Module directly, with a one-tensor forward and a
// forward of two tensors beside it.
struct GateImpl : nn::Module {
  GateImpl() : Module("Gate") {}
  Tensor forward(const Tensor& x) { return mul(x, sigmoid(x)); }
  Tensor forward(const Tensor& x, const Tensor& g) { return mul(x, sigmoid(g)); }
};

// A U-Net-style block returning a struct: the skip and the pooled tensor.
struct DownOut {
  Tensor skip, pooled;
};
struct DownImpl : nn::Cloneable<DownImpl> {
  DownImpl() : Cloneable("Down") { reset(); }
  void reset() override { conv = register_module("conv", nn::Conv2d(nn::Conv2dOptions(1, 2, 3).padding(1))); }
  DownOut forward(const Tensor& x) {
    Tensor s = relu(conv(x));
    return {s, max_pool2d(s, 2)};
  }
  nn::Conv2d conv{nullptr};
};
VNN_MODULE(Down);
}  // namespace

TEST_CASE("forward of any signature: tuples, structs, overloads; Module references reach one-tensor forwards") {
  Device dev = device_under_test();
  Tensor x = arange(0.0, 8.0, 1.0, TensorOptions(dev)).view(2, 4);
  SplitHalves split;
  auto [a, b] = split(x);
  CHECK(a.sizes() == Shape{2, 2});
  CHECK(max_abs_diff(b, x.narrow(1, 2, 2)) == 0);
  CHECK(max_abs_diff(std::get<0>(split->forward(x)), x.narrow(1, 0, 2)) == 0);
  // Through a Module reference a tuple-returning forward is not reachable: typed error naming the module.
  nn::ModulePtr split_base = split.ptr();
  try {
    (*split_base)(x);
    FAIL("a tuple-returning forward was called through Module::operator()");
  } catch (const Unsupported& e) {
    CHECK_THAT(e.what(), Catch::Matchers::Contains("SplitHalves"));
  }
  // An LSTM (tuple result) inside a Sequential fails the same typed way.
  nn::Sequential with_lstm(nn::LSTM(nn::LSTMOptions(4, 3)));
  CHECK_THROWS_AS(with_lstm(x.view(2, 1, 4)), Unsupported);

  // A Module-derived class: its own overloads; through a reference once its type was seen.
  auto gate = std::make_shared<GateImpl>();
  CHECK(max_abs_diff(gate->forward(x, x), gate->forward(x)) == 0);
  nn::ModulePtr unseen = std::make_shared<GateImpl>();
  CHECK_THROWS_AS((*unseen)(x), Unsupported);
  struct Holder : nn::Module {
    Holder() : Module("Holder") {}
  } parent;
  parent.register_module("gate", gate);
  nn::ModulePtr seen = gate;
  CHECK(max_abs_diff((*seen)(x), mul(x, sigmoid(x))) < 1e-6);
  nn::Sequential seq(gate, nn::ReLU());
  CHECK(max_abs_diff(seq(x), relu(mul(x, sigmoid(x)))) < 1e-6);

  // A struct result with autograd through it.
  Down down;
  down->to(dev);
  Tensor img = randn({1, 1, 4, 4}, TensorOptions(dev));
  img.requires_grad_();
  DownOut out = down(img);
  CHECK(out.skip.sizes() == Shape{1, 2, 4, 4});
  CHECK(out.pooled.sizes() == Shape{1, 2, 2, 2});
  out.pooled.sum().backward();
  REQUIRE(img.grad().defined());
  CHECK(down->conv->weight.grad().defined());
}

TEST_CASE("ModuleDict and ModuleList from pairs and lists; apply in a constructor") {
  Device dev = device_under_test();
  manual_seed(5);
  auto gpt = std::make_shared<TinyGPTImpl>();
  gpt->to(dev);
  CHECK(gpt->transformer->keys() == std::vector<std::string>{"wte", "h", "ln_f"});
  auto* h = gpt->transformer["h"]->as<nn::ModuleList>();
  REQUIRE(h != nullptr);
  CHECK(h->size() == 2);
  auto sd = gpt->state_dict();
  CHECK(sd.contains("transformer.h.1.weight"));
  CHECK(sd.contains("transformer.ln_f.bias"));
  // _init_weights ran on every Linear and the Embedding: std about 0.02, biases zero.
  Tensor w = gpt->lm_head->weight;
  double ms = mean(mul(w, w)).item();
  CHECK(std::sqrt(ms) == Approx(0.02).epsilon(0.35));
  CHECK(max_abs_diff((*h)[0]->as<nn::Linear>()->bias, zeros({4}, dev)) == 0);
  CHECK(max_abs_diff(gpt->transformer["ln_f"]->as<nn::LayerNorm>()->weight, ones({4}, dev)) == 0);

  std::vector<std::pair<std::string, nn::ModulePtr>> pairs{{"a", nn::Linear(2, 2)}, {"b", nn::ReLU()}};
  nn::ModuleDict from_pairs(pairs);
  CHECK(from_pairs->size() == 2);
  CHECK(from_pairs["b"]->as<nn::ReLU>() != nullptr);
  std::vector<nn::ModulePtr> list{nn::Linear(2, 3), nn::Linear(3, 1)};
  nn::ModuleList from_list(list);
  CHECK(from_list->size() == 2);
  CHECK(from_list->parameters().size() == 4);
  CHECK_THROWS_AS(nn::ModuleDict({{"a", nn::ReLU()}, {"a", nn::Tanh()}}), ValueError);  // keys are unique

  // apply's named form: each module once with its dotted path.
  std::vector<std::string> paths;
  gpt->apply([&](const std::string& name, nn::Module& m) { paths.push_back(name + ":" + m.type_name()); });
  REQUIRE(paths.size() == 8);  // TinyGPT, ModuleDict, Embedding, ModuleList, 2 Linear, LayerNorm, Linear
  CHECK(paths[0] == ":TinyGPT");
  CHECK(paths[4] == "transformer.h.0:Linear");
  CHECK(paths[7] == "lm_head:Linear");
}

TEST_CASE("named_parameters items read as OrderedDict items and as pairs") {
  nn::Linear fc(3, 2);
  std::vector<std::string> keys;
  int64_t numel = 0;
  for (auto& p : fc->named_parameters()) {
    keys.push_back(p.key());
    numel += p.value().numel();
  }
  CHECK(keys == std::vector<std::string>{"weight", "bias"});
  CHECK(numel == 8);
  for (auto& [name, t] : fc->named_parameters()) CHECK(t.impl() == fc->named_parameters()[name].impl());
  const auto sd = fc->state_dict();
  CHECK(sd[0].key() == "weight");
  CHECK(sd[0].value().impl() == fc->weight.impl());
  CHECK(sd[1].first == "bias");
  // The former vector-of-pairs form converts both ways.
  std::vector<std::pair<std::string, Tensor>> as_pairs = sd;
  CHECK(as_pairs.size() == 2);
  nn::StateDict back = as_pairs;
  CHECK(back.keys() == std::vector<std::string>{"weight", "bias"});
}

TEST_CASE("AdamWOptions betas({..}) and OptimizerParamGroup: decay and no-decay groups") {
  Device dev = device_under_test();
  auto opts = optim::AdamWOptions(0.1).betas({0.9, 0.95});
  CHECK(std::get<0>(opts.betas()) == 0.9);
  CHECK(std::get<1>(opts.betas()) == 0.95);

  // Two equal parameters with equal gradients, one decayed (nanoGPT's configure_optimizers).
  Tensor decayed = full({3}, 2.0, dev).requires_grad_(true), kept = full({3}, 2.0, dev).requires_grad_(true);
  std::vector<optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{decayed},
                      std::make_unique<optim::AdamWOptions>(optim::AdamWOptions(0.1).weight_decay(0.5)));
  groups.emplace_back(std::vector<Tensor>{kept},
                      std::make_unique<optim::AdamWOptions>(optim::AdamWOptions(0.1).weight_decay(0.0)));
  optim::AdamW opt(groups, optim::AdamWOptions(0.1).betas({0.9, 0.95}));
  CHECK(opt.param_groups()[0].options.at("weight_decay") == 0.5);
  CHECK(opt.param_groups()[1].options.at("weight_decay") == 0.0);
  decayed.set_grad(full({3}, 1.0, dev));
  kept.set_grad(full({3}, 1.0, dev));
  opt.step();
  // AdamW: p <- p * (1 - lr * wd) - adam step, so the two differ by p * lr * wd = 2 * 0.1 * 0.5.
  CHECK(max_abs_diff(sub(kept, decayed), full({3}, 0.1, dev)) < 1e-6);
  CHECK(max_abs_diff(kept, full({3}, 2.0 - 0.1, dev)) < 1e-5);  // the first Adam step is lr * sign(g)
  // A group from an options object, and an optimizer without explicit defaults.
  optim::AdamW plain(std::vector<optim::OptimizerParamGroup>{
      optim::OptimizerParamGroup({full({1}, 1.0, dev).requires_grad_(true)}, optim::AdamWOptions(0.2))});
  CHECK(plain.param_groups()[0].lr() == 0.2);
}

TEST_CASE("nn::utils::clip_grad_norm_, vnn::NoGradGuard, mutable_grad()") {
  Device dev = device_under_test();
  Tensor w = full({4}, 1.0, dev).requires_grad_(true);
  sum(mul(w, 3.0)).backward();  // grad 3 everywhere: norm 6
  Tensor norm = nn::utils::clip_grad_norm_(std::vector<Tensor>{w}, 3.0);
  CHECK(norm.item() == Approx(6.0));
  CHECK(max_abs_diff(w.grad(), full({4}, 1.5, dev)) < 1e-5);
  nn::utils::clip_grad_value_(std::vector<Tensor>{w}, 1.0);
  CHECK(max_abs_diff(w.grad(), full({4}, 1.0, dev)) == 0);

  Tensor y;
  {
    vnn::NoGradGuard no_grad;
    y = mul(w, 2.0);
  }
  CHECK_FALSE(y.requires_grad());
  CHECK(mul(w, 2.0).requires_grad());

  CHECK(w.mutable_grad().impl() == w.grad().impl());
  w.mutable_grad() = Tensor();  // LibTorch's way to drop a gradient
  CHECK_FALSE(w.grad().defined());
  w.mutable_grad() = full({4}, 0.5, dev);
  CHECK(max_abs_diff(w.grad(), full({4}, 0.5, dev)) == 0);
  sum(w).backward();  // accumulates into the slot
  CHECK(max_abs_diff(w.grad(), full({4}, 1.5, dev)) == 0);
}

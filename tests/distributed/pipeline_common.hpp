// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared by the pipeline tests (test_pipeline.cpp in one process, the ranks of
// worker_pipeline.cpp): the float64 models, their batch, training a few Adam
// steps while recording gradients and parameters, and the comparison with
// the single-device full-batch run.
#pragma once
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "vnn/distributed/pipelining.h"
#include "vnn/vnn.h"

namespace vnn::test::pipeline {

namespace pp = vnn::distributed::pipelining;

constexpr int kMicrobatches = 8;
constexpr int kSteps = 3;

// "mlp": 4 Linear + Tanh layers; "transformer": 4 encoder layers (batch_first, no dropout).
inline nn::Sequential make_model(const std::string& kind, uint64_t seed = 1) {
  manual_seed(seed);
  nn::Sequential s{nullptr};
  if (kind == "transformer") {
    auto o = nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0).batch_first(true);
    s = nn::Sequential{nn::TransformerEncoderLayer(o), nn::TransformerEncoderLayer(o), nn::TransformerEncoderLayer(o),
                       nn::TransformerEncoderLayer(o)};
  } else {
    s = nn::Sequential{nn::Linear(8, 16), nn::Tanh(), nn::Linear(16, 16), nn::Tanh(),
                       nn::Linear(16, 16), nn::Tanh(), nn::Linear(16, 4)};
  }
  s->to(kFloat64);
  return s;
}

// Where the split into 2 (or, for the MLP, 3) stages goes.
inline std::vector<size_t> split_points(const std::string& kind, int stages = 2) {
  if (kind == "transformer") return {2};
  return stages == 3 ? std::vector<size_t>{2, 4} : std::vector<size_t>{3};
}

// The whole batch (32 rows: 8 micro-batches of 4), on the host.
inline std::pair<Tensor, Tensor> make_batch(const std::string& kind) {
  Generator g(7);
  auto o = TensorOptions().with(kFloat64);
  if (kind == "transformer") return {randn({16, 5, 8}, o, &g), randn({16, 5, 8}, o, &g)};
  return {randn({32, 8}, o, &g), randn({32, 4}, o, &g)};
}

inline Tensor mse(const Tensor& out, const Tensor& target) { return nn::mse_loss(out, target); }

// What a few steps left behind: per step the loss, and host copies of the
// watched parameters' gradients (before the update) and values (after it).
struct Trace {
  std::vector<double> losses;
  std::vector<std::vector<Tensor>> grads, params;
};

// kSteps of Adam (the MLP) or SGD with momentum (the transformer) over
// `params`; step() runs forward and backward and returns the loss (undefined
// where this process has no loss). `watch` are recorded. Not Adam for the
// transformer: the key projection's bias has a gradient of exactly zero in
// exact arithmetic (softmax ignores a constant per row), so its computed
// gradient is rounding noise that Adam scales up to lr-sized steps of either sign.
inline Trace train(const std::string& kind, const std::vector<Tensor>& params, const std::vector<Tensor>& watch,
                   const std::function<Tensor()>& step) {
  std::unique_ptr<optim::Optimizer> opt;
  if (kind == "transformer") opt = std::make_unique<optim::SGD>(params, optim::SGDOptions(0.05).momentum(0.9));
  else opt = std::make_unique<optim::Adam>(params, optim::AdamOptions(1e-2));
  Trace t;
  for (int k = 0; k < kSteps; ++k) {
    opt->zero_grad();
    Tensor loss = step();
    t.losses.push_back(loss.defined() ? loss.item() : std::nan(""));
    std::vector<Tensor> g, p;
    for (const Tensor& w : watch) g.push_back(w.grad().to(Device("cpu", 0)).clone());
    opt->step();
    for (const Tensor& w : watch) p.push_back(w.detach().to(Device("cpu", 0)).clone());
    t.grads.push_back(g);
    t.params.push_back(p);
  }
  return t;
}

// The single-device full-batch run on cpu:0, recording the parameters of
// stage `stage` of `stages` (all: -1).
inline Trace reference(const std::string& kind, int stage = -1, int stages = 2) {
  nn::Sequential model = make_model(kind);
  auto parts = pp::split_sequential(model, split_points(kind, stages));
  std::vector<Tensor> watch = stage < 0 ? model->parameters() : parts[size_t(stage)]->parameters();
  const auto batch = make_batch(kind);  // no structured binding: C++17 lambdas cannot capture one (Clang)
  return train(kind, model->parameters(), watch, [&] {
    Tensor loss = mse(model(batch.first), batch.second);
    loss.backward();
    return loss;
  });
}

// The largest difference between two traces, relative to each tensor's largest magnitude.
inline double max_rel_diff(const Trace& a, const Trace& b, std::string* where = nullptr) {
  double worst = 0;
  auto one = [&](const Tensor& x, const Tensor& y, const std::string& what) {
    auto u = x.to_vector<double>(), v = y.to_vector<double>();
    if (u.size() != v.size()) {
      worst = INFINITY;
      if (where) *where = what + ": sizes differ";
      return;
    }
    double scale = 1e-300, d = 0;
    for (size_t i = 0; i < u.size(); ++i) {
      scale = std::max(scale, std::fabs(v[i]));
      d = std::max(d, std::fabs(u[i] - v[i]));
    }
    if (d / scale > worst) {
      worst = d / scale;
      if (where) *where = what;
    }
  };
  if (a.grads.size() != b.grads.size()) return INFINITY;
  for (size_t s = 0; s < a.grads.size(); ++s) {
    if (a.grads[s].size() != b.grads[s].size()) return INFINITY;
    for (size_t i = 0; i < a.grads[s].size(); ++i) {
      one(a.grads[s][i], b.grads[s][i], "step " + std::to_string(s) + " grad " + std::to_string(i));
      one(a.params[s][i], b.params[s][i], "step " + std::to_string(s) + " param " + std::to_string(i));
    }
  }
  return worst;
}

// A schedule by name: "gpipe" or "1f1b".
template <class StageArg>
std::unique_ptr<pp::PipelineSchedule> make_schedule(const std::string& name, StageArg&& stages,
                                                    pp::LossFn loss = mse) {
  if (name == "gpipe") return std::make_unique<pp::ScheduleGPipe>(std::forward<StageArg>(stages), kMicrobatches, loss);
  return std::make_unique<pp::Schedule1F1B>(std::forward<StageArg>(stages), kMicrobatches, loss);
}

}  // namespace vnn::test::pipeline

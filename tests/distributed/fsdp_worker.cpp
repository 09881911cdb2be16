// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One rank of a FullyShardedDataParallel test: `fsdp_worker SCENARIO [ARG]`,
// started N times by test_fsdp. A small nanoGPT (examples/gpt_model.hpp:
// 8 blocks, tied lm_head) in float64, each block a unit; every scenario
// compares with the same model trained in one process on the whole batch.
// Exits 0 when every check held; prints "FAIL: ..." and exits 1 otherwise.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>

#include "distributed/worker_common.hpp"
#include "examples/gpt_model.hpp"
#include "vnn/distributed.h"
#include "vnn/nn/distributed.h"
#include "vnn/nn/fsdp.h"

namespace dist = vnn::distributed;
namespace nn = vnn::nn;
using vnn::Tensor;
using namespace vnn::test::dist;

namespace {

vnn::Device dev;
const gpt::GPTConfig kCfg{16, 8, 8, 2, 64, 0.0};  // vocab, block, layers, heads, width, dropout
constexpr int64_t kBatch = 4;                      // rows per step, split over the ranks
constexpr double kLr = 1e-2;

using Snapshot = std::vector<std::pair<std::string, std::vector<double>>>;

std::shared_ptr<gpt::GPTImpl> make_gpt() {
  vnn::manual_seed(7);
  auto m = std::make_shared<gpt::GPTImpl>(kCfg);
  m->to(dev, vnn::kFloat64);
  return m;
}

// Step s's batch: [kBatch, T] tokens and their targets, the same on every rank.
std::pair<Tensor, Tensor> batch(int step) {
  vnn::Generator g(1000 + uint64_t(step));
  Tensor x = vnn::randint(kCfg.vocab, {kBatch, kCfg.block}, g, vnn::TensorOptions().with(vnn::kInt64));
  Tensor y = vnn::randint(kCfg.vocab, {kBatch, kCfg.block}, g, vnn::TensorOptions().with(vnn::kInt64));
  return {x.to(dev), y.to(dev)};
}

Tensor loss_of(nn::Module& m, const Tensor& x, const Tensor& y) {
  Tensor logits = m(x);
  return nn::functional::cross_entropy(logits.reshape({-1, kCfg.vocab}), y.reshape({-1}));
}

// This rank's rows of a batch.
std::pair<Tensor, Tensor> rows(const std::pair<Tensor, Tensor>& b) {
  const int64_t n = kBatch / dist::world_size(), r = dist::rank();
  return {b.first.narrow(0, r * n, n), b.second.narrow(0, r * n, n)};
}

Snapshot snapshot(const nn::StateDict& sd) {
  Snapshot out;
  for (auto& [n, t] : sd) out.emplace_back(n, t.to(vnn::kFloat64).to(vnn::Device("cpu", 0)).to_vector<double>());
  return out;
}

double max_diff(const Snapshot& a, const Snapshot& b, const std::string& what) {
  DIST_CHECK(a.size() == b.size(), what << ": " << a.size() << " entries against " << b.size());
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    DIST_CHECK(a[i].first == b[i].first, what << ": key " << i << " is " << a[i].first << ", expected " << b[i].first);
    DIST_CHECK(a[i].second.size() == b[i].second.size(), what << ": " << a[i].first << " sizes differ");
    for (size_t k = 0; k < a[i].second.size(); ++k) m = std::max(m, std::fabs(a[i].second[k] - b[i].second[k]));
  }
  return m;
}

// One process, the whole batch, no budget: steps [0, steps) of Adam.
struct Reference {
  Snapshot state;
  uint64_t state_bytes = 0, peak = 0;  // params + grads + Adam state; peak allocated while training
};
Reference reference(int steps, double clip = 0) {
  auto m = make_gpt();
  vnn::optim::Adam opt(m->parameters(), vnn::optim::AdamOptions(kLr));
  vnn::empty_cache(dev);
  vnn::reset_peak_memory_stats(dev);
  uint64_t before = vnn::memory_stats(dev).allocated;
  for (int s = 0; s < steps; ++s) {
    auto [x, y] = batch(s);
    opt.zero_grad();
    loss_of(*m, x, y).backward();
    if (clip > 0) vnn::optim::clip_grad_norm_(m->parameters(), clip);
    opt.step();
  }
  Reference r;
  r.state = snapshot(m->state_dict());
  r.state_bytes = 4 * uint64_t(m->num_parameters()) * 8;
  r.peak = vnn::memory_stats(dev).peak_allocated - before + r.state_bytes / 4;
  return r;
}

nn::FSDPOptions unit_per_block() {
  nn::FSDPOptions o;
  o.auto_wrap_policy = nn::wrap_module_types<gpt::BlockImpl>();
  return o;
}

void train(nn::FullyShardedDataParallel& fsdp, vnn::optim::Optimizer& opt, int from, int to, double clip = 0) {
  for (int s = from; s < to; ++s) {
    auto [x, y] = rows(batch(s));
    opt.zero_grad();
    loss_of(fsdp, x, y).backward();
    if (clip > 0) fsdp.clip_grad_norm_(clip);
    opt.step();
  }
}

// Params + grads + Adam state over one rank's budget: DDP runs out of
// memory, FSDP trains 10 steps equal to one process within 1e-10, with a
// peak per rank near 1/N of the state plus a few units' full parameters.
int fsdp_train() {
  const int ws = dist::world_size();
  Reference ref = reference(10);
  vnn::empty_cache(dev);
  const uint64_t base = vnn::memory_stats(dev).allocated;
  const uint64_t activations = ref.peak - ref.state_bytes;  // one process's, the whole batch
  const uint64_t budget = ref.state_bytes * 3 / 4 + activations;
  vnn::set_memory_limit(dev, base + budget);

  auto model = make_gpt();
  auto fsdp = nn::fully_shard(model, unit_per_block());
  DIST_CHECK(fsdp->unit_paths().size() == size_t(kCfg.n_layer) + 1, "units: " << fsdp->unit_paths().size());
  DIST_CHECK(fsdp->unit_paths()[1] == "transformer.h.0", "unit 1 is " << fsdp->unit_paths()[1]);
  vnn::optim::Adam opt(fsdp->parameters(), vnn::optim::AdamOptions(kLr));
  const uint64_t after_build = vnn::memory_stats(dev).allocated - base;
  vnn::reset_peak_memory_stats(dev);
  train(*fsdp, opt, 0, 10);
  const uint64_t peak = vnn::memory_stats(dev).peak_allocated - base;
  vnn::set_memory_limit(dev, 0);

  auto full = snapshot(fsdp->full_state_dict(false));
  double d = max_diff(full, ref.state, "full_state_dict");
  DIST_CHECK(d <= 1e-10, ws << " ranks after 10 steps differ from one process by " << d);
  DIST_CHECK(fsdp->stats().syncs == 10, "syncs " << fsdp->stats().syncs);
  DIST_CHECK(fsdp->stats().prefetched > 0, "no all-gather was prefetched");

  // The bound: this rank's share of the state and of the activations, plus
  // four units' full size (a gathered unit, the prefetched next one, its
  // gradients and their flat reduce-scatter buffer) and the root's.
  const uint64_t unit = uint64_t(fsdp->max_unit_numel()) * 8;
  const uint64_t bound = ref.state_bytes / uint64_t(ws) + activations / uint64_t(ws) + 5 * unit;
  std::printf("rank %d of %d: state %.2f MiB (one process), fsdp peak %.2f MiB (bound %.2f: state/N %.2f + "
              "activations/N %.2f + 5 units %.2f), after wrapping %.2f MiB, budget %.2f MiB, max diff %.3g\n",
              dist::rank(), ws, ref.state_bytes / 1048576.0, peak / 1048576.0, bound / 1048576.0,
              ref.state_bytes / double(ws) / 1048576.0, activations / double(ws) / 1048576.0, 5 * unit / 1048576.0,
              after_build / 1048576.0, budget / 1048576.0, d);
  DIST_CHECK(peak <= bound, "peak " << peak << " bytes over the bound " << bound);
  DIST_CHECK(peak < budget, "peak " << peak << " bytes over the budget " << budget);
  return 0;
}

// The same model and budget under DDP: every parameter, gradient and Adam
// value on every rank does not fit.
int ddp_oom() {
  Reference ref = reference(1);
  vnn::empty_cache(dev);
  const uint64_t budget = ref.state_bytes * 3 / 4 + (ref.peak - ref.state_bytes);
  vnn::set_memory_limit(dev, vnn::memory_stats(dev).allocated + budget);
  // DDP: the rank that runs out throws OutOfMemory, the others DistributedError
  // naming it.
  std::string ddp_error;
  try {
    auto m = make_gpt();
    auto ddp = std::make_shared<nn::DistributedDataParallel>(m);
    vnn::optim::Adam opt(ddp->parameters(), vnn::optim::AdamOptions(kLr));
    for (int s = 0; s < 2; ++s) {
      auto [x, y] = rows(batch(s));
      opt.zero_grad();
      loss_of(*ddp, x, y).backward();
      opt.step();
    }
  } catch (const vnn::OutOfMemory& e) {
    ddp_error = e.what();
  } catch (const vnn::DistributedError& e) {
    ddp_error = e.what();
  }
  DIST_CHECK(ddp_error.find("out of memory on " + dev.str()) != std::string::npos,
             "DDP under a budget of 3/4 of the state did not run out of memory: '" << ddp_error << "'");
  return 0;
}

// Activation checkpointing (the recompute gathers the unit again) with
// gradient clipping over the shards; no_sync accumulation; bf16 gathers.
int fsdp_features() {
  {
    // A Sequential whose Linear layers are units (the container calls the
    // wrappers), SGD: equal to one process.
    auto make = [] {
      vnn::manual_seed(3);
      auto seq = nn::Sequential(nn::Linear(8, 16), nn::Tanh(), nn::Linear(16, 16), nn::Tanh(), nn::Linear(16, 4));
      seq->to(dev, vnn::kFloat64);
      return seq;
    };
    vnn::Generator g(5);
    Tensor x = vnn::randn({kBatch, 8}, vnn::TensorOptions().with(vnn::kFloat64), &g).to(dev);
    Tensor y = vnn::randn({kBatch, 4}, vnn::TensorOptions().with(vnn::kFloat64), &g).to(dev);
    auto ref = make();
    vnn::optim::SGD ref_opt(ref->parameters(), vnn::optim::SGDOptions(0.1));
    nn::FSDPOptions o;
    o.auto_wrap_policy = nn::wrap_module_types<nn::LinearImpl>();
    auto fsdp = nn::fully_shard(make().ptr(), o);
    DIST_CHECK(fsdp->unit_paths().size() == 4, "units: " << fsdp->unit_paths().size());
    vnn::optim::SGD opt(fsdp->parameters(), vnn::optim::SGDOptions(0.1));
    const int64_t n = kBatch / dist::world_size();
    for (int s = 0; s < 3; ++s) {
      ref_opt.zero_grad();
      nn::mse_loss(ref->forward(x), y).backward();
      ref_opt.step();
      opt.zero_grad();
      nn::mse_loss(fsdp->forward(x.narrow(0, dist::rank() * n, n)), y.narrow(0, dist::rank() * n, n)).backward();
      opt.step();
    }
    double d = max_diff(snapshot(fsdp->full_state_dict(false)), snapshot(ref->state_dict()), "sequential");
    DIST_CHECK(d <= 1e-10, "a Sequential of Linear units differs from one process by " << d);
  }
  {
    Reference ref = reference(3, 0.5);
    auto o = unit_per_block();
    o.activation_checkpointing = true;
    auto fsdp = nn::fully_shard(make_gpt(), o);
    vnn::optim::Adam opt(fsdp->parameters(), vnn::optim::AdamOptions(kLr));
    train(*fsdp, opt, 0, 3, 0.5);
    double d = max_diff(snapshot(fsdp->full_state_dict(false)), ref.state, "checkpointed");
    DIST_CHECK(d <= 1e-10, "activation checkpointing + clip_grad_norm_: differs from one process by " << d);
  }
  {
    // Two micro-batches per step: the first under no_sync.
    auto m = make_gpt();
    vnn::optim::Adam ref_opt(m->parameters(), vnn::optim::AdamOptions(kLr));
    auto fsdp = nn::fully_shard(make_gpt(), unit_per_block());
    vnn::optim::Adam opt(fsdp->parameters(), vnn::optim::AdamOptions(kLr));
    for (int s = 0; s < 2; ++s) {
      ref_opt.zero_grad();
      opt.zero_grad();
      for (int micro : {0, 1}) {
        auto b = batch(100 * micro + s);
        loss_of(*m, b.first, b.second).backward();
        auto [x, y] = rows(b);
        if (micro == 0) {
          auto guard = fsdp->no_sync();
          loss_of(*fsdp, x, y).backward();
        } else {
          loss_of(*fsdp, x, y).backward();
        }
      }
      ref_opt.step();
      opt.step();
    }
    double d = max_diff(snapshot(fsdp->full_state_dict(false)), snapshot(m->state_dict()), "no_sync");
    DIST_CHECK(d <= 1e-10, "no_sync accumulation differs from one process by " << d);
    DIST_CHECK(fsdp->stats().syncs == 2, "no_sync backward synchronised: syncs " << fsdp->stats().syncs);
  }
  {
    // bf16 gathers, float32 reduction, float64 shards: the module computes
    // in bf16 and trains as the float64 run does, to bf16's precision.
    auto o = unit_per_block();
    o.mixed_precision.param_dtype = vnn::kBFloat16;
    o.mixed_precision.reduce_dtype = vnn::kFloat32;
    auto model = make_gpt();
    auto fsdp = nn::fully_shard(model, o);
    DIST_CHECK(fsdp->parameters()[0].dtype() == vnn::kFloat64, "shards are " << vnn::name(fsdp->parameters()[0].dtype()));
    vnn::optim::Adam opt(fsdp->parameters(), vnn::optim::AdamOptions(1e-3));
    auto plain = nn::fully_shard(make_gpt(), unit_per_block());
    vnn::optim::Adam plain_opt(plain->parameters(), vnn::optim::AdamOptions(1e-3));
    double first = 0, last = 0, last_plain = 0;
    for (int s = 0; s < 6; ++s) {
      auto [x, y] = rows(batch(0));
      opt.zero_grad();
      Tensor l = loss_of(*fsdp, x, y);
      DIST_CHECK(model->lm_head->weight.dtype() == vnn::kBFloat16,
                 "the root's gathered weight is " << vnn::name(model->lm_head->weight.dtype()));
      l.backward();
      opt.step();
      plain_opt.zero_grad();
      Tensor lp = loss_of(*plain, x, y);
      lp.backward();
      plain_opt.step();
      (s == 0 ? first : last) = l.to(vnn::kFloat64).item();
      last_plain = lp.item();
    }
    DIST_CHECK(last < first, "bf16 FSDP did not learn: loss " << first << " -> " << last);
    DIST_CHECK(std::fabs(last - last_plain) <= 0.05 * last_plain,
               "bf16 loss " << last << " is far from the float64 run's " << last_plain);
  }
  return 0;
}

// Trains 5 steps on 2 ranks and writes a sharded checkpoint and the full
// state dict (rank 0) under `dir`.
int fsdp_ckpt_save(const std::string& dir) {
  auto fsdp = nn::fully_shard(make_gpt(), unit_per_block());
  vnn::optim::Adam opt(fsdp->parameters(), vnn::optim::AdamOptions(kLr));
  train(*fsdp, opt, 0, 5);
  fsdp->save_sharded_checkpoint(dir, &opt, {0, 5, {{"note", "fsdp"}}});
  auto full = fsdp->full_state_dict();
  if (dist::rank() != 0) {
    DIST_CHECK(full.empty(), "rank " << dist::rank() << " got a full state dict");
    return 0;
  }
  auto plain = make_gpt()->state_dict();
  DIST_CHECK(full.size() == plain.size(), "full state dict: " << full.size() << " keys, the model has " << plain.size());
  for (size_t i = 0; i < full.size(); ++i) DIST_CHECK(full[i].first == plain[i].first, full[i].first);
  vnn::io::save(dir + "/full.safetensors", full);
  return 0;
}

// On another world size: the checkpoint equals one process's 5 steps, and
// training on gives its steps 5..7; the full state dict loads into a plain model.
int fsdp_ckpt_load(const std::string& dir) {
  auto fsdp = nn::fully_shard(make_gpt(), unit_per_block());
  vnn::optim::Adam opt(fsdp->parameters(), vnn::optim::AdamOptions(kLr));
  vnn::io::TrainingProgress p = fsdp->load_sharded_checkpoint(dir, &opt);
  DIST_CHECK(p.step == 5 && p.extra["note"] == "fsdp", "progress step " << p.step);
  Reference five = reference(5);
  double d = max_diff(snapshot(fsdp->full_state_dict(false)), five.state, "loaded");
  DIST_CHECK(d <= 1e-10, "the checkpoint written by 2 ranks, read by " << dist::world_size() << ", differs by " << d);
  auto plain = make_gpt();
  plain->load_state_dict(vnn::io::load(dir + "/full.safetensors", dev));
  d = max_diff(snapshot(plain->state_dict()), five.state, "full.safetensors");
  DIST_CHECK(d <= 1e-10, "the gathered full state dict differs by " << d);
  train(*fsdp, opt, 5, 7);
  d = max_diff(snapshot(fsdp->full_state_dict(false)), reference(7).state, "resumed");
  DIST_CHECK(d <= 1e-10, "resumed on " << dist::world_size() << " ranks, steps 5..7 differ by " << d);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_scenario(argc, argv, dev,
                      {{"fsdp_train", plain(fsdp_train)}, {"ddp_oom", plain(ddp_oom)},
                       {"fsdp_features", plain(fsdp_features)}, {"fsdp_ckpt_save", fsdp_ckpt_save},
                       {"fsdp_ckpt_load", fsdp_ckpt_load}});
}

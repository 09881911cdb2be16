// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Trains a character-level GPT (nanoGPT's architecture, in LibTorch's
// spelling) on English text from Debian's `fortunes` package, on the best
// device vnn finds, then samples from it.
//
//   train_gpt [--device cuda:0] [--max-iters 1500] [--batch-size 16] [--block-size 128]
//             [--n-layer 4] [--n-head 4] [--n-embd 128] [--dropout 0.0] [--lr 2e-3]
//             [--eval-interval 250] [--eval-iters 20] [--out DIR] [--resume]
//             [--amp bf16] [--distributed] [--data DIR] [--sample-tokens 400]
//             [--temperature 0.8] [--top-k 20] [--seed 1337] [--save-init FILE]
//             [--stop-at N] [--profile N]
//
// --profile N: records iterations 10 .. 10+N with vnn's profiler and prints
// where the time went (ops by device time, sdpa[flash] vs sdpa[math]).
// The model: token and position embeddings, pre-norm blocks of causal
// self-attention (through vnn::scaled_dot_product_attention: the fused
// kernel where the device has one) and a GELU MLP, a final LayerNorm, and an
// lm_head tied to the token embedding, initialised as nanoGPT does. Its
// state-dict keys are nanoGPT's (transformer.wte.weight, transformer.h.0.
// attn.c_attn.weight, ..., lm_head.weight), so its checkpoints load there.
// AdamW with weight decay on the matrices only, a linear warm-up and a
// cosine decay, as nanoGPT's train.py. Batches are drawn from a counter-based
// stream (splitmix64 of seed, step, row), so bench/train_gpt_torch.py
// trains the same model on the same batches in PyTorch.
//
// Writes <out>/checkpoint.safetensors at every evaluation (--resume continues
// from it bit for bit) and prints a sample at the end.
// --distributed: data parallel under vnn-run (DDP); each rank draws its own
// rows of every batch (batch-size / world each).
// --fsdp: the same under FullyShardedDataParallel (each block a unit;
// parameters, gradients and AdamW state sharded over the ranks), which fits
// a memory budget DDP cannot meet, e.g. under vnn-run --nproc-per-node 2
// with VNN_MEMORY_LIMIT=cpu:0=<size>. Its checkpoints are sharded
// (<out>/sharded/, resumable on any number of ranks); rank 0 samples from
// the gathered full state dict.
#include <vnn/distributed.h>
#include <vnn/io/checkpoint.h>
#include <vnn/nn/distributed.h>
#include <vnn/nn/fsdp.h>
#include <vnn/vnn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <dirent.h>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "fortunes_corpus.hpp"
#include "gpt_model.hpp"

namespace nn = vnn::nn;
using namespace gpt;
using fortunes::Corpus;
using fortunes::read_corpus;
using fortunes::tokenize;

namespace {

struct Config {
  std::string device, data = "/usr/share/games/fortunes", out = "gpt-run", amp, save_init;
  int64_t max_iters = 1500, batch = 16, block = 128, n_layer = 4, n_head = 4, n_embd = 128;
  int64_t stop_at = 0, profile = 0, eval_interval = 250, eval_iters = 20, sample_tokens = 400, top_k = 20, warmup = 100;
  double dropout = 0.0, lr = 2e-3, min_lr = 2e-4, weight_decay = 0.1, temperature = 0.8, grad_clip = 1.0;
  uint64_t seed = 1337;
  bool resume = false, distributed = false, fsdp = false;
};

Config parse(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw vnn::ValueError("option " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--device") c.device = value();
    else if (a == "--data") c.data = value();
    else if (a == "--out") c.out = value();
    else if (a == "--amp") c.amp = value();
    else if (a == "--save-init") c.save_init = value();
    else if (a == "--max-iters") c.max_iters = std::stoll(value());
    else if (a == "--batch-size") c.batch = std::stoll(value());
    else if (a == "--block-size") c.block = std::stoll(value());
    else if (a == "--n-layer") c.n_layer = std::stoll(value());
    else if (a == "--n-head") c.n_head = std::stoll(value());
    else if (a == "--n-embd") c.n_embd = std::stoll(value());
    else if (a == "--stop-at") c.stop_at = std::stoll(value());
    else if (a == "--profile") c.profile = std::stoll(value());
    else if (a == "--eval-interval") c.eval_interval = std::stoll(value());
    else if (a == "--eval-iters") c.eval_iters = std::stoll(value());
    else if (a == "--sample-tokens") c.sample_tokens = std::stoll(value());
    else if (a == "--top-k") c.top_k = std::stoll(value());
    else if (a == "--warmup") c.warmup = std::stoll(value());
    else if (a == "--dropout") c.dropout = std::stod(value());
    else if (a == "--lr") c.lr = std::stod(value()), c.min_lr = c.lr / 10;
    else if (a == "--temperature") c.temperature = std::stod(value());
    else if (a == "--seed") c.seed = std::stoull(value());
    else if (a == "--resume") c.resume = true;
    else if (a == "--distributed") c.distributed = true;
    else if (a == "--fsdp") c.distributed = c.fsdp = true;
    else {
      std::cout << "usage: train_gpt [--device D] [--max-iters N] [--batch-size B] [--block-size T] [--n-layer L]\n"
                   "                 [--n-head H] [--n-embd C] [--dropout P] [--lr LR] [--eval-interval N]\n"
                   "                 [--eval-iters N] [--out DIR] [--resume] [--amp bf16] [--distributed] [--fsdp]\n"
                   "                 [--data DIR] [--sample-tokens N] [--temperature T] [--top-k K] [--seed S]\n"
                   "                 [--save-init FILE] [--stop-at N] [--profile N]\n";
      std::exit(a == "--help" ? 0 : 2);
    }
  }
  if (c.n_embd % c.n_head != 0)
    throw vnn::ValueError("--n-embd " + std::to_string(c.n_embd) + " must be a multiple of --n-head " +
                          std::to_string(c.n_head));
  if (!c.amp.empty() && c.amp != "bf16") throw vnn::ValueError("--amp takes bf16, not " + c.amp);
  if (c.max_iters < 1 || c.batch < 1 || c.block < 2) throw vnn::ValueError("sizes must be positive");
  return c;
}

// splitmix64: the batch sampler's counter-based stream (the same in
// bench/train_gpt_torch.py).
uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Rows [row0, row0 + rows) of batch `step` of `split` ("train" 0, "val" 1):
// inputs and next-token targets [rows, T], int64.
std::pair<vnn::Tensor, vnn::Tensor> get_batch(const std::vector<int64_t>& data, uint64_t seed, uint64_t split,
                                              int64_t step, int64_t row0, int64_t rows, int64_t T) {
  std::vector<int64_t> x(size_t(rows * T)), y(size_t(rows * T));
  const uint64_t span = uint64_t(data.size()) - uint64_t(T) - 1;
  for (int64_t r = 0; r < rows; ++r) {
    const uint64_t h = splitmix64(seed ^ splitmix64((split << 62) ^ (uint64_t(step) << 20) ^ uint64_t(row0 + r)));
    const size_t start = size_t(h % span);
    for (int64_t t = 0; t < T; ++t) {
      x[size_t(r * T + t)] = data[start + size_t(t)];
      y[size_t(r * T + t)] = data[start + size_t(t) + 1];
    }
  }
  return {vnn::from_vector(x, {rows, T}), vnn::from_vector(y, {rows, T})};
}

// ---- training -------------------------------------------------------------

// nanoGPT's get_lr: linear warm-up, cosine decay to min_lr at max_iters.
double lr_at(const Config& c, int64_t it) {
  if (it < c.warmup) return c.lr * double(it + 1) / double(c.warmup + 1);
  if (it >= c.max_iters) return c.min_lr;
  const double ratio = double(it - c.warmup) / double(std::max<int64_t>(c.max_iters - c.warmup, 1));
  return c.min_lr + 0.5 * (1.0 + std::cos(M_PI * ratio)) * (c.lr - c.min_lr);
}

// Mean loss over eval_iters fixed batches of each split (the same batches at
// every evaluation, so the curve is comparable across runs and resumes).
std::pair<double, double> estimate_loss(nn::Module& model, const Corpus& corpus, const Config& c, const vnn::Device& dev,
                                        int rank, int world) {
  vnn::NoGradGuard no_grad;
  model.eval();
  double out[2] = {0, 0};
  const int64_t rows = c.batch / world;
  for (uint64_t split = 0; split < 2; ++split) {
    const auto& data = split == 0 ? corpus.train : corpus.val;
    double sum = 0;
    for (int64_t i = 0; i < c.eval_iters; ++i) {
      auto [x, y] = get_batch(data, c.seed + 1, split + 2, i, rank * rows, rows, c.block);
      vnn::AutocastGuard autocast(dev, vnn::kBFloat16, !c.amp.empty());
      vnn::Tensor logits = model(x.to(dev));
      sum += vnn::nn::cross_entropy(logits.view({-1, logits.size(-1)}), y.to(dev).view({-1})).item<double>();
    }
    out[split] = sum / double(c.eval_iters);
  }
  model.train();
  if (world > 1) {
    vnn::Tensor t = vnn::tensor({out[0], out[1]}, vnn::TensorOptions(vnn::kFloat64));
    vnn::distributed::all_reduce(t, vnn::distributed::ReduceOp::avg);
    auto v = t.to_vector<double>();
    out[0] = v[0], out[1] = v[1];
  }
  return {out[0], out[1]};
}

// Samples n tokens after `prompt`: temperature, then the top k logits.
std::string generate(GPT& model, const Corpus& corpus, const Config& c, const vnn::Device& dev,
                     const std::string& prompt) {
  vnn::NoGradGuard no_grad;
  model->eval();
  std::vector<int64_t> ids;
  for (char ch : prompt) {
    auto pos = corpus.chars.find(ch);
    ids.push_back(pos == std::string::npos ? 0 : int64_t(pos));
  }
  vnn::Generator gen(c.seed);
  std::string out = prompt;
  for (int64_t n = 0; n < c.sample_tokens; ++n) {
    const int64_t T = std::min<int64_t>(int64_t(ids.size()), c.block);
    std::vector<int64_t> ctx(ids.end() - T, ids.end());
    vnn::Tensor logits = model(vnn::from_vector(ctx, {1, T}).to(dev)).select(1, T - 1);  // [1, vocab]
    logits = vnn::div(logits, c.temperature);
    if (c.top_k > 0 && c.top_k < logits.size(-1)) {
      auto [top, idx] = vnn::topk(logits, c.top_k);
      vnn::Tensor kth = top.narrow(-1, c.top_k - 1, 1);
      logits = vnn::masked_fill(logits, vnn::lt(logits, kth), -INFINITY);
    }
    vnn::Tensor probs = vnn::softmax(logits, -1);
    const int64_t next = vnn::multinomial(probs, 1, false, &gen).cpu().item<int64_t>();
    ids.push_back(next);
    out += corpus.chars[size_t(next)];
  }
  model->train();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Config cfg = parse(argc, argv);
    int rank = 0, world = 1;
    if (cfg.distributed) {
      vnn::distributed::init_process_group();
      rank = vnn::distributed::rank();
      world = vnn::distributed::world_size();
      if (cfg.batch % world != 0)
        throw vnn::ValueError("--batch-size " + std::to_string(cfg.batch) + " must be a multiple of the " +
                              std::to_string(world) + " ranks");
      if (rank != 0) std::cout.setstate(std::ios::failbit);
    }
    vnn::Device device = !cfg.device.empty() ? vnn::Device(cfg.device)
                         : cfg.distributed   ? vnn::distributed::local_device()
                                             : vnn::best_device();
    std::cout << "Using device: " << device << " (" << vnn::device_info(device).name << ")\n";

    const Corpus corpus = tokenize(read_corpus(cfg.data, "train_gpt"));
    std::cout << "Corpus: " << corpus.train.size() + corpus.val.size() << " characters from " << cfg.data
              << ", vocabulary " << corpus.chars.size() << ", " << corpus.train.size() << " train / "
              << corpus.val.size() << " val\n";

    vnn::manual_seed(cfg.seed);
    GPTConfig gc{int64_t(corpus.chars.size()), cfg.block, cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.dropout};
    GPT model(gc);
    if (!cfg.save_init.empty()) vnn::io::save(cfg.save_init, model->state_dict());
    model->to(device);
    int64_t n_params = 0;
    for (const auto& p : model->parameters()) n_params += p.numel();
    std::cout << "GPT: " << cfg.n_layer << " layers, " << cfg.n_head << " heads, " << cfg.n_embd << " dims, context "
              << cfg.block << ", " << double(n_params) / 1e6 << " M parameters (lm_head tied to wte)\n";

    std::shared_ptr<nn::Module> net = model.ptr();
    std::shared_ptr<nn::FullyShardedDataParallel> fsdp;
    if (cfg.fsdp) {  // one flat shard per unit for the matrices (decayed), one for the rest
      nn::FSDPOptions o;
      o.auto_wrap_policy = nn::wrap_module_types<BlockImpl>();
      o.param_group = [](const std::string&, const vnn::Tensor& p) { return p.dim() >= 2 ? 0 : 1; };
      net = fsdp = nn::fully_shard(model.ptr(), o);
    } else if (cfg.distributed) {
      net = std::make_shared<nn::DistributedDataParallel>(model.ptr());
    }
    // Weight decay on the matrices (weights of Linear and Embedding), none
    // on biases and LayerNorms, as nanoGPT's configure_optimizers.
    std::vector<vnn::Tensor> decay, no_decay;
    for (const auto& p : model->parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
    if (fsdp) decay = fsdp->shard_parameters(0), no_decay = fsdp->shard_parameters(1);
    auto opt_owner = std::make_unique<vnn::optim::AdamW>(
        std::vector<vnn::optim::ParamGroup>{vnn::optim::ParamGroup(decay, {{"weight_decay", cfg.weight_decay}}),
                                            vnn::optim::ParamGroup(no_decay, {{"weight_decay", 0.0}})},
        vnn::optim::AdamWOptions(cfg.lr).betas(0.9, 0.99));
    vnn::optim::AdamW& opt = *opt_owner;

    mkdir(cfg.out.c_str(), 0755);
    const std::string ckpt = cfg.out + "/checkpoint.safetensors";
    vnn::io::TrainingProgress progress;
    if (cfg.resume) {
      progress = fsdp ? fsdp->load_sharded_checkpoint(cfg.out + "/sharded", &opt)
                      : vnn::io::load_training_checkpoint(ckpt, *model, &opt, nullptr, &vnn::default_generator());
      std::cout << "Resumed from " << (fsdp ? cfg.out + "/sharded" : ckpt) << " at iteration " << progress.step << "\n";
    }

    const int64_t rows = cfg.batch / world;
    // Training time only (evaluations and checkpoints excluded), as the
    // PyTorch twin counts it.
    double train_secs = 0;
    int64_t tokens = 0;
    const int64_t first_iter = progress.step;
    double last_loss = 0, last_val = 0;
    // --stop-at: end early (after that iteration's checkpoint) on the full
    // run's schedule, as an interrupted run would.
    const int64_t last_iter = cfg.stop_at > 0 ? std::min(cfg.stop_at, cfg.max_iters) : cfg.max_iters;
    std::unique_ptr<vnn::profiler::Profile> prof;
    for (int64_t it = progress.step; it < last_iter; ++it) {
      if (cfg.profile > 0 && it == first_iter + 10) prof = std::make_unique<vnn::profiler::Profile>();
      if (prof && it == first_iter + 10 + cfg.profile) {
        prof->stop();
        vnn::profiler::TableOptions t;
        t.row_limit = 30;
        t.group_by_shape = true;  // which GEMM or reduction, not just which op
        std::cout << "\nProfile of iterations " << first_iter + 10 << " .. " << it << ":\n" << prof->table(t);
        prof.reset();
      }
      const auto step_start = std::chrono::steady_clock::now();
      for (auto& g : opt.param_groups()) g.set_lr(lr_at(cfg, it));
      auto [x, y] = get_batch(corpus.train, cfg.seed, 0, it, rank * rows, rows, cfg.block);
      opt.zero_grad();
      vnn::Tensor loss;
      {
        vnn::AutocastGuard autocast(device, vnn::kBFloat16, !cfg.amp.empty());
        vnn::Tensor logits = (*net)(x.to(device));
        loss = vnn::nn::cross_entropy(logits.view({-1, logits.size(-1)}), y.to(device).view({-1}));
      }
      loss.backward();
      if (fsdp) fsdp->clip_grad_norm_(cfg.grad_clip);
      else vnn::optim::clip_grad_norm_(model->parameters(), cfg.grad_clip);
      opt.step();
      tokens += cfg.batch * cfg.block;
      const bool eval_now = (it + 1) % cfg.eval_interval == 0 || it + 1 == last_iter;
      if ((it + 1) % 10 == 0 || eval_now) {  // (rank 0 speaks for all)
        last_loss = loss.item<double>();
        train_secs += std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count();
        const double secs = train_secs;
        const int width = 30, filled = int(double(width) * double(it + 1) / double(cfg.max_iters));
        if (rank == 0) std::printf("\riter %lld/%lld [%.*s%*s] loss %.4f  %.0f tokens/s  lr %.2e", (long long)(it + 1),
                    (long long)cfg.max_iters, filled, "==============================", width - filled, "",
                    last_loss, double(tokens) / secs, lr_at(cfg, it));
        std::fflush(stdout);
      } else {
        vnn::synchronize(device);
        train_secs += std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count();
      }
      if (eval_now) {
        auto [train_loss, val_loss] = estimate_loss(*net, corpus, cfg, device, rank, world);
        last_val = val_loss;
        if (rank == 0) std::printf("\niter %lld: train loss %.4f, val loss %.4f\n", (long long)(it + 1), train_loss, val_loss);
        progress.step = it + 1;
        progress.extra["val_loss"] = std::to_string(val_loss);
        if (fsdp) fsdp->save_sharded_checkpoint(cfg.out + "/sharded", &opt, progress);
        else if (rank == 0) vnn::io::save_training_checkpoint(ckpt, *model, &opt, nullptr, progress, &vnn::default_generator());
      }
    }
    const double secs = train_secs;
    if (rank == 0) std::printf("Trained %lld iterations in %.1f s of training steps (%.0f tokens/s%s); final val loss %.4f\n",
                (long long)(last_iter - first_iter), secs, double(tokens) / std::max(secs, 1e-9),
                world > 1 ? (", " + std::to_string(world) + " ranks").c_str() : "", last_val);
    if (fsdp && cfg.sample_tokens > 0) {  // rank 0 samples from a plain model holding the gathered state
      vnn::nn::StateDict full = fsdp->full_state_dict();
      opt_owner.reset(), net.reset(), fsdp.reset();
      if (rank == 0) {
        model = GPT(gc);
        model->to(device);
        model->load_state_dict(full);
      }
    }
    if (rank == 0 && cfg.sample_tokens > 0)
      std::cout << "Sample (temperature " << cfg.temperature << ", top-k " << cfg.top_k << "):\n"
                << generate(model, corpus, cfg, device, "\n") << "\n";
    if (cfg.distributed) vnn::distributed::destroy_process_group();
    return 0;
  } catch (const vnn::Error& e) {
    std::cerr << "\nerror: " << e.what() << "\n";
    return 1;
  }
}

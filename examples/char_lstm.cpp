// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Trains a character-level LSTM language model (Embedding -> 2-layer LSTM ->
// Linear, LibTorch's spelling) on English text from Debian's `fortunes`
// package, the GPT example's corpus, on the best device vnn finds; prints
// progress, writes a checkpoint at every evaluation and samples from the
// model at the end, carrying the LSTM's (h, c) state from character to
// character.
//
//   char_lstm [--device cpu:0] [--max-iters 600] [--batch-size 32] [--seq-len 64]
//             [--hidden 256] [--layers 2] [--dropout 0.1] [--lr 3e-3]
//             [--eval-interval 100] [--out DIR] [--resume] [--data DIR]
//             [--sample-chars 300] [--temperature 0.8] [--seed 1337]
//
// <out>/checkpoint.safetensors holds the model (PyTorch's keys:
// embed.weight, lstm.weight_ih_l0, ..., head.weight), Adam's state and the
// iteration; --resume continues from it.
#include <vnn/io/checkpoint.h>
#include <vnn/optim/clip.h>
#include <vnn/vnn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "fortunes_corpus.hpp"

namespace nn = vnn::nn;
namespace F = vnn::nn::functional;
using vnn::Tensor;

namespace {

struct Config {
  std::string device, data = "/usr/share/games/fortunes", out = "char-lstm-run";
  int64_t max_iters = 600, batch = 32, seq = 64, hidden = 256, layers = 2, eval_interval = 100, sample_chars = 300;
  double dropout = 0.1, lr = 3e-3, temperature = 0.8;
  uint64_t seed = 1337;
  bool resume = false;
};

Config parse(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw vnn::ValueError("char_lstm: " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--device") c.device = next();
    else if (a == "--data") c.data = next();
    else if (a == "--out") c.out = next();
    else if (a == "--max-iters") c.max_iters = std::stoll(next());
    else if (a == "--batch-size") c.batch = std::stoll(next());
    else if (a == "--seq-len") c.seq = std::stoll(next());
    else if (a == "--hidden") c.hidden = std::stoll(next());
    else if (a == "--layers") c.layers = std::stoll(next());
    else if (a == "--eval-interval") c.eval_interval = std::stoll(next());
    else if (a == "--sample-chars") c.sample_chars = std::stoll(next());
    else if (a == "--dropout") c.dropout = std::stod(next());
    else if (a == "--lr") c.lr = std::stod(next());
    else if (a == "--temperature") c.temperature = std::stod(next());
    else if (a == "--seed") c.seed = std::stoull(next());
    else if (a == "--resume") c.resume = true;
    else throw vnn::ValueError("char_lstm: unknown option " + a + " (see the comment at the top of char_lstm.cpp)");
  }
  return c;
}

// Embedding -> LSTM (batch_first) -> Linear over the vocabulary.
class CharLSTMImpl : public nn::Module {
 public:
  CharLSTMImpl(int64_t vocab, const Config& c) : Module("CharLSTM") {
    embed = register_module("embed", nn::Embedding(vocab, c.hidden));
    lstm = register_module(
        "lstm", nn::LSTM(nn::LSTMOptions(c.hidden, c.hidden).num_layers(c.layers).dropout(c.dropout).batch_first(true)));
    head = register_module("head", nn::Linear(c.hidden, vocab));
  }
  // Logits [B, T, vocab] of token ids [B, T], and the LSTM's state after them.
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> predict(
      const Tensor& ids, const std::optional<std::tuple<Tensor, Tensor>>& state = std::nullopt) {
    auto [out, next] = lstm(embed(ids), state);
    return {head(out), next};
  }
  nn::Embedding embed{nullptr};
  nn::LSTM lstm{nullptr};
  nn::Linear head{nullptr};
};

// B random windows of T + 1 characters: inputs and next-character targets.
std::pair<Tensor, Tensor> batch(const std::vector<int64_t>& data, const Config& c, std::mt19937_64& rng,
                                const vnn::Device& dev) {
  std::uniform_int_distribution<size_t> pick(0, data.size() - size_t(c.seq) - 2);
  std::vector<int64_t> x, y;
  for (int64_t b = 0; b < c.batch; ++b) {
    const size_t at = pick(rng);
    x.insert(x.end(), data.begin() + long(at), data.begin() + long(at) + c.seq);
    y.insert(y.end(), data.begin() + long(at) + 1, data.begin() + long(at) + 1 + c.seq);
  }
  return {vnn::from_vector<int64_t>(x, {c.batch, c.seq}, dev), vnn::from_vector<int64_t>(y, {c.batch, c.seq}, dev)};
}

double loss_of(CharLSTMImpl& m, const Tensor& x, const Tensor& y, int64_t vocab) {
  auto [logits, state] = m.predict(x);
  return F::cross_entropy(logits.reshape({-1, vocab}), y.reshape({-1})).item<double>();
}

}  // namespace

int main(int argc, char** argv) try {
  const Config cfg = parse(argc, argv);
  const vnn::Device dev = cfg.device.empty() ? vnn::best_device() : vnn::Device(cfg.device);
  const fortunes::Corpus corpus = fortunes::tokenize(fortunes::read_corpus(cfg.data, "char_lstm"));
  const int64_t vocab = int64_t(corpus.chars.size());
  std::printf("Corpus: %zu characters, vocabulary %lld; device %s\n", corpus.train.size() + corpus.val.size(),
              (long long)vocab, dev.str().c_str());
  vnn::manual_seed(cfg.seed);
  auto model = std::make_shared<CharLSTMImpl>(vocab, cfg);
  model->to(dev);
  std::printf("Model: %lld parameters\n", (long long)model->num_parameters());
  vnn::optim::Adam opt(model->parameters(), vnn::optim::AdamOptions(cfg.lr));
  ::mkdir(cfg.out.c_str(), 0755);
  const std::string ckpt = cfg.out + "/checkpoint.safetensors";
  vnn::io::TrainingProgress progress;
  if (cfg.resume) {
    progress = vnn::io::load_training_checkpoint(ckpt, *model, &opt);
    std::printf("Resumed from %s at iteration %lld\n", ckpt.c_str(), (long long)progress.step);
  }
  std::mt19937_64 rng(cfg.seed + uint64_t(progress.step));
  auto t0 = std::chrono::steady_clock::now();
  int64_t chars = 0;
  for (int64_t it = progress.step; it < cfg.max_iters; ++it) {
    model->train();
    auto [x, y] = batch(corpus.train, cfg, rng, dev);
    auto [logits, state] = model->predict(x);
    Tensor loss = F::cross_entropy(logits.reshape({-1, vocab}), y.reshape({-1}));
    opt.zero_grad();
    loss.backward();
    vnn::optim::clip_grad_norm_(model->parameters(), 1.0);
    opt.step();
    chars += cfg.batch * cfg.seq;
    if ((it + 1) % 10 == 0) {
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("\riter %lld/%lld: loss %.4f, %.0f chars/s", (long long)(it + 1), (long long)cfg.max_iters,
                  loss.item<double>(), double(chars) / secs);
      std::fflush(stdout);
    }
    if ((it + 1) % cfg.eval_interval == 0 || it + 1 == cfg.max_iters) {
      model->eval();
      vnn::NoGradGuard no_grad;
      double val = 0;
      std::mt19937_64 vrng(7);
      for (int k = 0; k < 4; ++k) {
        auto [vx, vy] = batch(corpus.val, cfg, vrng, dev);
        val += loss_of(*model, vx, vy, vocab) / 4;
      }
      progress.step = it + 1;
      progress.extra["val_loss"] = std::to_string(val);
      vnn::io::save_training_checkpoint(ckpt, *model, &opt, nullptr, progress);
      std::printf("\niter %lld: val loss %.4f; checkpoint %s\n", (long long)(it + 1), val, ckpt.c_str());
    }
  }
  // Sampling: one character at a time, the LSTM's state carried along.
  model->eval();
  vnn::NoGradGuard no_grad;
  vnn::Generator gen(cfg.seed);
  std::string text = "\n";
  std::optional<std::tuple<Tensor, Tensor>> state;
  int64_t id = int64_t(corpus.chars.find('\n'));
  for (int64_t k = 0; k < cfg.sample_chars; ++k) {
    auto [logits, next] = model->predict(vnn::from_vector<int64_t>({id}, {1, 1}, dev), state);
    state = next;
    Tensor probs = vnn::softmax(vnn::div(logits.reshape({vocab}), cfg.temperature), 0);
    id = vnn::multinomial(probs, 1, false, &gen).item<int64_t>();
    text += corpus.chars[size_t(id)];
  }
  std::printf("Sample:%s\n", text.c_str());
  return 0;
} catch (const std::exception& e) {
  std::cerr << e.what() << "\n";
  return 1;
}

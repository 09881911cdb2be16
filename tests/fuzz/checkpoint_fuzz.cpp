// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target for load_training_checkpoint into a fixed model, Adam and
// StepLR: only vnn errors may come out, and an input that throws must leave
// the model, optimizer, scheduler and generator exactly as they were.
#include <cstdlib>
#include <cstring>

#include "fuzz_support.hpp"
#include "vnn/vnn.h"

namespace {
using namespace vnn;

struct Target {
  nn::Sequential model{nullptr};
  std::unique_ptr<optim::Adam> opt;
  std::unique_ptr<optim::StepLR> sched;
  Generator rng{11};
  explicit Target(uint64_t seed, int steps) {
    Generator g(seed);
    model = nn::Sequential{nn::Linear(3, 2, true, &g), nn::ReLU(), nn::Linear(2, 2, false, &g)};
    opt = std::make_unique<optim::Adam>(model->parameters(), optim::AdamOptions(0.01));
    sched = std::make_unique<optim::StepLR>(*opt, 2, 0.5);
    Tensor x = randn({4, 3}, TensorOptions(), &g);
    for (int i = 0; i < steps; ++i) {
      opt->zero_grad();
      vnn::sum(model->forward(x)).backward();
      opt->step();
      sched->step();
    }
  }
  std::vector<double> snapshot() const {
    std::vector<double> out{double(rng.seed()), double(rng.offset())};
    auto add = [&](const std::vector<std::pair<std::string, Tensor>>& d) {
      for (auto& [k, t] : d)
        for (double v : t.to(kFloat64).contiguous().to_vector<double>()) out.push_back(v);
    };
    add(model->state_dict());
    add(opt->state_dict());
    add(sched->state_dict());
    return out;
  }
};

Target& target() {
  static Target t(2, 1);
  return t;
}
}  // namespace

std::vector<std::string> fuzz_seeds() {
  const std::string path = "vnn_fuzz_seed_" + std::to_string(::getpid()) + ".safetensors";
  std::vector<std::string> out;
  for (int steps : {0, 3}) {
    Target src(1, steps);
    src.rng.set_offset(uint64_t(steps) * 7);
    io::save_training_checkpoint(path, *src.model, src.opt.get(), src.sched.get(), {steps, steps, {{"loss", "0.5"}}},
                                 &src.rng);
    out.push_back(fuzz::slurp(path));
  }
  std::remove(path.c_str());
  return out;
}

bool fuzz_seed_ok(const std::string& seed) {
  Target fresh(3, 0);
  io::TrainingProgress p = io::load_training_checkpoint(
      fuzz::as_file(reinterpret_cast<const uint8_t*>(seed.data()), seed.size()), *fresh.model, fresh.opt.get(),
      fresh.sched.get(), &fresh.rng);
  return p.extra.count("loss") == 1;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Target& t = target();
  const std::string path = fuzz::as_file(data, size);
  const std::vector<double> before = t.snapshot();
  bool threw = true;
  fuzz::only_vnn_errors([&] {
    io::load_training_checkpoint(path, *t.model, t.opt.get(), t.sched.get(), &t.rng);
    threw = false;
  });
  if (threw) {
    // NaN-safe comparison: bit patterns must match.
    const std::vector<double> after = t.snapshot();
    if (after.size() != before.size() || std::memcmp(after.data(), before.data(), after.size() * sizeof(double)) != 0) {
      std::fprintf(stderr, "fuzz: a failed load_training_checkpoint changed the restored objects\n");
      std::abort();
    }
  }
  return 0;
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "vnn/detail/message.h"
#include "vnn/io/checkpoint.h"

#include <optional>

#include "io/safetensors_file.hpp"
#include "nn/state_load.hpp"
#include "vnn/error.h"
#include "vnn/io/safetensors.h"

namespace vnn::io {

namespace {
constexpr const char* kFormat = "vnn-training-checkpoint-1";

void put(TensorMap& out, const std::string& prefix, const std::vector<std::pair<std::string, Tensor>>& items) {
  for (auto& [k, v] : items) out[prefix + k] = v.contiguous();
}

std::vector<std::pair<std::string, Tensor>> take(const TensorMap& all, const std::string& prefix) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (auto& [k, v] : all)
    if (k.compare(0, prefix.size(), prefix) == 0) out.emplace_back(k.substr(prefix.size()), v);
  return out;
}

// Unsigned decimal digits and nothing else; std::stoll would accept " 5x",
// and std::stoull "-5" (wrapping it to 2^64 - 5).
bool parse_decimal(const std::string& s, uint64_t* out) {
  if (s.empty()) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    uint64_t d = uint64_t(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

[[noreturn]] void bad_field(const std::string& path, const std::string& key, const std::string& value, const char* want) {
  VNN_THROW(FormatError, "load_training_checkpoint: ", path, ": metadata '", key, "' = '", value, "' is not ", want,
            "; the checkpoint is corrupt or was not written by vnn::io::save_training_checkpoint");
}

int64_t count_field(const Metadata& meta, const std::string& key, const std::string& path) {
  auto it = meta.find(key);
  VNN_CHECK(FormatError, it != meta.end(), "load_training_checkpoint: ", path, " has no '", key, "' in its metadata");
  uint64_t v = 0;
  if (!parse_decimal(it->second, &v) || v > uint64_t(INT64_MAX))
    bad_field(path, key, it->second, "a non-negative 64-bit integer");
  return int64_t(v);
}

uint64_t u64_field(const Metadata& meta, const std::string& key, const std::string& path) {
  auto it = meta.find(key);
  VNN_CHECK(FormatError, it != meta.end(), "load_training_checkpoint: ", path, " has '",
            (key == "rng.seed" ? "rng.offset" : "rng.seed"), "' but no '", key, "' in its metadata");
  uint64_t v = 0;
  if (!parse_decimal(it->second, &v)) bad_field(path, key, it->second, "an unsigned 64-bit integer");
  return v;
}
}  // namespace

void save_training_checkpoint(const std::string& path, const nn::Module& model, const optim::Optimizer* optimizer,
                              const optim::LRScheduler* scheduler, const TrainingProgress& progress,
                              const Generator* rng, const amp::GradScaler* scaler) {
  TensorMap tensors;
  put(tensors, "model.", model.state_dict());
  if (optimizer) put(tensors, "optimizer.", optimizer->state_dict());
  if (scheduler) put(tensors, "scheduler.", scheduler->state_dict());
  if (scaler) put(tensors, "scaler.", scaler->state_dict());
  Metadata meta{{"format", kFormat},
                {"epoch", std::to_string(progress.epoch)},
                {"step", std::to_string(progress.step)}};
  if (rng) {
    meta["rng.seed"] = std::to_string(rng->seed());
    meta["rng.offset"] = std::to_string(rng->offset());
  }
  for (auto& [k, v] : progress.extra) meta["extra." + k] = v;
  save(path, tensors, meta);  // atomic: temporary file, fsync, rename
}

// Everything is read and validated first (file, metadata, RNG fields,
// every model/optimizer/scheduler entry, with device and dtype conversions
// done); only then does anything change, so a failed load leaves the model,
// optimizer, scheduler and generator as they were.
TrainingProgress load_training_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer* optimizer,
                                          optim::LRScheduler* scheduler, Generator* rng,
                                          amp::GradScaler* scaler) {
  detail::SafetensorsFile file(path, "load_training_checkpoint");
  const Metadata& meta = file.header().metadata;
  auto f = meta.find("format");
  if (f == meta.end() || f->second != kFormat)
    VNN_THROW(FormatError, "load_training_checkpoint: ", path, " is not a vnn training checkpoint (metadata format '",
              (f == meta.end() ? std::string("missing") : f->second), "', expected '", kFormat,
              "'); use vnn::io::load for plain tensor files");
  TrainingProgress p;
  p.epoch = count_field(meta, "epoch", path);
  p.step = count_field(meta, "step", path);
  const bool has_rng = meta.count("rng.seed") || meta.count("rng.offset");
  uint64_t seed = 0, offset = 0;
  if (has_rng) {
    seed = u64_field(meta, "rng.seed", path);
    offset = u64_field(meta, "rng.offset", path);
  }
  for (auto& [k, v] : meta)
    if (k.compare(0, 6, "extra.") == 0) p.extra[k.substr(6)] = v;

  TensorMap all = file.tensors(Device("cpu", 0));
  for (auto& [k, v] : all)
    if (k.compare(0, 6, "model.") != 0 && k.compare(0, 10, "optimizer.") != 0 && k.compare(0, 10, "scheduler.") != 0 &&
        k.compare(0, 7, "scaler.") != 0)
      VNN_THROW(FormatError, "load_training_checkpoint: ", path, " holds tensor '", k,
                "', which is no model., optimizer., scheduler. or scaler. entry");
  nn::detail::PreparedLoad model_state = nn::detail::prepare_load(model, take(all, "model."), true);
  optim::Optimizer::LoadedState opt_state;
  if (optimizer) opt_state = optimizer->check_state_dict(take(all, "optimizer."));
  optim::LRScheduler::LoadedState sched_state;
  if (scheduler) sched_state = scheduler->check_state_dict(take(all, "scheduler."));
  // Loaded into a copy first: a bad scaler entry must change nothing.
  std::optional<amp::GradScaler> scaler_state;
  if (scaler) {
    optim::StateDict sd = take(all, "scaler.");
    if (!sd.empty()) {
      scaler_state = *scaler;
      scaler_state->load_state_dict(sd);
    }
  }

  nn::detail::apply_load(model_state);
  if (optimizer) optimizer->apply_state_dict(std::move(opt_state));
  if (scheduler) scheduler->apply_state_dict(sched_state);
  if (scaler_state) *scaler = *scaler_state;
  if (rng && has_rng) {
    rng->manual_seed(seed);
    rng->set_offset(offset);
  }
  return p;
}

}  // namespace vnn::io

#include "vnn/io/checkpoint.h"

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

int64_t int_field(const Metadata& meta, const std::string& key, const std::string& path) {
  auto it = meta.find(key);
  if (it == meta.end()) throw FormatError("load_training_checkpoint: " + path + " has no '" + key + "' in its metadata");
  try {
    return std::stoll(it->second);
  } catch (const std::exception&) {
    throw FormatError("load_training_checkpoint: " + path + ": metadata '" + key + "' = '" + it->second +
                      "' is not an integer");
  }
}
}  // namespace

void save_training_checkpoint(const std::string& path, const nn::Module& model, const optim::Optimizer* optimizer,
                              const optim::LRScheduler* scheduler, const TrainingProgress& progress,
                              const Generator* rng) {
  TensorMap tensors;
  put(tensors, "model.", model.state_dict());
  if (optimizer) put(tensors, "optimizer.", optimizer->state_dict());
  if (scheduler) put(tensors, "scheduler.", scheduler->state_dict());
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

TrainingProgress load_training_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer* optimizer,
                                          optim::LRScheduler* scheduler, Generator* rng) {
  Metadata meta = load_metadata(path);
  auto f = meta.find("format");
  if (f == meta.end() || f->second != kFormat)
    throw FormatError("load_training_checkpoint: " + path + " is not a vnn training checkpoint (metadata format '" +
                      (f == meta.end() ? std::string("missing") : f->second) + "', expected '" + kFormat +
                      "'); use vnn::io::load for plain tensor files");
  TensorMap all = load(path);
  model.load_state_dict(take(all, "model."));
  if (optimizer) optimizer->load_state_dict(take(all, "optimizer."));
  if (scheduler) scheduler->load_state_dict(take(all, "scheduler."));
  TrainingProgress p;
  p.epoch = int_field(meta, "epoch", path);
  p.step = int_field(meta, "step", path);
  if (rng && meta.count("rng.seed")) {
    rng->manual_seed(std::stoull(meta["rng.seed"]));
    rng->set_offset(std::stoull(meta["rng.offset"]));
  }
  for (auto& [k, v] : meta)
    if (k.compare(0, 6, "extra.") == 0) p.extra[k.substr(6)] = v;
  return p;
}

}  // namespace vnn::io

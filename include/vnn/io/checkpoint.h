// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Training checkpoints: model, optimizer, scheduler, random generator and
// progress in one safetensors file (written atomically), so that a resumed
// run continues exactly where the saved one stopped.
//
//   vnn::io::save_training_checkpoint("ckpt.safetensors", *model, &opt, &sched, {epoch, step});
//   auto progress = vnn::io::load_training_checkpoint("ckpt.safetensors", *model, &opt, &sched);
//
// Keys: "model.<name>", "optimizer.<key>", "scheduler.<key>", "scaler.<key>"
// (a GradScaler's state, when one is given); metadata:
// format, epoch, step, rng.seed, rng.offset and "extra.<key>" strings.
#pragma once
#include <map>
#include <string>

#include "vnn/amp.h"
#include "vnn/nn/module.h"
#include "vnn/optim/optimizer.h"
#include "vnn/optim/scheduler.h"
#include "vnn/random.h"

namespace vnn::io {

/// Where a training run stands: epochs completed, steps taken, free-form extras.
struct TrainingProgress {
  /// Epochs completed.
  int64_t epoch = 0;  // epochs completed
  /// Optimizer steps taken.
  int64_t step = 0;   // optimizer steps taken
  /// Free-form strings saved with the checkpoint (metrics, config).
  std::map<std::string, std::string> extra;  // free-form (metrics, config)
};

/// Writes model, optimizer, scheduler, GradScaler (each optional) state, progress and RNG state to one safetensors file, atomically.
void save_training_checkpoint(const std::string& path, const nn::Module& model,
                              const optim::Optimizer* optimizer = nullptr,
                              const optim::LRScheduler* scheduler = nullptr, const TrainingProgress& progress = {},
                              const Generator* rng = &default_generator(), const amp::GradScaler* scaler = nullptr);

// Restores into already-built objects of the same structure (parameters land
// on each parameter's current device: move the model first, then load).
// Throws FormatError for a file that is not a vnn training checkpoint.
/// Restores what save_training_checkpoint wrote into the given objects, all or nothing; returns the progress.
TrainingProgress load_training_checkpoint(const std::string& path, nn::Module& model,
                                          optim::Optimizer* optimizer = nullptr,
                                          optim::LRScheduler* scheduler = nullptr,
                                          Generator* rng = &default_generator(), amp::GradScaler* scaler = nullptr);

}  // namespace vnn::io

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Module::load_state_dict in two halves, so that a restore of several
// objects (load_training_checkpoint) can check every part before changing
// any: prepare_load validates keys and shapes and builds the new tensors
// (device and dtype conversions included, the only steps that can fail);
// apply_load only swaps data pointers in.
#pragma once
#include <utility>
#include <vector>

#include "vnn/nn/module.h"

namespace vnn::nn::detail {

struct PreparedLoad {
  std::vector<std::pair<Tensor, Tensor>> assign;  // (the module's tensor, its new data)
};

PreparedLoad prepare_load(const Module& module, const StateDict& state, bool strict);
void apply_load(const PreparedLoad& prepared);

}  // namespace vnn::nn::detail

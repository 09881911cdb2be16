// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// PadMode's PyTorch name ("reflect"), for messages of F::pad and the padding layers.
#pragma once
#include "vnn/nn/functional.h"

namespace vnn::nn::detail {

inline const char* pad_mode_name(PadMode m) {
  switch (m) {
    case PadMode::constant: return "constant";
    case PadMode::reflect: return "reflect";
    case PadMode::replicate: return "replicate";
    case PadMode::circular: return "circular";
  }
  return "?";
}

}  // namespace vnn::nn::detail

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// "(h, w)" for the messages of the 2-D ops (conv.cpp, pooling.cpp).
#pragma once
#include <string>

#include "vnn/nn_ops.h"

namespace vnn::ops_text {

inline std::string pair_str(Size2 s) { return "(" + std::to_string(s.h) + ", " + std::to_string(s.w) + ")"; }

}  // namespace vnn::ops_text

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the N-d convolution layers (conv3d.cpp, conv_transpose.cpp,
// pooling3d.cpp) share: their sizes as one vector per spatial dim, the
// batched / unbatched forms and the messages' "(a, b, c)" text.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/nn/conv3d.h"
#include "vnn/nn/init.h"
#include "vnn/nn/module.h"

namespace vnn::nn::conv_nd {

/// One entry per spatial dim.
using Dims = std::vector<int64_t>;
inline Dims dims(int64_t v) { return {v}; }
inline Dims dims(Size2 s) { return {s.h, s.w}; }
inline Dims dims(Size3 s) { return {s.d, s.h, s.w}; }

/// "(a, b, c)".
inline std::string text(const Dims& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

/// [C, spatial...] -> [1, C, spatial...] for `n` spatial dims; *unbatched says which it was.
inline Tensor batched(const Tensor& x, size_t n, const char* op, bool* unbatched) {
  VNN_CHECK(ValueError, x.defined(), op, ": argument 'input' is undefined");
  const int64_t want = int64_t(n) + 2;
  VNN_CHECK(ShapeError, x.dim() == want || x.dim() == want - 1, op, ": expected a ", want - 1, "-D (unbatched) or ",
            want, "-D (batched) input, got ", x.sizes());
  *unbatched = x.dim() == want - 1;
  return *unbatched ? x.unsqueeze(0) : x;
}
inline Tensor unbatch(const Tensor& y, bool unbatched) { return unbatched ? y.squeeze(0) : y; }

/// The pads of F::pad (pairs from the last dim backwards) for per-dim (before, after) sides.
inline std::vector<int64_t> pad_pairs(const Dims& before, const Dims& after) {
  std::vector<int64_t> p;
  for (size_t i = before.size(); i-- > 0;) p.push_back(before[i]), p.push_back(after[i]);
  return p;
}

/// Checks that every entry is positive (ValueError naming op and argument otherwise).
inline void check_positive(const char* op, const char* arg, const Dims& v) {
  for (int64_t x : v) VNN_CHECK(ValueError, x > 0, op, ": ", arg, " must be positive, got ", text(v));
}

/// Registers a convolution's parameters on m as PyTorch initialises them: "weight" of `sizes` (kaiming_uniform,
/// a = sqrt(5)) and, when with_bias, "bias" [channels] uniform in +-1/sqrt(fan_in); *bias undefined otherwise.
inline void register_conv_parameters(Module& m, const Shape& sizes, int64_t channels, bool with_bias, Generator* gen,
                                     Tensor* weight, Tensor* bias) {
  Tensor w = empty(sizes);
  init::kaiming_uniform_(w, std::sqrt(5.0), "fan_in", "leaky_relu", gen);
  *weight = m.register_parameter("weight", w);
  *bias = Tensor();
  if (!with_bias) return;
  Tensor b = empty({channels});
  const double bound = 1.0 / std::sqrt(double(init::fan_in_out(w).first));
  init::uniform_(b, -bound, bound, gen);
  *bias = m.register_parameter("bias", b);
}

}  // namespace vnn::nn::conv_nd

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The padding layers of include/vnn/nn/padding.h: a dim check, then
// functional::pad (index_select / cat, so every device and autograd).
#include "vnn/nn/padding.h"

#include <string>
#include <vector>

#include "vnn/detail/message.h"
#include "vnn/error.h"

#include "nn/pad_mode.hpp"

namespace vnn::nn {

template <size_t D>
PadArray<D>::PadArray(std::vector<int64_t> v) : values(std::move(v)) {
  VNN_CHECK(ValueError, values.size() == 2 * D, "padding: a ", D, "-d padding layer takes one number or ", 2 * D,
            " pads ((before, after) pairs from the last dim backwards), got ", values.size());
}
template struct PadArray<1>;
template struct PadArray<2>;
template struct PadArray<3>;

namespace detail {

Tensor pad_layer_forward(const Tensor& x, const char* layer, int D, const std::vector<int64_t>& pads, PadMode mode,
                         double value) {
  VNN_CHECK(ValueError, x.defined(), layer, ": the input is an undefined tensor");
  VNN_CHECK(ShapeError, x.dim() == D + 1 || x.dim() == D + 2, layer, ": expects a ", D + 1, "-D (unbatched) or ",
            D + 2, "-D (batched) input, got shape ", x.sizes());
  if (mode != PadMode::constant)
    for (size_t i = 0; i < pads.size(); ++i) {
      const int d = x.dim() - 1 - int(i / 2);
      VNN_CHECK(ValueError, pads[i] >= 0, layer, ": ", pad_mode_name(mode), " padding takes no negative pads, got ",
                pads[i]);
      if (mode == PadMode::reflect)
        VNN_CHECK(ValueError, pads[i] < x.size(d), layer, ": padding ", pads[i], " must be less than the size ",
                  x.size(d), " of dim ", d, " of input ", x.sizes(), " (reflection does not repeat the edge); pad "
                  "less, or use ReplicationPad");
      if (mode == PadMode::circular)
        VNN_CHECK(ValueError, pads[i] <= x.size(d), layer, ": padding ", pads[i], " must be at most the size ",
                  x.size(d), " of dim ", d, " of input ", x.sizes(), " (circular padding wraps once)");
    }
  return functional::pad(x, functional::PadFuncOptions(pads).mode(mode).value(value));
}

std::string pad_layer_describe(const std::string& layer, const std::vector<int64_t>& pads, PadMode mode,
                               double value) {
  std::string s = layer + "((";
  for (size_t i = 0; i < pads.size(); ++i) s += (i ? ", " : "") + std::to_string(pads[i]);
  s += ")";
  if (mode == PadMode::constant && value != 0.0) s += ::vnn::detail::str_cat(", value=", value);
  return s + ")";
}

}  // namespace detail
}  // namespace vnn::nn

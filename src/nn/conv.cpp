// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "vnn/detail/message.h"
#include "vnn/nn/conv.h"

#include <cmath>

#include "vnn/error.h"
#include "vnn/nn/init.h"

namespace vnn::nn {

namespace {
std::string pair_str(Size2 s) { return "(" + std::to_string(s.h) + ", " + std::to_string(s.w) + ")"; }
}  // namespace

Conv2dImpl::Conv2dImpl(const Conv2dOptions& opt, Generator* gen) : Cloneable("Conv2d"), options(opt) {
  int64_t in = opt.in_channels(), out = opt.out_channels(), groups = opt.groups();
  Size2 k = opt.kernel_size();
  if (in <= 0 || out <= 0 || k.h <= 0 || k.w <= 0 || groups <= 0)
    VNN_THROW(ValueError, "Conv2d: channels, kernel size and groups must be positive, got in_channels=", in,
              ", out_channels=", out, ", kernel_size=", pair_str(k), ", groups=", groups);
  if (in % groups || out % groups)
    VNN_THROW(ValueError, "Conv2d: in_channels (", in, ") and out_channels (", out,
              ") must both be divisible by groups (", groups, ")");
  build(gen);
}

void Conv2dImpl::build(Generator* gen) {
  Size2 k = options.kernel_size();
  Tensor w = empty({options.out_channels(), options.in_channels() / options.groups(), k.h, k.w});
  init::kaiming_uniform_(w, std::sqrt(5.0), "fan_in", "leaky_relu", gen);
  weight = register_parameter("weight", w);
  bias = Tensor();
  if (options.bias()) {
    Tensor b = empty({options.out_channels()});
    double bound = 1.0 / std::sqrt(double(init::fan_in_out(w).first));
    init::uniform_(b, -bound, bound, gen);
    bias = register_parameter("bias", b);
  }
}

Tensor Conv2dImpl::forward(const Tensor& x) {
  return detail::batch_of_one(x, [&](const Tensor& b) {
    return conv2d(b, weight, bias, options.stride(), options.padding(), options.dilation(), options.groups());
  });
}

std::string Conv2dImpl::describe() const {
  return "Conv2d(" + std::to_string(options.in_channels()) + ", " + std::to_string(options.out_channels()) +
         ", kernel_size=" + pair_str(options.kernel_size()) + ", stride=" + pair_str(options.stride()) +
         ", padding=" + pair_str(options.padding()) +
         (options.groups() != 1 ? ", groups=" + std::to_string(options.groups()) : "") + ")";
}

std::string MaxPool2dImpl::describe() const {
  Size2 k = options.kernel_size(), s = options.stride();
  return "MaxPool2d(kernel_size=" + pair_str(k) + ", stride=" + pair_str(s.h ? s : k) + ")";
}
std::string AvgPool2dImpl::describe() const {
  Size2 k = options.kernel_size(), s = options.stride();
  return "AvgPool2d(kernel_size=" + pair_str(k) + ", stride=" + pair_str(s.h ? s : k) + ")";
}

}  // namespace vnn::nn

#include "vnn/nn/conv.h"

#include <cmath>

#include "vnn/error.h"
#include "vnn/nn/init.h"

namespace vnn::nn {

namespace {
std::string pair_str(Size2 s) { return "(" + std::to_string(s.h) + ", " + std::to_string(s.w) + ")"; }
}  // namespace

Conv2d::Conv2d(int64_t in, int64_t out, Size2 kernel, Conv2dOptions opt, Generator* gen)
    : Module("Conv2d"), in_(in), out_(out), kernel_(kernel), opt_(opt) {
  if (in <= 0 || out <= 0 || kernel.h <= 0 || kernel.w <= 0 || opt.groups <= 0)
    throw ValueError("Conv2d: channels, kernel size and groups must be positive");
  if (in % opt.groups || out % opt.groups)
    throw ValueError("Conv2d: in_channels (" + std::to_string(in) + ") and out_channels (" + std::to_string(out) +
                     ") must both be divisible by groups (" + std::to_string(opt.groups) + ")");
  Tensor w = empty({out, in / opt.groups, kernel.h, kernel.w});
  init::kaiming_uniform_(w, std::sqrt(5.0), "fan_in", "leaky_relu", gen);
  weight = register_parameter("weight", w);
  if (opt.bias) {
    Tensor b = empty({out});
    double bound = 1.0 / std::sqrt(double(init::fan_in_out(w).first));
    init::uniform_(b, -bound, bound, gen);
    bias = register_parameter("bias", b);
  }
}

Tensor Conv2d::forward(const Tensor& x) {
  return conv2d(x, weight, bias, opt_.stride, opt_.padding, opt_.dilation, opt_.groups);
}

std::string Conv2d::describe() const {
  return "Conv2d(" + std::to_string(in_) + ", " + std::to_string(out_) + ", kernel_size=" + pair_str(kernel_) +
         ", stride=" + pair_str(opt_.stride) + ", padding=" + pair_str(opt_.padding) +
         (opt_.groups != 1 ? ", groups=" + std::to_string(opt_.groups) : "") + ")";
}

std::string MaxPool2d::describe() const {
  return "MaxPool2d(kernel_size=" + pair_str(k_) + ", stride=" + pair_str(s_.h ? s_ : k_) + ")";
}
std::string AvgPool2d::describe() const {
  return "AvgPool2d(kernel_size=" + pair_str(k_) + ", stride=" + pair_str(s_.h ? s_ : k_) + ")";
}

}  // namespace vnn::nn

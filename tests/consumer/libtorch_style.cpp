// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A LibTorch-style program built against the installed vnn package: the
// port in docs/from-libtorch.md, line for line, trained a few steps on
// synthetic data. Checks its own results and exits non-zero on a mismatch.
#include <vnn/vnn.h>

#include <cstdio>
#include <iostream>

namespace nn = vnn::nn;
using namespace vnn::indexing;

struct NetImpl : nn::Cloneable<NetImpl> {
  NetImpl() : Cloneable("Net") { reset(); }
  void reset() override {
    features = register_module("features", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 8, 3).padding(1)),
                                                          nn::ReLU(), nn::MaxPool2d(2), nn::Flatten()));
    fc1 = register_module("fc1", nn::Linear(8 * 4 * 4, 32));
    fc2 = register_module("fc2", nn::Linear(nn::LinearOptions(32, 3).bias(false)));
  }
  vnn::Tensor forward(const vnn::Tensor& x) { return fc2(vnn::relu(fc1(features(x)))); }
  nn::Sequential features{nullptr};
  nn::Linear fc1{nullptr}, fc2{nullptr};
};
VNN_MODULE(Net);

#define EXPECT(cond)                                                  \
  do {                                                                \
    if (!(cond)) {                                                    \
      std::cerr << "libtorch_style: check failed: " #cond "\n";      \
      return 1;                                                       \
    }                                                                 \
  } while (0)

int main() {
  try {
    vnn::manual_seed(0);
    vnn::Device device = vnn::best_accelerator().value_or(vnn::Device("cpu"));
    std::cout << "device " << device << (device.is_accelerator() ? " (accelerator)" : "") << "\n";

    Net model;
    model->to(device);
    vnn::optim::Adam opt(model->parameters(), vnn::optim::AdamOptions(1e-2));
    vnn::Tensor data = vnn::randn({16, 1, 8, 8}, device);
    vnn::Tensor target = vnn::randint(0, 3, {16}, device);  // int64, on device
    EXPECT(target.dtype() == vnn::kInt64);
    EXPECT(data.device() == model->parameters()[0].device());

    double first = 0, last = 0;
    for (int step = 0; step < 30; ++step) {
      opt.zero_grad();
      vnn::Tensor loss = nn::functional::cross_entropy(model(data), target);
      loss.backward();
      opt.step();
      (step == 0 ? first : last) = loss.item<double>();
    }
    std::cout << "loss " << first << " -> " << last << "\n";
    EXPECT(last < first);

    vnn::Tensor x = vnn::arange(0, 12, 1, device).view({3, 4});
    x += 1;
    x[0][-1] *= 10;
    std::cout << "x.sizes() = " << x.sizes() << ", dtype " << x.dtype() << "\n";
    EXPECT(x.index({Slice(0, 2), -1}).to(vnn::Device("cpu")).to_vector<int64_t>() == std::vector<int64_t>({40, 8}));
    EXPECT(x.t()[3][0].item<int64_t>() == 40);

    auto copy = std::dynamic_pointer_cast<NetImpl>(model->clone(vnn::Device("cpu")));
    EXPECT(copy && copy->fc1->weight.device() == vnn::Device("cpu"));
    vnn::io::save("libtorch_style.safetensors", model->state_dict());
    Net restored;
    restored->load_state_dict(vnn::io::load("libtorch_style.safetensors", device));
    vnn::Tensor a = model(data), b = restored(data);
    EXPECT(vnn::max(vnn::abs(vnn::sub(a, b))).item<double>() == 0);
    std::cout << "libtorch_style ok\n";
    return 0;
  } catch (const vnn::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

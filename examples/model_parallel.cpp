// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Model parallelism by hand: the first layers on one device, the last on
// another, the activations moved between them in forward(), and one
// optimizer over the parameters of both. Autograd follows the .to() back
// across devices, so backward needs nothing special.
//
//   model_parallel [--devices cpu:0,opencl:0] [--steps 60]
//
// Without --devices it takes the first two devices vnn finds (the same one
// twice on a machine with one). It then trains the same model, with the
// same initial weights, on the first device alone, and prints both losses:
// splitting the model changes where the work runs, not the result.
#include <vnn/vnn.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace {

using namespace vnn;

// Two stages, each placed on its own device by place().
struct TwoStageNet : nn::Module {
  nn::Sequential stage0{nullptr}, stage1{nullptr};
  Device dev0 = Device("cpu", 0), dev1 = Device("cpu", 0);

  TwoStageNet() : nn::Module("TwoStageNet") {
    stage0 = register_module("stage0", nn::Sequential{nn::Linear(20, 64), nn::ReLU(), nn::Linear(64, 64), nn::ReLU()});
    stage1 = register_module("stage1", nn::Sequential{nn::Linear(64, 32), nn::ReLU(), nn::Linear(32, 4)});
  }
  void place(const Device& a, const Device& b) {
    dev0 = a;
    dev1 = b;
    stage0->to(a);
    stage1->to(b);
  }
  // The input may live anywhere; the output lives on dev1.
  Tensor forward(const Tensor& x) {
    Tensor h = stage0(x.to(dev0));
    return stage1(h.to(dev1));  // the activation crosses devices here
  }
};

// Trains `net` full-batch for `steps`; returns the loss of every step.
std::vector<double> train(TwoStageNet& net, const Tensor& x, const Tensor& y, int steps, bool verbose) {
  optim::Adam opt(net.parameters(), optim::AdamOptions(2e-3));  // parameters of both devices
  Tensor target = y.to(net.dev1);  // the loss is computed where the output is
  std::vector<double> losses;
  for (int step = 1; step <= steps; ++step) {
    opt.zero_grad();
    Tensor loss = nn::cross_entropy(net.forward(x), target);
    loss.backward();
    opt.step();
    losses.push_back(loss.item());
    if (verbose && (step == 1 || step % 20 == 0)) std::printf("  step %3d  loss %.5f\n", step, losses.back());
  }
  return losses;
}

double accuracy(TwoStageNet& net, const Tensor& x, const Tensor& y) {
  autograd::NoGradGuard no_grad;
  Tensor pred = argmax(net.forward(x), 1).to(Device("cpu", 0));
  return sum(eq(pred, y).to(kFloat32)).item() / double(y.numel());
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string devices;
    int steps = 60;
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--devices" && i + 1 < argc) devices = argv[++i];
      else if (a == "--steps" && i + 1 < argc) steps = std::stoi(argv[++i]);
      else {
        std::cout << "usage: model_parallel [--devices DEV0,DEV1] [--steps N]\n";
        return a == "--help" ? 0 : 2;
      }
    }
    Device d0 = Device("cpu", 0), d1 = Device("cpu", 0);
    if (!devices.empty()) {
      auto comma = devices.find(',');
      if (comma == std::string::npos) throw ValueError("--devices wants two devices, DEV0,DEV1; got '" + devices + "'");
      d0 = Device(devices.substr(0, comma));
      d1 = Device(devices.substr(comma + 1));
    } else {
      auto all = vnn::devices();
      d0 = all.at(0).device;
      d1 = all.size() > 1 ? all[1].device : d0;
    }
    for (const Device& d : {d0, d1})
      if (!is_available(d)) {  // 77: what ctest counts as skipped
        std::cout << "SKIP: no device " << d << " here\n";
        return 77;
      }
    std::cout << "stage0 on " << d0 << ", stage1 on " << d1 << "\n";

    // A synthetic 4-class problem: the class is the argmax of a fixed
    // linear map of the input.
    manual_seed(0);
    Tensor x = randn({512, 20});
    Tensor y = argmax(matmul(x, randn({20, 4})), 1);

    TwoStageNet split;
    split.place(d0, d1);
    TwoStageNet whole;
    whole.load_state_dict(split.state_dict());  // the same initial weights
    whole.place(d0, d0);

    std::cout << "split across " << d0 << " and " << d1 << ":\n";
    std::vector<double> split_losses = train(split, x, y, steps, true);
    std::vector<double> whole_losses = train(whole, x, y, steps, false);
    double worst = 0;
    for (size_t i = 0; i < split_losses.size(); ++i)
      worst = std::max(worst, std::fabs(split_losses[i] - whole_losses[i]));
    double acc = accuracy(split, x, y);
    std::printf("final loss %.6f split, %.6f all on %s (largest difference over %d steps %.2e); "
                "training accuracy %.3f\n",
                split_losses.back(), whole_losses.back(), d0.str().c_str(), steps, worst, acc);
    // Different devices may sum in different orders: agreement to float32
    // rounding, not bit for bit.
    if (!(worst <= 1e-3)) {
      std::cerr << "error: the split model trained to a different loss than the model on one device\n";
      return 1;
    }
    return 0;
  } catch (const vnn::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

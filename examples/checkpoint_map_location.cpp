// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Save a model trained on one device, load it onto another: "a model
// trained on the GPU, evaluated on the CPU" (torch.load's map_location).
#include <vnn/vnn.h>

#include <iostream>

int main() {
  try {
    vnn::Device from = vnn::best_device(), to("cpu");
    for (const auto& d : vnn::devices())
      if (d.device != from) to = d.device;  // any other device, cpu:0 when it is the only one
    std::cout << "training on " << from << ", loading onto " << to << "\n";

    namespace nn = vnn::nn;
    auto make = [] { return nn::Sequential(nn::Linear(4, 16), nn::ReLU(), nn::Linear(16, 2)); };
    nn::Sequential model = make();
    model->to(from);
    vnn::optim::SGD opt(model->parameters(), vnn::optim::SGDOptions(0.1));
    vnn::Tensor x = vnn::randn({64, 4}, from);
    vnn::Tensor y = vnn::gt(vnn::sum(x, 1), 0.0).to(vnn::kInt64);  // is the sum positive?
    for (int i = 0; i < 50; ++i) {
      opt.zero_grad();
      vnn::Tensor loss = nn::cross_entropy(model(x), y);
      loss.backward();
      opt.step();
    }
    const std::string path = "map_location_demo.safetensors";
    vnn::io::save_training_checkpoint(path, *model, &opt);

    // Plain tensors can be loaded straight onto a device ...
    vnn::StateDict tensors = vnn::io::load(path, to);
    std::cout << tensors.size() << " tensors loaded onto " << tensors[0].second.device() << "\n";
    // ... and a model is built where it will run, then filled.
    nn::Sequential restored = make();
    restored->to(to);
    vnn::io::load_training_checkpoint(path, *restored);
    // A state dict goes to a file and back with no conversion (map_location: to).
    vnn::io::save("map_location_weights.safetensors", model->state_dict());
    nn::Sequential again = make();
    again->to(to);
    again->load_state_dict(vnn::io::load("map_location_weights.safetensors", to));
    double a = nn::accuracy(model(x), y);
    double b = nn::accuracy(restored(x.to(to)), y.to(to));
    double c = nn::accuracy(again(x.to(to)), y.to(to));
    std::cout << "accuracy on " << from << ": " << a << ", restored on " << to << ": " << b << "\n";
    std::remove(path.c_str());
    std::remove("map_location_weights.safetensors");
    return a == b && a == c ? 0 : 1;
  } catch (const vnn::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

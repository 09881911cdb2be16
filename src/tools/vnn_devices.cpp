// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn-devices: lists the devices vnn can run on (like clinfo -l or
// nvidia-smi -L). --verbose adds properties and the backend report,
// --json prints the same for scripts. --tune (re)runs the OpenCL plugin's
// per-device auto-tuning and rewrites its cache (VNN_OPENCL_TUNE=1).
// --warmup DEVICE compiles and tunes ahead of time what a first training
// step needs there (OpenCL compiles its kernels at run time). --version
// prints the headers' and the library's version and the plugin ABI version.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>

#include "vnn/vnn.h"

namespace {

// One training step, twice (the second as a check), of the lesson's CNN
// (the main example's model, a batch of 64 28x28 images) and, at the same
// time on a second thread (their program builds run in parallel), of a
// transformer block (batch 8, T = 64, C = 128, 4 heads) on dev. With
// VNN_OPENCL_TUNE_AFTER=0 the OpenCL plugin runs its device timing first
// (where its cache has none) and times every GEMM shape and per-shape choice
// at first use: the programs land in vnn's cache (and the driver's own,
// PoCL's), the choices in the tuning file.
void train_twice(const vnn::Device& dev, vnn::nn::Module& model, const vnn::Tensor& x, const vnn::Tensor& y) {
  model.to(dev);
  vnn::optim::Adam opt(model.parameters(), vnn::optim::AdamOptions(1e-3));
  for (int step = 0; step < 2; ++step) {
    opt.zero_grad();
    vnn::Tensor out = model(x);
    vnn::Tensor loss = vnn::nn::cross_entropy(out.view({-1, out.size(-1)}), y);
    loss.backward();
    opt.step();
    vnn::synchronize(dev);
  }
}

int warmup(const std::string& spec) {
  namespace nn = vnn::nn;
  const vnn::Device dev(spec);
  if (!vnn::is_available(dev)) {
    std::cerr << "vnn-devices: --warmup: no device " << spec << "\n";
    return 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  vnn::Generator g(1), h(2);
  const auto i64 = vnn::TensorOptions().with(vnn::kInt64);
  nn::Sequential cnn{nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1), &g), nn::ReLU(), nn::MaxPool2d(2),
                     nn::BatchNorm2d(32), nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1), &g), nn::ReLU(),
                     nn::MaxPool2d(2), nn::BatchNorm2d(64), nn::Flatten(), nn::Linear(64 * 7 * 7, 128, true, &g),
                     nn::ReLU(), nn::Linear(128, 10, true, &g)};
  nn::Sequential block{
      nn::TransformerEncoderLayer(
          nn::TransformerEncoderLayerOptions(128, 4).dim_feedforward(512).batch_first(true).norm_first(true)),
      nn::Linear(128, 96, true, &h)};
  const vnn::Tensor x = vnn::randn({64, 1, 28, 28}, {}, &g).to(dev), y = vnn::randint(0, 10, {64}, i64, &g).to(dev);
  const vnn::Tensor s = vnn::randn({8, 64, 128}, {}, &h).to(dev), t = vnn::randint(0, 96, {8 * 64}, i64, &h).to(dev);
  std::string failed;
  std::thread second([&] {
    try {
      train_twice(dev, *block, s, t);
    } catch (const vnn::Error& e) {
      failed = e.what();
    }
  });
  try {
    train_twice(dev, *cnn, x, y);
  } catch (...) {
    second.join();
    throw;
  }
  second.join();
  if (!failed.empty()) throw vnn::Error(failed);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << dev << ": warmed up in " << secs << " s (one training step of a CNN and of a transformer block)\n";
  return 0;
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string q(const std::string& s) { return "\"" + json_escape(s) + "\""; }

std::string gib(uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f GiB", double(b) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

void print_json() {
  std::cout << "{\n  \"best\": " << q(vnn::devices().empty() ? "" : vnn::best_device().str()) << ",\n";
  std::cout << "  \"devices\": [";
  bool first = true;
  for (const auto& d : vnn::devices()) {
    std::cout << (first ? "\n" : ",\n") << "    {\"device\": " << q(d.device.str()) << ", \"plugin\": " << q(d.plugin)
              << ", \"name\": " << q(d.name) << ", \"vendor\": " << q(d.vendor) << ", \"type\": " << q(vnn::name(d.type))
              << ", \"compute_units\": " << d.compute_units << ", \"total_memory\": " << d.total_memory
              << ", \"free_memory\": " << d.free_memory << ", \"driver_version\": " << q(d.driver_version)
              << ", \"arch\": " << q(d.arch) << ", \"pci_id\": " << q(d.pci_id) << ", \"uuid\": " << q(d.uuid)
              << ", \"properties\": {";
    bool pf = true;
    for (auto& [k, v] : d.properties) {
      std::cout << (pf ? "" : ", ") << q(k) << ": " << q(v);
      pf = false;
    }
    std::cout << "}}";
    first = false;
  }
  std::cout << "\n  ],\n  \"backends\": [";
  first = true;
  for (const auto& r : vnn::backend_report()) {
    std::cout << (first ? "\n" : ",\n") << "    {\"backend\": " << q(r.backend) << ", \"library\": " << q(r.library)
              << ", \"loaded\": " << (r.loaded ? "true" : "false") << ", \"status\": " << q(r.status)
              << ", \"devices\": " << r.device_count << ", \"detail\": " << q(r.detail)
              << ", \"description\": " << q(r.description) << "}";
    first = false;
  }
  std::cout << "\n  ]\n}\n";
}

void print_text(bool verbose) {
  const auto& devs = vnn::devices();
  if (devs.empty()) std::cout << "No devices found.\n";
  for (const auto& d : devs) {
    std::cout << d.device << ": " << d.name << " (" << vnn::name(d.type) << ", " << d.plugin << ", "
              << d.compute_units << (d.type == vnn::DeviceType::cpu && d.plugin == "openmp" ? " threads" : " compute units")
              << ", " << gib(d.total_memory) << ")\n";
    if (!verbose) continue;
    std::cout << "    vendor:        " << d.vendor << "\n"
              << "    driver:        " << d.driver_version << "\n";
    if (!d.arch.empty()) std::cout << "    arch:          " << d.arch << "\n";
    if (!d.pci_id.empty()) std::cout << "    pci id:        " << d.pci_id << "\n";
    if (!d.uuid.empty()) std::cout << "    uuid:          " << d.uuid << "\n";
    if (d.free_memory) std::cout << "    free memory:   " << gib(d.free_memory) << "\n";
    std::cout << "    host memory:   " << (d.host_accessible ? "shared with the host" : "separate (copies staged)") << "\n";
    for (auto& [k, v] : d.properties) std::cout << "    " << k << ": " << v << "\n";
    std::cout << "    plugin:        " << d.plugin_path << "\n";
  }
  if (!devs.empty()) std::cout << "Best device: " << vnn::best_device() << "\n";
  if (!verbose) return;
  std::cout << "\nBackends tried:\n";
  for (const auto& r : vnn::backend_report()) {
    std::cout << "  " << r.backend << ": " << r.status;
    if (r.loaded) std::cout << " (" << r.device_count << " device" << (r.device_count == 1 ? "" : "s") << ")";
    std::cout << "\n    library: " << r.library << "\n";
    if (!r.description.empty()) std::cout << "    built:   " << r.description << "\n";
    if (!r.detail.empty()) {
      std::string detail = r.detail;
      while (!detail.empty() && detail.back() == '\n') detail.pop_back();
      std::cout << "    reason:  " << detail << "\n";
    }
  }
  std::cout << "\nSearch path:\n";
  for (auto& p : vnn::backend_search_path()) std::cout << "  " << p << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  bool verbose = false, json = false;
  std::string warm;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--verbose") || !std::strcmp(argv[i], "-v")) verbose = true;
    else if (!std::strcmp(argv[i], "--json")) json = true;
    else if (!std::strcmp(argv[i], "--version") || !std::strcmp(argv[i], "-V")) {
      // The tool's own (headers') version, the libvnn.so it runs with, and
      // the plugin ABI that libvnn accepts: a plugin built for another is refused.
      std::cout << "vnn-devices " VNN_VERSION_STRING "\n"
                << "libvnn " << vnn::version() << "\n"
                << "plugin ABI version " << vnn::backend_abi_version() << "\n";
      return 0;
    }
    else if (!std::strcmp(argv[i], "--tune")) {
      // Read by the OpenCL plugin when it reports its devices.
      setenv("VNN_OPENCL_TUNE", "1", 1);
      verbose = true;
    }
    else if (!std::strcmp(argv[i], "--warmup") && i + 1 < argc) {
      warm = argv[++i];
      setenv("VNN_OPENCL_TUNE_AFTER", "0", 1);  // read by the OpenCL plugin: tune at first use
    }
    else {
      std::cout << "usage: vnn-devices [--verbose] [--json] [--tune] [--warmup DEVICE] [--version]\n"
                   "Lists the devices vnn finds. Environment: VNN_DEVICE, VNN_BACKENDS, VNN_BACKEND_PATH, VNN_STRICT.\n";
      return std::strcmp(argv[i], "--help") && std::strcmp(argv[i], "-h") ? 2 : 0;
    }
  }
  try {
    if (!warm.empty()) return warmup(warm);
    if (json) print_json();
    else print_text(verbose);
  } catch (const vnn::Error& e) {
    std::cerr << "vnn-devices: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

// Trains a small CNN on Fashion-MNIST on the best device vnn finds, the
// PyTorch way: pick the device, move the model once and each batch with
// .to(device), forward / loss / backward / step, evaluate, checkpoint.
//
//   train_fashion_mnist [--device cuda:0] [--epochs 5] [--batch-size 64]
//                       [--workers 2] [--lr 0.001] [--model cnn|mlp]
//                       [--data DIR] [--out DIR] [--limit N] [--resume]
//
// Writes <out>/checkpoint.safetensors (model, optimizer, scheduler, RNG,
// progress; --resume continues from it), <out>/metrics.csv and
// <out>/curves.svg (loss and accuracy per epoch).
#include <vnn/vnn.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <sys/stat.h>

#include "plot_svg.hpp"

namespace {

struct Config {
  std::string device, data, out = "fashion-mnist-run", model = "cnn";
  int epochs = 5, workers = 2;
  int64_t batch = 64, limit = 0;
  double lr = 1e-3;
  bool resume = false;
};

Config parse(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw vnn::ValueError("option " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--device") c.device = value();
    else if (a == "--epochs") c.epochs = std::stoi(value());
    else if (a == "--batch-size") c.batch = std::stoll(value());
    else if (a == "--workers") c.workers = std::stoi(value());
    else if (a == "--lr") c.lr = std::stod(value());
    else if (a == "--model") c.model = value();
    else if (a == "--data") c.data = value();
    else if (a == "--out") c.out = value();
    else if (a == "--limit") c.limit = std::stoll(value());
    else if (a == "--resume") c.resume = true;
    else {
      std::cout << "usage: train_fashion_mnist [--device D] [--epochs N] [--batch-size B] [--workers W] [--lr LR]\n"
                   "                           [--model cnn|mlp] [--data DIR] [--out DIR] [--limit N] [--resume]\n";
      std::exit(a == "--help" ? 0 : 2);
    }
  }
  if (c.model != "cnn" && c.model != "mlp") throw vnn::ValueError("--model must be cnn or mlp, not " + c.model);
  return c;
}

// The models, spelled as their LibTorch twins (docs/from-libtorch.md).
vnn::nn::Sequential make_model(const std::string& kind) {
  using namespace vnn::nn;
  if (kind == "mlp")
    return Sequential(Flatten(), Linear(784, 256), ReLU(), Linear(256, 128), ReLU(), Linear(128, 10));
  return Sequential(Conv2d(Conv2dOptions(1, 32, 3).padding(1)), ReLU(), MaxPool2d(2),
                    Conv2d(Conv2dOptions(32, 64, 3).padding(1)), ReLU(), MaxPool2d(2),
                    Flatten(), Linear(64 * 7 * 7, 128), ReLU(), Linear(128, 10));
}

void progress_bar(int epoch, int epochs, int64_t done, int64_t total, double seconds, double loss) {
  const int width = 30;
  int filled = total ? int(double(width) * double(done) / double(total)) : width;
  double rate = seconds > 0 ? double(done) / seconds : 0;
  double eta = rate > 0 ? double(total - done) / rate : 0;
  std::printf("\repoch %d/%d [%.*s%*s] %lld/%lld  %.0f samples/s  ETA %3.0fs  loss %.4f", epoch, epochs, filled,
              "==============================", width - filled, "", static_cast<long long>(done),
              static_cast<long long>(total), rate, eta, loss);
  std::fflush(stdout);
}

double evaluate(vnn::nn::Sequential& model, vnn::data::DataLoader& loader) {
  vnn::autograd::NoGradGuard no_grad;
  model->eval();
  double correct = 0, count = 0;
  for (auto& batch : loader) {
    vnn::Tensor pred = vnn::argmax(model(batch.data), 1);
    correct += vnn::sum(vnn::eq(pred, batch.target).to(vnn::kFloat32)).item<double>();
    count += double(batch.target.numel());
  }
  model->train();
  return count > 0 ? correct / count : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Config cfg = parse(argc, argv);
    // "cuda if available, else cpu", for every vendor.
    vnn::Device device = cfg.device.empty() ? vnn::best_device() : vnn::Device(cfg.device);
    std::cout << "Devices found:\n";
    for (const auto& d : vnn::devices())
      std::cout << "  " << d.device << "  " << d.name << " [" << vnn::name(d.type) << ", " << d.plugin << "]\n";
    const auto& info = vnn::device_info(device);  // throws, listing what exists, for a bad --device
    std::cout << "Using device: " << device << " (" << info.name << ")\n";

    vnn::manual_seed(0);
    auto train_set = std::make_shared<vnn::data::FashionMNIST>(cfg.data, true, cfg.limit);
    auto test_set = std::make_shared<vnn::data::FashionMNIST>(cfg.data, false, cfg.limit ? cfg.limit / 6 + 1 : 0);
    std::cout << "Fashion-MNIST: " << train_set->size() << " training and " << test_set->size() << " test images\n";

    vnn::data::DataLoaderOptions lo;
    lo.batch_size = cfg.batch;
    lo.shuffle = true;
    lo.num_workers = cfg.workers;
    lo.device = device;
    bool separate_memory = !info.host_accessible;
    lo.pin_memory = separate_memory;
    lo.non_blocking = separate_memory;
    vnn::data::DataLoader train_loader(train_set, lo);
    lo.shuffle = false;
    vnn::data::DataLoader test_loader(test_set, lo);

    vnn::nn::Sequential model = make_model(cfg.model);
    model->to(device);  // move the model once
    std::cout << model;
    vnn::optim::Adam opt(model->parameters(), vnn::optim::AdamOptions(cfg.lr));
    vnn::optim::StepLR sched(opt, 2, 0.5);

    mkdir(cfg.out.c_str(), 0755);
    std::string ckpt = cfg.out + "/checkpoint.safetensors", csv = cfg.out + "/metrics.csv";
    vnn::io::TrainingProgress progress;
    std::vector<EpochPoint> history;
    if (cfg.resume) {
      progress = vnn::io::load_training_checkpoint(ckpt, *model, &opt, &sched);
      std::cout << "Resumed from " << ckpt << " after epoch " << progress.epoch << " (step " << progress.step << ")\n";
      history = read_metrics(csv);
    }

    for (int epoch = int(progress.epoch) + 1; epoch <= cfg.epochs; ++epoch) {
      train_loader.set_epoch(epoch);
      auto t0 = std::chrono::steady_clock::now();
      double loss_sum = 0;
      int64_t seen = 0, batches = 0, sampled = 0;
      for (auto& batch : train_loader) {
        opt.zero_grad();
        vnn::Tensor loss = vnn::nn::cross_entropy(model(batch.data), batch.target);
        loss.backward();
        opt.step();
        ++progress.step;
        seen += batch.target.numel();
        if (++batches % 20 == 0 || seen == train_set->size()) {
          double l = loss.item<double>();  // one host round trip every 20 batches
          loss_sum += l;
          ++sampled;
          double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          progress_bar(epoch, cfg.epochs, seen, train_set->size(), secs, l);
        }
      }
      sched.step();
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      double train_loss = loss_sum / double(std::max<int64_t>(sampled, 1));
      double acc = evaluate(model, test_loader);
      std::printf("\nepoch %d: train loss %.4f, test accuracy %.4f, %.1f s (%.0f samples/s)\n", epoch, train_loss, acc,
                  secs, double(seen) / secs);
      history.push_back({epoch, train_loss, acc, secs});
      progress.epoch = epoch;
      progress.extra["test_accuracy"] = std::to_string(acc);
      vnn::io::save_training_checkpoint(ckpt, *model, &opt, &sched, progress);
      write_metrics(csv, history);
      write_svg(cfg.out + "/curves.svg", history);
    }
    double final_acc = history.empty() ? 0 : history.back().accuracy;
    std::printf("Final test accuracy: %.4f on %s. Wrote %s, %s and %s/curves.svg\n", final_acc, device.str().c_str(),
                ckpt.c_str(), csv.c_str(), cfg.out.c_str());
    std::cout << vnn::memory_summary(device);
    return 0;
  } catch (const vnn::Error& e) {
    std::cerr << "\nerror: " << e.what() << "\n";
    return 1;
  }
}

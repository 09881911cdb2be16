// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Trains a small CNN on Fashion-MNIST on the best device vnn finds, the
// PyTorch way: pick the device, move the model once and each batch with
// .to(device), forward / loss / backward / step, evaluate, checkpoint.
//
//   train_fashion_mnist [--device cuda:0] [--model cnn|mlp|resnet] [--epochs N]
//                       [--batch-size B] [--lr LR] [--optimizer adam|adamw|sgd]
//                       [--weight-decay WD] [--label-smoothing S]
//                       [--augment none|flip|crop-flip] [--width W] [--blocks 2,2,2,2]
//                       [--workers 2] [--data DIR] [--out DIR] [--limit N] [--resume]
//                       [--distributed] [--tensorboard] [--amp bf16|fp16]
//
// Each model has a recipe (--help lists them; any flag overrides its part):
// the CNN trains 5 epochs with Adam; --model resnet, ResNet-18's layout at
// 16-32-64-128 channels, trains 20 epochs with Nesterov SGD, weight decay,
// label smoothing and crop+flip augmentation (but in the last epoch), for
// >= 0.94 test accuracy (runs: docs/benchmarks/cpu-training.md, "ResNet to 0.94").
//
// Writes <out>/checkpoint.safetensors (model, optimizer, scheduler, RNG,
// progress; --resume continues from it), <out>/metrics.csv and
// <out>/curves.svg (loss and accuracy per epoch); with --tensorboard also
// TensorBoard logs in <out>/tensorboard (tensorboard --logdir <out>/tensorboard).
//
// --distributed: data parallel over the ranks vnn-run (or mpirun) started,
//   vnn-run --nproc-per-node 2 build/bin/train_fashion_mnist --distributed
// Each rank trains a DistributedDataParallel copy on its shard
// (DistributedSampler) with batch-size / world-size examples per step, so
// one step sees batch-size examples in all, as without --distributed; the
// test set is split too and the counts summed. Only rank 0 writes the
// checkpoint, the metrics and the plot; it holds the unwrapped model's
// state, so it resumes on any number of ranks, or without --distributed.
#include <vnn/distributed.h>
#include <vnn/nn/distributed.h>
#include <vnn/utils/summary_writer.h>
#include <vnn/vnn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <iostream>
#include <string>
#include <sys/stat.h>

#include "plot_svg.hpp"
#include "resnet.hpp"

namespace {

struct Config {
  std::string device, data, out = "fashion-mnist-run", model = "cnn";
  int epochs = 0, workers = 2;  // 0 and the values below -1 / "": the model's recipe
  int clean_epochs = -1;        // the last ones train without --augment
  int64_t batch = 0, limit = 0, width = 0;
  double lr = 0;  // the peak of the 1cycle schedule
  double weight_decay = -1, label_smoothing = -1;
  std::string optimizer, augment;        // adam|adamw|sgd, none|flip|crop-flip
  std::vector<int64_t> blocks;           // BasicBlocks per ResNet stage
  bool resume = false, distributed = false, tensorboard = false;
  std::string amp;  // "", "bf16" or "fp16": autocast (fp16 with the GradScaler)
};

const char* kUsage =
    "usage: train_fashion_mnist [--device D] [--model cnn|mlp|resnet] [--epochs N] [--batch-size B] [--lr LR]\n"
    "                           [--optimizer adam|adamw|sgd] [--weight-decay WD] [--label-smoothing S]\n"
    "                           [--augment none|flip|crop-flip] [--clean-epochs N] [--width W] [--blocks N,N,...]\n"
    "                           [--workers W] [--data DIR] [--out DIR] [--limit N] [--resume]\n"
    "                           [--distributed] [--tensorboard] [--amp bf16|fp16]\n"
    "Every model trains on a 1cycle schedule over all --epochs (stepped per batch, peaking at --lr).\n"
    "Recipes (each flag overrides its part):\n"
    "  cnn, mlp: --epochs 5 --batch-size 64 --optimizer adam --lr 0.003 --weight-decay 0 --augment flip\n"
    "  resnet:   torchvision's BasicBlock ResNet with a 3x3 stem, --width 16 --blocks 2,2,2,2 (ResNet-18's\n"
    "            layout at a quarter of its width), --epochs 20 --batch-size 128 --optimizer sgd (Nesterov,\n"
    "            momentum 0.9) --lr 0.2 --weight-decay 5e-4 --label-smoothing 0.1 --augment crop-flip\n"
    "            (2-pixel pad and random 28x28 crop, horizontal flip) --clean-epochs 1 (the last epoch\n"
    "            trains on the images as they are)\n";

std::vector<int64_t> parse_blocks(const std::string& s) {
  std::vector<int64_t> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    std::string part = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
    int64_t n = part.empty() ? 0 : std::stoll(part);
    if (n < 1) throw vnn::ValueError("--blocks takes positive counts separated by commas (e.g. 2,2,2,2), not " + s);
    out.push_back(n);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

// Fills what the command line left unset with the model's recipe.
void apply_recipe(Config& c) {
  const bool res = c.model == "resnet";
  if (c.epochs == 0) c.epochs = res ? 20 : 5;  // resnet: 0.9406 in 20 epochs, 0.9394 in 15 (docs/benchmarks/cpu-training.md)
  if (c.batch == 0) c.batch = res ? 128 : 64;
  if (c.optimizer.empty()) c.optimizer = res ? "sgd" : "adam";
  if (c.lr == 0) c.lr = c.optimizer != "sgd" ? 3e-3 : res ? 0.2 : 0.1;
  if (c.weight_decay < 0) c.weight_decay = res ? 5e-4 : c.optimizer == "adamw" ? 1e-2 : 0;
  if (c.label_smoothing < 0) c.label_smoothing = res ? 0.1 : 0;
  if (c.augment.empty()) c.augment = res ? "crop-flip" : "flip";
  if (c.clean_epochs < 0) c.clean_epochs = res ? 1 : 0;
  if (c.width == 0) c.width = 16;
  if (c.blocks.empty()) c.blocks = {2, 2, 2, 2};
}

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
    else if (a == "--optimizer") c.optimizer = value();
    else if (a == "--weight-decay") c.weight_decay = std::stod(value());
    else if (a == "--label-smoothing") c.label_smoothing = std::stod(value());
    else if (a == "--augment") c.augment = value();
    else if (a == "--clean-epochs") c.clean_epochs = std::stoi(value());
    else if (a == "--width") c.width = std::stoll(value());
    else if (a == "--blocks") c.blocks = parse_blocks(value());
    else if (a == "--model") c.model = value();
    else if (a == "--data") c.data = value();
    else if (a == "--out") c.out = value();
    else if (a == "--limit") c.limit = std::stoll(value());
    else if (a == "--resume") c.resume = true;
    else if (a == "--distributed") c.distributed = true;
    else if (a == "--tensorboard") c.tensorboard = true;
    else if (a == "--amp") c.amp = value();
    else {
      std::cout << kUsage;
      std::exit(a == "--help" ? 0 : 2);
    }
  }
  if (c.model != "cnn" && c.model != "mlp" && c.model != "resnet")
    throw vnn::ValueError("--model must be cnn, mlp or resnet, not " + c.model);
  apply_recipe(c);
  if (c.epochs < 1) throw vnn::ValueError("--epochs must be at least 1, got " + std::to_string(c.epochs));
  if (c.batch < 1) throw vnn::ValueError("--batch-size must be at least 1, got " + std::to_string(c.batch));
  if (c.width < 1) throw vnn::ValueError("--width must be at least 1, got " + std::to_string(c.width));
  if (c.optimizer != "adam" && c.optimizer != "adamw" && c.optimizer != "sgd")
    throw vnn::ValueError("--optimizer must be adam, adamw or sgd, not " + c.optimizer);
  if (c.augment != "none" && c.augment != "flip" && c.augment != "crop-flip")
    throw vnn::ValueError("--augment must be none, flip or crop-flip, not " + c.augment);
  if (!c.amp.empty() && c.amp != "bf16" && c.amp != "fp16")
    throw vnn::ValueError("--amp must be bf16 or fp16, not " + c.amp);
  return c;
}

// The models, spelled as their LibTorch twins (docs/from-libtorch.md).
vnn::nn::Sequential make_model(const Config& c) {
  using namespace vnn::nn;
  if (c.model == "mlp")
    return Sequential(Flatten(), Linear(784, 256), ReLU(), Linear(256, 128), ReLU(), Linear(128, 10));
  // torchvision's ResNet with a 3x3 stem (examples/resnet.hpp); by default
  // ResNet-18's four stages of two BasicBlocks at 16-32-64-128 channels.
  if (c.model == "resnet") return Sequential(resnet::ResNet(c.blocks, 1, 10, c.width));
  // BatchNorm after each pooling: the statistics and the scaling run on a
  // quarter of the conv output (docs/benchmarks/cpu-training.md, "The main example").
  return Sequential(Conv2d(Conv2dOptions(1, 32, 3).padding(1)), ReLU(), MaxPool2d(2), BatchNorm2d(32),
                    Conv2d(Conv2dOptions(32, 64, 3).padding(1)), ReLU(), MaxPool2d(2), BatchNorm2d(64),
                    Flatten(), Linear(64 * 7 * 7, 128), ReLU(), Linear(128, 10));
}

// --optimizer over the model's parameters, with --weight-decay.
std::unique_ptr<vnn::optim::Optimizer> make_optimizer(const Config& c, vnn::nn::Module& model) {
  if (c.optimizer == "sgd")
    return std::make_unique<vnn::optim::SGD>(
        model.parameters(),
        vnn::optim::SGDOptions(c.lr).momentum(0.9).nesterov(true).weight_decay(c.weight_decay));
  vnn::optim::AdamOptions o(c.lr);
  o.weight_decay(c.weight_decay);
  if (c.optimizer == "adamw") return std::make_unique<vnn::optim::AdamW>(model.parameters(), o);
  return std::make_unique<vnn::optim::Adam>(model.parameters(), o);
}

// --augment: drawn from (seed, epoch, index) on the loader's workers.
// Clothes are left-right symmetric (flip); crop-flip also shifts by up to
// 2 pixels (zero padding is the images' black background).
vnn::data::TransformPtr make_augment(const std::string& augment) {
  auto flip = std::make_shared<vnn::data::RandomHorizontalFlip>(0.5);
  if (augment == "flip") return flip;
  return std::make_shared<vnn::data::Compose>(
      std::vector<vnn::data::TransformPtr>{std::make_shared<vnn::data::RandomCrop>(28, 2), flip});
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

// Test accuracy; with `distributed` each rank counts its part of the test
// set and the counts are summed over the ranks.
double evaluate(vnn::nn::Sequential& model, vnn::data::DataLoader& loader, bool distributed) {
  vnn::autograd::NoGradGuard no_grad;
  model->eval();
  double correct = 0, count = 0;
  for (auto& batch : loader) {
    vnn::Tensor pred = vnn::argmax(model(batch.data), 1);
    correct += vnn::sum(vnn::eq(pred, batch.target).to(vnn::kFloat32)).item<double>();
    count += double(batch.target.numel());
  }
  model->train();
  if (distributed) {
    vnn::Tensor counts = vnn::tensor({correct, count}, vnn::TensorOptions(vnn::kFloat64));
    vnn::distributed::all_reduce(counts);
    auto v = counts.to_vector<double>();
    correct = v[0];
    count = v[1];
  }
  return count > 0 ? correct / count : 0;
}

// The number of steps a OneCycleLR spans (its saved "total_steps").
int64_t scheduler_total(const vnn::optim::LRScheduler& s) {
  for (const auto& kv : s.state_dict())
    if (kv.first == "total_steps") return int64_t(kv.second.item());
  return 0;
}

// This rank's part of the test set: examples rank, rank + world, ... (no
// padding, unlike DistributedSampler, so every example counts once).
vnn::data::DatasetPtr test_shard(const vnn::data::DatasetPtr& test_set, int rank, int world) {
  std::vector<int64_t> idx;
  for (int64_t i = rank; i < test_set->size(); i += world) idx.push_back(i);
  return std::make_shared<vnn::data::Subset>(test_set, std::move(idx));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Config cfg = parse(argc, argv);
    int rank = 0, world = 1;
    if (cfg.distributed) {
      vnn::distributed::init_process_group();  // RANK, WORLD_SIZE, MASTER_ADDR, ... from vnn-run or mpirun
      rank = vnn::distributed::rank();
      world = vnn::distributed::world_size();
      if (cfg.batch % world != 0)
        throw vnn::ValueError("--batch-size " + std::to_string(cfg.batch) + " is the batch of one step over all " +
                              std::to_string(world) + " ranks: it must be a multiple of the world size");
      if (rank != 0) std::cout.setstate(std::ios::failbit);  // rank 0 speaks for all
    }
    const bool writer = rank == 0;  // the one rank that writes files
    // "cuda if available, else cpu", for every vendor; under --distributed
    // cuda:LOCAL_RANK where there are GPUs.
    vnn::Device device = !cfg.device.empty() ? vnn::Device(cfg.device)
                         : cfg.distributed   ? vnn::distributed::local_device()
                                             : vnn::best_device();
    std::cout << "Devices found:\n";
    for (const auto& d : vnn::devices())
      std::cout << "  " << d.device << "  " << d.name << " [" << vnn::name(d.type) << ", " << d.plugin << "]\n";
    const auto& info = vnn::device_info(device);  // throws, listing what exists, for a bad --device
    std::cout << "Using device: " << device << " (" << info.name << ")\n";
    if (cfg.distributed)
      std::cout << "Distributed: " << world << " ranks, " << vnn::distributed::group().engine() << ", "
                << cfg.batch / world << " examples per rank per step\n";

    vnn::manual_seed(0);
    auto train_set = std::make_shared<vnn::data::FashionMNIST>(cfg.data, true, cfg.limit);
    auto test_set = std::make_shared<vnn::data::FashionMNIST>(cfg.data, false, cfg.limit ? cfg.limit / 6 + 1 : 0);
    std::cout << "Fashion-MNIST: " << train_set->size() << " training and " << test_set->size() << " test images\n";

    vnn::data::DataLoaderOptions lo;
    lo.batch_size = cfg.batch / world;
    lo.shuffle = !cfg.distributed;
    std::shared_ptr<vnn::data::DistributedSampler> sampler;
    if (cfg.distributed) {
      sampler = std::make_shared<vnn::data::DistributedSampler>(
          train_set->size(), vnn::data::DistributedSamplerOptions{}.replicas(world, rank).with_seed(0));
      lo.sampler = sampler;
    }
    lo.num_workers = cfg.workers;
    lo.device = device;
    bool separate_memory = !info.host_accessible;
    lo.pin_memory = separate_memory;
    lo.non_blocking = separate_memory;
    vnn::data::DatasetPtr train_data =
        cfg.augment == "none" ? vnn::data::DatasetPtr(train_set)
                              : std::make_shared<vnn::data::TransformDataset>(train_set, make_augment(cfg.augment));
    vnn::data::DataLoader train_loader(train_data, lo);
    // --clean-epochs: the last epochs see the images unaugmented, as the test does.
    std::unique_ptr<vnn::data::DataLoader> clean_loader;
    if (cfg.clean_epochs > 0 && cfg.augment != "none")
      clean_loader = std::make_unique<vnn::data::DataLoader>(train_set, lo);
    lo.shuffle = false;
    lo.sampler = nullptr;
    lo.batch_size = cfg.batch;
    vnn::data::DataLoader test_loader(cfg.distributed ? test_shard(test_set, rank, world) : test_set, lo);

    vnn::nn::Sequential model = make_model(cfg);
    model->to(device);  // move the model once
    std::cout << model;
    std::cout << "Recipe: " << cfg.epochs << " epochs, batch " << cfg.batch << ", " << cfg.optimizer << " lr " << cfg.lr
              << " (1cycle peak), weight decay " << cfg.weight_decay << ", label smoothing " << cfg.label_smoothing
              << ", augment " << cfg.augment;
    if (cfg.clean_epochs > 0 && cfg.augment != "none")
      std::cout << " but in the last " << cfg.clean_epochs << " epoch(s)";
    if (cfg.model == "resnet") {
      std::cout << ", width " << cfg.width << ", blocks";
      for (size_t i = 0; i < cfg.blocks.size(); ++i) std::cout << (i ? "," : " ") << cfg.blocks[i];
    }
    std::cout << "\n";
    std::unique_ptr<vnn::optim::Optimizer> optimizer = make_optimizer(cfg, *model);
    vnn::optim::Optimizer& opt = *optimizer;
    vnn::nn::CrossEntropyLossOptions loss_options;
    loss_options.label_smoothing(cfg.label_smoothing);
    // The 1cycle schedule over all --epochs, stepped per batch, peaking at --lr.
    vnn::optim::OneCycleOptions oc;
    oc.epochs = cfg.epochs;
    oc.steps_per_epoch = train_loader.num_batches();
    auto sched = std::make_unique<vnn::optim::OneCycleLR>(opt, cfg.lr, oc);
    // --amp: the forward under autocast; fp16 also scales the loss, since
    // its gradients underflow below 6e-8 (bf16 has float32's range).
    const vnn::DType amp_dtype = cfg.amp == "fp16" ? vnn::kFloat16 : vnn::kBFloat16;
    vnn::amp::GradScalerOptions scaler_options;
    scaler_options.enabled = cfg.amp == "fp16";
    vnn::amp::GradScaler scaler(scaler_options);

    mkdir(cfg.out.c_str(), 0755);
    std::string ckpt = cfg.out + "/checkpoint.safetensors", csv = cfg.out + "/metrics.csv";
    vnn::io::TrainingProgress progress;
    std::vector<EpochPoint> history;
    if (cfg.resume) {  // every rank reads the same file (same host or a shared folder)
      progress = vnn::io::load_training_checkpoint(ckpt, *model, &opt, sched.get(), &vnn::default_generator(), &scaler);
      std::cout << "Resumed from " << ckpt << " after epoch " << progress.epoch << " (step " << progress.step << ")\n";
      // Saved for another --epochs (or --limit): continue on this run's
      // schedule from the step reached, not past the end of the saved one.
      const int64_t total = oc.epochs * oc.steps_per_epoch;
      if (scheduler_total(*sched) != total && progress.step > 0 && progress.step <= total) {
        std::cout << "The checkpoint's schedule spans " << scheduler_total(*sched) << " steps, this run's "
                  << total << ": continuing this run's from step " << progress.step << "\n";
        sched = std::make_unique<vnn::optim::OneCycleLR>(opt, cfg.lr, oc, progress.step - 1);
      }
      if (writer) history = read_metrics(csv);
    }
    std::unique_ptr<vnn::utils::SummaryWriter> tb;  // rank 0's, beside metrics.csv
    if (cfg.tensorboard && writer) {
      tb = std::make_unique<vnn::utils::SummaryWriter>(cfg.out + "/tensorboard");
      tb->add_text("config", "model " + cfg.model + ", device " + device.str() + ", batch " +
                                 std::to_string(cfg.batch) + ", lr " + std::to_string(cfg.lr) + ", ranks " +
                                 std::to_string(world),
                   progress.step);
    }
    // The wrapper shares the model's parameters, so the optimizer built on
    // them and the checkpoint of the inner model work unchanged.
    std::shared_ptr<vnn::nn::Module> net = model;
    if (cfg.distributed) net = std::make_shared<vnn::nn::DistributedDataParallel>(model);

    for (int epoch = int(progress.epoch) + 1; epoch <= cfg.epochs; ++epoch) {
      vnn::data::DataLoader& loader =
          clean_loader && epoch > cfg.epochs - cfg.clean_epochs ? *clean_loader : train_loader;
      loader.set_epoch(epoch);
      if (sampler) sampler->set_epoch(epoch);  // a new shuffle each epoch, the same on every rank
      auto t0 = std::chrono::steady_clock::now();
      double loss_sum = 0;
      int64_t seen = 0, batches = 0, sampled = 0;
      for (auto& batch : loader) {
        opt.zero_grad();
        vnn::Tensor loss;
        {
          vnn::AutocastGuard autocast(device, amp_dtype, !cfg.amp.empty());
          loss = vnn::nn::cross_entropy((*net)(batch.data), batch.target, loss_options);
        }
        scaler.scale(loss).backward();  // without fp16: loss itself
        scaler.step(opt);               // skipped when a gradient overflowed
        scaler.update();
        sched->step();
        ++progress.step;
        seen += batch.target.numel() * world;  // all ranks step together
        if (++batches % 20 == 0 || batches == loader.num_batches()) {
          double l = loss.item<double>();  // one host round trip every 20 batches
          loss_sum += l;
          ++sampled;
          double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          if (writer) progress_bar(epoch, cfg.epochs, std::min(seen, train_set->size()), train_set->size(), secs, l);
          if (tb) tb->add_scalar("loss/train_batch", l, progress.step);
        }
      }
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      double train_loss = loss_sum / double(std::max<int64_t>(sampled, 1));
      if (cfg.distributed) {  // the mean of the ranks' sampled losses
        vnn::Tensor l = vnn::tensor({train_loss}, vnn::TensorOptions(vnn::kFloat64));
        vnn::distributed::all_reduce(l, vnn::distributed::ReduceOp::avg);
        train_loss = l.item<double>();
      }
      double acc;
      {
        vnn::AutocastGuard autocast(device, amp_dtype, !cfg.amp.empty());
        acc = evaluate(model, test_loader, cfg.distributed);
      }
      progress.epoch = epoch;
      if (!writer) continue;
      std::printf("\nepoch %d: train loss %.4f, test accuracy %.4f, %.1f s (%.0f samples/s)\n", epoch, train_loss, acc,
                  secs, double(seen) / secs);
      history.push_back({epoch, train_loss, acc, secs});
      if (tb) {
        tb->add_scalars("loss", {{"train", train_loss}}, epoch);
        tb->add_scalar("accuracy/test", acc, epoch);
        tb->add_scalar("throughput/samples_per_s", double(seen) / secs, epoch);
        for (const auto& p : model->named_parameters()) tb->add_histogram("weights/" + p.first, p.second, epoch);
        tb->flush();
      }
      progress.extra["test_accuracy"] = std::to_string(acc);
      vnn::io::save_training_checkpoint(ckpt, *model, &opt, sched.get(), progress, &vnn::default_generator(), &scaler);
      write_metrics(csv, history);
      write_svg(cfg.out + "/curves.svg", history);
    }
    if (writer) {
      double final_acc = history.empty() ? 0 : history.back().accuracy;
      std::printf("Final test accuracy: %.4f on %s%s. Wrote %s, %s and %s/curves.svg\n", final_acc,
                  device.str().c_str(), cfg.distributed ? (" x " + std::to_string(world) + " ranks").c_str() : "",
                  ckpt.c_str(), csv.c_str(), cfg.out.c_str());
      if (tb) {
        tb->close();
        std::printf("TensorBoard logs: tensorboard --logdir %s/tensorboard\n", cfg.out.c_str());
      }
      std::cout << vnn::memory_summary(device);
    }
    if (cfg.distributed) vnn::distributed::destroy_process_group();
    return 0;
  } catch (const vnn::Error& e) {
    std::cerr << "\nerror: " << e.what() << "\n";  // under vnn-run: the line it reports
    return 1;
  }
}

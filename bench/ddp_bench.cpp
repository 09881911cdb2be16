// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DDP training throughput: the MLP and CNN of train_fashion_mnist, Adam,
// on in-memory Fashion-MNIST-shaped batches, one rank per process.
//   vnn-run --nproc-per-node 2 build/bin/ddp_bench --model cnn --batch 64 --steps 60
// Each rank steps on its own batches of --batch examples (PyTorch DDP's
// split: the global batch is ranks x batch). Rank 0 prints one line:
//   vnn ddp <model> ranks <n> batch <b> samples/s <total over ranks>
// bench/ddp_compare.sh puts torch DDP (gloo) beside it, same split, same run.
#include <vnn/distributed.h>
#include <vnn/nn/distributed.h>
#include <vnn/vnn.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace {

// The models of train_bench and train_fashion_mnist.
vnn::nn::Sequential make_model(const std::string& kind) {
  using namespace vnn::nn;
  if (kind == "mlp")
    return Sequential{Flatten(), Linear(784, 256), ReLU(), Linear(256, 128), ReLU(), Linear(128, 10)};
  return Sequential{Conv2d(Conv2dOptions(1, 32, 3).padding(1)), ReLU(), MaxPool2d(2),
                    Conv2d(Conv2dOptions(32, 64, 3).padding(1)), ReLU(), MaxPool2d(2),
                    Flatten(), Linear(64 * 7 * 7, 128), ReLU(), Linear(128, 10)};
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string kind = "mlp";
    int64_t batch = 64;
    int steps = 60, warmup = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
      std::string a = argv[i], v = argv[i + 1];
      if (a == "--model") kind = v;
      else if (a == "--batch") batch = std::stoll(v);
      else if (a == "--steps") steps = std::stoi(v);
      else if (a == "--warmup") warmup = std::stoi(v);
      else throw vnn::ValueError("ddp_bench: unknown option " + a);
    }
    if (kind != "mlp" && kind != "cnn") throw vnn::ValueError("ddp_bench: --model must be mlp or cnn");
    vnn::distributed::init_process_group();
    const int rank = vnn::distributed::rank(), world = vnn::distributed::world_size();
    vnn::Device dev("cpu", 0);

    // A pool of distinct batches per rank, made before timing.
    vnn::manual_seed(uint64_t(100 + rank));
    std::vector<vnn::Tensor> xs, ys;
    for (int k = 0; k < 8; ++k) {
      xs.push_back(vnn::randn({batch, 1, 28, 28}).to(dev));
      ys.push_back(vnn::randint(10, {batch}).to(dev));
    }
    vnn::manual_seed(0);
    auto model = make_model(kind);
    model->to(dev);
    auto ddp = std::make_shared<vnn::nn::DistributedDataParallel>(model);
    vnn::optim::Adam opt(ddp->parameters(), vnn::optim::AdamOptions(1e-3));

    auto step = [&](int k) {
      opt.zero_grad();
      vnn::Tensor loss = vnn::nn::cross_entropy(ddp->forward(xs[size_t(k % 8)]), ys[size_t(k % 8)]);
      loss.backward();
      opt.step();
      return loss;
    };
    for (int k = 0; k < warmup; ++k) (void)step(k).item();
    vnn::distributed::barrier();
    auto t0 = std::chrono::steady_clock::now();
    vnn::Tensor last;
    for (int k = 0; k < steps; ++k) last = step(k);
    (void)last.item();  // the last step has finished
    vnn::distributed::barrier();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rank == 0)
      std::printf("vnn ddp %s ranks %d batch %lld samples/s %.1f\n", kind.c_str(), world,
                  static_cast<long long>(batch), double(steps) * double(batch) * world / secs);
    vnn::distributed::destroy_process_group();
    return 0;
  } catch (const vnn::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One rank of the distributed correctness matrix: every
// parallelism (DDP, DDP with no_sync accumulation, FSDP, a 2-stage GPipe and
// 1F1B pipeline) with every optimizer (SGD momentum, SGD nesterov, Adam,
// AdamW with weight decay; a StepLR stepping) trains 10 steps and must equal
// one process training the same model on the whole batches on this rank's
// device: within 1e-10 in float64, 1e-5 in float32, and within float32
// rounding of the updates under bf16 autocast with a GradScaler (against one
// process under the same autocast).
//
//   matrix_worker matrix all|float64|float32|bf16   (each rank's device: VNN_TEST_BACKEND)
//   matrix_worker repro "STEPS [SEED]"            the lesson's CNN on Fashion-MNIST, batch 64, SGD momentum
#include <cmath>
#include <memory>

#include "distributed/worker_common.hpp"
#include "vnn/amp.h"
#include "vnn/data/readers.h"
#include "vnn/distributed.h"
#include "vnn/distributed/pipelining.h"
#include "vnn/nn/distributed.h"
#include "vnn/nn/fsdp.h"

namespace dist = vnn::distributed;
namespace nn = vnn::nn;
namespace pp = vnn::distributed::pipelining;
using vnn::Tensor;
using namespace vnn::test::dist;

namespace {

vnn::Device dev;

struct Shape {
  int64_t side, c1, c2, hidden, batch;
};
constexpr Shape kSmall{8, 4, 8, 16, 8};     // the matrix: cheap in float64 on every device
constexpr Shape kLesson{28, 32, 64, 128, 64};  // the CNN

// The lesson's CNN as a Sequential (so that the pipeline can cut it at 7: the
// convolutions on stage 0, the classifier on stage 1).
uint64_t g_seed = 2024;
nn::Sequential make_cnn(const Shape& s, vnn::DType dt, const vnn::Device& d, uint64_t seed = 0) {
  vnn::manual_seed(seed ? seed : g_seed);
  int64_t flat = s.c2 * (s.side / 4) * (s.side / 4);
  nn::Sequential m(nn::Conv2d(nn::Conv2dOptions(1, s.c1, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                   nn::Conv2d(nn::Conv2dOptions(s.c1, s.c2, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                   nn::Flatten(), nn::Linear(flat, s.hidden), nn::ReLU(), nn::Linear(s.hidden, 10));
  m->to(dt);
  m->to(d);
  return m;
}

// Batch k of the run, the same on every rank (images in [0, 1), labels 0..9).
bool g_fashion = false;  // repro: Fashion-MNIST's first images instead of random ones
std::pair<Tensor, Tensor> whole_batch(const Shape& s, int k, vnn::DType dt, const vnn::Device& d) {
  if (g_fashion) {
    static vnn::data::FashionMNIST data("", true, 640);
    return {data.images().narrow(0, (k * s.batch) % 640, s.batch).to(dt).to(d),
            data.labels().narrow(0, (k * s.batch) % 640, s.batch).to(d)};
  }
  vnn::Generator g(1000 + uint64_t(k));
  Tensor x = vnn::rand({s.batch, 1, s.side, s.side}, vnn::TensorOptions().with(vnn::kFloat32), &g);
  Tensor y = vnn::randint(0, 10, {s.batch}, vnn::TensorOptions(), &g);
  return {x.to(dt).to(d), y.to(d)};
}

using Snapshot = std::vector<std::pair<std::string, std::vector<double>>>;

Snapshot snapshot(const vnn::StateDict& sd) {
  Snapshot out;
  for (auto& [k, t] : sd) out.emplace_back(k, t.to(vnn::kFloat64).to_vector<double>());
  return out;
}

// Largest |a - b| over the entries of `part` (keys looked up in `whole`).
double max_diff(const Snapshot& part, const Snapshot& whole, const std::string& what) {
  double m = 0;
  for (auto& [k, v] : part) {
    const std::vector<double>* w = nullptr;
    for (auto& [k2, v2] : whole)
      if (k2 == k) w = &v2;
    DIST_CHECK(w && w->size() == v.size(), what << ": no entry " << k << " of " << v.size() << " in the reference");
    for (size_t i = 0; i < v.size(); ++i) m = std::max(m, std::fabs(v[i] - (*w)[i]));
  }
  return m;
}

const char* kOptimizers[] = {"sgd_momentum", "sgd_nesterov", "adam", "adamw"};
const char* kParallelisms[] = {"ddp", "ddp_no_sync", "fsdp", "gpipe", "1f1b"};

std::unique_ptr<vnn::optim::Optimizer> make_optimizer(const std::string& name, std::vector<Tensor> params) {
  namespace o = vnn::optim;
  if (name == "sgd_momentum") return std::make_unique<o::SGD>(params, o::SGDOptions(0.05).momentum(0.9));
  if (name == "sgd_nesterov")
    return std::make_unique<o::SGD>(params, o::SGDOptions(0.05).momentum(0.9).nesterov(true));
  if (name == "adam") return std::make_unique<o::Adam>(params, o::AdamOptions(1e-3));
  if (name == "adamw") return std::make_unique<o::AdamW>(params, o::AdamOptions(1e-3).weight_decay(0.05));
  fail("unknown optimizer " + name);
}

// The run every parallelism is held to: one process, whole batches, on
// this rank's device, `micro` backward calls per step (the no_sync run's
// accumulation), under the same autocast when `amp`.
struct Setting {
  Shape shape;
  vnn::DType dt;
  bool amp;
  int steps;
};

// Under autocast cross_entropy runs in float32, as PyTorch's.
Tensor loss_of(const Tensor& out, const Tensor& y) { return nn::cross_entropy(out, y); }

// One optimizer step, with a GradScaler when amp: backward of each
// (input, target) pair, through `fwd`, then step and the scheduler.
template <class Fwd>
void train_step(const Setting& st, Fwd&& fwd, const std::vector<std::pair<Tensor, Tensor>>& parts,
                vnn::optim::Optimizer& opt, vnn::optim::LRScheduler& sched, vnn::amp::GradScaler& scaler,
                const std::function<void(size_t, const std::function<void()>&)>& around = nullptr) {
  opt.zero_grad();
  for (size_t k = 0; k < parts.size(); ++k) {
    auto body = [&] {
      Tensor loss;
      {
        vnn::autocast::AutocastGuard ac(dev, vnn::kBFloat16, st.amp);
        loss = loss_of(fwd(parts[k].first), parts[k].second);
      }
      (st.amp ? scaler.scale(loss) : loss).backward();
    };
    if (around) around(k, body);
    else body();
  }
  if (st.amp) {
    scaler.step(opt);
    scaler.update();
  } else {
    opt.step();
  }
  sched.step();
}

vnn::amp::GradScaler make_scaler(bool amp) {
  vnn::amp::GradScalerOptions o;
  o.enabled = amp;
  o.init_scale = 1024;
  return vnn::amp::GradScaler(o);
}

// The reference: the model trained alone on whole batches (micro-batches
// as backward calls, when the run accumulates).
Snapshot reference(const Setting& st, const std::string& optimizer, int micro) {
  auto m = make_cnn(st.shape, st.dt, dev);
  auto opt = make_optimizer(optimizer, m->parameters());
  vnn::optim::StepLR sched(*opt, 3, 0.5);
  auto scaler = make_scaler(st.amp);
  for (int s = 0; s < st.steps; ++s) {
    std::vector<std::pair<Tensor, Tensor>> parts;
    for (int k = 0; k < micro; ++k) parts.push_back(whole_batch(st.shape, s * micro + k, st.dt, dev));
    train_step(st, [&](const Tensor& x) { return m->forward(x); }, parts, *opt, sched, scaler);
  }
  return snapshot(m->state_dict());
}

// This rank's shard of a whole batch (rows r*n/ws .. (r+1)*n/ws).
std::pair<Tensor, Tensor> shard(const std::pair<Tensor, Tensor>& b) {
  int r = dist::rank(), ws = dist::world_size();
  int64_t n = b.first.size(0) / ws;
  return {b.first.narrow(0, r * n, n), b.second.narrow(0, r * n, n)};
}

// One parallelism with one optimizer: its parameters after st.steps steps.
Snapshot distributed_run(const Setting& st, const std::string& par, const std::string& optimizer) {
  const int micro = par == "ddp_no_sync" ? 2 : 1;
  // Other ranks start elsewhere: DDP must broadcast rank 0's state.
  auto model = make_cnn(st.shape, st.dt, dev, dist::rank() == 0 ? g_seed : 7 + uint64_t(dist::rank()));
  auto scaler = make_scaler(st.amp);
  if (par == "ddp" || par == "ddp_no_sync") {
    nn::DDPOptions o;
    o.first_bucket_mb = 0.001;  // several buckets
    o.bucket_cap_mb = 0.01;
    auto ddp = std::make_shared<nn::DistributedDataParallel>(model.ptr(), o);
    auto opt = make_optimizer(optimizer, ddp->parameters());
    vnn::optim::StepLR sched(*opt, 3, 0.5);
    for (int s = 0; s < st.steps; ++s) {
      std::vector<std::pair<Tensor, Tensor>> parts;
      for (int k = 0; k < micro; ++k) parts.push_back(shard(whole_batch(st.shape, s * micro + k, st.dt, dev)));
      train_step(
          st, [&](const Tensor& x) { return ddp->forward(x); }, parts, *opt, sched, scaler,
          [&](size_t k, const std::function<void()>& body) {
            if (k + 1 < parts.size()) {
              auto guard = ddp->no_sync();
              body();
            } else {
              body();
            }
          });
    }
    return snapshot(model->state_dict());
  }
  if (par == "fsdp") {
    nn::FSDPOptions o;
    o.auto_wrap_policy = nn::wrap_module_types<nn::Conv2dImpl, nn::LinearImpl>();
    // The reference makes rank 0's model: FSDP shards what each rank built.
    auto same = make_cnn(st.shape, st.dt, dev);
    auto fsdp = nn::fully_shard(same.ptr(), o);
    auto opt = make_optimizer(optimizer, fsdp->parameters());
    vnn::optim::StepLR sched(*opt, 3, 0.5);
    for (int s = 0; s < st.steps; ++s)
      train_step(st, [&](const Tensor& x) { return fsdp->forward(x); }, {shard(whole_batch(st.shape, s, st.dt, dev))},
                 *opt, sched, scaler);
    return snapshot(fsdp->full_state_dict(false));
  }
  // A 2-stage pipeline: stage r on rank r, 4 micro-batches.
  DIST_CHECK(dist::world_size() == 2, "the pipeline runs on 2 ranks");
  auto same = make_cnn(st.shape, st.dt, dev);
  auto parts = pp::split_sequential(same, {7});
  int r = dist::rank();
  pp::PipelineStage stage(parts[size_t(r)], r, 2, dev, dist::group());
  auto loss_fn = [&](const Tensor& out, const Tensor& y) {
    Tensor l = loss_of(out, y);
    return st.amp ? scaler.scale(l) : l;
  };
  std::unique_ptr<pp::PipelineSchedule> sched_pp;
  if (par == "gpipe") sched_pp = std::make_unique<pp::ScheduleGPipe>(stage, 4, loss_fn);
  else sched_pp = std::make_unique<pp::Schedule1F1B>(stage, 4, loss_fn);
  auto opt = make_optimizer(optimizer, parts[size_t(r)]->parameters());
  vnn::optim::StepLR sched(*opt, 3, 0.5);
  for (int s = 0; s < st.steps; ++s) {
    auto b = whole_batch(st.shape, s, st.dt, dev);
    opt->zero_grad();
    {
      vnn::autocast::AutocastGuard ac(dev, vnn::kBFloat16, st.amp);
      sched_pp->step(b.first, b.second);
    }
    if (st.amp) {
      // Only the last stage scales a loss; the first stage's gradients come
      // scaled through it, and its scaler is told so (as with PyTorch's).
      if (!stage.is_last()) scaler.scale(vnn::zeros({}, vnn::TensorOptions(dev)));
      scaler.step(*opt);
      scaler.update();
    } else {
      opt->step();
    }
    sched.step();
  }
  return snapshot(parts[size_t(r)]->state_dict());
}

// float64: rounding, nothing else. float32: rounding of a few ulps,
// amplified by 10 steps. bf16 autocast: each rank's weight gradients are
// rounded to bfloat16 (8 bits) before the float32 average, as PyTorch's
// are, so a split batch agrees with one process to bfloat16 resolution:
// 2^-7 of the largest parameter.
double tolerance(const Setting& st, const Snapshot& ref) {
  if (st.dt == vnn::kFloat64) return 1e-10;
  if (!st.amp) return 1e-5;
  double largest = 0;
  for (auto& [k, v] : ref)
    for (double x : v) largest = std::max(largest, std::fabs(x));
  return largest / 128;
}

int matrix_one(const std::string& arg) {
  Setting st{kSmall, vnn::kFloat64, false, 10};
  if (arg == "float32") st.dt = vnn::kFloat32;
  else if (arg == "bf16") st.dt = vnn::kFloat32, st.amp = true;
  else DIST_CHECK(arg == "float64", "matrix: unknown setting " << arg);
  const vnn::Device own = dev, cpu("cpu", 0);
  int failures = 0;
  for (const char* optimizer : kOptimizers) {
    // The distributed runs first: in a layout over devices of several kinds
    // the first one turns position-invariant rounding on, and the one-process
    // runs then use it too.
    std::vector<Snapshot> got;
    for (const char* par : kParallelisms) got.push_back(distributed_run(st, par, optimizer));
    // One process on whole batches: on this rank's device and on cpu:0.
    Snapshot refs[2][2];  // [device][micro-batches - 1]
    for (int d = 0; d < 2; ++d) {
      dev = d == 0 ? own : cpu;
      refs[d][0] = reference(st, optimizer, 1);
      refs[d][1] = reference(st, optimizer, 2);
    }
    dev = own;
    for (size_t k = 0; k < got.size(); ++k) {
      const std::string par = kParallelisms[k];
      const int m = par == "ddp_no_sync" ? 1 : 0;
      const double d_own = max_diff(got[k], refs[0][m], par), d_cpu = max_diff(got[k], refs[1][m], par);
      const double tol = tolerance(st, refs[1][m]);
      const bool ok = d_own <= tol && d_cpu <= tol;
      std::cout << "rank " << dist::rank() << " " << own.str() << " " << arg << " " << par << " " << optimizer
                << ": max |diff| " << d_own << " against one process on " << own.str() << ", " << d_cpu
                << " on cpu:0" << (ok ? " ok" : " FAILED") << " (tolerance " << tol << ")" << std::endl;
      failures += ok ? 0 : 1;
    }
  }
  DIST_CHECK(failures == 0, failures << " runs of the " << arg << " matrix differ from one process");
  return 0;
}

// `matrix all` (one launch per layout): float64, float32 and bf16 in turn.
int matrix(const std::string& arg) {
  if (arg != "all") return matrix_one(arg);
  for (const char* setting : {"float64", "float32", "bf16"}) matrix_one(setting);
  return 0;
}

// The figure that opened this work: the lesson's CNN on Fashion-MNIST's
// first 640 images (random images where the data set is absent), batch 64,
// SGD(0.05, momentum 0.9), a StepLR; DDP against one process on this rank's
// device and on cpu:0, and all three against the same run in float64 on
// cpu:0, the nearest thing to exact arithmetic: `repro STEPS [SEED]`.
int repro(const std::string& arg) {
  const size_t space = arg.find(' ');
  Setting st{kLesson, vnn::kFloat32, false, arg.empty() ? 10 : std::stoi(arg.substr(0, space))};
  if (space != std::string::npos) g_seed = std::stoull(arg.substr(space + 1));
  g_fashion = true;
  try {
    vnn::data::FashionMNIST probe("", true, 1);
  } catch (const vnn::Error&) {
    g_fashion = false;
  }
  Snapshot got = distributed_run(st, "ddp", "sgd_momentum");
  const vnn::Device own = dev;
  Snapshot ref = reference(st, "sgd_momentum", 1);
  dev = vnn::Device("cpu", 0);
  Snapshot ref_cpu = reference(st, "sgd_momentum", 1);
  Setting st64 = st;
  st64.dt = vnn::kFloat64;
  Snapshot ref64 = reference(st64, "sgd_momentum", 1);
  dev = own;
  std::cout << "rank " << dist::rank() << " " << own.str() << ", " << st.steps << " steps"
            << (g_fashion ? "" : " (random images)") << ": DDP against one process on " << own.str() << " "
            << max_diff(got, ref, "repro") << ", on cpu:0 " << max_diff(got, ref_cpu, "repro")
            << "; against float64 on cpu:0: DDP " << max_diff(got, ref64, "repro") << ", one process on "
            << own.str() << " " << max_diff(ref, ref64, "repro") << ", on cpu:0 " << max_diff(ref_cpu, ref64, "repro")
            << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Scenarios table{{"matrix", matrix}, {"repro", repro}};
  return run_scenario(argc, argv, dev, table);
}

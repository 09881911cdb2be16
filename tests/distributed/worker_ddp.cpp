// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DistributedDataParallel scenarios of dist_worker.
#include <cmath>
#include <unistd.h>

#include "distributed/worker_common.hpp"
#include "vnn/distributed.h"
#include "vnn/nn/distributed.h"

namespace dist = vnn::distributed;
using vnn::Tensor;
using namespace vnn::test::dist;

namespace {

struct Net : vnn::nn::Module {
  vnn::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr}, spare{nullptr};
  Net(int64_t in, int64_t hidden, int64_t out, bool with_spare = false) : Module("Net") {
    fc1 = register_module("fc1", vnn::nn::Linear(in, hidden));
    fc2 = register_module("fc2", vnn::nn::Linear(hidden, hidden));
    fc3 = register_module("fc3", vnn::nn::Linear(hidden, out));
    if (with_spare) spare = register_module("spare", vnn::nn::Linear(hidden, out));
    register_buffer("steps", vnn::zeros({1}));
  }
  Tensor forward(const Tensor& x) { return fc3(vnn::tanh(fc2(vnn::tanh(fc1(x))))); }
};

std::shared_ptr<Net> make_net(vnn::DType dt, vnn::Device dev, int64_t hidden = 16, bool spare = false,
                              uint64_t seed = 1234) {
  vnn::manual_seed(seed);
  auto n = std::make_shared<Net>(8, hidden, 4, spare);
  n->to(dt);
  n->to(dev);
  return n;
}

// The whole batch, the same on every rank.
std::pair<Tensor, Tensor> batch(int64_t rows, vnn::DType dt, vnn::Device dev) {
  vnn::Generator g(99);
  Tensor x = vnn::randn({rows, 8}, vnn::TensorOptions().with(dt), &g);
  Tensor y = vnn::randn({rows, 4}, vnn::TensorOptions().with(dt), &g);
  return {x.to(dev), y.to(dev)};
}

double max_param_diff(vnn::nn::Module& a, vnn::nn::Module& b) {
  auto pa = a.named_parameters(), pb = b.named_parameters();
  DIST_CHECK(pa.size() == pb.size(), "parameter counts differ");
  double m = 0;
  for (size_t i = 0; i < pa.size(); ++i) {
    auto x = pa[i].second.to(vnn::kFloat64).to_vector<double>(), y = pb[i].second.to(vnn::kFloat64).to_vector<double>();
    for (size_t k = 0; k < x.size(); ++k) m = std::max(m, std::fabs(x[k] - y[k]));
  }
  return m;
}

// N ranks on shards of a batch == one process on the whole batch, 20 SGD
// steps; also no_sync accumulation, state_dict keys and module().
int ddp_train(vnn::DType dt, vnn::Device dev) {
  int r = dist::rank(), ws = dist::world_size();
  const int64_t per_rank = 4, rows = per_rank * ws;
  auto [x, y] = batch(rows, dt, dev);
  auto ref = make_net(dt, dev);
  auto inner = make_net(dt, dev, 16, false, 1234 + uint64_t(r));  // different start: DDP must broadcast rank 0's
  vnn::nn::DDPOptions o;
  o.first_bucket_mb = 0.0005;  // several buckets even for this small net
  o.bucket_cap_mb = 0.001;
  auto ddp = std::make_shared<vnn::nn::DistributedDataParallel>(inner, o);
  DIST_CHECK(ddp->module() == inner, "module() is not the inner module");
  DIST_CHECK(ddp->bucket_indices().size() > 1, "expected several buckets");
  auto keys = ddp->state_dict(), ref_keys = inner->state_dict();
  DIST_CHECK(keys.size() == ref_keys.size(), "state_dict sizes");
  for (size_t i = 0; i < keys.size(); ++i) DIST_CHECK(keys[i].first == ref_keys[i].first, keys[i].first);
  DIST_CHECK(max_param_diff(*inner, *ref) == 0, "rank 0's parameters were not broadcast");

  vnn::optim::SGD opt_ref(ref->parameters(), vnn::optim::SGDOptions(0.05));
  vnn::optim::SGD opt(ddp->parameters(), vnn::optim::SGDOptions(0.05));
  Tensor xs = x.narrow(0, r * per_rank, per_rank), ys = y.narrow(0, r * per_rank, per_rank);
  for (int step = 0; step < 20; ++step) {
    opt_ref.zero_grad();
    vnn::nn::mse_loss(ref->forward(x), y).backward();
    opt_ref.step();
    opt.zero_grad();
    vnn::nn::mse_loss(ddp->forward(xs), ys).backward();
    opt.step();
  }
  double tol = dt == vnn::kFloat64 ? 1e-10 : 1e-5;
  double d = max_param_diff(*inner, *ref);
  DIST_CHECK(d <= tol, "after 20 steps DDP differs from one process by " << d << " (tolerance " << tol << ")");
  DIST_CHECK(ddp->sync_stats().syncs == 20, "syncs " << ddp->sync_stats().syncs);

  // no_sync: two local micro-batches, then a synced one == one step on the
  // gradients of all three summed (over the whole batch).
  const int64_t micro = 2;
  auto [x2, y2] = batch(3 * micro * ws, dt, dev);
  opt_ref.zero_grad();
  for (int k = 0; k < 3; ++k) {
    Tensor xb = x2.narrow(0, k * micro * ws, micro * ws), yb = y2.narrow(0, k * micro * ws, micro * ws);
    vnn::nn::mse_loss(ref->forward(xb), yb).backward();
  }
  opt_ref.step();
  opt.zero_grad();
  for (int k = 0; k < 3; ++k) {
    Tensor xb = x2.narrow(0, k * micro * ws + r * micro, micro), yb = y2.narrow(0, k * micro * ws + r * micro, micro);
    if (k < 2) {
      auto guard = ddp->no_sync();
      vnn::nn::mse_loss(ddp->forward(xb), yb).backward();
    } else {
      vnn::nn::mse_loss(ddp->forward(xb), yb).backward();
    }
  }
  opt.step();
  d = max_param_diff(*inner, *ref);
  DIST_CHECK(d <= tol, "no_sync accumulation differs by " << d);
  DIST_CHECK(ddp->sync_stats().syncs == 21, "no_sync backward synchronised");

  // Checkpoint code works unchanged: the wrapped model's checkpoint loads
  // into an unwrapped model and optimizer.
  std::string path = "/tmp/vnn-ddp-ckpt-" + std::to_string(::getpid()) + ".safetensors";
  vnn::io::save_training_checkpoint(path, *ddp, &opt, nullptr, {1, 21, {}});
  auto plain = make_net(dt, dev, 16, false, 77);
  vnn::optim::SGD opt_plain(plain->parameters(), vnn::optim::SGDOptions(0.05));
  auto progress = vnn::io::load_training_checkpoint(path, *plain, &opt_plain);
  ::unlink(path.c_str());
  DIST_CHECK(progress.step == 21, "checkpoint step " << progress.step);
  DIST_CHECK(max_param_diff(*plain, *inner) == 0, "the DDP checkpoint did not restore into the plain model");
  std::cout << "rank " << r << " ddp " << vnn::name(dt) << " max diff " << d << std::endl;
  return 0;
}

// Bucket 0's allreduce starts while backward still has gradients to make,
// and the trace shows it overlapping the backward range.
int ddp_overlap(vnn::Device dev) {
  auto inner = make_net(vnn::kFloat32, dev, 512);
  vnn::nn::DDPOptions o;
  o.first_bucket_mb = 0.01;  // fc3 alone
  o.bucket_cap_mb = 1.1;     // then fc2 and fc1 (1.02 MiB)
  auto ddp = std::make_shared<vnn::nn::DistributedDataParallel>(inner, o);
  auto [x, y] = batch(256, vnn::kFloat32, dev);
  vnn::nn::mse_loss(ddp->forward(x), y).backward();  // warm-up
  vnn::profiler::Profile prof;
  inner->zero_grad();
  vnn::nn::mse_loss(ddp->forward(x), y).backward();
  prof.stop();
  auto st = ddp->sync_stats();
  DIST_CHECK(st.hooks_pending_at_launch.size() >= 2, "buckets " << st.hooks_pending_at_launch.size());
  DIST_CHECK(st.hooks_pending_at_launch[0] > 0, "bucket 0 launched only after every gradient was ready");
  DIST_CHECK(st.hooks_pending_at_launch.back() == 0, "the last bucket launches last");
  double bw_end = -1, first_ar = -1;
  bool own_track = false;
  for (auto& e : prof.events()) {
    if (e.name == "autograd::backward") bw_end = e.start_us + e.host_us;
    if (e.name.rfind("allreduce(avg)[", 0) == 0 && (first_ar < 0 || e.start_us < first_ar)) {
      first_ar = e.start_us;
      own_track = e.thread != 0;
    }
  }
  DIST_CHECK(bw_end > 0 && first_ar > 0, "trace lacks backward or allreduce (" << bw_end << ", " << first_ar << ")");
  DIST_CHECK(first_ar < bw_end, "first allreduce at " << first_ar << " us, backward ended at " << bw_end << " us");
  DIST_CHECK(own_track, "allreduce recorded on the main thread's track");
  DIST_CHECK(prof.chrome_trace().find("collectives (") != std::string::npos, "no collectives track in the trace");
  return 0;
}

// A parameter outside the loss: without find_unused_parameters the next
// forward says which; with it, training goes on.
int ddp_unused(vnn::Device dev) {
  auto xy = batch(4, vnn::kFloat32, dev);  // not a structured binding: lambdas below capture x (C++17)
  const vnn::Tensor& x = xy.first;
  const vnn::Tensor& y = xy.second;
  {
    auto ddp = std::make_shared<vnn::nn::DistributedDataParallel>(make_net(vnn::kFloat32, dev, 16, true));
    vnn::nn::mse_loss(ddp->forward(x), y).backward();
    expect_throw<vnn::ValueError>([&] { ddp->forward(x); }, {"spare.weight", "find_unused_parameters"},
                                  "unused parameter without find_unused_parameters");
  }
  vnn::nn::DDPOptions o;
  o.find_unused_parameters = true;
  auto inner = make_net(vnn::kFloat32, dev, 16, true);
  auto ddp = std::make_shared<vnn::nn::DistributedDataParallel>(inner, o);
  for (int k = 0; k < 3; ++k) {
    inner->zero_grad();
    vnn::nn::mse_loss(ddp->forward(x), y).backward();
  }
  DIST_CHECK(ddp->sync_stats().syncs == 3, "syncs " << ddp->sync_stats().syncs);
  DIST_CHECK(inner->fc1->weight.grad().defined(), "fc1 has no gradient");
  return 0;
}

// A tied embedding / head (nanoGPT's lm_head.weight = wte.weight): DDP sees
// the one tensor once (one bucket entry, one allreduce of its summed
// gradient) and trains as one process on the whole batch.
struct TiedNet : vnn::nn::Module {
  vnn::nn::Embedding wte{nullptr};
  vnn::nn::Linear head{nullptr};
  TiedNet() : Module("TiedNet") {
    wte = register_module("wte", vnn::nn::Embedding(6, 3));
    head = register_module("head", vnn::nn::Linear(vnn::nn::LinearOptions(3, 6).bias(false)));
    head->weight = wte->weight;
  }
  Tensor forward(const Tensor& idx) { return head(vnn::tanh(wte(idx))); }
};

int ddp_tied(vnn::Device dev) {
  int r = dist::rank(), ws = dist::world_size();
  auto make = [&](uint64_t seed) {
    vnn::manual_seed(seed);
    auto n = std::make_shared<TiedNet>();
    n->to(dev);
    return n;
  };
  auto ref = make(7), inner = make(7 + uint64_t(r));
  auto ddp = std::make_shared<vnn::nn::DistributedDataParallel>(inner);
  size_t entries = 0;
  for (auto& b : ddp->bucket_indices()) entries += b.size();
  DIST_CHECK(entries == 1, "DDP holds " << entries << " gradient entries for one tied tensor");
  DIST_CHECK(ddp->parameters().size() == 1 && ddp->state_dict().size() == 2, "tied parameter counts");
  DIST_CHECK(inner->head->weight.impl() == inner->wte->weight.impl(), "the broadcast split the tie");
  const int64_t per_rank = 3;
  std::vector<int64_t> ids, labels;
  for (int64_t i = 0; i < per_rank * ws; ++i) {
    ids.push_back((i * 5 + 1) % 6);
    labels.push_back((i * 2 + 3) % 6);
  }
  Tensor idx = vnn::from_vector(ids, {per_rank * ws}).to(dev), tgt = vnn::from_vector(labels, {per_rank * ws}).to(dev);
  vnn::optim::SGD opt_ref(ref->parameters(), vnn::optim::SGDOptions(0.5));
  vnn::optim::SGD opt(ddp->parameters(), vnn::optim::SGDOptions(0.5));
  for (int step = 0; step < 3; ++step) {
    opt_ref.zero_grad();
    vnn::nn::cross_entropy(ref->forward(idx), tgt).backward();
    opt_ref.step();
    opt.zero_grad();
    vnn::nn::cross_entropy(ddp->forward(idx.narrow(0, r * per_rank, per_rank)), tgt.narrow(0, r * per_rank, per_rank))
        .backward();
    opt.step();
  }
  double d = max_param_diff(*inner, *ref);
  DIST_CHECK(d <= 1e-5, "tied DDP differs from one process by " << d);
  return 0;
}

// Rank 1 builds another model: every rank gets an error, rank 1's names it.
int ddp_mismatch(vnn::Device dev) {
  auto net = make_net(vnn::kFloat32, dev, dist::rank() == 1 ? 12 : 16);
  try {
    vnn::nn::DistributedDataParallel ddp(net);
  } catch (const vnn::ValueError& e) {
    std::string t = e.what();
    if (dist::rank() == 1)
      DIST_CHECK(t.find("fc1.weight") != std::string::npos && t.find("[12, 8]") != std::string::npos, t);
    else
      DIST_CHECK(t.find("different models") != std::string::npos, t);
    std::cout << "rank " << dist::rank() << ": " << t << std::endl;
    return 0;
  }
  fail("DistributedDataParallel accepted different models");
}

}  // namespace

// Runs between the worker main's init_process_group and destroy_process_group.
int ddp_main(const std::string& scenario, const std::string&) {
  vnn::Device dev = device_from_env();
  if (scenario == "ddp_train") return ddp_train(vnn::kFloat32, dev) | ddp_train(vnn::kFloat64, dev);
  if (scenario == "ddp_overlap") return ddp_overlap(dev);
  if (scenario == "ddp_unused") return ddp_unused(dev);
  if (scenario == "ddp_mismatch") return ddp_mismatch(dev);
  if (scenario == "ddp_tied") return ddp_tied(dev);
  fail("unknown scenario " + scenario);
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DistributedDataParallel: rank 0's state at construction, gradient buckets
// reduced from post-accumulate autograd hooks while backward goes on.
#include "vnn/detail/message.h"
#include "vnn/nn/distributed.h"

#include <algorithm>
#include <unordered_set>

#include "autograd/autograd.hpp"
#include "vnn/error.h"
#include "vnn/indexing.h"

namespace vnn::nn {

namespace {

// One line per parameter and buffer: what every rank must agree on.
std::vector<std::string> describe_state(const Module& m) {
  std::vector<std::string> out;
  for (auto& [n, t] : m.named_parameters())
    out.push_back("parameter '" + n + "' " + t.sizes().str() + " " + name(t.dtype()));
  for (auto& [n, t] : m.named_buffers()) out.push_back("buffer '" + n + "' " + t.sizes().str() + " " + name(t.dtype()));
  return out;
}

std::string join(const std::vector<std::string>& lines) {
  std::string s;
  for (auto& l : lines) s += l + "\n";
  return s;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] == '\n') {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

// Rank 0's text on every rank.
std::string broadcast_text(distributed::ProcessGroup& pg, const std::string& mine) {
  Tensor len = from_vector<int64_t>({int64_t(mine.size())}, {1});
  pg.broadcast(len, 0).wait();
  int64_t n = len.item<int64_t>();
  std::vector<uint8_t> bytes(mine.begin(), mine.end());
  bytes.resize(size_t(n));
  Tensor t = from_vector<uint8_t>(bytes, {n});
  if (n) pg.broadcast(t, 0).wait();
  auto v = t.to_vector<uint8_t>();
  return std::string(v.begin(), v.end());
}

}  // namespace

struct DistributedDataParallel::Reducer {
  struct Bucket {
    std::vector<size_t> params;   // indices into Reducer::params
    std::vector<int64_t> offsets;  // element offset of each in flat
    Tensor flat;
    int pending = 0;
    distributed::Work work;
  };

  distributed::ProcessGroup& pg;
  DDPOptions options;
  std::vector<Tensor> params;  // those that require grad, registration order
  std::vector<std::string> names;
  std::vector<Bucket> buckets;
  std::vector<size_t> bucket_of;  // param -> bucket
  // Per backward:
  bool armed = false;      // a forward prepared this backward
  bool sync = true;        // false under no_sync()
  bool iteration_sync = true;  // sync as it was at the forward that prepared this backward
  std::vector<bool> ready;
  size_t next_launch = 0;
  int64_t hooks_left = 0;
  SyncStats stats;

  Reducer(distributed::ProcessGroup& g, DDPOptions o) : pg(g), options(o) {}

  void build_buckets() {
    auto cap = [&](size_t b) {
      return size_t((b == 0 ? options.first_bucket_mb : options.bucket_cap_mb) * 1024 * 1024);
    };
    bucket_of.assign(params.size(), 0);
    size_t bytes = 0;
    for (size_t k = params.size(); k-- > 0;) {  // reverse registration order: backward's order
      const Tensor& p = params[k];
      bool fresh = buckets.empty();
      if (!fresh) {
        const Tensor& first = params[buckets.back().params.front()];
        fresh = first.dtype() != p.dtype() || first.device() != p.device() ||
                (bytes > 0 && bytes + p.nbytes() > cap(buckets.size() - 1));
      }
      if (fresh) {
        buckets.emplace_back();
        bytes = 0;
      }
      Bucket& b = buckets.back();
      b.offsets.push_back(b.params.empty() ? 0 : b.offsets.back() + params[b.params.back()].numel());
      b.params.push_back(k);
      bucket_of[k] = buckets.size() - 1;
      bytes += p.nbytes();
    }
    for (auto& b : buckets) {
      const Tensor& last = params[b.params.back()];
      int64_t n = b.offsets.back() + last.numel();
      b.flat = zeros({n}, TensorOptions(last.device()).with(last.dtype()));
    }
  }

  // A forward ran with grad enabled: the next backward syncs (unless no_sync).
  void prepare(const Tensor& output) {
    if (armed && iteration_sync && hooks_left < int64_t(params.size())) {
      std::string missing;
      for (size_t i = 0; i < params.size(); ++i)
        if (!ready[i]) missing += (missing.empty() ? "" : ", ") + names[i];
      armed = false;
      VNN_THROW(ValueError, "DistributedDataParallel: the previous backward did not produce gradients for ", missing,
                ", so their buckets were never reduced; construct with DDPOptions::find_unused_parameters = "
                "true when some parameters take no part in the loss");
    }
    armed = true;
    iteration_sync = sync;
    ready.assign(params.size(), false);
    for (auto& b : buckets) {
      b.pending = int(b.params.size());
      b.work = distributed::Work();
    }
    next_launch = 0;
    hooks_left = int64_t(params.size());
    stats.hooks_pending_at_launch.assign(buckets.size(), 0);
    if (!iteration_sync || !options.find_unused_parameters) return;
    // Parameters the graph below `output` does not reach get no hook call:
    // count them ready now (their local gradient, zero if none, is reduced).
    std::unordered_set<const vnn::detail::TensorImpl*> reached;
    if (output.defined() && output.requires_grad()) {
      std::vector<std::shared_ptr<vnn::detail::Node>> stack{vnn::detail::gradient_edge(output)};
      std::unordered_set<vnn::detail::Node*> seen;
      while (!stack.empty()) {
        auto n = stack.back();
        stack.pop_back();
        if (!n || !seen.insert(n.get()).second) continue;
        if (auto leaf = n->leaf.lock()) reached.insert(leaf.get());
        for (auto& e : n->next) stack.push_back(e.node);
      }
    }
    for (size_t i = 0; i < params.size(); ++i)
      if (!reached.count(params[i].impl())) mark_ready(i);
  }

  void mark_ready(size_t i) {
    if (!armed || !iteration_sync || ready[i]) return;
    ready[i] = true;
    --hooks_left;
    --buckets[bucket_of[i]].pending;
    // Buckets launch in index order, the same on every rank.
    while (next_launch < buckets.size() && buckets[next_launch].pending == 0) launch(next_launch++);
    if (next_launch == buckets.size()) finish();
  }

  void launch(size_t k) {
    Bucket& b = buckets[k];
    autograd::NoGradGuard no_grad;
    for (size_t j = 0; j < b.params.size(); ++j) {
      const Tensor& p = params[b.params[j]];
      Tensor slot = b.flat.narrow(0, b.offsets[j], p.numel());
      Tensor g = p.grad();
      if (g.defined()) slot.copy_(g.reshape({p.numel()}));
      else slot.zero_();
    }
    stats.hooks_pending_at_launch[k] = hooks_left;
    b.work = pg.allreduce(b.flat, distributed::ReduceOp::avg);
  }

  // Every bucket was launched: wait, and write the averages into .grad().
  void finish() {
    autograd::NoGradGuard no_grad;
    for (auto& b : buckets) {
      b.work.wait();
      for (size_t j = 0; j < b.params.size(); ++j) {
        const Tensor& p = params[b.params[j]];
        Tensor avg = b.flat.narrow(0, b.offsets[j], p.numel()).view(p.sizes());
        Tensor g = p.grad();
        if (g.defined()) g.copy_(avg);
        else Tensor(p).set_grad(avg.clone());  // a handle on the same parameter
      }
    }
    armed = false;
    ++stats.syncs;
  }
};

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<Module> module, DDPOptions options)
    : Module("DistributedDataParallel"), module_(std::move(module)), options_(options) {
  VNN_CHECK(ValueError, module_, "DistributedDataParallel: the module is null");
  if (!(options_.bucket_cap_mb > 0) || !(options_.first_bucket_mb > 0))
    VNN_THROW(ValueError, "DistributedDataParallel: bucket_cap_mb and first_bucket_mb must be positive");
  distributed::ProcessGroup& pg = options_.group ? *options_.group : distributed::group();
  share_registrations(*module_);

  // Same names and shapes everywhere, else a clear error on every rank.
  std::vector<std::string> mine = describe_state(*module_);
  std::vector<std::string> theirs = split_lines(broadcast_text(pg, join(mine)));
  std::string diff;
  for (size_t i = 0; i < std::max(mine.size(), theirs.size()) && diff.empty(); ++i) {
    std::string a = i < mine.size() ? mine[i] : "nothing", b = i < theirs.size() ? theirs[i] : "nothing";
    if (a != b)
      diff = "entry " + std::to_string(i) + " of the state is " + a + " on rank " + std::to_string(pg.rank()) +
             " but " + b + " on rank 0";
  }
  Tensor flag = from_vector<int32_t>({diff.empty() ? 0 : 1}, {1});
  pg.allreduce(flag, distributed::ReduceOp::max).wait();
  if (flag.item<int32_t>() != 0)
    VNN_THROW(ValueError, "DistributedDataParallel: the ranks hold different models: ",
              (diff.empty() ? std::string("another rank's parameters or buffers differ from rank 0's (its "
                                          "error names the first difference)")
                            : diff),
              "; build the same model on every rank");

  // Rank 0's values everywhere.
  {
    autograd::NoGradGuard no_grad;
    std::vector<distributed::Work> works;
    for (auto& t : module_->parameters()) works.push_back(pg.broadcast(t, 0));
    for (auto& t : module_->buffers()) works.push_back(pg.broadcast(t, 0));
    for (auto& w : works) w.wait();
  }

  reducer_ = std::make_shared<Reducer>(pg, options_);
  for (auto& [n, p] : module_->named_parameters())
    if (p.requires_grad()) {
      reducer_->params.push_back(p);
      reducer_->names.push_back(n);
    }
  reducer_->build_buckets();
  std::weak_ptr<Reducer> weak = reducer_;
  for (size_t i = 0; i < reducer_->params.size(); ++i)
    vnn::detail::register_post_accumulate_hook(reducer_->params[i], [weak, i] {
      if (auto r = weak.lock()) r->mark_ready(i);
    });
}

DistributedDataParallel::~DistributedDataParallel() = default;

Tensor DistributedDataParallel::forward(const Tensor& input) {
  if (options_.broadcast_buffers && reducer_->pg.size() > 1) {
    autograd::NoGradGuard no_grad;
    std::vector<distributed::Work> works;
    for (auto& t : module_->buffers()) works.push_back(reducer_->pg.broadcast(t, 0));
    for (auto& w : works) w.wait();
  }
  Tensor out = (*module_)(input);
  if (autograd::grad_enabled() && is_training()) reducer_->prepare(out);
  return out;
}

void DistributedDataParallel::train(bool on) {
  Module::train(on);
  module_->train(on);
}

std::string DistributedDataParallel::describe() const {
  return "DistributedDataParallel(" + module_->describe() + ", world_size=" + std::to_string(reducer_->pg.size()) +
         ", buckets=" + std::to_string(reducer_->buckets.size()) + ")";
}

DistributedDataParallel::NoSync DistributedDataParallel::no_sync() { return NoSync(reducer_->sync); }

std::vector<std::vector<size_t>> DistributedDataParallel::bucket_indices() const {
  std::vector<std::vector<size_t>> out;
  for (auto& b : reducer_->buckets) out.push_back(b.params);
  return out;
}

DistributedDataParallel::SyncStats DistributedDataParallel::sync_stats() const { return reducer_->stats; }

}  // namespace vnn::nn

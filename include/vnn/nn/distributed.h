// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn::nn::DistributedDataParallel: data parallelism over a process group
// (torch.nn.parallel.DistributedDataParallel's shape).
//
//   vnn::distributed::init_process_group();
//   auto net = std::make_shared<Net>();
//   net->to(vnn::distributed::local_device());
//   auto ddp = std::make_shared<vnn::nn::DistributedDataParallel>(net);
//   vnn::optim::SGD opt(ddp->parameters(), 0.1);
//   loss(ddp->forward(x), y).backward();   // gradients averaged over ranks
//   opt.step();
//
// At construction rank 0's parameters and buffers are broadcast to every
// rank, after checking that all ranks hold the same names and shapes.
// Gradients are packed into buckets (the first up to first_bucket_mb, then
// up to bucket_cap_mb each) in reverse registration order, which is roughly
// the order backward produces them; a bucket's allreduce starts from the
// autograd hooks the moment its last gradient is ready, so communication
// overlaps the rest of backward. The wrapper shares the inner module's
// parameters, buffers and submodules: state_dict() keys are the inner
// module's, and optimizers and checkpoints work unchanged.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "vnn/distributed.h"
#include "vnn/nn/module.h"
#include "vnn/nn/no_sync.h"

namespace vnn::nn {

/// Options of DistributedDataParallel: bucket sizes, unused parameters, buffer broadcast, group.
struct DDPOptions {
  /// Size cap of each gradient bucket after the first, in MiB (default 25).
  double bucket_cap_mb = 25;
  /// Size cap of the first bucket, in MiB, so the first allreduce starts early (default 1).
  double first_bucket_mb = 1;
  /// Parameters that got no gradient in a backward are treated as zero
  /// gradients (instead of the bucket waiting forever).
  bool find_unused_parameters = false;
  /// Broadcast rank 0's buffers (running statistics) at every forward (default true).
  bool broadcast_buffers = true;  // rank 0's buffers at every forward
  /// The process group to reduce over (nullptr: the default group).
  distributed::ProcessGroup* group = nullptr;  // nullptr: the default group
};

/// Data parallelism: wraps a module and averages its gradients over the ranks of a group during backward.
class DistributedDataParallel : public Module {
 public:
  /// Wraps `module`: checks every rank has the same parameter names and shapes, then broadcasts rank 0's.
  explicit DistributedDataParallel(std::shared_ptr<Module> module, DDPOptions options = {});
  /// The same for a holder or a shared_ptr of the module's own class, whose
  /// forward(Tensor) this wrapper's forward then calls (it need not derive
  /// from Cloneable).
  template <class M, std::enable_if_t<std::is_convertible_v<M&&, ModulePtr> &&
                                          !std::is_same_v<std::decay_t<M>, ModulePtr>, int> = 0>
  explicit DistributedDataParallel(M&& module, DDPOptions options = {})
      : DistributedDataParallel(nn::bind_forward(std::forward<M>(module)), std::move(options)) {}
  /// Releases the reducer; the gradient hooks left on the parameters then do nothing.
  ~DistributedDataParallel() override;

  /// The inner module's forward (buffers broadcast first when broadcast_buffers).
  Tensor forward(const Tensor& input);

 protected:
  /// forward(input), for calls through a Module reference.
  Tensor forward_erased(const Tensor& input) override { return forward(input); }

 public:
  /// The wrapped module.
  std::shared_ptr<Module> module() const { return module_; }
  /// Sets training mode on the wrapper and the inner module.
  void train(bool on = true) override;
  /// `DistributedDataParallel(<inner describe()>, world_size=N, buckets=B)`.
  std::string describe() const override;

  /// Within the scope gradients accumulate locally; the first backward after
  /// it synchronises the accumulated gradients.
  using NoSync = NoSyncScope;
  /// A NoSync scope for this wrapper: `{ auto g = ddp->no_sync(); loss.backward(); }`.
  NoSync no_sync();

  /// Bucket layout: parameter indices (registration order) of each bucket, in
  /// the order the buckets are reduced.
  std::vector<std::vector<size_t>> bucket_indices() const;
  /// Number of completed synchronisations, and for the latest one the number
  /// of gradient hooks that had still to run when each bucket's allreduce was
  /// launched (0 for the last bucket; > 0 shows overlap with backward).
  struct SyncStats {
    /// Number of completed gradient synchronisations.
    int64_t syncs = 0;
    /// Per bucket of the latest synchronisation, gradient hooks still pending when its allreduce launched.
    std::vector<int64_t> hooks_pending_at_launch;
  };
  /// The synchronisation statistics so far.
  SyncStats sync_stats() const;

  /// The bucketed allreduce machinery (defined in the library; not API).
  struct Reducer;

 private:
  std::shared_ptr<Module> module_;
  DDPOptions options_;
  std::shared_ptr<Reducer> reducer_;  // hooks hold it weakly: a dead wrapper's hooks do nothing
};

}  // namespace vnn::nn

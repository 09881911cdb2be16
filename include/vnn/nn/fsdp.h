// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn::nn::FullyShardedDataParallel: ZeRO-3 data parallelism with PyTorch
// FSDP2's behaviour (torch.distributed.fsdp.fully_shard), for models whose
// parameters, gradients and optimizer state do not fit one device.
//
//   vnn::distributed::init_process_group();
//   auto model = std::make_shared<GPT>(cfg);                  // built whole on every rank
//   vnn::nn::FSDPOptions o;
//   o.auto_wrap_policy = vnn::nn::wrap_module_types<BlockImpl>();   // each block its own unit
//   auto fsdp = vnn::nn::fully_shard(model, o);              // params now live as 1/N shards
//   vnn::optim::AdamW opt(fsdp->parameters(), 1e-3);          // Adam state on the shards only
//   loss(fsdp->forward(x), y).backward();                     // gradients reduce-scattered
//   opt.step();
//
// Units: every submodule the policy selects (the outermost match on each
// path) is one unit, the root module with whatever is left the root unit.
// A unit's parameters are flattened into one buffer per dtype (and per
// FSDPOptions::param_group), padded to a multiple of the world size and
// split: each rank keeps its 1/N slice as a leaf tensor, and parameters()
// returns those shards (what the optimizer steps). Just before a unit's
// forward its buffer is all-gathered and the module's parameter tensors
// become views into it; after the forward it is freed (memory back to the
// allocator); the unit's first backward node gathers it again (a hook on
// its output), and once every parameter of the unit has its gradient the
// gradients are flattened, reduce-scattered (average over ranks) into the
// shards' .grad(), and the buffer is freed again. The next unit's
// all-gather is started (async Work) while the current one computes, in the
// forward and in the backward. The root unit stays gathered from its
// forward to its backward, as FSDP2's root.
//
// A unit is reached through its parent's registration: FSDP re-points the
// child (Module::replace_child, which Sequential and ModuleList follow), so
// the parent must call it through the container or the registry, not
// through a member holder of its own (GPT's blocks in a ModuleList: yes;
// BlockImpl::attn called as the member `attn`: no). Every parameter of a
// unit that runs must receive a gradient in each backward.
//
// state_dict() of the wrapper holds the local shards ("flat_param_<k>");
// full_state_dict() gathers the unwrapped model's state dict (PyTorch keys)
// to rank 0, and save_sharded_checkpoint / load_sharded_checkpoint write and
// read per-rank shards that resume on any world size. docs/distributed.md,
// "Fully sharded data parallel".
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <typeinfo>
#include <vector>

#include "vnn/distributed.h"
#include "vnn/io/checkpoint.h"
#include "vnn/nn/module.h"
#include "vnn/nn/no_sync.h"
#include "vnn/optim/optimizer.h"

namespace vnn::nn {

/// Mixed precision of FSDP (torch's MixedPrecisionPolicy): parameters
/// gathered and computed in param_dtype, gradients reduced in reduce_dtype;
/// the shards (and the optimizer) keep the model's dtype.
struct MixedPrecisionPolicy {
  /// Dtype of the gathered parameters (nullopt: the model's).
  std::optional<DType> param_dtype;
  /// Dtype of the reduce-scatter: float32 or float64 (nullopt: param_dtype's
  /// when it is float32/float64, else float32).
  std::optional<DType> reduce_dtype;
  /// The root casts floating inputs to param_dtype.
  bool cast_forward_inputs = true;
};

/// Which submodules become units of their own: called with the dotted path
/// and the module; the outermost match on each path wins.
using AutoWrapPolicy = std::function<bool(const std::string& path, const Module& module)>;

/// A policy wrapping every submodule of one of the classes Ts (the Impl
/// classes: wrap_module_types<BlockImpl>(), torch's ModuleWrapPolicy).
template <class... Ts>
AutoWrapPolicy wrap_module_types() {
  return [](const std::string&, const Module& m) { return ((dynamic_cast<const Ts*>(&m) != nullptr) || ...); };
}

/// Options of FullyShardedDataParallel.
struct FSDPOptions {
  /// Submodules that become units (empty: the root unit holds everything).
  AutoWrapPolicy auto_wrap_policy;
  /// Free a unit's gathered parameters after its forward (ZeRO-3; false
  /// keeps them until its backward, ZeRO-2's memory). The root always keeps them.
  bool reshard_after_forward = true;
  /// Gathered dtype and reduction dtype.
  MixedPrecisionPolicy mixed_precision;
  /// Start the next unit's all-gather (in last iteration's order) when a unit's forward starts.
  bool forward_prefetch = true;
  /// Start the previous unit's all-gather when a unit's backward starts.
  bool backward_prefetch = true;
  /// Run every unit (not the root) under vnn::utils::checkpoint: its
  /// activations are recomputed in the backward, which gathers it once.
  bool activation_checkpointing = false;
  /// Splits a unit's parameters into several flat shards by group id
  /// (e.g. matrices vs the rest, for weight decay on matrices only); the
  /// shards of group g are shard_parameters(g). Null: one group, 0.
  std::function<int(const std::string& name, const Tensor& param)> param_group;
  /// Broadcast rank 0's parameters and buffers at construction.
  bool sync_module_states = true;
  /// The process group (nullptr: the default group).
  distributed::ProcessGroup* group = nullptr;
};

/// ZeRO-3 sharded data parallelism (see the file comment).
class FullyShardedDataParallel : public Module {
 public:
  /// Shards `module` (built whole, the same on every rank) across the group's ranks.
  explicit FullyShardedDataParallel(std::shared_ptr<Module> module, FSDPOptions options = {});
  /// The same for a holder or a shared_ptr of the module's own class, whose
  /// forward(Tensor) this wrapper's forward then calls (it need not derive
  /// from Cloneable).
  template <class M, std::enable_if_t<std::is_convertible_v<M&&, ModulePtr> &&
                                          !std::is_same_v<std::decay_t<M>, ModulePtr>, int> = 0>
  explicit FullyShardedDataParallel(M&& module, FSDPOptions options = {})
      : FullyShardedDataParallel(nn::bind_forward(std::forward<M>(module)), std::move(options)) {}
  /// Frees the shards; the module is left with empty parameters.
  ~FullyShardedDataParallel() override;

  /// The module's forward: gathers the root unit (and each unit as it runs).
  Tensor forward(const Tensor& input);

 protected:
  /// forward(input), for calls through a Module reference.
  Tensor forward_erased(const Tensor& input) override { return forward(input); }

 public:
  /// The wrapped module (its units re-pointed at their wrappers).
  std::shared_ptr<Module> module() const { return module_; }
  /// Training mode on the wrapper and the module.
  void train(bool on = true) override;
  /// `FullyShardedDataParallel(<module type>, world_size=N, units=U, numel=P)`.
  std::string describe() const override;

  /// The shards of parameter group `group` (FSDPOptions::param_group), one per unit and dtype.
  std::vector<Tensor> shard_parameters(int group = 0) const;
  /// Dotted paths of the units, the root ("") first.
  std::vector<std::string> unit_paths() const;
  /// Elements of the largest unit's gathered buffer (padded), and of all units.
  int64_t max_unit_numel() const;
  /// Elements of all units' gathered buffers (padded): the whole model.
  int64_t total_numel() const;

  /// Gradient synchronisation on (the default) or off: off, backward leaves
  /// the full gradients on the module's parameters and the next synchronised
  /// backward reduce-scatters their sum (FSDP2's set_requires_gradient_sync).
  void set_requires_gradient_sync(bool on);
  /// A scope with gradient synchronisation off.
  using NoSync = NoSyncScope;
  /// A NoSync scope for this wrapper: `{ auto g = fsdp->no_sync(); loss.backward(); }`.
  NoSync no_sync();

  /// Clips the gradient norm over every rank's shards (the whole model's
  /// norm, each tied tensor once) to max_norm; returns the norm before clipping.
  double clip_grad_norm_(double max_norm);

  /// The unwrapped module's state dict (PyTorch keys, tied names included),
  /// gathered: on rank 0 only when rank0_only (others get an empty dict), on
  /// every rank otherwise; host (cpu) tensors in the model's dtypes.
  StateDict full_state_dict(bool rank0_only = true);
  /// Loads a full state dict (every rank passes the whole dict): each rank
  /// keeps its slices. strict as Module::load_state_dict.
  void load_full_state_dict(const StateDict& state, bool strict = true);

  /// Writes this rank's shards (and its optimizer's state for them) to
  /// `dir`/rank-R-of-N.safetensors (R this rank, N the world size), then rank 0 writes `dir`/index.safetensors
  /// (buffers, layout, progress, RNG state), each file atomically; returns when every rank is done.
  void save_sharded_checkpoint(const std::string& dir, const optim::Optimizer* optimizer = nullptr,
                               const io::TrainingProgress& progress = {});
  /// Reads a sharded checkpoint written by any number of ranks (the same
  /// model and optimizer layout) into this wrapper and `optimizer`; each
  /// rank reads the old shards overlapping its own, one file at a time.
  /// FormatError / ValueError name the file and the mismatch.
  io::TrainingProgress load_sharded_checkpoint(const std::string& dir, optim::Optimizer* optimizer = nullptr);

  /// Counters: collectives issued and how many all-gathers were prefetched.
  struct Stats {
    /// All-gathers issued (forward, backward and prefetches).
    int64_t all_gathers = 0;
    /// Of those, started ahead of the unit's use.
    int64_t prefetched = 0;
    /// Reduce-scatters issued.
    int64_t reduce_scatters = 0;
    /// Backward passes whose gradients were reduced.
    int64_t syncs = 0;
  };
  /// The counters so far.
  Stats stats() const;

  /// The sharding machinery (defined in the library; not API).
  struct State;

 private:
  std::shared_ptr<Module> module_;
  std::shared_ptr<State> state_;
};

/// FSDP2's spelling: wraps `module` (see FullyShardedDataParallel).
std::shared_ptr<FullyShardedDataParallel> fully_shard(std::shared_ptr<Module> module, FSDPOptions options = {});

}  // namespace vnn::nn

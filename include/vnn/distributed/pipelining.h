// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file
/// Pipeline parallelism (torch.distributed.pipelining's spelling): a model
/// cut into stages, each on its own device (in one process) or its own rank
/// (one stage per process), fed with micro-batches by a schedule.
///
///   // One process, two devices: both stages here, activations moved by .to().
///   namespace pp = vnn::distributed::pipelining;
///   auto parts = pp::split_sequential(model, {3});            // children [0, 3) and [3, end)
///   pp::PipelineStage s0(parts[0], 0, 2, vnn::Device("cpu", 0));
///   pp::PipelineStage s1(parts[1], 1, 2, vnn::Device("opencl", 0));
///   pp::Schedule1F1B sched({&s0, &s1}, 8, [](const vnn::Tensor& out, const vnn::Tensor& y) {
///     return vnn::nn::mse_loss(out, y);
///   });
///   vnn::Tensor loss = sched.step(x, y);                      // .grad() as one full-batch step
///   opt.step();
///
///   // One stage per rank (vnn-run --nproc-per-node 2): stage r on rank r.
///   pp::PipelineStage stage(parts[rank], rank, 2, vnn::distributed::local_device(), vnn::distributed::group());
///   pp::ScheduleGPipe sched(stage, 8, loss_fn);
///   sched.step(x, y);  // the first stage reads x, the last y; a middle stage may call step()
///
/// step() splits the batch along dim 0 into n_microbatches pieces (sizes
/// differ by at most one, as torch.tensor_split), runs each through every
/// stage, computes loss_fn on the last stage per micro-batch, and
/// back-propagates `loss_mb / n_microbatches` (torch's scale_grads), so
/// after the step every parameter's .grad() holds what it would after
/// `loss_fn(model(x), y).backward()` on the whole batch (for a mean loss
/// and equal micro-batches; up to summation order); earlier .grad() values
/// are added to, as backward() does. Each stage keeps its own autograd
/// graph per micro-batch: its input is a leaf, the gradient of that input
/// goes back to the previous stage (by .to() or by send / recv, with a
/// small header giving the shape and dtype of each activation ahead of it).
/// ScheduleGPipe runs every forward, then every backward; Schedule1F1B
/// runs (num_stages - 1 - stage) forwards, then alternates one forward and
/// one backward, so a stage holds at most (num_stages - stage) micro-batches
/// of activations at once. Without a loss function step() runs the
/// forwards only and returns the output. A failure on one rank (an
/// OutOfMemory in its stage, say) aborts the group: the other ranks throw
/// DistributedError naming it instead of waiting. docs/distributed.md,
/// "Pipeline parallelism".
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vnn/distributed.h"
#include "vnn/nn/container.h"

namespace vnn::distributed::pipelining {

/// The loss of one micro-batch: output of the last stage, target slice; a scalar.
using LossFn = std::function<Tensor(const Tensor& output, const Tensor& target)>;

/// Splits `seq` before each index of `split_points` (strictly increasing,
/// in 1..size()-1): {3, 5} gives children [0, 3), [3, 5) and [5, size()).
/// The stages share the children with `seq` (no copy); each names its
/// children by their index in `seq`, so a stage's state_dict keys ("3.weight")
/// are the full model's. ValueError for bad split points.
std::vector<nn::ModulePtr> split_sequential(const nn::Sequential& seq, const std::vector<size_t>& split_points);

/// One stage of a pipeline: a module, where it runs and where its neighbours are.
class PipelineStage {
 public:
  /// A stage of a pipeline whose stages all live in this process (give all
  /// of them to one schedule); the module is moved to `device`.
  PipelineStage(nn::ModulePtr module, int stage_index, int num_stages, Device device);
  /// A stage of a pipeline over the ranks of `group`, stage i on rank i:
  /// this process must be rank `stage_index`, and the group must have at
  /// least `num_stages` ranks. The module is moved to `device`.
  PipelineStage(nn::ModulePtr module, int stage_index, int num_stages, Device device, ProcessGroup& group);
  /// Either of the above for a holder or a shared_ptr of the module's own
  /// class, whose forward(Tensor) the stage then calls (it need not derive
  /// from Cloneable).
  template <class M, class... Rest,
            std::enable_if_t<std::is_convertible_v<M&&, nn::ModulePtr> && !std::is_same_v<std::decay_t<M>, nn::ModulePtr>,
                             int> = 0>
  PipelineStage(M&& module, int stage_index, int num_stages, Device device, Rest&&... group)
      : PipelineStage(nn::bind_forward(std::forward<M>(module)), stage_index, num_stages, std::move(device),
                      std::forward<Rest>(group)...) {}

  /// The stage's module.
  const nn::ModulePtr& module() const { return module_; }
  /// This stage's position, 0..num_stages()-1.
  int stage_index() const { return index_; }
  /// How many stages the pipeline has.
  int num_stages() const { return num_stages_; }
  /// Whether this is stage 0 (it reads the input).
  bool is_first() const { return index_ == 0; }
  /// Whether this is the last stage (it computes the loss).
  bool is_last() const { return index_ == num_stages_ - 1; }
  /// Where the module, its inputs and its outputs live.
  const Device& device() const { return device_; }
  /// The group of a stage on ranks; nullptr for an in-process stage.
  ProcessGroup* group() const { return group_; }
  /// The most micro-batches whose activations this stage held at once in
  /// the last step (GPipe: all; 1F1B: at most num_stages() - stage_index()).
  int peak_in_flight() const { return peak_in_flight_; }

 private:
  friend class PipelineSchedule;
  nn::ModulePtr module_;
  int index_, num_stages_;
  Device device_;
  ProcessGroup* group_ = nullptr;
  int peak_in_flight_ = 0;
};

/// One entry of a schedule's order for a stage: forward or backward of a micro-batch.
struct Action {
  /// Forward ("F") or backward ("B").
  enum Kind { forward, backward };
  /// Which pass.
  Kind kind;
  /// Which micro-batch, 0..n_microbatches-1.
  int microbatch;
  /// "F3", "B0".
  std::string str() const;
};

/// What ScheduleGPipe and Schedule1F1B share: running the micro-batches through the stages.
class PipelineSchedule {
 public:
  /// Virtual: used through base references.
  virtual ~PipelineSchedule() = default;
  /// One pipelined step. `input` (first stage) and `target` (last stage,
  /// when there is a loss function) are whole batches, split along dim 0;
  /// a stage ignores what it does not read, so a middle stage may pass
  /// nothing. Returns the mean of the micro-batch losses on the process
  /// that holds the last stage (the output, concatenated, without a loss
  /// function), else an undefined tensor. Parameters' .grad() accumulate.
  Tensor step(const Tensor& input = Tensor(), const Tensor& target = Tensor());
  /// The last step's loss of each micro-batch (detached; last stage only).
  const std::vector<Tensor>& losses() const { return losses_; }
  /// The number of micro-batches a step is split into.
  int n_microbatches() const { return n_microbatches_; }
  /// The order this schedule runs the passes of stage `stage_index` in.
  virtual std::vector<Action> actions(int stage_index) const = 0;
  /// The order as text: "F0 F1 B0 F2 B1 ...".
  std::string order(int stage_index) const;

 protected:
  /// The local stages: all of an in-process pipeline, or this rank's one.
  PipelineSchedule(std::vector<PipelineStage*> stages, int n_microbatches, LossFn loss_fn, const char* name);

  /// Stages per pipeline.
  int num_stages() const { return num_stages_; }
  /// ValueError unless 0 <= stage_index < num_stages().
  void check_stage_index(int stage_index) const;

 private:
  struct Run;
  std::vector<PipelineStage*> stages_;
  int n_microbatches_, num_stages_ = 0;
  LossFn loss_fn_;
  std::string name_;
  std::vector<Tensor> losses_;
};

/// GPipe: every micro-batch's forward, then every backward (in reverse).
class ScheduleGPipe : public PipelineSchedule {
 public:
  /// One stage per rank: this rank's stage.
  ScheduleGPipe(PipelineStage& stage, int n_microbatches, LossFn loss_fn = nullptr);
  /// In one process: every stage of the pipeline.
  ScheduleGPipe(std::vector<PipelineStage*> stages, int n_microbatches, LossFn loss_fn = nullptr);
  /// F0 .. F(n-1), then B(n-1) .. B0.
  std::vector<Action> actions(int stage_index) const override;
};

/// 1F1B: a warm-up of (num_stages - 1 - stage) forwards, then one forward
/// and one backward in turn, then the remaining backwards.
class Schedule1F1B : public PipelineSchedule {
 public:
  /// One stage per rank: this rank's stage.
  Schedule1F1B(PipelineStage& stage, int n_microbatches, LossFn loss_fn = nullptr);
  /// In one process: every stage of the pipeline.
  Schedule1F1B(std::vector<PipelineStage*> stages, int n_microbatches, LossFn loss_fn = nullptr);
  /// Warm-up forwards, then F/B pairs, then the cool-down backwards.
  std::vector<Action> actions(int stage_index) const override;
};

}  // namespace vnn::distributed::pipelining

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Pipeline parallelism: stages, the GPipe and 1F1B orders, and the runner
// that carries activations forward and their gradients back, by .to()
// between stages of this process and by send / recv between ranks.
#include "vnn/distributed/pipelining.h"

#include <algorithm>
#include <map>
#include <utility>

#include "vnn/autograd.h"
#include "vnn/creation.h"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/indexing.h"

namespace vnn::distributed::pipelining {

namespace {

// A run of a Sequential's children under their names in the Sequential.
class StageSlice : public nn::Module {
 public:
  StageSlice(const nn::SequentialImpl& seq, size_t begin, size_t end) : Module("PipelineStageModule") {
    for (size_t i = begin; i < end; ++i) {
      calls_.push_back(seq.any_module(i));
      add_child(std::to_string(i), seq[i]);
    }
    first_ = begin;
  }
  Tensor forward_erased(const Tensor& input) override {
    Tensor x = input;
    for (auto& m : calls_) x = m.forward(x);
    return x;
  }
  std::string describe() const override {
    return ::vnn::detail::str_cat("PipelineStageModule(children ", first_, "..", first_ + calls_.size() - 1, ")");
  }

 private:
  std::vector<nn::AnyModule> calls_;
  size_t first_ = 0;
};

void check_stage(const nn::ModulePtr& module, int index, int n) {
  VNN_CHECK(ValueError, module != nullptr, "PipelineStage: stage ", index, " has no module (a null pointer)");
  VNN_CHECK(ValueError, n >= 1, "PipelineStage: num_stages must be at least 1, got ", n);
  VNN_CHECK(ValueError, index >= 0 && index < n, "PipelineStage: stage_index ", index, " is outside 0..", n - 1,
            " (num_stages ", n, ")");
}

// The shape and dtype of an activation, sent ahead of it between ranks.
constexpr int kMaxDims = 8;
constexpr int64_t kHeaderMagic = 0x766e6e7070;  // "vnnpp"

// n pieces along dim 0 whose sizes differ by at most one, the larger first (torch.tensor_split).
std::vector<Tensor> micro_batches(const Tensor& t, int n) {
  std::vector<int64_t> sizes(size_t(n), t.size(0) / n);
  for (int64_t k = 0; k < t.size(0) % n; ++k) ++sizes[size_t(k)];
  return t.split(sizes, 0);
}

Tensor header_of(const Tensor& t) {
  std::vector<int64_t> h(2 + 1 + kMaxDims, 0);
  h[0] = kHeaderMagic;
  h[1] = int64_t(t.dtype());
  h[2] = t.dim();
  for (int d = 0; d < t.dim(); ++d) h[size_t(3 + d)] = t.size(d);
  return from_vector<int64_t>(h, {int64_t(h.size())});
}

}  // namespace

std::vector<nn::ModulePtr> split_sequential(const nn::Sequential& seq, const std::vector<size_t>& split_points) {
  VNN_CHECK(ValueError, !seq.is_empty(), "split_sequential: the Sequential is an empty holder (nullptr)");
  const nn::SequentialImpl& s = *seq;
  size_t prev = 0;
  for (size_t p : split_points) {
    VNN_CHECK(ValueError, p > prev && p < s.size(), "split_sequential: split point ", p,
              " must be greater than the previous one (", prev, ") and less than the number of children (",
              s.size(), "); each stage needs at least one child");
    prev = p;
  }
  std::vector<nn::ModulePtr> out;
  size_t begin = 0;
  for (size_t i = 0; i <= split_points.size(); ++i) {
    size_t end = i < split_points.size() ? split_points[i] : s.size();
    out.push_back(std::make_shared<StageSlice>(s, begin, end));
    begin = end;
  }
  return out;
}

PipelineStage::PipelineStage(nn::ModulePtr module, int stage_index, int num_stages, Device device)
    : module_(std::move(module)), index_(stage_index), num_stages_(num_stages), device_(device) {
  check_stage(module_, index_, num_stages_);
  module_->to(device_);
}

PipelineStage::PipelineStage(nn::ModulePtr module, int stage_index, int num_stages, Device device,
                             ProcessGroup& group)
    : PipelineStage(std::move(module), stage_index, num_stages, device) {
  VNN_CHECK(ValueError, group.size() >= num_stages, "PipelineStage: ", num_stages, " stages need ", num_stages,
            " ranks (stage i runs on rank i), but the group has ", group.size());
  VNN_CHECK(ValueError, group.rank() == stage_index, "PipelineStage: stage ", stage_index, " runs on rank ",
            stage_index, ", but this process is rank ", group.rank(),
            "; build the stage whose index is this process's rank");
  group_ = &group;
}

std::string Action::str() const { return (kind == forward ? "F" : "B") + std::to_string(microbatch); }

void PipelineSchedule::check_stage_index(int stage_index) const {
  VNN_CHECK(ValueError, stage_index >= 0 && stage_index < num_stages_, name_, "::actions: stage ", stage_index,
            " is outside 0..", num_stages_ - 1);
}

std::string PipelineSchedule::order(int stage_index) const {
  std::string s;
  for (const Action& a : actions(stage_index)) s += (s.empty() ? "" : " ") + a.str();
  return s;
}

PipelineSchedule::PipelineSchedule(std::vector<PipelineStage*> stages, int n_microbatches, LossFn loss_fn,
                                   const char* name)
    : stages_(std::move(stages)), n_microbatches_(n_microbatches), loss_fn_(std::move(loss_fn)), name_(name) {
  VNN_CHECK(ValueError, !stages_.empty(), name_, ": no stages given");
  VNN_CHECK(ValueError, n_microbatches_ >= 1, name_, ": n_microbatches must be at least 1, got ", n_microbatches_);
  for (auto* s : stages_) VNN_CHECK(ValueError, s != nullptr, name_, ": a stage pointer is null");
  num_stages_ = stages_[0]->num_stages();
  std::sort(stages_.begin(), stages_.end(),
            [](const PipelineStage* a, const PipelineStage* b) { return a->stage_index() < b->stage_index(); });
  if (stages_[0]->group()) {
    VNN_CHECK(ValueError, stages_.size() == 1, name_, ": ", stages_.size(),
              " stages on ranks were given; a schedule over ranks runs this rank's one stage (pass the stage "
              "itself), or pass every stage of an in-process pipeline (built without a group)");
    return;
  }
  VNN_CHECK(ValueError, int(stages_.size()) == num_stages_, name_, ": an in-process pipeline of ", num_stages_,
            " stages needs all of them, got ", stages_.size(),
            " (a stage built with a process group runs on its own rank: pass that one stage)");
  for (int i = 0; i < num_stages_; ++i) {
    VNN_CHECK(ValueError, stages_[size_t(i)]->num_stages() == num_stages_, name_, ": stage ",
              stages_[size_t(i)]->stage_index(), " says num_stages ", stages_[size_t(i)]->num_stages(),
              " but stage ", stages_[0]->stage_index(), " says ", num_stages_);
    VNN_CHECK(ValueError, stages_[size_t(i)]->stage_index() == i, name_, ": stage ", i,
              " is missing (or given twice); an in-process pipeline needs stages 0..", num_stages_ - 1);
    VNN_CHECK(ValueError, stages_[size_t(i)]->group() == nullptr, name_, ": stage ", i,
              " was built with a process group; do not mix in-process and per-rank stages");
  }
}

// ---- one step ---------------------------------------------------------------

struct PipelineSchedule::Run {
  PipelineSchedule& sched;
  int n, ns;
  bool distributed;
  std::vector<Tensor> inputs, targets;  // micro-batches (first / last stage)
  struct Slot {
    Tensor x, y, loss;  // the stage's input leaf, its output, the micro-batch loss (last stage)
  };
  struct StageState {
    PipelineStage* stage = nullptr;
    std::vector<Action> actions;
    size_t next = 0;
    std::vector<Slot> slots;
    std::map<int, Tensor> acts, grads;  // arrived from the neighbours in this process
    int in_flight = 0;
  };
  std::vector<StageState> st;  // by position in sched.stages_
  std::vector<Work> sends;
  std::vector<Tensor> outputs;  // last stage, no loss function

  Run(PipelineSchedule& s) : sched(s), n(s.n_microbatches_), ns(s.num_stages_), distributed(s.stages_[0]->group()) {}

  StageState* local(int index) {
    for (auto& s : st)
      if (s.stage->stage_index() == index) return &s;
    return nullptr;
  }
  int tag(int mb, int what) const { return 3 * mb + what; }  // what: 0 header, 1 activation, 2 gradient

  bool ready(StageState& s) {
    const Action& a = s.actions[s.next];
    int i = s.stage->stage_index();
    if (distributed) return true;  // receives block
    if (a.kind == Action::forward) return i == 0 || s.acts.count(a.microbatch);
    return i == ns - 1 || s.grads.count(a.microbatch);
  }

  Tensor receive_activation(StageState& s, int mb) {
    int i = s.stage->stage_index();
    if (i == 0) return inputs[size_t(mb)];
    if (!distributed) {
      Tensor t = std::move(s.acts[mb]);
      s.acts.erase(mb);
      return t;
    }
    ProcessGroup& g = *s.stage->group();
    Tensor h = empty({3 + kMaxDims}, TensorOptions().with(kInt64));
    g.recv(h, i - 1, tag(mb, 0)).wait();
    auto v = h.to_vector<int64_t>();
    VNN_CHECK(DistributedError, v[0] == kHeaderMagic && v[2] >= 0 && v[2] <= kMaxDims, "rank ", g.rank(), ": ",
              sched.name_, ": the activation header of micro-batch ", mb, " from rank ", i - 1,
              " is malformed; every rank must run the same schedule with the same n_microbatches");
    std::vector<int64_t> sizes(v.begin() + 3, v.begin() + 3 + v[2]);
    Tensor x = empty(Shape(sizes), TensorOptions(s.stage->device()).with(DType(v[1])));
    g.recv(x, i - 1, tag(mb, 1)).wait();
    return x;
  }

  void forward(StageState& s, int mb) {
    int i = s.stage->stage_index();
    Slot& slot = s.slots[size_t(mb)];
    Tensor in = receive_activation(s, mb);
    if (i > 0 && in.is_floating_point()) {
      in = in.detach();
      in.requires_grad_(true);
    }
    slot.x = in;
    slot.y = (*s.stage->module())(in);
    VNN_CHECK(ValueError, slot.y.defined(), sched.name_, ": stage ", i, " returned an undefined tensor for micro-batch ",
              mb);
    if (i == ns - 1) {
      if (sched.loss_fn_) {
        slot.loss = sched.loss_fn_(slot.y, targets[size_t(mb)]);
        VNN_CHECK(ShapeError, slot.loss.numel() == 1, sched.name_, ": the loss function must return a scalar, got ",
                  "shape ", slot.loss.sizes(), " for micro-batch ", mb);
        sched.losses_[size_t(mb)] = slot.loss.detach();
        slot.y = Tensor();  // the loss holds what backward needs
      } else {
        outputs[size_t(mb)] = slot.y.detach();
        slot = Slot();
        return;
      }
    } else if (!distributed) {
      StageState* next = local(i + 1);
      autograd::NoGradGuard no_grad;
      next->acts[mb] = slot.y.detach().to(next->stage->device());
    } else {
      ProcessGroup& g = *s.stage->group();
      Tensor y = slot.y.detach();
      sends.push_back(g.send(header_of(y), i + 1, tag(mb, 0)));
      sends.push_back(g.send(y, i + 1, tag(mb, 1)));
    }
    s.stage->peak_in_flight_ = std::max(s.stage->peak_in_flight_, ++s.in_flight);
  }

  void backward(StageState& s, int mb) {
    int i = s.stage->stage_index();
    Slot& slot = s.slots[size_t(mb)];
    if (i == ns - 1) {
      if (slot.loss.requires_grad()) slot.loss.backward(full_like(slot.loss, 1.0 / n));
    } else {
      Tensor g;
      if (!distributed) {
        g = std::move(s.grads[mb]);
        s.grads.erase(mb);
      } else {
        g = empty(slot.y.sizes(), TensorOptions(s.stage->device()).with(slot.y.dtype()));
        s.stage->group()->recv(g, i + 1, tag(mb, 2)).wait();
      }
      if (slot.y.requires_grad()) slot.y.backward(g);
    }
    if (i > 0 && slot.x.is_floating_point()) {
      Tensor gx = slot.x.grad();
      if (!gx.defined()) gx = zeros_like(slot.x.detach());
      if (!distributed) {
        StageState* prev = local(i - 1);
        prev->grads[mb] = gx.to(prev->stage->device());
      } else {
        sends.push_back(s.stage->group()->send(gx, i - 1, tag(mb, 2)));
      }
    }
    slot = Slot();
    --s.in_flight;
  }
};

Tensor PipelineSchedule::step(const Tensor& input, const Tensor& target) {
  Run run(*this);
  bool has_first = stages_.front()->is_first(), has_last = stages_.back()->is_last();
  if (has_first) {
    VNN_CHECK(ValueError, input.defined(), name_, "::step: the first stage needs the input batch, got none");
    VNN_CHECK(ShapeError, input.dim() >= 1 && input.size(0) >= n_microbatches_, name_, "::step: an input of shape ",
              input.sizes(), " cannot be split into ", n_microbatches_, " micro-batches along dim 0");
    run.inputs = micro_batches(input, n_microbatches_);
    for (auto& t : run.inputs) t = t.to(stages_.front()->device());
  }
  if (has_last && loss_fn_) {
    VNN_CHECK(ValueError, target.defined(), name_,
              "::step: the last stage computes the loss and needs the target batch, got none");
    VNN_CHECK(ShapeError, target.dim() >= 1 && target.size(0) >= n_microbatches_, name_, "::step: a target of shape ",
              target.sizes(), " cannot be split into ", n_microbatches_, " micro-batches along dim 0");
    if (has_first)
      VNN_CHECK(ShapeError, target.size(0) == input.size(0), name_, "::step: the input has ", input.size(0),
                " rows but the target ", target.size(0), "; both are split along dim 0");
    run.targets = micro_batches(target, n_microbatches_);
    for (auto& t : run.targets) t = t.to(stages_.back()->device());
  }
  losses_.assign(has_last && loss_fn_ ? size_t(n_microbatches_) : 0, Tensor());
  run.outputs.assign(has_last && !loss_fn_ ? size_t(n_microbatches_) : 0, Tensor());
  for (PipelineStage* s : stages_) {
    Run::StageState ss;
    ss.stage = s;
    ss.slots.resize(size_t(n_microbatches_));
    for (const Action& a : actions(s->stage_index()))
      if (a.kind == Action::forward || loss_fn_) ss.actions.push_back(a);  // no loss: forwards only
    s->peak_in_flight_ = 0;
    run.st.push_back(std::move(ss));
  }
  try {
    // Round-robin over the local stages: each runs its next pass once what it needs has arrived.
    for (bool left = true; left;) {
      left = false;
      bool progress = false;
      for (auto& s : run.st) {
        if (s.next == s.actions.size()) continue;
        left = true;
        if (!run.ready(s)) continue;
        const Action& a = s.actions[s.next++];
        if (a.kind == Action::forward) run.forward(s, a.microbatch);
        else run.backward(s, a.microbatch);
        progress = true;
      }
      VNN_CHECK(ValueError, !left || progress, name_,
                ": the schedule's order cannot proceed (a stage waits on a pass that never runs)");
    }
    for (auto& w : run.sends) w.wait();
  } catch (const DistributedError&) {
    throw;
  } catch (const std::exception& e) {
    // The other ranks wait on this one: tell them (an OutOfMemory has done so already).
    if (ProcessGroup* g = stages_.front()->group())
      g->abort(::vnn::detail::str_cat(name_, "::step of stage ", stages_.front()->stage_index(), ": ", e.what()));
    throw;
  }
  if (!has_last) return Tensor();
  if (!loss_fn_) return cat(run.outputs, 0);
  Tensor sum = losses_[0].to(kFloat64);
  for (size_t k = 1; k < losses_.size(); ++k) sum = sum + losses_[k].to(kFloat64);
  return (sum * (1.0 / double(n_microbatches_))).to(losses_[0].dtype());
}

// ---- the orders -------------------------------------------------------------

ScheduleGPipe::ScheduleGPipe(PipelineStage& stage, int n_microbatches, LossFn loss_fn)
    : PipelineSchedule({&stage}, n_microbatches, std::move(loss_fn), "ScheduleGPipe") {}
ScheduleGPipe::ScheduleGPipe(std::vector<PipelineStage*> stages, int n_microbatches, LossFn loss_fn)
    : PipelineSchedule(std::move(stages), n_microbatches, std::move(loss_fn), "ScheduleGPipe") {}

std::vector<Action> ScheduleGPipe::actions(int stage_index) const {
  check_stage_index(stage_index);
  std::vector<Action> out;
  for (int mb = 0; mb < n_microbatches(); ++mb) out.push_back({Action::forward, mb});
  for (int mb = n_microbatches() - 1; mb >= 0; --mb) out.push_back({Action::backward, mb});
  return out;
}

Schedule1F1B::Schedule1F1B(PipelineStage& stage, int n_microbatches, LossFn loss_fn)
    : PipelineSchedule({&stage}, n_microbatches, std::move(loss_fn), "Schedule1F1B") {}
Schedule1F1B::Schedule1F1B(std::vector<PipelineStage*> stages, int n_microbatches, LossFn loss_fn)
    : PipelineSchedule(std::move(stages), n_microbatches, std::move(loss_fn), "Schedule1F1B") {}

std::vector<Action> Schedule1F1B::actions(int stage_index) const {
  check_stage_index(stage_index);
  const int n = n_microbatches();
  const int warmup = std::min(n, num_stages() - stage_index);  // forwards before the first backward
  std::vector<Action> out;
  int f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back({Action::forward, f});
  while (b < n) {
    out.push_back({Action::backward, b++});
    if (f < n) out.push_back({Action::forward, f++});
  }
  return out;
}

}  // namespace vnn::distributed::pipelining

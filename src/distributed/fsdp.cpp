// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// FullyShardedDataParallel: units found by the wrap policy, their parameters
// flattened and sharded, gathered around each forward and backward (the
// gathered buffer's memory given back in between), gradients reduce-
// scattered into the shards from post-accumulate hooks.
#include "vnn/nn/fsdp.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "autograd/autograd.hpp"
#include "distributed/fsdp_state.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/reduction.h"
#include "vnn/utils/checkpoint.h"

namespace vnn::nn {

namespace {

using Status = FlatParam::Status;

// The buffer's memory goes back to the caching allocator; the Storage object
// (which the autograd graph's saved views share) stays, empty, until
// give_memory refills it in place.
void take_memory(const Tensor& t) {
  auto& s = *t.impl()->storage;
  if (!s.handle) return;
  auto gone = std::make_shared<vnn::detail::Storage>();
  gone->ctx = s.ctx;
  gone->kind = s.kind;
  gone->handle = s.handle;
  gone->bytes = s.bytes;
  s.handle = nullptr;  // `gone` releases the block now
}

void give_memory(const Tensor& t, size_t bytes) {
  auto& s = *t.impl()->storage;
  if (s.handle) return;
  auto fresh = vnn::detail::allocate_storage(*s.ctx, bytes);
  s.handle = fresh->handle;
  s.bytes = fresh->bytes;
  fresh->handle = nullptr;
}

bool floating64or32(DType d) { return d == kFloat32 || d == kFloat64; }

// The unit wrapper put in the parent's place: gathers around the inner forward.
class FSDPUnit : public Module {
 public:
  FSDPUnit(std::shared_ptr<Module> inner, std::weak_ptr<FullyShardedDataParallel::State> state, size_t index)
      : Module("FSDPUnit"), inner_(std::move(inner)), state_(std::move(state)), index_(index) {
    share_registrations(*inner_);
    set_training_flag(inner_->is_training());
  }
  Tensor forward_erased(const Tensor& input) override {
    auto st = state_.lock();
    VNN_CHECK(ValueError, st, "FullyShardedDataParallel: unit '", inner_->type_name(),
              "' was called after its FullyShardedDataParallel wrapper was destroyed");
    if (st->options.activation_checkpointing && autograd::grad_enabled() && is_training()) {
      if (st->recording) st->units[index_]->ran = true;  // its forward below runs without grad
      std::weak_ptr<FullyShardedDataParallel::State> weak = st;
      size_t index = index_;
      auto inner = inner_;
      Tensor out = vnn::utils::checkpoint(
          [weak, index, inner](const std::vector<Tensor>& in) {
            auto s = weak.lock();
            s->pre_forward(index);
            Tensor y = (*inner)(in[0]);
            s->post_forward(index, y);
            return std::vector<Tensor>{y};
          },
          {input})[0];
      if (out.requires_grad())  // gathers the unit before the recompute
        out.register_hook([weak, index](const Tensor&) {
          if (auto s = weak.lock()) s->pre_backward(index);
          return Tensor();
        });
      return out;
    }
    st->pre_forward(index_);
    Tensor out = (*inner_)(input);
    st->post_forward(index_, out);
    return out;
  }
  void train(bool on) override {
    Module::train(on);
    inner_->train(on);
  }
  std::string describe() const override { return "FSDPUnit(" + inner_->describe() + ")"; }

 private:
  std::shared_ptr<Module> inner_;
  std::weak_ptr<FullyShardedDataParallel::State> state_;
  size_t index_;
};

}  // namespace

// ---- gathering and freeing ------------------------------------------------------------

void FullyShardedDataParallel::State::unshard(Unit& u, bool prefetch) {
  autograd::NoGradGuard no_grad;
  for (auto& f : u.flats) {
    if (f.status != Status::sharded) continue;
    f.version = f.full.impl()->storage->version.load();
    give_memory(f.full, size_t(f.padded) * itemsize(f.gather_dtype));
    f.gather_src = f.gather_dtype == f.dtype ? f.shard.detach() : f.shard.detach().to(f.gather_dtype);
    f.work = pg.allgather_into_tensor(f.full, f.gather_src);
    f.status = Status::gathering;
    ++stats.all_gathers;
    if (prefetch) ++stats.prefetched;
  }
}

void FullyShardedDataParallel::State::wait_unshard(Unit& u) {
  unshard(u, false);
  autograd::NoGradGuard no_grad;
  for (auto& f : u.flats) {
    if (f.status != Status::gathering) continue;
    f.work.wait();
    f.work = distributed::Work();
    f.gather_src = Tensor();
    // Saved views of this buffer in the autograd graph were taken at this
    // version; the gather rewrote the same values.
    f.full.impl()->storage->version.store(f.version);
    for (size_t i = 0; i < f.params.size(); ++i)
      vnn::detail::set_data(f.params[i], f.full.narrow(0, f.offsets[i], f.shapes[i].numel()).view(f.shapes[i]));
    f.status = Status::unsharded;
  }
}

void FullyShardedDataParallel::State::reshard(Unit& u) {
  for (auto& f : u.flats) {
    if (f.status == Status::gathering) {
      f.work.wait();
      f.work = distributed::Work();
      f.gather_src = Tensor();
    }
    if (f.status == Status::sharded) continue;
    for (auto& p : f.params) vnn::detail::set_data(p, f.empty);
    take_memory(f.full);
    f.status = Status::sharded;
  }
  u.in_backward = false;
}

// ---- forward and backward hooks -------------------------------------------------------

void FullyShardedDataParallel::State::pre_forward(size_t index) {
  Unit& u = *units[index];
  wait_unshard(u);
  if (!recording) return;
  order.push_back(index);
  if (autograd::grad_enabled()) u.ran = true;
  if (!options.forward_prefetch) return;
  auto it = std::find(last_order.begin(), last_order.end(), index);
  if (it != last_order.end() && it + 1 != last_order.end()) unshard(*units[*(it + 1)], true);
}

void FullyShardedDataParallel::State::post_forward(size_t index, const Tensor& out) {
  Unit& u = *units[index];
  const bool grad = autograd::grad_enabled() && out.defined() && out.requires_grad();
  if (grad && !u.is_root) {
    // The unit's backward starts at its output's node: gather it there.
    std::weak_ptr<State> weak = self;
    Tensor(out).register_hook([weak, index](const Tensor&) {
      if (auto s = weak.lock()) s->pre_backward(index);
      return Tensor();
    });
  }
  if (!u.is_root && (!grad || (options.reshard_after_forward && !u.in_backward))) reshard(u);
}

void FullyShardedDataParallel::State::pre_backward(size_t index) {
  Unit& u = *units[index];
  wait_unshard(u);
  u.in_backward = true;
  if (!options.backward_prefetch) return;
  auto it = std::find(order.begin(), order.end(), index);
  if (it != order.end() && it != order.begin() && !units[*(it - 1)]->is_root) unshard(*units[*(it - 1)], true);
}

void FullyShardedDataParallel::State::on_gradient(size_t index) {
  Unit& u = *units[index];
  if (u.pending <= 0) return;
  if (--u.pending == 0) post_backward(u);
}

void FullyShardedDataParallel::State::post_backward(Unit& u) {
  autograd::NoGradGuard no_grad;
  u.pending = u.expected;
  // The previous units' reduce-scatters ran while this unit's backward did:
  // finishing them now frees their flat gradient buffers.
  drain();
  if (sync) {
    for (auto& f : u.flats) {
      if (!f.requires_grad) continue;
      Tensor flat = zeros({f.padded}, TensorOptions(f.device).with(f.reduce_dtype));
      for (size_t i = 0; i < f.params.size(); ++i) {
        Tensor g = f.params[i].grad();
        if (!g.defined()) continue;
        flat.narrow(0, f.offsets[i], f.shapes[i].numel()).copy_(g.reshape({f.shapes[i].numel()}));
        Tensor(f.params[i]).set_grad(Tensor());
      }
      Tensor out = empty({f.shard_numel}, TensorOptions(f.device).with(f.reduce_dtype));
      distributed::Work w = pg.reduce_scatter_tensor(out, flat, distributed::ReduceOp::avg);
      reduces.push_back({&f, flat, out, w});
      ++stats.reduce_scatters;
    }
  }
  reshard(u);
  if (--units_pending <= 0) finalize();
}

void FullyShardedDataParallel::State::finalize() {
  drain();
  if (sync) ++stats.syncs;
  units_pending = 0;
}

void FullyShardedDataParallel::State::drain() {
  autograd::NoGradGuard no_grad;
  for (auto& r : reduces) {
    r.work.wait();
    Tensor g = r.output.dtype() == r.flat->dtype ? r.output : r.output.to(r.flat->dtype);
    Tensor have = r.flat->shard.grad();
    if (have.defined()) have.add_(g);
    else r.flat->shard.set_grad(g);
  }
  reduces.clear();
}

std::vector<FlatParam*> FullyShardedDataParallel::State::all_flats() {
  std::vector<FlatParam*> out;
  for (auto& u : units)
    for (auto& f : u->flats) out.push_back(&f);
  return out;
}

// ---- construction ---------------------------------------------------------------------

namespace {

// The units: the outermost submodules the policy picks, each with its path and parent.
struct Found {
  std::string path, name;
  std::shared_ptr<Module> module, parent;
};

void find_units(const std::shared_ptr<Module>& m, const std::string& at, const AutoWrapPolicy& policy,
                std::vector<Found>& out) {
  for (auto& [name, child] : m->named_children()) {
    std::string path = at.empty() ? name : at + "." + name;
    if (policy && policy(path, *child)) out.push_back({path, name, child, m});
    else find_units(child, path, policy, out);
  }
}

}  // namespace

FullyShardedDataParallel::FullyShardedDataParallel(std::shared_ptr<Module> module, FSDPOptions options)
    : Module("FullyShardedDataParallel"), module_(std::move(module)) {
  VNN_CHECK(ValueError, module_, "FullyShardedDataParallel: the module is null");
  distributed::ProcessGroup& pg = options.group ? *options.group : distributed::group();
  state_ = std::make_shared<State>(pg, options);
  State& st = *state_;
  st.self = state_;
  st.rank = pg.rank();
  st.world = pg.size();
  const auto& mp = options.mixed_precision;
  if (mp.reduce_dtype && !floating64or32(*mp.reduce_dtype))
    VNN_THROW(DTypeError, "FullyShardedDataParallel: mixed_precision.reduce_dtype ", name(*mp.reduce_dtype),
              " is not supported; gradients are reduced in float32 or float64");
  if (mp.param_dtype && !is_floating(*mp.param_dtype))
    VNN_THROW(DTypeError, "FullyShardedDataParallel: mixed_precision.param_dtype ", name(*mp.param_dtype),
              " is not a floating dtype");

  autograd::NoGradGuard no_grad;
  if (options.sync_module_states && st.world > 1) {
    std::vector<distributed::Work> works;
    for (auto& t : module_->parameters()) works.push_back(pg.broadcast(t, 0));
    for (auto& t : module_->buffers()) works.push_back(pg.broadcast(t, 0));
    for (auto& w : works) w.wait();
  }

  // Which unit owns each parameter: the one whose subtree holds all of its
  // places, else the root (a tensor tied across units is the root's).
  std::vector<Found> found;
  find_units(module_, "", options.auto_wrap_policy, found);
  std::unordered_map<const void*, int> owner;
  auto claim = [&](const Tensor& t, int unit) {
    auto [it, fresh] = owner.emplace(t.impl(), unit);
    if (!fresh && it->second != unit) it->second = 0;
  };
  std::vector<std::string> unit_prefix{""};
  for (auto& f : found) unit_prefix.push_back(f.path + ".");
  for (auto& [n, t] : module_->named_parameters(true, false)) {
    int unit = 0;
    for (size_t k = 1; k < unit_prefix.size(); ++k)
      if (n.compare(0, unit_prefix[k].size(), unit_prefix[k]) == 0) unit = int(k);
    claim(t, unit);
  }

  st.units.push_back(std::make_unique<Unit>());
  st.units[0]->inner = module_;
  st.units[0]->is_root = true;
  for (auto& f : found) {
    st.units.push_back(std::make_unique<Unit>());
    st.units.back()->path = f.path;
    st.units.back()->inner = f.module;
  }

  // Flat buffers, in named_parameters order, per unit, dtype and group.
  for (auto& [n, p] : module_->named_parameters()) {
    Unit& u = *st.units[size_t(owner.at(p.impl()))];
    const int group = options.param_group ? options.param_group(n, p) : 0;
    FlatParam* f = nullptr;
    for (auto& cand : u.flats)
      if (cand.dtype == p.dtype() && cand.group == group) f = &cand;
    if (!f) {
      f = &u.flats.emplace_back();
      f->dtype = p.dtype();
      f->device = p.device();
      f->group = group;
      f->gather_dtype = mp.param_dtype && is_floating(f->dtype) ? *mp.param_dtype : f->dtype;
      f->reduce_dtype = mp.reduce_dtype               ? *mp.reduce_dtype
                        : floating64or32(f->gather_dtype) ? f->gather_dtype
                                                          : kFloat32;
    }
    VNN_CHECK(DeviceMismatch, p.device() == f->device, "FullyShardedDataParallel: parameter '", n, "' is on ",
              p.device(), " but the rest of its unit is on ", f->device, "; move the module to one device first");
    f->params.push_back(p);
    f->names.push_back(n);
    f->shapes.push_back(p.sizes());
    f->offsets.push_back(f->numel);
    f->numel += p.numel();
    if (p.requires_grad()) {
      f->requires_grad = true;
      ++u.expected;
    }
  }

  // Each rank's slice becomes its shard; the module's parameters let go of
  // their memory and stand empty until a gather.
  int k = 0;
  std::weak_ptr<State> weak = state_;
  for (size_t ui = 0; ui < st.units.size(); ++ui) {
    Unit& u = *st.units[ui];
    u.pending = u.expected;
    for (auto& f : u.flats) {
      f.shard_numel = (f.numel + st.world - 1) / st.world;
      f.padded = f.shard_numel * st.world;
      Tensor flat = zeros({f.padded}, TensorOptions(f.device).with(f.dtype));
      for (size_t i = 0; i < f.params.size(); ++i)
        flat.narrow(0, f.offsets[i], f.shapes[i].numel()).copy_(f.params[i].reshape({f.shapes[i].numel()}));
      f.shard = flat.narrow(0, int64_t(st.rank) * f.shard_numel, f.shard_numel).clone();
      flat = Tensor();
      if (f.requires_grad) f.shard.requires_grad_(true);
      register_parameter("flat_param_" + std::to_string(k++), f.shard, f.requires_grad);
      f.full = empty({f.padded}, TensorOptions(f.device).with(f.gather_dtype));
      take_memory(f.full);
      f.empty = empty({0}, TensorOptions(f.device).with(f.gather_dtype));
      for (auto& p : f.params) {
        vnn::detail::set_data(p, f.empty);
        Tensor grad = p.grad();
        if (grad.defined()) Tensor(p).set_grad(Tensor());
        if (p.requires_grad())
          vnn::detail::register_post_accumulate_hook(p, [weak, ui] {
            if (auto s = weak.lock()) s->on_gradient(ui);
          });
      }
    }
  }
  // Each unit's wrapper takes its place in the parent.
  for (size_t i = 0; i < found.size(); ++i)
    found[i].parent->replace_child(found[i].name, std::make_shared<FSDPUnit>(found[i].module, weak, i + 1));
}

FullyShardedDataParallel::~FullyShardedDataParallel() {
  try {
    for (auto& u : state_->units) state_->reshard(*u);
    for (auto& r : state_->reduces) r.work.wait();
  } catch (...) {  // a failed collective already threw where it was waited for
  }
}

Tensor FullyShardedDataParallel::forward(const Tensor& input) {
  State& st = *state_;
  st.last_order = st.order;
  st.order.clear();
  for (auto& u : st.units) u->ran = false;
  st.recording = true;
  struct Stop {
    State& st;
    ~Stop() { st.recording = false; }
  } stop{st};
  Tensor x = input;
  const auto& mp = st.options.mixed_precision;
  if (mp.param_dtype && mp.cast_forward_inputs && is_floating(x.dtype()) && x.dtype() != *mp.param_dtype)
    x = x.to(*mp.param_dtype);
  st.pre_forward(0);
  Tensor out = (*module_)(x);
  const bool grad = autograd::grad_enabled() && out.defined() && out.requires_grad();
  if (grad) {
    st.units_pending = 0;
    for (auto& u : st.units)
      if (u->expected > 0 && (u->ran || u->is_root)) ++st.units_pending;
  } else {
    st.reshard(*st.units[0]);
  }
  return out;
}

void FullyShardedDataParallel::train(bool on) {
  Module::train(on);
  module_->train(on);
}

std::string FullyShardedDataParallel::describe() const {
  return "FullyShardedDataParallel(" + module_->type_name() + ", world_size=" + std::to_string(state_->world) +
         ", units=" + std::to_string(state_->units.size()) + ", numel=" + std::to_string(total_numel()) + ")";
}

std::vector<Tensor> FullyShardedDataParallel::shard_parameters(int group) const {
  std::vector<Tensor> out;
  for (auto* f : state_->all_flats())
    if (f->group == group) out.push_back(f->shard);
  return out;
}

std::vector<std::string> FullyShardedDataParallel::unit_paths() const {
  std::vector<std::string> out;
  for (auto& u : state_->units) out.push_back(u->path);
  return out;
}

int64_t FullyShardedDataParallel::max_unit_numel() const {
  int64_t m = 0;
  for (auto& u : state_->units) {
    int64_t n = 0;
    for (auto& f : u->flats) n += f.padded;
    m = std::max(m, n);
  }
  return m;
}

int64_t FullyShardedDataParallel::total_numel() const {
  int64_t n = 0;
  for (auto* f : state_->all_flats()) n += f->padded;
  return n;
}

void FullyShardedDataParallel::set_requires_gradient_sync(bool on) { state_->sync = on; }

FullyShardedDataParallel::NoSync FullyShardedDataParallel::no_sync() { return NoSync(state_->sync); }

double FullyShardedDataParallel::clip_grad_norm_(double max_norm) {
  autograd::NoGradGuard no_grad;
  double local = 0;
  std::vector<Tensor> grads;
  for (auto* f : state_->all_flats()) {
    Tensor g = f->shard.grad();
    if (!g.defined()) continue;
    Tensor g64 = g.to(kFloat64);
    local += sum(mul(g64, g64)).item();
    grads.push_back(g);
  }
  Tensor total = from_vector<double>({local}, {1});
  state_->pg.allreduce(total, distributed::ReduceOp::sum).wait();
  const double norm = std::sqrt(total.item());
  const double coef = std::min(max_norm / (norm + 1e-6), 1.0);
  for (auto& g : grads) g.mul_(coef);
  return norm;
}

FullyShardedDataParallel::Stats FullyShardedDataParallel::stats() const { return state_->stats; }

std::shared_ptr<FullyShardedDataParallel> fully_shard(std::shared_ptr<Module> module, FSDPOptions options) {
  return std::make_shared<FullyShardedDataParallel>(std::move(module), std::move(options));
}

}  // namespace vnn::nn

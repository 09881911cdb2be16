// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Autocast state (per thread, per backend), the weight-cast cache and the
// op-argument casts of OpScope.
#include "amp/autocast.hpp"

#include <map>
#include <string>
#include <utility>

#include "tensor/tensor_impl.hpp"
#include "vnn/amp.h"
#include "vnn/autograd.h"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::autocast {

namespace {

struct BackendState {
  std::string backend;
  bool enabled = false;
  DType dtype = kBFloat16;
};

// A weight cast kept for the rest of the outermost scope. `src` holds the
// weight, so its address cannot be reused by another tensor meanwhile;
// `version` notices an in-place change (a step inside the scope).
struct CacheEntry {
  Tensor src;
  uint64_t version = 0;
  Tensor cast;
};

struct State {
  std::vector<BackendState> backends;  // a handful at most: cpu, opencl, cuda, hip
  int enabled = 0;                     // how many backends have autocast on
  int suspended = 0;                   // OpScope / Suspend nesting
  int guards = 0;                      // live AutocastGuards
  std::map<std::pair<const void*, DType>, CacheEntry> cache;
};

thread_local State t_state;

BackendState& backend_state(const std::string& backend) {
  for (auto& b : t_state.backends)
    if (b.backend == backend) return b;
  t_state.backends.push_back(BackendState{backend});
  return t_state.backends.back();
}

const BackendState* find_state(const std::string& backend) {
  for (auto& b : t_state.backends)
    if (b.backend == backend) return &b;
  return nullptr;
}

void set(BackendState& b, bool enabled, DType dtype) {
  t_state.enabled += int(enabled) - int(b.enabled);
  b.enabled = enabled;
  b.dtype = dtype;
}

uint64_t version_of(const Tensor& t) { return t.impl()->storage->version.load(std::memory_order_relaxed); }

// Leaves that require grad are cast once per scope (each weight once per
// forward); anything else is cast each time, as PyTorch.
Tensor lower(const Tensor& t, DType to) {
  if (!(t.is_leaf() && t.requires_grad() && autograd::grad_enabled())) return t.to(to);
  auto key = std::make_pair(static_cast<const void*>(t.impl()), to);
  auto it = t_state.cache.find(key);
  if (it != t_state.cache.end() && it->second.version == version_of(t)) return it->second.cast;
  Tensor cast = t.to(to);
  t_state.cache[key] = CacheEntry{t, version_of(t), cast};
  return cast;
}

}  // namespace

AutocastGuard::AutocastGuard(const Device& device, DType dtype, bool enabled) : backend_(device.backend()) {
  if (enabled && dtype != kFloat16 && dtype != kBFloat16)
    VNN_THROW(ValueError, "autocast: dtype ", name(dtype), " is not supported on ", device.str(),
              "; autocast lowers to bfloat16 (vnn::kBFloat16) or float16 (vnn::kFloat16); for float32/float64 math, "
              "leave autocast off");
  BackendState& b = backend_state(backend_);
  previous_enabled_ = b.enabled;
  previous_dtype_ = b.dtype;
  set(b, enabled, enabled ? dtype : b.dtype);
  ++t_state.guards;
}

AutocastGuard::~AutocastGuard() {
  set(backend_state(backend_), previous_enabled_, previous_dtype_);
  if (--t_state.guards == 0) t_state.cache.clear();
}

bool is_enabled(const Device& device) {
  const BackendState* b = find_state(device.backend());
  return b && b->enabled;
}

DType get_dtype(const Device& device) {
  const BackendState* b = find_state(device.backend());
  return b ? b->dtype : kBFloat16;
}

void clear_cache() { t_state.cache.clear(); }
size_t cache_size() { return t_state.cache.size(); }

namespace detail {

bool active_any() { return t_state.enabled > 0 && t_state.suspended == 0; }

Suspend::Suspend() { ++t_state.suspended; }
Suspend::~Suspend() { --t_state.suspended; }

Settings current_settings() {
  Settings s;
  for (const auto& b : t_state.backends) s.backends.push_back({b.backend, b.enabled, b.dtype});
  s.suspended = t_state.suspended > 0;
  return s;
}

RestoreSettings::RestoreSettings(const Settings& settings)
    : saved_enabled_(t_state.enabled), saved_suspended_(t_state.suspended) {
  for (const auto& b : t_state.backends) saved_.backends.push_back({b.backend, b.enabled, b.dtype});
  for (auto& b : t_state.backends) b.enabled = false;
  t_state.enabled = 0;
  for (const auto& b : settings.backends) set(backend_state(b.backend), b.enabled, b.dtype);
  t_state.suspended = settings.suspended ? 1 : 0;
  ++t_state.guards;
}

RestoreSettings::~RestoreSettings() {
  for (auto& b : t_state.backends) b.enabled = false;
  t_state.enabled = 0;
  for (const auto& b : saved_.backends) set(backend_state(b.backend), b.enabled, b.dtype);
  t_state.enabled = saved_enabled_;
  t_state.suspended = saved_suspended_;
  if (--t_state.guards == 0) t_state.cache.clear();
}

void OpScope::engage(Policy policy, std::initializer_list<const Tensor*> args) {
  const Tensor* first = nullptr;
  for (const Tensor* a : args)
    if (a->defined()) {
      first = a;
      break;
    }
  if (!first) return;
  const std::string& backend = first->impl()->ctx().info.device.backend();
  const BackendState* b = find_state(backend);
  if (!b || !b->enabled) return;
  engaged_ = true;
  ++t_state.suspended;  // the op's own insides run without autocast
  args_.reserve(args.size());
  for (const Tensor* a : args) {
    const Tensor& t = *a;
    // Only floating tensors of this backend change; float64 never does.
    bool eligible = t.defined() && is_floating(t.dtype()) && t.dtype() != kFloat64 &&
                    t.impl()->ctx().info.device.backend() == backend;
    if (!eligible)
      args_.push_back(t);
    else if (policy == Policy::lower)
      args_.push_back(t.dtype() == b->dtype ? t : lower(t, b->dtype));
    else
      args_.push_back(t.dtype() == kFloat32 ? t : t.to(kFloat32));
  }
}

OpScope::~OpScope() {
  if (engaged_) --t_state.suspended;
}

}  // namespace detail
}  // namespace vnn::autocast

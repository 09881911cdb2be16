// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The recorder: one active Profile at a time, events appended under one
// mutex (only while profiling), per-thread state for the range stack, the
// autograd phase and the allocation counters.
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "profiler/hooks.hpp"
#include "profiler/state.hpp"
#include "runtime/device_context.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::profiler {
namespace detail {

// VNN_NVTX=1 keeps the hooks on without a Profile so that every op reaches
// Nsight Systems / rocprof as a named range.
static bool env_tool_ranges() {
  const char* v = std::getenv("VNN_NVTX");
  return v && *v && std::strcmp(v, "0") != 0;
}

std::atomic<bool> g_hooks{env_tool_ranges()};

}  // namespace detail

using Clock = std::chrono::steady_clock;
using vnn::detail::DeviceContext;

struct PendingDevice {
  size_t event;  // index into events
  DeviceContext* ctx;
  void* e0;
  void* e1;
};

struct DeviceRef {
  DeviceContext* ctx;
  void* ref;      // recorded at the device's first op; device times count from it
  double ref_us;  // host time when it was recorded
};

struct Recorder {
  Options opts;
  uint64_t generation = 0;
  Clock::time_point t0;
  std::mutex mutex;
  bool stopped = false;
  std::vector<Event> events;
  std::vector<PendingDevice> pending;
  std::vector<DeviceRef> devices;
  std::vector<std::string> thread_names;
  std::vector<MemorySample> samples;

  double now_us() const { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }
};

namespace {

std::atomic<Recorder*> g_rec{nullptr};
std::atomic<uint64_t> g_generation{0};
std::mutex g_owner_mutex;  // serialises Profile start/stop
bool g_owned = false;

// Backends with vendor tool ranges seen so far (never unloaded).
constexpr int kMaxTools = 8;
std::atomic<const vnn_backend*> g_tools[kMaxTools];
std::atomic<int> g_tool_count{0};
std::mutex g_tool_mutex;

void register_tool(const vnn_backend* b) {
  int n = g_tool_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i)
    if (g_tools[i].load(std::memory_order_relaxed) == b) return;
  std::lock_guard<std::mutex> lock(g_tool_mutex);
  n = g_tool_count.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i)
    if (g_tools[i].load(std::memory_order_relaxed) == b) return;
  if (n == kMaxTools) return;
  g_tools[n].store(b, std::memory_order_relaxed);
  g_tool_count.store(n + 1, std::memory_order_release);
}

bool has_tool_ranges(const vnn_backend* b) {
  return VNN_BACKEND_HAS(b, range_push) && VNN_BACKEND_HAS(b, range_pop);
}

void register_if_tool(DeviceContext& c) {
  if (has_tool_ranges(c.backend)) register_tool(c.backend);
}

void tools_push(const char* name) {
  int n = g_tool_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) g_tools[i].load(std::memory_order_relaxed)->range_push(name);
}
void tools_pop() {
  int n = g_tool_count.load(std::memory_order_acquire);
  for (int i = n - 1; i >= 0; --i) g_tools[i].load(std::memory_order_relaxed)->range_pop();
}

struct OpenRange {
  std::string name;
  double start_us;
  double child_us;
  int64_t alloc0, free0;
};

struct ThreadState {
  uint64_t generation = 0;  // the profile that `thread` and the marks belong to
  int thread = -1;
  std::string name;
  Phase phase = Phase::forward;
  std::vector<OpenRange> stack;
  int64_t allocated = 0, freed = 0;  // running totals while hooks are on
  int64_t alloc_mark = 0, free_mark = 0;  // at the previous op
  std::string shapes;
};

ThreadState& ts() {
  thread_local ThreadState s;
  return s;
}

// Gives the thread its track in this profile.
void attach(ThreadState& t, Recorder* rec) {
  if (t.generation == rec->generation) return;
  t.generation = rec->generation;
  t.stack.clear();
  t.alloc_mark = t.allocated;
  t.free_mark = t.freed;
  std::lock_guard<std::mutex> lock(rec->mutex);
  t.thread = int(rec->thread_names.size());
  rec->thread_names.push_back(t.name.empty() ? "host thread " + std::to_string(t.thread) : t.name);
}

// Index of ctx in rec->devices; records its reference event on first use.
// Called with rec->mutex held.
int device_slot(Recorder* rec, DeviceContext& ctx, bool with_ref) {
  for (size_t i = 0; i < rec->devices.size(); ++i)
    if (rec->devices[i].ctx == &ctx) return int(i);
  DeviceRef d{&ctx, nullptr, 0};
  const vnn_backend* b = ctx.backend;
  if (with_ref && b->event_create(ctx.plugin_index, &d.ref) == VNN_STATUS_OK) {
    d.ref_us = rec->now_us();
    if (b->event_record(ctx.plugin_index, d.ref, nullptr) != VNN_STATUS_OK) {
      b->event_destroy(ctx.plugin_index, d.ref);
      d.ref = nullptr;
    }
  } else {
    d.ref = nullptr;
  }
  rec->devices.push_back(d);
  return int(rec->devices.size() - 1);
}

void append_shape(std::string& out, const vnn_tensor_desc& d) {
  out += '[';
  for (int32_t i = 0; i < d.ndim; ++i) {
    if (i) out += ", ";
    out += std::to_string(d.sizes[i]);
  }
  out += ']';
}

unsigned range_begin(const char* name) {
  unsigned flags = 0;
  if (Recorder* rec = g_rec.load(std::memory_order_acquire)) {
    ThreadState& t = ts();
    attach(t, rec);
    t.stack.push_back({name, rec->now_us(), 0.0, t.allocated, t.freed});
    flags |= 1;
  }
  if (detail::hooks_on() && g_tool_count.load(std::memory_order_relaxed) > 0) {
    tools_push(name);
    flags |= 2;
  }
  return flags;
}

void range_end(unsigned flags) {
  if (flags & 2) tools_pop();
  if (!(flags & 1)) return;
  ThreadState& t = ts();
  Recorder* rec = g_rec.load(std::memory_order_acquire);
  // The profile this range began in may have stopped (stack cleared).
  if (!rec || t.generation != rec->generation || t.stack.empty()) return;
  OpenRange r = std::move(t.stack.back());
  t.stack.pop_back();
  Event ev;
  ev.kind = EventKind::range;
  ev.name = std::move(r.name);
  ev.phase = t.phase;
  ev.thread = t.thread;
  ev.depth = int(t.stack.size());
  ev.start_us = r.start_us;
  ev.host_us = rec->now_us() - r.start_us;
  ev.self_us = ev.host_us - r.child_us;
  ev.bytes_allocated = t.allocated - r.alloc0;
  ev.bytes_freed = t.freed - r.free0;
  if (!t.stack.empty()) t.stack.back().child_us += ev.host_us;
  std::lock_guard<std::mutex> lock(rec->mutex);
  if (!rec->stopped) rec->events.push_back(std::move(ev));
}

}  // namespace

namespace detail {

void note_shapes(const vnn_tensor_desc* in, size_t n) {
  Recorder* rec = g_rec.load(std::memory_order_acquire);
  if (!rec || !rec->opts.record_shapes) return;
  std::string& s = ts().shapes;
  s.clear();
  for (size_t k = 0; k < n; ++k) {
    if (k) s += ", ";
    append_shape(s, in[k]);
  }
}

void note_alloc(size_t bytes) { ts().allocated += int64_t(bytes); }
void note_free(size_t bytes) { ts().freed += int64_t(bytes); }

void run_op_profiled(DeviceContext& ctx, vnn_op& op, const char* name) {
  const vnn_backend* b = ctx.backend;
  const int32_t dev = ctx.plugin_index;
  const bool tools = has_tool_ranges(b);
  if (tools) register_tool(b);
  Recorder* rec = g_rec.load(std::memory_order_acquire);
  ThreadState& t = ts();
  if (!rec) {  // VNN_NVTX=1 without a Profile
    t.shapes.clear();
    if (tools) b->range_push(name);
    vnn_status s = b->run(dev, &op);
    if (tools) b->range_pop();
    if (s != VNN_STATUS_OK) ctx.throw_status(s, name);
    return;
  }
  attach(t, rec);
  int slot;
  {
    std::lock_guard<std::mutex> lock(rec->mutex);
    slot = device_slot(rec, ctx, rec->opts.device_time);
  }
  void* e0 = nullptr;
  void* e1 = nullptr;
  if (rec->opts.device_time) {
    if (b->event_create(dev, &e0) != VNN_STATUS_OK || b->event_create(dev, &e1) != VNN_STATUS_OK ||
        b->event_record(dev, e0, op.queue) != VNN_STATUS_OK) {
      if (e0) b->event_destroy(dev, e0);
      if (e1) b->event_destroy(dev, e1);
      e0 = e1 = nullptr;  // this op goes without a device time
    }
  }
  // Host time excludes the event records: it is what dispatch costs.
  const double start = rec->now_us();
  if (tools) b->range_push(name);
  vnn_status s = b->run(dev, &op);
  if (tools) b->range_pop();
  const double end = rec->now_us();
  if (e1 && b->event_record(dev, e1, op.queue) != VNN_STATUS_OK) {
    b->event_destroy(dev, e0);
    b->event_destroy(dev, e1);
    e0 = e1 = nullptr;
  }
  if (s != VNN_STATUS_OK) {
    if (e0) b->event_destroy(dev, e0), b->event_destroy(dev, e1);
    t.shapes.clear();
    ctx.throw_status(s, name);
  }
  Event ev;
  ev.kind = EventKind::op;
  ev.name = name;
  if (VNN_BACKEND_HAS(b, last_path)) {
    const char* path = b->last_path(dev);
    if (path && *path) ev.name = ev.name + "[" + path + "]";
  }
  ev.device = ctx.info.device.str();
  ev.shapes = std::move(t.shapes);
  t.shapes.clear();
  ev.phase = t.phase;
  ev.thread = t.thread;
  ev.depth = int(t.stack.size());
  ev.start_us = start;
  ev.host_us = ev.self_us = end - start;
  ev.bytes_allocated = t.allocated - t.alloc_mark;
  ev.bytes_freed = t.freed - t.free_mark;
  t.alloc_mark = t.allocated;
  t.free_mark = t.freed;
  if (!t.stack.empty()) t.stack.back().child_us += ev.host_us;
  const uint64_t live = ctx.allocator.stats().allocated;
  std::lock_guard<std::mutex> lock(rec->mutex);
  if (rec->stopped) {
    if (e0) b->event_destroy(dev, e0), b->event_destroy(dev, e1);
    return;
  }
  if (e0) rec->pending.push_back({rec->events.size(), &ctx, e0, e1});
  rec->samples.push_back({slot, start, live});
  rec->events.push_back(std::move(ev));
}

}  // namespace detail

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::forward: return "forward";
    case Phase::backward: return "backward";
    case Phase::optimizer: return "optimizer";
  }
  return "forward";
}

Profile::Profile(Options options) : state_(nullptr) {
  std::lock_guard<std::mutex> own(g_owner_mutex);
  VNN_CHECK(ValueError, !g_owned, "profiler: another Profile is active; stop it before starting a new one");
  auto* rec = new Recorder;
  rec->opts = options;
  rec->generation = g_generation.fetch_add(1) + 1;
  rec->t0 = Clock::now();
  state_ = new State;
  state_->rec = rec;
  vnn::detail::for_each_initialized(register_if_tool);
  attach(ts(), rec);
  g_owned = true;
  g_rec.store(rec, std::memory_order_release);
  detail::g_hooks.store(true, std::memory_order_relaxed);
}

Profile::~Profile() {
  try {
    stop();
  } catch (...) {  // a destructor must not throw; stop() reported nothing useful here
  }
  delete state_;
}

void Profile::stop() {
  std::lock_guard<std::mutex> own(g_owner_mutex);
  if (state_->stopped) return;
  Recorder* rec = state_->rec;
  g_rec.store(nullptr, std::memory_order_release);
  detail::g_hooks.store(detail::env_tool_ranges(), std::memory_order_relaxed);
  g_owned = false;
  std::unique_lock<std::mutex> lock(rec->mutex);
  rec->stopped = true;
  lock.unlock();
  // Device times: wait for each device once, then read the event pairs.
  for (auto& d : rec->devices) d.ctx->synchronize();
  for (auto& p : rec->pending) {
    const vnn_backend* b = p.ctx->backend;
    const int32_t dev = p.ctx->plugin_index;
    double ms = 0, from_ref = 0;
    Event& ev = rec->events[p.event];
    if (b->event_elapsed(dev, p.e0, p.e1, &ms) == VNN_STATUS_OK) {
      ev.device_us = ms * 1000.0;
      ev.device_start_us = ev.start_us;
      for (auto& d : rec->devices)
        if (d.ctx == p.ctx && d.ref && b->event_elapsed(dev, d.ref, p.e0, &from_ref) == VNN_STATUS_OK)
          ev.device_start_us = d.ref_us + from_ref * 1000.0;
    }
    b->event_destroy(dev, p.e0);
    b->event_destroy(dev, p.e1);
  }
  for (auto& d : rec->devices) {
    if (d.ref) d.ctx->backend->event_destroy(d.ctx->plugin_index, d.ref);
    MemoryStats m = d.ctx->allocator.stats();
    state_->devices.push_back(d.ctx->info.device.str());
    state_->memory.push_back({d.ctx->info.device.str(), m.peak_allocated, m.allocated, m.reserved});
  }
  state_->events = std::move(rec->events);
  state_->thread_names = std::move(rec->thread_names);
  state_->samples = std::move(rec->samples);
  state_->stopped = true;
  // The recorder stays allocated: a thread that loaded it just before the
  // store above may still be finishing an op (it sees `stopped` and drops
  // it). One small leak per profile buys freedom from that race.
  state_->rec = nullptr;
}

const std::vector<Event>& Profile::events() const { return state_->events; }
std::vector<DeviceMemory> Profile::memory() const { return state_->memory; }

Range::Range(const char* name) {
  if (detail::hooks_on()) flags_ = range_begin(name);
}
Range::~Range() {
  if (flags_) range_end(flags_);
}

PhaseGuard::PhaseGuard(Phase p) {
  ThreadState& t = ts();
  previous_ = t.phase;
  t.phase = p;
  if (detail::hooks_on())
    flags_ = range_begin(p == Phase::backward    ? "autograd::backward"
                         : p == Phase::optimizer ? "optimizer::step"
                                                 : "forward");
}
PhaseGuard::~PhaseGuard() {
  if (flags_) range_end(flags_);
  ts().phase = previous_;
}

Phase current_phase() { return ts().phase; }

void set_thread_name(const std::string& name) {
  ThreadState& t = ts();
  t.name = name;
  Recorder* rec = g_rec.load(std::memory_order_acquire);
  if (rec && t.generation == rec->generation) {
    std::lock_guard<std::mutex> lock(rec->mutex);
    if (t.thread >= 0 && size_t(t.thread) < rec->thread_names.size()) rec->thread_names[t.thread] = name;
  }
}

bool is_profiling() { return g_rec.load(std::memory_order_acquire) != nullptr; }

}  // namespace vnn::profiler

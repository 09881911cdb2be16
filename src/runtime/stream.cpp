// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Public streams and events over the plugin ABI's queues and events.
#include "vnn/detail/message.h"
#include "vnn/stream.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/stream_state.hpp"
#include "vnn/error.h"

namespace vnn {

namespace detail {
namespace {

// This thread's current streams, one entry per device that has a guard
// active. Usually empty: run_op then pays one size check.
thread_local std::vector<std::shared_ptr<StreamState>> t_current;

std::shared_ptr<StreamState>* find_current(DeviceContext& ctx) {
  for (auto& s : t_current)
    if (s->ctx == &ctx) return &s;
  return nullptr;
}

std::atomic<uint64_t> g_next_stream_id{1};

}  // namespace

StreamState::~StreamState() {
  if (!queue) return;
  // Queued work may still use blocks tagged with this stream and host
  // buffers of its copies: finish it before the queue and its tag go away.
  // Destructors cannot throw; a failure here has already been (or will be)
  // reported by the device's next synchronize.
  {
    std::lock_guard<std::mutex> lock(ctx->streams_mutex);
    auto& qs = ctx->stream_queues;
    qs.erase(std::remove(qs.begin(), qs.end(), queue), qs.end());
  }
  if (ctx->backend->queue_synchronize) (void)ctx->backend->queue_synchronize(ctx->plugin_index, queue);
  ctx->allocator.retire_stream(id);
  if (ctx->backend->queue_destroy) (void)ctx->backend->queue_destroy(ctx->plugin_index, queue);
}

EventState::~EventState() {
  if (handle && ctx->backend->event_destroy) (void)ctx->backend->event_destroy(ctx->plugin_index, handle);
}

void* current_queue(DeviceContext& ctx) {
  if (t_current.empty()) return nullptr;
  auto* s = find_current(ctx);
  return s ? (*s)->queue : nullptr;
}

uint64_t current_stream_id(DeviceContext& ctx) {
  if (t_current.empty()) return 0;
  auto* s = find_current(ctx);
  return s ? (*s)->id : 0;
}

bool event_done(DeviceContext& ctx, void* event, const char* what) {
  const vnn_backend* b = ctx.backend;
  if (!VNN_BACKEND_HAS(b, event_query)) {
    event_wait(ctx, event, what);  // no way to ask: wait, after which it has
    return true;
  }
  vnn_status s = b->event_query(ctx.plugin_index, event);
  if (s == VNN_STATUS_NOT_READY) return false;
  ctx.check(s, what);
  return true;
}

void event_wait(DeviceContext& ctx, void* event, const char* what) {
  if (!ctx.backend->event_synchronize)
    VNN_THROW(Unsupported, what, ": the ", ctx.backend->name, " backend of ", ctx.info.device.str(),
              " has no event_synchronize entry");
  ctx.check(ctx.backend->event_synchronize(ctx.plugin_index, event), what);
}

}  // namespace detail

using detail::DeviceContext;
using detail::EventState;
using detail::StreamState;

namespace {

// An entry every real plugin fills but a minimal one may leave NULL (the
// loader insists only on probe / device_info / last_error): a typed error
// instead of a call through NULL.
template <class Fn>
Fn need(const DeviceContext& ctx, Fn fn, const char* op, const char* entry) {
  VNN_CHECK(Unsupported, fn, op, ": the ", ctx.backend->name, " backend of ", ctx.info.device.str(), " has no ", entry,
            " entry, so it offers no streams or events; use its default "
            "stream (no StreamGuard)");
  return fn;
}

// Device-side wait of `queue` on a recorded backend event, or the host
// waiting for the event where the plugin lacks queue_wait_event (then
// everything enqueued afterwards starts after the event anyway).
void wait_on_device(DeviceContext& ctx, void* queue, void* event, const char* what) {
  const vnn_backend* b = ctx.backend;
  if (VNN_BACKEND_HAS(b, queue_wait_event))
    ctx.check(b->queue_wait_event(ctx.plugin_index, queue, event), what);
  else
    ctx.check(need(ctx, b->event_synchronize, what, "event_synchronize")(ctx.plugin_index, event), what);
}

[[noreturn]] void mismatch(const char* op, const Device& event_dev, const Device& stream_dev) {
  VNN_THROW(DeviceMismatch, op, ": the event was recorded on ", event_dev.str(), " but the stream belongs to ",
            stream_dev.str(),
            "; a stream can only wait for events of its own device (wait on the host "
            "with event.synchronize() instead)");
}

}  // namespace

// --- Stream -----------------------------------------------------------------

Stream::Stream(const Device& device) {
  DeviceContext& ctx = detail::context(device);
  ctx.ensure_initialized();
  void* q = nullptr;
  ctx.check(need(ctx, ctx.backend->queue_create, "Stream", "queue_create")(ctx.plugin_index, &q),
            "Stream (queue_create)");
  auto s = std::make_shared<StreamState>();
  s->ctx = &ctx;
  s->queue = q;
  s->id = detail::g_next_stream_id.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(ctx.streams_mutex);
    ctx.stream_queues.push_back(q);
  }
  s_ = std::move(s);
}

Stream Stream::default_stream(const Device& device) {
  auto s = std::make_shared<StreamState>();
  s->ctx = &detail::context(device);
  return Stream(std::move(s));
}

const Device& Stream::device() const { return s_->ctx->info.device; }
bool Stream::is_default() const { return s_->queue == nullptr; }

bool Stream::operator==(const Stream& o) const { return s_->ctx == o.s_->ctx && s_->id == o.s_->id; }

void Stream::synchronize() const {
  DeviceContext& ctx = *s_->ctx;
  ctx.ensure_initialized();
  ctx.check(need(ctx, ctx.backend->queue_synchronize, "Stream.synchronize", "queue_synchronize")(ctx.plugin_index,
                                                                                                s_->queue),
            "Stream.synchronize");
}

bool Stream::query() const {
  // A marker at the end of the queue answers "is everything before it done".
  // The marker is itself a command: drivers that retire commands on a worker
  // thread (PoCL) report it running for a moment even on an idle queue, so
  // it gets up to ~2 ms to retire before "still running" is believed.
  Event probe(false);
  probe.record(*this);
  for (int i = 0; i < 40; ++i) {
    if (probe.query()) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return probe.query();
}

void Stream::wait_event(const Event& event) const {
  const auto& e = event.state();
  if (!e->handle) return;  // never recorded: nothing to wait for (as PyTorch)
  if (e->ctx != s_->ctx) mismatch("Stream.wait_event", e->ctx->info.device, device());
  wait_on_device(*s_->ctx, s_->queue, e->handle, "Stream.wait_event");
}

void Stream::wait_stream(const Stream& other) const {
  if (other.s_->ctx != s_->ctx)
    VNN_THROW(DeviceMismatch, "Stream.wait_stream: the stream waited for belongs to ", other.device(),
              " but the waiting stream to ", device(),
              "; streams can only wait for streams of their own device (call "
              "other.synchronize() on the host instead)");
  if (other == *this) return;  // a stream is always ordered after itself
  Event marker(false);
  marker.record(other);
  wait_event(marker);
}

Stream current_stream(const Device& device) {
  DeviceContext& ctx = detail::context(device);
  if (auto* s = detail::find_current(ctx)) return Stream(*s);
  return Stream::default_stream(device);
}

// --- StreamGuard ------------------------------------------------------------

StreamGuard::StreamGuard(const Stream& stream) : stream_(stream) {
  if (auto* s = detail::find_current(*stream.state()->ctx)) {
    previous_ = *s;
    *s = stream.state();
  } else {
    detail::t_current.push_back(stream.state());
  }
}

StreamGuard::~StreamGuard() {
  auto* s = detail::find_current(*stream_.state()->ctx);
  if (!s) return;
  if (previous_) {
    *s = previous_;
  } else {
    // Back to "no guard" for this device, which keeps the fast path fast.
    detail::t_current.erase(detail::t_current.begin() + (s - detail::t_current.data()));
  }
}

// --- Event ------------------------------------------------------------------

Event::Event(bool enable_timing) : e_(std::make_shared<EventState>()) { e_->timing = enable_timing; }

void Event::record(const Stream& stream) {
  DeviceContext& ctx = *stream.state()->ctx;
  ctx.ensure_initialized();
  if (e_->handle && e_->ctx != &ctx) {
    // Moving to another device: backend events belong to one plugin.
    if (e_->ctx->backend->event_destroy) (void)e_->ctx->backend->event_destroy(e_->ctx->plugin_index, e_->handle);
    e_->handle = nullptr;
  }
  need(ctx, ctx.backend->event_record, "Event.record", "event_record");
  if (!e_->handle) {
    void* h = nullptr;
    ctx.check(need(ctx, ctx.backend->event_create, "Event.record", "event_create")(ctx.plugin_index, &h),
              "Event.record (event_create)");
    e_->handle = h;
    e_->ctx = &ctx;
  }
  ctx.check(ctx.backend->event_record(ctx.plugin_index, e_->handle, stream.state()->queue), "Event.record");
}

void Event::record(const Device& device) { record(current_stream(device)); }

void Event::record() { record(e_->handle ? e_->ctx->info.device : best_device()); }

bool Event::is_recorded() const { return e_->handle != nullptr; }

Device Event::device() const {
  if (!e_->handle) VNN_THROW(ValueError, "Event.device: the event was never recorded; call record(stream) first");
  return e_->ctx->info.device;
}

void Event::synchronize() const {
  if (!e_->handle) return;
  DeviceContext& ctx = *e_->ctx;
  ctx.check(need(ctx, ctx.backend->event_synchronize, "Event.synchronize", "event_synchronize")(ctx.plugin_index,
                                                                                               e_->handle),
            "Event.synchronize");
}

bool Event::query() const {
  if (!e_->handle) return true;
  return detail::event_done(*e_->ctx, e_->handle, "Event.query");
}

double Event::elapsed_time(const Event& end) const {
  const auto& a = e_;
  const auto& b = end.e_;
  if (!a->handle || !b->handle)
    VNN_THROW(ValueError, "Event.elapsed_time: the ", (!a->handle ? "start" : "end"),
              " event was never recorded; record both events on a stream first");
  if (!a->timing || !b->timing)
    VNN_THROW(ValueError, "Event.elapsed_time: the ", (!a->timing ? "start" : "end"),
              " event was created with enable_timing=false; create it as Event(true)");
  if (a->ctx != b->ctx)
    VNN_THROW(DeviceMismatch, "Event.elapsed_time: the start event was recorded on ", a->ctx->info.device.str(),
              " and the end event on ", b->ctx->info.device.str(), "; both events must be recorded on the same device");
  DeviceContext& ctx = *a->ctx;
  auto sync = need(ctx, ctx.backend->event_synchronize, "Event.elapsed_time", "event_synchronize");
  auto elapsed = need(ctx, ctx.backend->event_elapsed, "Event.elapsed_time", "event_elapsed");
  // Some backends (CUDA) answer "not ready" for events still running: wait.
  ctx.check(sync(ctx.plugin_index, a->handle), "Event.elapsed_time");
  ctx.check(sync(ctx.plugin_index, b->handle), "Event.elapsed_time");
  double ms = 0;
  ctx.check(elapsed(ctx.plugin_index, a->handle, b->handle, &ms), "Event.elapsed_time");
  return ms;
}

}  // namespace vnn

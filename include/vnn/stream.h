// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Streams and events for every vnn device (torch.cuda.Stream / Event).
//
//   vnn::Device gpu = vnn::best_device();
//   vnn::Stream side(gpu);                       // a new in-order queue
//   vnn::Event ready;
//   {
//     vnn::StreamGuard g(side);                  // ops and copies onto gpu go to `side`
//     y = x.to(gpu, /*non_blocking=*/true) * 2;
//     ready.record(side);
//   }
//   vnn::current_stream(gpu).wait_event(ready);  // the default stream waits on the device
//
// Semantics (docs/streams.md): each thread has one current stream per
// device (the default stream unless a StreamGuard says otherwise); work on
// one stream runs in order; ordering work across streams is the caller's job
// (wait_event / wait_stream / synchronize), as in PyTorch. A block of the
// caching allocator is reused only on the stream it was allocated on.
#pragma once
#include <cstdint>
#include <memory>

#include "vnn/device.h"

namespace vnn {

namespace detail {
struct StreamState;
struct EventState;
}  // namespace detail

class Event;

/// A shared handle to one in-order queue of one device. Copies refer to the
/// same queue; the queue is synchronised and destroyed with the last copy.
class Stream {
 public:
  /// A new queue on `device` (starts the device's runtime if needed).
  explicit Stream(const Device& device);
  /// The queue every op uses when no StreamGuard is active.
  static Stream default_stream(const Device& device);

  /// The device this stream queues work for.
  const Device& device() const;
  /// Whether this is the device's default stream.
  bool is_default() const;
  /// Blocks the host until all work enqueued on this stream so far is done.
  void synchronize() const;
  /// True when all work enqueued so far has completed (cpu streams always
  /// are). Does not wait for that work; it records a marker and allows the
  /// driver up to ~2 ms to retire it (see stream.cpp).
  bool query() const;
  /// Later work on this stream waits (on the device, not the host) for the
  /// work recorded by `event`. An event never recorded is a no-op. The event
  /// must belong to this stream's device (else DeviceMismatch).
  void wait_event(const Event& event) const;
  /// Later work on this stream waits for everything enqueued on `other` so
  /// far (same device only).
  void wait_stream(const Stream& other) const;

  /// Whether both handles refer to the same queue.
  bool operator==(const Stream& o) const;
  /// Whether the handles refer to different queues.
  bool operator!=(const Stream& o) const { return !(*this == o); }

  /// The shared state behind the handle (for the runtime; not stable API).
  const std::shared_ptr<detail::StreamState>& state() const { return s_; }
  /// Wraps runtime state (used by the runtime; users construct from a Device).
  explicit Stream(std::shared_ptr<detail::StreamState> s) : s_(std::move(s)) {}

 private:
  std::shared_ptr<detail::StreamState> s_;
};

/// The stream ops and copies onto `device` use on this thread right now.
Stream current_stream(const Device& device);

/// Makes `stream` current for ITS device on this thread until the guard goes
/// out of scope; guards nest, and the previous stream comes back on exit.
class StreamGuard {
 public:
  /// Makes `stream` current for its device on this thread.
  explicit StreamGuard(const Stream& stream);
  /// Restores the stream that was current before.
  ~StreamGuard();
  /// Not copyable: one scope, one restore.
  StreamGuard(const StreamGuard&) = delete;
  /// Not assignable.
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream stream_;
  std::shared_ptr<detail::StreamState> previous_;  // null: no guard was active for the device
};

/// A marker in a stream. Shared handle: copies refer to the same event.
class Event {
 public:
  /// An event not yet recorded; enable_timing allows elapsed_time().
  explicit Event(bool enable_timing = true);

  /// Captures all work enqueued on `stream` so far (re-recording moves the
  /// marker; an event may move to another device).
  void record(const Stream& stream);
  /// Records on the current stream of `device`.
  void record(const Device& device);
  /// Records on the current stream of the device of the latest record, or of
  /// best_device() for an event never recorded.
  void record();

  /// Whether record() was ever called.
  bool is_recorded() const;
  /// Device of the latest record; throws ValueError when never recorded.
  Device device() const;
  /// Blocks the host until the recorded work is done (no-op if never recorded).
  void synchronize() const;
  /// True when the recorded work is done (or the event was never recorded).
  bool query() const;
  /// Milliseconds from this event to `end`; both recorded with timing on,
  /// on the same device. Waits for both to complete first.
  double elapsed_time(const Event& end) const;

  /// The shared state behind the handle (for the runtime; not stable API).
  const std::shared_ptr<detail::EventState>& state() const { return e_; }

 private:
  std::shared_ptr<detail::EventState> e_;
};

}  // namespace vnn

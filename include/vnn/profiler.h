// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn::profiler: where the time and the bytes go, on every device.
//
//   vnn::profiler::Profile prof;             // records from here ...
//   { vnn::profiler::Range r("step"); step(); }
//   prof.stop();                             // ... to here (or scope end)
//   std::cout << prof.table();               // sorted by device time
//   prof.export_chrome_trace("trace.json");  // chrome://tracing, ui.perfetto.dev
//
// Every backend op dispatched while a Profile is active becomes one Event:
// its name (with the implementation the backend chose, "matmul[openblas]"),
// device, input shapes, host time (dispatch on the calling thread), device
// time (from backend events recorded on the op's queue around it, so
// asynchronous work is timed where it ran), bytes allocated and freed, and
// the autograd phase. With no Profile active, dispatch pays one relaxed
// atomic load. On CUDA and HIP the same op names and user ranges are also
// pushed as NVTX / roctx ranges while profiling, or always with VNN_NVTX=1.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace vnn::profiler {

/// What a thread is doing when an op runs: forward, backward or the optimizer step.
enum class Phase : uint8_t { forward = 0, backward = 1, optimizer = 2 };
/// The phase's name: "forward", "backward", "optimizer".
const char* phase_name(Phase p);

/// What a Profile records.
struct Options {
  /// Record each op's input shapes ("[64, 1, 28, 28], [8, 1, 3, 3]").
  bool record_shapes = true;  // input shapes per op ("[64, 1, 28, 28], [8, 1, 3, 3]")
  /// Time every op on its device with backend events.
  bool device_time = true;    // backend events around every op
};

/// Whether an Event is a backend op or a user Range.
enum class EventKind : uint8_t { op, range };

/// One recorded op or range: name, device, shapes, host and device times, bytes.
struct Event {
  /// Op or range.
  EventKind kind = EventKind::op;
  /// "add", "matmul[clblast]" (with the implementation chosen), or a range's text.
  std::string name;    // "add", "matmul[clblast]", or a range's text
  /// "cpu:0", "opencl:0"; "" for ranges.
  std::string device;  // "cpu:0", "opencl:0"; "" for ranges
  /// Input shapes (ops, with record_shapes).
  std::string shapes;  // input shapes (ops, record_shapes)
  /// The autograd phase it ran in.
  Phase phase = Phase::forward;
  /// Host track: a small number per thread, in order of first event.
  int thread = 0;         // host track: small number per thread, in order of first event
  /// Open ranges on its thread when it began.
  int depth = 0;          // open ranges on its thread when it began
  /// Host begin, microseconds after the profile started.
  double start_us = 0;    // host begin, microseconds after the profile started
  /// Host duration in microseconds (ops: dispatch; ranges: wall time).
  double host_us = 0;     // host duration (ops: dispatch; ranges: wall time)
  /// host_us minus the host_us of its direct children.
  double self_us = 0;     // host_us minus the host_us of its direct children
  /// Device begin on the same clock; -1: no device time.
  double device_start_us = -1;  // device begin on the same clock; -1: no device time
  /// Device duration in microseconds; -1: none (ranges, device_time off).
  double device_us = -1;        // device duration; -1: none (ranges, device_time off)
  /// Bytes allocated: ops since the previous op on the thread (its output and scratch); ranges inclusive.
  int64_t bytes_allocated = 0;  // ops: since the previous op on the thread (the
  /// Bytes freed, counted as bytes_allocated.
  int64_t bytes_freed = 0;      // op's output and scratch); ranges: inclusive
};

/// The column Profile::table() and key_averages() sort by (descending; name ascending).
enum class SortBy { name, calls, self_host, total_host, avg_host, device_total, avg_device, bytes_allocated,
                    bytes_freed };

/// How Profile::table() and key_averages() group, sort and cut rows.
struct TableOptions {
  /// Sort column, descending (name: ascending); default device_total.
  SortBy sort = SortBy::device_total;  // descending (name: ascending)
  /// Rows kept (0: all).
  int row_limit = 0;                   // 0: all rows
  /// Separate rows per input shapes.
  bool group_by_shape = false;
  /// Separate rows per autograd phase.
  bool group_by_phase = false;
};

/// One row of key_averages(): events grouped by name and device (and
/// optionally input shapes, phase). Times in microseconds.
struct Row {
  /// Name, device, and the shapes / phase the row is grouped by ("" otherwise).
  ///@{
  std::string name, device, shapes, phase;  // shapes / phase only when grouped by them
  ///@}
  /// Whether the row is a user range.
  bool is_range = false;
  /// Number of events in the row.
  int64_t calls = 0;
  /// Host time without children, total host time and total device time, in microseconds.
  ///@{
  double self_host_us = 0, total_host_us = 0, device_us = 0;
  ///@}
  /// Host and device time per call, in microseconds.
  ///@{
  double avg_host_us = 0, avg_device_us = 0;
  ///@}
  /// Shares of all rows' self host and device time, in percent.
  ///@{
  double self_host_pct = 0, device_pct = 0;  // of all rows' self host / device time
  ///@}
  /// Calls that have a device time.
  int64_t device_calls = 0;                  // calls that have a device time
  /// Bytes allocated and freed, summed.
  ///@{
  int64_t bytes_allocated = 0, bytes_freed = 0;
///@}
};

/// Per-device memory statistics sampled when the profile stopped.
struct DeviceMemory {
  /// The device, "cuda:0".
  std::string device;
  /// Peak allocated bytes during the profile (the peak is reset at start).
  uint64_t peak_allocated = 0;  // during the profile (the peak is reset at start)
  /// Allocated and reserved bytes when the profile stopped.
  ///@{
  uint64_t allocated = 0, reserved = 0;
///@}
};

/// Records every backend op and Range from construction to stop(), with device times (torch.profiler's profile).
class Profile {
 public:
  /// Starts recording. Throws vnn::ValueError if another Profile is active.
  explicit Profile(Options options = {});
  /// Stops if still running.
  ~Profile();  // stops if still running
  /// Not copyable: one profile at a time.
  Profile(const Profile&) = delete;
  /// Not assignable.
  Profile& operator=(const Profile&) = delete;

  /// Ends recording, waits for the devices used and resolves device times.
  /// Idempotent.
  void stop();

  /// The recorded events, in order (after stop()).
  const std::vector<Event>& events() const;  // after stop()
  /// Events grouped by name and device (and shapes / phase as asked), sorted.
  std::vector<Row> key_averages(const TableOptions& t = {}) const;
  /// key_averages() as a text table.
  std::string table(const TableOptions& t = {}) const;
  /// Per-device memory figures sampled at stop().
  std::vector<DeviceMemory> memory() const;
  /// Chrome trace event format (JSON object with "traceEvents"): host
  /// threads in process "host", each device's queue in a process of its
  /// own, allocated bytes as counters.
  std::string chrome_trace() const;
  /// Writes chrome_trace() to `path` (vnn::Error on I/O failure).
  void export_chrome_trace(const std::string& path) const;  // throws vnn::Error on I/O failure

 private:
  struct State;
  State* state_;
};

/// A user range: shows as a row in the table, a slice on its thread's
/// track, and an NVTX / roctx range on CUDA / HIP.
class Range {
 public:
  /// Opens a range named `name` until destruction.
  explicit Range(const char* name);
  /// Opens a range named `name` until destruction.
  explicit Range(const std::string& name) : Range(name.c_str()) {}
  /// Closes the range.
  ~Range();
  /// Not copyable: one range, one close.
  Range(const Range&) = delete;
  /// Not assignable.
  Range& operator=(const Range&) = delete;

 private:
  unsigned flags_ = 0;  // recorded / pushed to vendor tools
};

/// Sets the autograd phase of the calling thread for its lifetime (the
/// backward engine and Optimizer::step use it); opens a range named after
/// the phase while profiling.
class PhaseGuard {
 public:
  /// Sets the calling thread's phase to `p`.
  explicit PhaseGuard(Phase p);
  /// Restores the previous phase.
  ~PhaseGuard();
  /// Not copyable: one scope, one restore.
  PhaseGuard(const PhaseGuard&) = delete;
  /// Not assignable.
  PhaseGuard& operator=(const PhaseGuard&) = delete;

 private:
  Phase previous_;
  unsigned flags_ = 0;
};

/// The calling thread's autograd phase.
Phase current_phase();
/// Names the calling thread's track in traces ("dataloader worker 0").
void set_thread_name(const std::string& name);
/// Whether a Profile is recording.
bool is_profiling();

}  // namespace vnn::profiler

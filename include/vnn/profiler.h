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

enum class Phase : uint8_t { forward = 0, backward = 1, optimizer = 2 };
const char* phase_name(Phase p);

struct Options {
  bool record_shapes = true;  // input shapes per op ("[64, 1, 28, 28], [8, 1, 3, 3]")
  bool device_time = true;    // backend events around every op
};

enum class EventKind : uint8_t { op, range };

struct Event {
  EventKind kind = EventKind::op;
  std::string name;    // "add", "matmul[clblast]", or a range's text
  std::string device;  // "cpu:0", "opencl:0"; "" for ranges
  std::string shapes;  // input shapes (ops, record_shapes)
  Phase phase = Phase::forward;
  int thread = 0;         // host track: small number per thread, in order of first event
  int depth = 0;          // open ranges on its thread when it began
  double start_us = 0;    // host begin, microseconds after the profile started
  double host_us = 0;     // host duration (ops: dispatch; ranges: wall time)
  double self_us = 0;     // host_us minus the host_us of its direct children
  double device_start_us = -1;  // device begin on the same clock; -1: no device time
  double device_us = -1;        // device duration; -1: none (ranges, device_time off)
  int64_t bytes_allocated = 0;  // ops: since the previous op on the thread (the
  int64_t bytes_freed = 0;      // op's output and scratch); ranges: inclusive
};

enum class SortBy { name, calls, self_host, total_host, avg_host, device_total, avg_device, bytes_allocated,
                    bytes_freed };

struct TableOptions {
  SortBy sort = SortBy::device_total;  // descending (name: ascending)
  int row_limit = 0;                   // 0: all rows
  bool group_by_shape = false;
  bool group_by_phase = false;
};

// One row of key_averages(): events grouped by name and device (and
// optionally input shapes, phase). Times in microseconds.
struct Row {
  std::string name, device, shapes, phase;  // shapes / phase only when grouped by them
  bool is_range = false;
  int64_t calls = 0;
  double self_host_us = 0, total_host_us = 0, device_us = 0;
  double avg_host_us = 0, avg_device_us = 0;
  double self_host_pct = 0, device_pct = 0;  // of all rows' self host / device time
  int64_t device_calls = 0;                  // calls that have a device time
  int64_t bytes_allocated = 0, bytes_freed = 0;
};

// Per-device memory statistics sampled when the profile stopped.
struct DeviceMemory {
  std::string device;
  uint64_t peak_allocated = 0;  // during the profile (the peak is reset at start)
  uint64_t allocated = 0, reserved = 0;
};

class Profile {
 public:
  // Starts recording. Throws vnn::ValueError if another Profile is active.
  explicit Profile(Options options = {});
  ~Profile();  // stops if still running
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;

  // Ends recording, waits for the devices used and resolves device times.
  // Idempotent.
  void stop();

  const std::vector<Event>& events() const;  // after stop()
  std::vector<Row> key_averages(const TableOptions& t = {}) const;
  std::string table(const TableOptions& t = {}) const;
  std::vector<DeviceMemory> memory() const;
  // Chrome trace event format (JSON object with "traceEvents"): host
  // threads in process "host", each device's queue in a process of its
  // own, allocated bytes as counters.
  std::string chrome_trace() const;
  void export_chrome_trace(const std::string& path) const;  // throws vnn::Error on I/O failure

 private:
  struct State;
  State* state_;
};

// A user range: shows as a row in the table, a slice on its thread's
// track, and an NVTX / roctx range on CUDA / HIP.
class Range {
 public:
  explicit Range(const char* name);
  explicit Range(const std::string& name) : Range(name.c_str()) {}
  ~Range();
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;

 private:
  unsigned flags_ = 0;  // recorded / pushed to vendor tools
};

// Sets the autograd phase of the calling thread for its lifetime (the
// backward engine and Optimizer::step use it); opens a range named after
// the phase while profiling.
class PhaseGuard {
 public:
  explicit PhaseGuard(Phase p);
  ~PhaseGuard();
  PhaseGuard(const PhaseGuard&) = delete;
  PhaseGuard& operator=(const PhaseGuard&) = delete;

 private:
  Phase previous_;
  unsigned flags_ = 0;
};

Phase current_phase();
// Names the calling thread's track in traces ("dataloader worker 0").
void set_thread_name(const std::string& name);
bool is_profiling();

}  // namespace vnn::profiler

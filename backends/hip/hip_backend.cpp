// The HIP backend: the generic Kokkos backend on Kokkos's HIP space.
// Compiled with hipcc; discovery goes through libamdhip64 opened with
// dlopen (probe_hip). hipBLAS/rocBLAS are used where present in a later
// step (Debian 12 has neither).
#include <dlfcn.h>
#include <hip/hip_runtime_api.h>

#include <stdexcept>
#include <string>

#include "hip/probe_hip.hpp"
#include "kokkos/plugin.hpp"

namespace vnn::hip_backend {

// The HIP space left Kokkos::Experimental in Kokkos 4.0.
#if KOKKOS_VERSION >= 40000
namespace khip = ::Kokkos;
#else
namespace khip = ::Kokkos::Experimental;
#endif

inline void check(hipError_t rc, const char* what) {
  if (rc != hipSuccess) throw std::runtime_error(std::string(what) + ": " + hipGetErrorName(rc) + " (" +
                                                 hipGetErrorString(rc) + ")");
}

// roctx, opened lazily with dlopen so that the plugin neither links nor
// needs it: rocprof finds the ranges when libroctx64 is installed.
struct Roctx {
  using Push = int (*)(const char*);
  using Pop = int (*)();
  Push push = nullptr;
  Pop pop = nullptr;
  Roctx() {
    for (const char* n : {"libroctx64.so", "libroctx64.so.4", "libroctx64.so.1"}) {
      if (void* lib = dlopen(n, RTLD_NOW | RTLD_LOCAL)) {
        push = reinterpret_cast<Push>(dlsym(lib, "roctxRangePushA"));
        pop = reinterpret_cast<Pop>(dlsym(lib, "roctxRangePop"));
        if (push && pop) return;
        push = nullptr;
        pop = nullptr;
      }
    }
  }
  static const Roctx& get() {
    static const Roctx r;
    return r;
  }
};

struct HipTraits {
  using ExecSpace = khip::HIP;
  using MemSpace = khip::HIPSpace;
  using PinnedSpace = khip::HIPHostPinnedSpace;
  static constexpr const char* name = "hip";
  static constexpr int32_t priority = 30;
  static constexpr bool host_accessible = false;
  static constexpr bool inline_small_work = false;

  static std::string description() {
    return std::string("Kokkos ") + kokkos_compat::version_string() + " HIP (" VNN_HIP_COMPILED_ARCH
           "), HIP " + std::to_string(HIP_VERSION_MAJOR) + "." + std::to_string(HIP_VERSION_MINOR) +
           ", no vendor BLAS";
  }

  static vnn_status probe(int32_t* count, std::string* why) { return hip_probe::probe(count, why); }

  static vnn_status device_info(int32_t device, vnn_device_info* info, std::string* why) {
    return hip_probe::device_info(device, info, why);
  }

  static void before_initialize(int32_t) {}

  // roctx ranges for the profiler (no-ops where libroctx64 is absent).
  static void range_push(const char* name) {
    if (Roctx::get().push) Roctx::get().push(name);
  }
  static void range_pop() {
    if (Roctx::get().pop) Roctx::get().pop();
  }

  static ExecSpace make_queue() {
    hipStream_t s = nullptr;
    check(hipStreamCreateWithFlags(&s, hipStreamNonBlocking), "hipStreamCreateWithFlags");
    return ExecSpace(s);
  }
  static void destroy_queue(ExecSpace& q) { check(hipStreamDestroy(q.hip_stream()), "hipStreamDestroy"); }

  struct Event {
    hipEvent_t ev = nullptr;
  };
  static Event* event_create() { return new Event{}; }
  static void event_destroy(Event* e) {
    if (e && e->ev) (void)hipEventDestroy(e->ev);
    delete e;
  }
  static void event_record(Event* e, const ExecSpace& q) {
    if (!e->ev) check(hipEventCreate(&e->ev), "hipEventCreate");
    check(hipEventRecord(e->ev, q.hip_stream()), "hipEventRecord");
  }
  static void event_synchronize(Event* e) {
    if (e->ev) check(hipEventSynchronize(e->ev), "hipEventSynchronize");
  }
  static double event_elapsed_ms(Event* a, Event* b) {
    if (!a->ev || !b->ev) throw std::runtime_error("hipEventElapsedTime: an event was never recorded");
    float ms = 0.f;
    check(hipEventElapsedTime(&ms, a->ev, b->ev), "hipEventElapsedTime");
    return ms;
  }
  // Streams: hipEventQuery never blocks; hipErrorNotReady is the normal
  // "still running" answer, not a failure. A never-recorded event has no
  // work to wait for.
  static bool event_query(Event* e) {
    if (!e->ev) return true;
    hipError_t err = hipEventQuery(e->ev);
    if (err == hipErrorNotReady) {
      (void)hipGetLastError();  // as PyTorch does: keep NotReady out of later error checks
      return false;
    }
    check(err, "hipEventQuery");
    return true;
  }
  static void queue_wait_event(const ExecSpace& q, Event* e) {
    if (e->ev) check(hipStreamWaitEvent(q.hip_stream(), e->ev, 0), "hipStreamWaitEvent");
  }
};

}  // namespace vnn::hip_backend

extern "C" VNN_BACKEND_EXPORT const vnn_backend* vnn_backend_entry(uint32_t host_abi_version) {
  return vnn::kokkos_backend::make_table<vnn::hip_backend::HipTraits>(host_abi_version);
}

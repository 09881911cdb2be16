// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The generic Kokkos backend: one implementation of the plugin ABI for any
// Kokkos execution space. Each Kokkos plugin (openmp, cuda, hip) supplies a
// Traits struct (probe, device properties, events) and instantiates
// make_table<Traits>() once.
//
// Traits contract:
//   using ExecSpace, MemSpace, PinnedSpace;
//   static constexpr const char* name;
//   static constexpr bool host_accessible;    // device memory is host memory
//   static constexpr bool inline_small_work;  // run tiny kernels on Kokkos::Serial
//   static std::string description();
//   static vnn_status probe(int32_t* count, std::string* why);      // no runtime start
//   static vnn_status device_info(int32_t, vnn_device_info*, std::string* why);
//   static void before_initialize(int32_t device);                  // env, device selection
//   static ExecSpace make_queue(); static void destroy_queue(ExecSpace&);
//   struct Event; event_create/destroy/record/synchronize/elapsed_ms (see HostClockEvents)
//   static bool event_query(Event*);                 // true: complete; never blocks
//   static void queue_wait_event(const ExecSpace&, Event*);  // device-side wait
//   optional: struct HostBlas { static void gemm(...); } for float/double
//             MATMUL on host-accessible memory (see kernels/matmul.hpp)
//   optional: struct HostOps { static bool wants(int32_t kind);
//             static HostOutcome run(const vnn_op&, std::string* why);
//             static constexpr const char* name; } ops a host library of the
//             plugin runs (oneDNN's conv2d in the CPU plugin): tried first,
//             on the owner thread once the queue drained; declined ops go on
//             to the Kokkos kernels (or VNN_STATUS_UNSUPPORTED)
//   optional: struct DeviceBlas { supports(dtype); gemm(...); } for MATMUL
//             on the device queue (cuBLAS; see matmul_device_blas)
//   optional: static void set_core_allocator(const vnn_core_allocator*) for
//             the ABI's set_core_allocator (the core's caching allocator
//             for a host library's temporaries; one device per host plugin)
//   optional: struct Comm { unique_id, create, destroy, allreduce, broadcast,
//             allgather, reduce_scatter } for the ABI's comm_* entries
//             (NCCL; backends/cuda/nccl_comm.hpp)
//   optional: several devices in one process (the CUDA plugin on Kokkos >=
//             4.3; backends/cuda/cuda_devices.hpp):
//     static bool admit(int32_t device, const std::vector<int32_t>& running,
//                       std::string* why);      // init_device's rule
//     static ExecSpace make_queue_on(int32_t device);  // a stream on it
//     static void* device_alloc(int32_t device, size_t bytes);
//     static void device_free(int32_t device, void* p, size_t bytes);
//     static bool copy_peer(int32_t dst_device, void* dst, int32_t src_device,
//                           const void* src, size_t bytes, const ExecSpace& q);
//                           // false: no direct path (the core stages it)
//   Without admit a plugin runs one device per process.
#pragma once
#include <Kokkos_Core.hpp>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "common/desc_check.hpp"
#include "kokkos/compat.hpp"
#include "vnn/op_names.h"
// The kernels' declarations only: their bodies are compiled per family in
// the plugin's kernels_<family>.cpp (kokkos/instantiate/).
#include "kokkos/kernels/dispatch.hpp"
#include "kokkos/kernels/entry.hpp"
#include "kokkos/kernels/matmul_blas.hpp"
#include "vnn/backend_abi.h"
#include "vnn/detail/message.h"

namespace vnn::kokkos_backend {

// Host-clock events for spaces whose kernels complete before the host goes
// on (OpenMP, Serial): recording fences the queue and reads the clock.
template <class ExecSpace>
struct HostClockEvents {
  struct Event { std::chrono::steady_clock::time_point when; };
  static Event* event_create() { return new Event{}; }
  static void event_destroy(Event* e) { delete e; }
  static void event_record(Event* e, const ExecSpace& q) {
    q.fence();
    e->when = std::chrono::steady_clock::now();
  }
  static void event_synchronize(Event*) {}
  static double event_elapsed_ms(Event* a, Event* b) {
    return std::chrono::duration<double, std::milli>(b->when - a->when).count();
  }
  // Recording already fenced: a recorded event is always complete, and a
  // queue never has to wait for one.
  static bool event_query(Event*) { return true; }
  static void queue_wait_event(const ExecSpace&, Event*) {}
};

// Work below this many elements runs inline on the calling thread: a
// Kokkos OpenMP launch costs ~3.6 us here, a whole 64-float add 0.35 us.
inline constexpr int64_t kInlineGrain = 32768;

// The most devices one plugin drives in a process (device indices 0..63).
inline constexpr int32_t kMaxDevices = 64;

inline std::string& last_error_text() {
  thread_local std::string text;
  return text;
}

// Sets this thread's last_error to str_cat(parts...) (vnn/detail/message.h)
// and returns s: `return fail(VNN_STATUS_..., Traits::name, ":", device, ...)`.
template <class... Parts>
vnn_status fail(vnn_status s, const Parts&... parts) {
  last_error_text() = vnn::detail::str_cat(parts...);
  return s;
}

// "unary gelu on int32 (inputs int32)": an op request by its names.
inline std::string op_text(const vnn_op& op) {
  const char* fn = nullptr;
  int64_t code = op.num_ints > 0 && op.ints ? op.ints[0] : -1;
  switch (op.kind) {
    case VNN_OP_BINARY:
      fn = VNN_NAME(vnn_binary_names, code);
      break;
    case VNN_OP_UNARY:
      fn = VNN_NAME(vnn_unary_names, code);
      break;
    case VNN_OP_REDUCE:
      fn = VNN_NAME(vnn_reduce_names, code);
      break;
    case VNN_OP_RANDOM:
      fn = VNN_NAME(vnn_random_names, code);
      break;
    case VNN_OP_OPTIMIZER_STEP:
      fn = VNN_NAME(vnn_optimizer_names, code);
      break;
    case VNN_OP_SCAN:
      fn = VNN_NAME(vnn_scan_names, code);
      break;
    default:
      break;
  }
  bool has_fn = op.kind == VNN_OP_BINARY || op.kind == VNN_OP_UNARY || op.kind == VNN_OP_REDUCE ||
                op.kind == VNN_OP_RANDOM || op.kind == VNN_OP_OPTIMIZER_STEP || op.kind == VNN_OP_SCAN;
  std::string s = vnn::detail::str_cat(vnn::detail::abi_op_kind(op.kind));
  if (has_fn) s += fn ? vnn::detail::str_cat(" ", fn) : vnn::detail::str_cat(" with unknown function ", code);
  if (op.num_outputs > 0 && op.outputs) s += vnn::detail::str_cat(" on ", vnn::detail::abi_dtype(op.outputs[0].dtype));
  for (int32_t i = 0; op.inputs && i < op.num_inputs; ++i)
    s += vnn::detail::str_cat(i ? ", " : " (inputs ", vnn::detail::abi_dtype(op.inputs[i].dtype),
                              i + 1 == op.num_inputs ? ")" : "");
  return s;
}

// Runs f() and turns any C++ exception into a status (nothing may cross the
// C boundary).
template <class F>
vnn_status guarded(const char* what, F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return fail(VNN_STATUS_OUT_OF_MEMORY, what, ": out of memory");
  } catch (const kernels::UnsupportedDtype& e) {  // a dtype outside a kernel's set (kernels/dispatch.hpp)
    return fail(VNN_STATUS_UNSUPPORTED, what, ": ", e.what());
  } catch (const std::exception& e) {
    std::string m = e.what();
    bool oom = m.find("allocat") != std::string::npos || m.find("memory") != std::string::npos;
    return fail(oom ? VNN_STATUS_OUT_OF_MEMORY : VNN_STATUS_DEVICE_ERROR, what, ": ", m);
  } catch (...) {
    return fail(VNN_STATUS_INTERNAL, what, ": unknown exception");
  }
}

// Traits::HostBlas, where a plugin has one.
template <class Traits, class = void> struct has_host_blas : std::false_type {};
template <class Traits>
struct has_host_blas<Traits, std::void_t<typename Traits::HostBlas>> : std::true_type {};
template <class Traits, class = void> struct has_device_blas : std::false_type {};
template <class Traits>
struct has_device_blas<Traits, std::void_t<typename Traits::DeviceBlas>> : std::true_type {};
// Traits::HostOps, where a plugin has one.
enum class HostOutcome { taken, declined, invalid };
template <class Traits, class = void> struct has_host_ops : std::false_type {};
template <class Traits>
struct has_host_ops<Traits, std::void_t<typename Traits::HostOps>> : std::true_type {};
// Traits::range_push / range_pop (NVTX, roctx), where a plugin has them.
template <class Traits, class = void> struct has_tool_ranges : std::false_type {};
template <class Traits>
struct has_tool_ranges<Traits, std::void_t<decltype(&Traits::range_push), decltype(&Traits::range_pop)>>
    : std::true_type {};

// Traits::admit and the rest of the several-devices hooks (see the top).
template <class Traits, class = void> struct has_multi_device : std::false_type {};
template <class Traits>
struct has_multi_device<Traits, std::void_t<decltype(&Traits::admit), decltype(&Traits::make_queue_on),
                                            decltype(&Traits::device_alloc), decltype(&Traits::device_free),
                                            decltype(&Traits::copy_peer)>> : std::true_type {};
// Traits::admit alone: a plugin that only words its one-device rule.
template <class Traits, class = void> struct has_admit : std::false_type {};
template <class Traits> struct has_admit<Traits, std::void_t<decltype(&Traits::admit)>> : std::true_type {};
// Traits::set_core_allocator(const vnn_core_allocator*), where a plugin's
// host library takes its temporaries from the core (oneDNN in the CPU plugin).
template <class Traits, class = void> struct has_core_allocator : std::false_type {};
template <class Traits>
struct has_core_allocator<Traits, std::void_t<decltype(&Traits::set_core_allocator)>> : std::true_type {};
template <class Traits>
void core_allocator_entry(int32_t, const vnn_core_allocator* a) {
  Traits::set_core_allocator(a);  // one device per host plugin
}
template <class Traits>
constexpr void (*core_allocator_fn())(int32_t, const vnn_core_allocator*) {
  if constexpr (has_core_allocator<Traits>::value) return &core_allocator_entry<Traits>;
  else return nullptr;
}

// Traits::Comm: collectives of the vendor's communication library.
template <class Traits, class = void> struct has_comm : std::false_type {};
template <class Traits> struct has_comm<Traits, std::void_t<typename Traits::Comm>> : std::true_type {};

// The implementation the latest run() on this thread chose (the profiler
// names ops "matmul[openblas]" / "matmul[kokkos]" from it).
inline const char*& last_path_slot() {
  thread_local const char* path = nullptr;
  return path;
}

// The amount of work an op does, for the inline-or-parallel decision.
inline int64_t op_work(const vnn_op* op) {
  int64_t n = op->num_outputs > 0 ? kernels::numel(op->outputs[0]) : 0;
  switch (op->kind) {
    case VNN_OP_REDUCE:
    case VNN_OP_SOFTMAX: return op->num_inputs > 0 ? kernels::numel(op->inputs[0]) : n;
    // Scatters walk the index (SCATTER) or the source (INDEX_ADD), not out.
    case VNN_OP_SCATTER: return op->num_inputs > 1 ? kernels::numel(op->inputs[1]) : n;
    case VNN_OP_INDEX_ADD: return op->num_inputs > 0 ? kernels::numel(op->inputs[0]) : n;
    case VNN_OP_UNSCALE_CHECK: {  // out0 is the flag; the gradients are the work
      int64_t total = 0;
      for (int32_t k = 1; k < op->num_outputs; ++k)
        if (!checked::add(total, kernels::numel(op->outputs[k]), &total)) return INT64_MAX;
      return total;
    }
    case VNN_OP_MATMUL: {
      const vnn_tensor_desc& a = op->inputs[0];
      return a.ndim > 0 ? n * a.sizes[a.ndim - 1] : n;
    }
    // Up to five exp / tanh and a dozen flops per element of h'.
    case VNN_OP_RNN_CELL:
    case VNN_OP_RNN_CELL_BACKWARD: return checked::mul(n, int64_t(16), &n) ? n : INT64_MAX;
    // A dot product over up to 16 taps per element of out (forward) or
    // dout (backward: atomics and the grid's gradient as well).
    case VNN_OP_GRID_SAMPLE: return checked::mul(n, int64_t(8), &n) ? n : INT64_MAX;
    case VNN_OP_GRID_SAMPLE_BACKWARD: {
      int64_t w = op->num_inputs > 0 ? kernels::numel(op->inputs[0]) : n;
      return checked::mul(w, int64_t(16), &w) ? w : INT64_MAX;
    }
    case VNN_OP_SDPA:
    case VNN_OP_SDPA_BACKWARD: {  // N*Hq*L*E products per key: q's count times S
      if (op->num_inputs < 2 || op->inputs[1].ndim != 4) return n;
      int64_t w = kernels::numel(op->inputs[0]);
      return checked::mul(w, op->inputs[1].sizes[2], &w) ? w : INT64_MAX;
    }
    default: return n;
  }
}

// Traits::HostBlas::tile_gemm (small products from inside the pool's
// parallel region), where a HostBlas has one for T; else its gemm.
template <class Blas, class T, class = void> struct has_tile_gemm : std::false_type {};
template <class Blas, class T>
struct has_tile_gemm<Blas, T,
                     std::void_t<decltype(Blas::tile_gemm(false, false, int64_t(0), int64_t(0), int64_t(0), T(0),
                                                          static_cast<const T*>(nullptr), int64_t(0),
                                                          static_cast<const T*>(nullptr), int64_t(0), T(0),
                                                          static_cast<T*>(nullptr), int64_t(0)))>> : std::true_type {};
template <class Blas, class T>
void host_tile_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
                    int64_t ldb, T beta, T* c, int64_t ldc) {
  if constexpr (has_tile_gemm<Blas, T>::value) Blas::tile_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else Blas::gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// The plugin's Traits::HostBlas as the fused attention's tile GEMM
// (kernels::HostGemm), for host-accessible plugins that have one; NULL
// otherwise (the kernel's own loops, or the device kernels).
template <class Traits>
const kernels::HostGemm* host_gemm() {
  if constexpr (has_host_blas<Traits>::value && Traits::host_accessible) {
    using Blas = typename Traits::HostBlas;
    static const kernels::HostGemm g{&host_tile_gemm<Blas, float>, &host_tile_gemm<Blas, double>};
    return &g;
  } else {
    return nullptr;
  }
}

// Fills the comm_* entries of the plugin's table once a probe found a device
// and the vendor library opens (the CUDA plugin dlopens libnccl then, not at
// load: a process on a machine without the GPU never maps it).
template <class Traits> void enable_comm_entries();

template <class Traits>
class Backend {
 public:
  using Exec = typename Traits::ExecSpace;
  using Mem = typename Traits::MemSpace;
  using Pinned = typename Traits::PinnedSpace;
  using Event = typename Traits::Event;
  using Bytes = Kokkos::View<char*, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using HostBytes = Kokkos::View<char*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  static vnn_status probe(int32_t* count) {
    *count = 0;
    std::string why;
    vnn_status s = Traits::probe(count, &why);
    if (s != VNN_STATUS_OK) return fail(s, why);
    if constexpr (has_comm<Traits>::value) {
      if (*count > 0) enable_comm_entries<Traits>();
    }
    return VNN_STATUS_OK;
  }

  static vnn_status device_info(int32_t device, vnn_device_info* info) {
    // The caller's struct may be older (smaller) than ours: never write past it.
    if (!info || info->struct_size < sizeof(vnn_device_info))
      return fail(VNN_STATUS_INVALID_ARGUMENT, Traits::name, ":", device,
                  ": device_info: info is NULL or its struct_size (", info ? info->struct_size : 0,
                  ") is smaller than this plugin's ", sizeof(vnn_device_info));
    std::string why;
    vnn_status s = Traits::device_info(device, info, &why);
    return s == VNN_STATUS_OK ? s : fail(s, why);
  }

  static vnn_status init_device(int32_t device) {
    return guarded("init_device", [&] {
      std::lock_guard<std::mutex> lock(state().mutex);
      if (device < 0 || device >= kMaxDevices)
        return fail(VNN_STATUS_INVALID_ARGUMENT, Traits::name, ":", device, ": init_device: no such device (this "
                    "plugin drives devices 0..", kMaxDevices - 1, ")");
      if constexpr (has_admit<Traits>::value) {
        std::string why;
        if (!Traits::admit(device, state().running, &why))
          return fail(VNN_STATUS_UNSUPPORTED, Traits::name, ":", device, ": ", why);
      } else if (state().initialized && device != state().device) {
        return fail(VNN_STATUS_UNSUPPORTED, Traits::name, ":", device, ": this plugin already runs on device ",
                    state().device, " (one device per process with this Kokkos version)");
      }
      if (state().initialized) {
        if (state().queues[device].load()) return VNN_STATUS_OK;
        if constexpr (has_multi_device<Traits>::value) {
          // Another device: Kokkos runs; an instance on a stream made there.
          state().queues[device].store(new Exec(Traits::make_queue_on(device)));
          state().running.push_back(device);
          return VNN_STATUS_OK;
        }
        return fail(VNN_STATUS_INTERNAL, Traits::name, ":", device, ": admitted a second device without the hooks");
      }
      Traits::before_initialize(device);
#if KOKKOS_VERSION < 30700
      // Kokkos Tools: newer Kokkos reads KOKKOS_TOOLS_LIBS, 3.4-3.6 only
      // KOKKOS_PROFILE_LIBRARY; pass the new name through so that a tool
      // loads the same way on every Kokkos vnn builds with.
      if (const char* tools = std::getenv("KOKKOS_TOOLS_LIBS"))
        if (!std::getenv("KOKKOS_PROFILE_LIBRARY")) setenv("KOKKOS_PROFILE_LIBRARY", tools, 0);
#endif
      if (!kokkos_compat::is_initialized()) {
        kokkos_compat::initialize(device, -1);
        std::atexit(finalize);
      }
      state().device = device;
      state().owner = std::this_thread::get_id();
      state().queues[device].store(new Exec());  // Kokkos's default instance, on `device`
      state().running.push_back(device);
      state().initialized = true;
      return VNN_STATUS_OK;
    });
  }

  static vnn_status alloc(int32_t device, size_t bytes, void** handle) {
    // The failure text names the size (Kokkos's own says "1.074e+09 G").
    const std::string what = "alloc of " + std::to_string(bytes) + " bytes";
    return guarded(what.c_str(), [&] {
      if (bytes > size_t(INT64_MAX))
        return fail(VNN_STATUS_OUT_OF_MEMORY, "alloc: ", bytes, " bytes is more than any device holds");
      if constexpr (has_multi_device<Traits>::value) *handle = Traits::device_alloc(device, bytes ? bytes : 1);
      else *handle = Kokkos::kokkos_malloc<Mem>("vnn", bytes ? bytes : 1);
      remember(*handle, bytes);
      return VNN_STATUS_OK;
    });
  }
  static vnn_status free_(int32_t device, void* handle) {
    const int64_t bytes = capacity(handle);
    forget(handle);
    if (state().finalized) return VNN_STATUS_OK;  // memory went with the runtime
    return guarded("free", [&] {
      if constexpr (has_multi_device<Traits>::value) Traits::device_free(device, handle, size_t(bytes > 0 ? bytes : 1));
      else Kokkos::kokkos_free<Mem>(handle);
      return VNN_STATUS_OK;
    });
  }
  static vnn_status host_alloc(int32_t, size_t bytes, void** ptr) {
    // The failure text names the size (Kokkos's own says "1.074e+09 G").
    const std::string what = "host_alloc of " + std::to_string(bytes) + " bytes";
    return guarded(what.c_str(), [&] {
      if (bytes > size_t(INT64_MAX))
        return fail(VNN_STATUS_OUT_OF_MEMORY, "host_alloc: ", bytes, " bytes is more than any host holds");
      *ptr = Kokkos::kokkos_malloc<Pinned>("vnn_pinned", bytes ? bytes : 1);
      remember(*ptr, bytes);
      return VNN_STATUS_OK;
    });
  }
  static vnn_status host_free(int32_t, void* ptr) {
    forget(ptr);
    if (state().finalized) return VNN_STATUS_OK;
    return guarded("host_free", [&] {
      Kokkos::kokkos_free<Pinned>(ptr);
      return VNN_STATUS_OK;
    });
  }

  static vnn_status copy_to_device(int32_t device, void* dst, size_t dst_off, const void* src, size_t bytes,
                                   void* queue, int32_t blocking) {
    return guarded("copy_to_device", [&] {
      std::string why;
      if (!kernels::check_copy_range(dst_off, bytes, capacity(dst), "copy_to_device: dst", &why))
        return fail(VNN_STATUS_INVALID_ARGUMENT, why);
      Exec& q = queue_of(device, queue);
      if constexpr (Traits::host_accessible) {
        q.fence();
        std::memcpy(static_cast<char*>(dst) + dst_off, src, bytes);
      } else {
        Kokkos::deep_copy(q, Bytes(static_cast<char*>(dst) + dst_off, bytes),
                          HostBytes(const_cast<char*>(static_cast<const char*>(src)), bytes));
        if (blocking) q.fence();
      }
      return VNN_STATUS_OK;
    });
  }
  static vnn_status copy_to_host(int32_t device, void* dst, const void* src, size_t src_off, size_t bytes, void* queue,
                                 int32_t blocking) {
    return guarded("copy_to_host", [&] {
      std::string why;
      if (!kernels::check_copy_range(src_off, bytes, capacity(src), "copy_to_host: src", &why))
        return fail(VNN_STATUS_INVALID_ARGUMENT, why);
      Exec& q = queue_of(device, queue);
      if constexpr (Traits::host_accessible) {
        q.fence();
        std::memcpy(dst, static_cast<const char*>(src) + src_off, bytes);
      } else {
        Kokkos::deep_copy(q, HostBytes(static_cast<char*>(dst), bytes),
                          Bytes(const_cast<char*>(static_cast<const char*>(src)) + src_off, bytes));
        if (blocking) q.fence();
      }
      return VNN_STATUS_OK;
    });
  }
  static vnn_status copy_on_device(int32_t device, void* dst, size_t dst_off, const void* src, size_t src_off,
                                   size_t bytes, void* queue) {
    return guarded("copy_on_device", [&] {
      std::string why;
      if (!kernels::check_copy_range(dst_off, bytes, capacity(dst), "copy_on_device: dst", &why) ||
          !kernels::check_copy_range(src_off, bytes, capacity(src), "copy_on_device: src", &why))
        return fail(VNN_STATUS_INVALID_ARGUMENT, why);
      if constexpr (Traits::host_accessible) {
        if (!on_owner_thread()) {  // never into the host pool from another thread (docs/threads.md)
          queue_of(device, queue).fence();
          std::memcpy(static_cast<char*>(dst) + dst_off, static_cast<const char*>(src) + src_off, bytes);
          return VNN_STATUS_OK;
        }
      }
      Kokkos::deep_copy(queue_of(device, queue), Bytes(static_cast<char*>(dst) + dst_off, bytes),
                        Bytes(const_cast<char*>(static_cast<const char*>(src)) + src_off, bytes));
      return VNN_STATUS_OK;
    });
  }

  static vnn_status queue_create(int32_t device, void** queue) {
    return guarded("queue_create", [&] {
      if constexpr (has_multi_device<Traits>::value) *queue = new Exec(Traits::make_queue_on(device));
      else *queue = new Exec(Traits::make_queue());
      return VNN_STATUS_OK;
    });
  }
  static vnn_status queue_destroy(int32_t, void* queue) {
    return guarded("queue_destroy", [&] {
      Exec* q = static_cast<Exec*>(queue);
      q->fence();
      Traits::destroy_queue(*q);  // a stream wrapped by an instance is not owned by it
      delete q;
      return VNN_STATUS_OK;
    });
  }
  static vnn_status queue_synchronize(int32_t device, void* queue) {
    return guarded("queue_synchronize", [&] {
      if (state().initialized && (queue || device_running(device))) queue_of(device, queue).fence();
      return VNN_STATUS_OK;
    });
  }
  static vnn_status event_create(int32_t, void** ev) {
    *ev = Traits::event_create();
    return VNN_STATUS_OK;
  }
  static vnn_status event_destroy(int32_t, void* ev) {
    Traits::event_destroy(static_cast<Event*>(ev));
    return VNN_STATUS_OK;
  }
  static vnn_status event_record(int32_t device, void* ev, void* queue) {
    return guarded("event_record", [&] {
      Traits::event_record(static_cast<Event*>(ev), queue_of(device, queue));
      return VNN_STATUS_OK;
    });
  }
  static vnn_status event_synchronize(int32_t, void* ev) {
    return guarded("event_synchronize", [&] {
      Traits::event_synchronize(static_cast<Event*>(ev));
      return VNN_STATUS_OK;
    });
  }
  static vnn_status event_elapsed(int32_t, void* a, void* b, double* ms) {
    return guarded("event_elapsed", [&] {
      *ms = Traits::event_elapsed_ms(static_cast<Event*>(a), static_cast<Event*>(b));
      return VNN_STATUS_OK;
    });
  }
  static vnn_status event_query(int32_t, void* ev) {
    return guarded("event_query", [&] {
      return Traits::event_query(static_cast<Event*>(ev)) ? VNN_STATUS_OK : VNN_STATUS_NOT_READY;
    });
  }
  static vnn_status queue_wait_event(int32_t device, void* queue, void* ev) {
    return guarded("queue_wait_event", [&] {
      Traits::queue_wait_event(queue_of(device, queue), static_cast<Event*>(ev));
      return VNN_STATUS_OK;
    });
  }

  // A copy between two running devices of this plugin, on src_device's
  // queue (Traits::copy_peer); UNSUPPORTED where they have no direct path.
  static vnn_status copy_peer(int32_t dst_device, void* dst, size_t dst_off, int32_t src_device, const void* src,
                              size_t src_off, size_t bytes, void* queue) {
    return guarded("copy_peer", [&] {
      std::string why;
      if (!kernels::check_copy_range(dst_off, bytes, capacity(dst), "copy_peer: dst", &why) ||
          !kernels::check_copy_range(src_off, bytes, capacity(src), "copy_peer: src", &why))
        return fail(VNN_STATUS_INVALID_ARGUMENT, why);
      for (int32_t d : {src_device, dst_device})
        if (!device_running(d))
          return fail(VNN_STATUS_INVALID_ARGUMENT, Traits::name, ":", d, ": copy_peer before init_device");
      if constexpr (has_multi_device<Traits>::value) {
        if (Traits::copy_peer(dst_device, at(dst, dst_off), src_device, at(src, src_off), bytes,
                              queue_of(src_device, queue)))
          return VNN_STATUS_OK;
      }
      return fail(VNN_STATUS_UNSUPPORTED, Traits::name, ": no direct path from ", Traits::name, ":", src_device,
                  " to ", Traits::name, ":", dst_device, " (no peer access): stage through host memory");
    });
  }

  // Collectives (Traits::Comm), on the queue's stream; offsets in bytes.
  static char* at(const void* p, size_t off) { return static_cast<char*>(const_cast<void*>(p)) + off; }
  static vnn_status comm_unique_id(int32_t, void* id, size_t* size) {
    return guarded("comm_unique_id", [&] {
      if constexpr (has_comm<Traits>::value) Traits::Comm::unique_id(id, size);
      return VNN_STATUS_OK;
    });
  }
  static vnn_status comm_create(int32_t device, const void* id, size_t size, int32_t rank, int32_t ws, void** comm) {
    return guarded("comm_create", [&] {
      if constexpr (has_comm<Traits>::value) *comm = Traits::Comm::create(device, id, size, rank, ws);
      return VNN_STATUS_OK;
    });
  }
  static vnn_status comm_destroy(int32_t, void* comm) {
    return guarded("comm_destroy", [&] {
      if constexpr (has_comm<Traits>::value) Traits::Comm::destroy(comm);
      return VNN_STATUS_OK;
    });
  }
  static vnn_status comm_allreduce(int32_t device, void* comm, void* data, size_t off, size_t count, int32_t dtype,
                                   int32_t reduce, void* queue) {
    return guarded("comm_allreduce", [&] {
      if constexpr (has_comm<Traits>::value)
        Traits::Comm::allreduce(comm, at(data, off), count, dtype, reduce, queue_of(device, queue));
      return VNN_STATUS_OK;
    });
  }
  static vnn_status comm_broadcast(int32_t device, void* comm, void* data, size_t off, size_t count, int32_t dtype,
                                   int32_t root, void* queue) {
    return guarded("comm_broadcast", [&] {
      if constexpr (has_comm<Traits>::value)
        Traits::Comm::broadcast(comm, at(data, off), count, dtype, root, queue_of(device, queue));
      return VNN_STATUS_OK;
    });
  }
  static vnn_status comm_allgather(int32_t device, void* comm, const void* in, size_t in_off, void* out, size_t out_off,
                                   size_t count, int32_t dtype, void* queue) {
    return guarded("comm_allgather", [&] {
      if constexpr (has_comm<Traits>::value)
        Traits::Comm::allgather(comm, at(in, in_off), at(out, out_off), count, dtype, queue_of(device, queue));
      return VNN_STATUS_OK;
    });
  }
  static vnn_status comm_reduce_scatter(int32_t device, void* comm, const void* in, size_t in_off, void* out,
                                        size_t out_off, size_t count, int32_t dtype, int32_t reduce, void* queue) {
    return guarded("comm_reduce_scatter", [&] {
      if constexpr (has_comm<Traits>::value)
        Traits::Comm::reduce_scatter(comm, at(in, in_off), at(out, out_off), count, dtype, reduce, queue_of(device, queue));
      return VNN_STATUS_OK;
    });
  }

  static vnn_status run(int32_t device, const vnn_op* op) {
    return guarded(op_name(op->kind), [&] {
      if (!state().initialized || (!op->queue && !device_running(device)))
        return fail(VNN_STATUS_INVALID_ARGUMENT, Traits::name, ":", device, ": run before init_device");
      // Descriptors are re-checked before any kernel sees them (desc_check.hpp).
      std::string why;
      if (!check_operands(*op, &why))
        return fail(VNN_STATUS_INVALID_ARGUMENT, Traits::name, ":", device, ": ", op_name(op->kind), ": ", why);
      last_path_slot() = op->kind == VNN_OP_MATMUL ? "kokkos" : nullptr;
      if constexpr (has_host_ops<Traits>::value) {
        // A host library runs synchronously on the calling thread; only the
        // owner thread may open parallel regions on the pool (see below).
        if (Traits::HostOps::wants(op->kind) && on_owner_thread()) {
          queue_of(device, op->queue).fence();
          switch (Traits::HostOps::run(*op, &why)) {
            case HostOutcome::taken: last_path_slot() = Traits::HostOps::name; return VNN_STATUS_OK;
            case HostOutcome::invalid:
              return fail(VNN_STATUS_INVALID_ARGUMENT, Traits::name, ":", device, ": ", op_name(op->kind), ": ", why);
            case HostOutcome::declined: break;
          }
        }
      }
      if constexpr (has_host_blas<Traits>::value) {
        // BLAS runs on the calling thread after the queue drained; it
        // brings its own threads.
        if (op->kind == VNN_OP_MATMUL && op_work(op) >= kInlineGrain) {
          queue_of(device, op->queue).fence();
          // A HostBlas with two libraries names the one it called in
          // last_path_slot() from its gemm; this is the default.
          last_path_slot() = Traits::HostBlas::name;
          if (kernels::matmul_blas<typename Traits::HostBlas>(op->outputs[0], op->inputs[0], op->inputs[1],
                                                               op->num_scalars > 0 ? op->scalars[0] : 1.0,
                                                               op->num_scalars > 1 ? op->scalars[1] : 0.0))
            return VNN_STATUS_OK;
          last_path_slot() = "kokkos";
        }
      }
      if constexpr (has_device_blas<Traits>::value) {
        if (op->kind == VNN_OP_MATMUL &&
            kernels::matmul_device_blas<typename Traits::DeviceBlas, Mem>(
                queue_of(device, op->queue), op->outputs[0], op->inputs[0], op->inputs[1],
                op->num_scalars > 0 ? op->scalars[0] : 1.0, op->num_scalars > 1 ? op->scalars[1] : 0.0)) {
          last_path_slot() = Traits::DeviceBlas::name;
          return VNN_STATUS_OK;
        }
      }
      if constexpr (Traits::inline_small_work) {
        // A host pool (Kokkos OpenMP) serves the thread that initialised it:
        // Kokkos 3.4 opens parallel regions only from that thread and keeps
        // one set of per-thread scratch for it. Work from any other host
        // thread runs inline on Kokkos::Serial, on the calling thread, so two
        // threads never dispatch into one OpenMP instance at once, whatever
        // the Kokkos version (docs/threads.md).
        if (op_work(op) < kInlineGrain || !on_owner_thread()) return run_on(Kokkos::Serial(), op, device);
      }
      return run_on(queue_of(device, op->queue), op, device);
    });
  }

  static const char* last_error() { return last_error_text().c_str(); }
  static const char* last_path(int32_t) { return last_path_slot(); }

 private:
  struct State {
    std::mutex mutex;
    bool initialized = false;
    bool finalized = false;
    int32_t device = -1;    // the one Kokkos was initialised with
    std::thread::id owner;  // the thread that initialised Kokkos
    // Each running device's default queue (Kokkos's default instance for
    // `device`, an instance on a stream of its own for the others); read
    // without the mutex, so atomics.
    std::atomic<Exec*> queues[kMaxDevices] = {};
    std::vector<int32_t> running;  // in start order, under mutex
    // Bytes of every live block this plugin handed out (alloc and
    // host_alloc), so that run() and the copies can bound what they touch.
    std::mutex blocks_mutex;
    std::unordered_map<const void*, int64_t> blocks;
  };
  static void remember(const void* p, size_t bytes) {
    std::lock_guard<std::mutex> lock(state().blocks_mutex);
    state().blocks[p] = int64_t(bytes);
  }
  static void forget(const void* p) {
    std::lock_guard<std::mutex> lock(state().blocks_mutex);
    state().blocks.erase(p);
  }
  // -1 for memory this plugin did not allocate (wrap_external, another
  // plugin's pinned block): only the descriptor arithmetic is checked then.
  static int64_t capacity(const void* p) {
    std::lock_guard<std::mutex> lock(state().blocks_mutex);
    auto it = state().blocks.find(p);
    return it == state().blocks.end() ? -1 : it->second;
  }
  // Descriptors within bounds, and the operand counts the fixed-arity ops
  // below index without looking.
  static bool check_operands(const vnn_op& op, std::string* why) {
    if (!kernels::check_op_descs(op, [](const void* p) { return capacity(p); }, why)) return false;
    int32_t in = 0, ints = 0, scalars = 0;
    switch (op.kind) {
      case VNN_OP_FILL: scalars = 1; break;
      case VNN_OP_COPY: case VNN_OP_SOFTMAX: case VNN_OP_REDUCE: in = 1; break;
      case VNN_OP_UNARY: in = 1, ints = 1; break;
      case VNN_OP_BINARY: in = 2, ints = 1; break;
      case VNN_OP_MATMUL: in = 2; break;
      default: break;  // the other kernels check their own counts
    }
    if (op.num_outputs < 1 || op.num_inputs < in || op.num_ints < ints || op.num_scalars < scalars) {
      *why = vnn::detail::str_cat("needs at least 1 output, ", in, " inputs, ", ints, " ints and ", scalars,
                                  " scalars; got ", op.num_outputs, ", ", op.num_inputs, ", ", op.num_ints, " and ",
                                  op.num_scalars);
      return false;
    }
    return true;
  }
  static State& state() {
    static State* s = new State();  // never destroyed: used from atexit paths
    return *s;
  }
  static void finalize() {
    if (!Kokkos::is_initialized()) return;
    for (int32_t d : state().running) {
      Exec* q = state().queues[d].exchange(nullptr);
      q->fence();
      if (d != state().device) Traits::destroy_queue(*q);  // its stream is the plugin's
      delete q;
    }
    state().finalized = true;
    state().initialized = false;
    Kokkos::finalize();
  }
  static bool on_owner_thread() { return std::this_thread::get_id() == state().owner; }
  static bool device_running(int32_t device) {
    return device >= 0 && device < kMaxDevices && state().queues[device].load() != nullptr;
  }
  // The given queue, or the device's default one (which must be running).
  static Exec& queue_of(int32_t device, void* queue) {
    if (queue) return *static_cast<Exec*>(queue);
    Exec* q = device >= 0 && device < kMaxDevices ? state().queues[device].load() : nullptr;
    if (!q)
      throw std::runtime_error(vnn::detail::str_cat(Traits::name, ":", device,
                                                    ": used before init_device (this device is not running)"));
    return *q;
  }

  // The ABI's name table (vnn/op_names.h); "op" for an unknown kind.
  static const char* op_name(int32_t kind) {
    const char* n = VNN_OP_KIND_NAME(kind);
    return n ? n : "op";
  }

  template <class E>
  static vnn_status run_on(const E& exec, const vnn_op* op, int32_t device) {
    kernels::refusal().clear();
    try {
      if (run_kernel(exec, op)) return VNN_STATUS_OK;
    } catch (const kernels::UnsupportedDtype& e) {
      return fail(VNN_STATUS_UNSUPPORTED, e.op, ": dtype ", vnn::detail::abi_dtype(e.dtype), " is not supported on ",
                  Traits::name, ":", device, " (", e.types, " are)");
    }
    const std::string& why = kernels::refusal();
    return fail(VNN_STATUS_UNSUPPORTED, Traits::name, ":", device, ": ", op_text(*op),
                " is not supported on this backend", why.empty() ? "" : ": ", why);
  }

  // The Kokkos kernel of op->kind; false (with kernels::refusal() saying
  // why, where the kernel said) when it declines the request.
  template <class E>
  static bool run_kernel(const E& exec, const vnn_op* op) {
    bool ok = false;
    switch (op->kind) {
      case VNN_OP_FILL: ok = kernels::fill(exec, op->outputs[0], op->scalars[0]); break;
      case VNN_OP_COPY: ok = kernels::copy(exec, op->outputs[0], op->inputs[0]); break;
      case VNN_OP_BINARY:
        ok = kernels::binary(exec, op->outputs[0], op->inputs[0], op->inputs[1], op->ints[0],
                             op->num_scalars > 0 ? op->scalars[0] : 1.0);
        break;
      case VNN_OP_UNARY:
        ok = kernels::unary(exec, op->outputs[0], op->inputs[0], op->ints[0], op->scalars, op->num_scalars);
        break;
      case VNN_OP_REDUCE:
        ok = op->num_ints >= 2 && kernels::reduce(exec, op->outputs[0], op->inputs[0], op->ints[0], op->ints[1]);
        break;
      case VNN_OP_MATMUL:
        ok = kernels::matmul(exec, op->outputs[0], op->inputs[0], op->inputs[1],
                             op->num_scalars > 0 ? op->scalars[0] : 1.0, op->num_scalars > 1 ? op->scalars[1] : 0.0);
        break;
      case VNN_OP_SOFTMAX:
        ok = kernels::softmax(exec, op->outputs[0], op->inputs[0], op->num_ints > 0 ? op->ints[0] : 0);
        break;
      case VNN_OP_RANDOM:
        ok = kernels::random(exec, op->outputs[0], op->ints, op->num_ints, op->scalars, op->num_scalars);
        break;
      case VNN_OP_INDEX_SELECT:
      case VNN_OP_GATHER:
      case VNN_OP_SCATTER:
      case VNN_OP_INDEX_ADD: ok = kernels::indexing(exec, op); break;
      case VNN_OP_IM2COL:
      case VNN_OP_COL2IM:
        ok = kernels::im2col(exec, *op, op->kind == VNN_OP_COL2IM);
        break;
      case VNN_OP_POOL2D:
      case VNN_OP_POOL2D_BACKWARD: ok = kernels::pool2d(exec, *op, op->kind == VNN_OP_POOL2D_BACKWARD); break;
      case VNN_OP_WHERE:
        ok = op->num_inputs >= 3 && kernels::where(exec, op->outputs[0], op->inputs[0], op->inputs[1], op->inputs[2]);
        break;
      case VNN_OP_OPTIMIZER_STEP: ok = kernels::optimizer_step(exec, *op); break;
      case VNN_OP_UNSCALE_CHECK: ok = kernels::unscale_check(exec, *op); break;
      case VNN_OP_SDPA:
      case VNN_OP_SDPA_BACKWARD: ok = kernels::sdpa(exec, *op, host_gemm<Traits>()); break;
      case VNN_OP_LAYER_NORM:
      case VNN_OP_LAYER_NORM_BACKWARD: ok = kernels::layer_norm(exec, *op); break;
      case VNN_OP_SCAN: ok = kernels::scan(exec, *op); break;
      case VNN_OP_SORT: ok = kernels::sort(exec, *op); break;
      case VNN_OP_SEARCHSORTED: ok = kernels::searchsorted(exec, *op); break;
      case VNN_OP_RNN_CELL:
      case VNN_OP_RNN_CELL_BACKWARD: ok = kernels::rnn_cell(exec, *op); break;
      case VNN_OP_GRID_SAMPLE:
      case VNN_OP_GRID_SAMPLE_BACKWARD: ok = kernels::grid_sample(exec, *op); break;
      default: break;
    }
    return ok;
  }
};

template <class Traits>
auto tool_range_push() -> void (*)(const char*) {
  if constexpr (has_tool_ranges<Traits>::value) return &Traits::range_push;
  else return nullptr;
}
template <class Traits>
auto tool_range_pop() -> void (*)() {
  if constexpr (has_tool_ranges<Traits>::value) return &Traits::range_pop;
  else return nullptr;
}

// The plugin's table; its comm_* entries stay NULL until
// enable_comm_entries (the core reads them at each collective).
template <class Traits>
vnn_backend& table_storage() {
  using B = Backend<Traits>;
  static const std::string description = Traits::description();
  static vnn_backend table = {
      .abi_version = VNN_BACKEND_ABI_VERSION,
      .reserved = 0,
      .struct_size = sizeof(vnn_backend),
      .name = Traits::name,
      .description = description.c_str(),
      .priority = Traits::priority,
      .reserved2 = 0,
      .probe = &B::probe,
      .device_info = &B::device_info,
      .init_device = &B::init_device,
      .alloc = &B::alloc,
      .free = &B::free_,
      .host_alloc = &B::host_alloc,
      .host_free = &B::host_free,
      .copy_to_device = &B::copy_to_device,
      .copy_to_host = &B::copy_to_host,
      .copy_on_device = &B::copy_on_device,
      .queue_create = &B::queue_create,
      .queue_destroy = &B::queue_destroy,
      .queue_synchronize = &B::queue_synchronize,
      .event_create = &B::event_create,
      .event_destroy = &B::event_destroy,
      .event_record = &B::event_record,
      .event_synchronize = &B::event_synchronize,
      .event_elapsed = &B::event_elapsed,
      .run = &B::run,
      .last_error = &B::last_error,
      .last_path = &B::last_path,
      .range_push = tool_range_push<Traits>(),
      .range_pop = tool_range_pop<Traits>(),
      .event_query = &B::event_query,
      .queue_wait_event = &B::queue_wait_event,
      .copy_peer = has_multi_device<Traits>::value ? &B::copy_peer : nullptr,
      .set_core_allocator = core_allocator_fn<Traits>(),
  };
  return table;
}

template <class Traits>
void enable_comm_entries() {
  if constexpr (has_comm<Traits>::value) {
    using B = Backend<Traits>;
    static const bool available = Traits::Comm::available();  // e.g. dlopen(libnccl.so.2), once
    if (!available) return;
    vnn_backend& t = table_storage<Traits>();
    t.comm_unique_id = &B::comm_unique_id;
    t.comm_create = &B::comm_create;
    t.comm_destroy = &B::comm_destroy;
    t.comm_allreduce = &B::comm_allreduce;
    t.comm_broadcast = &B::comm_broadcast;
    t.comm_allgather = &B::comm_allgather;
    t.comm_reduce_scatter = &B::comm_reduce_scatter;
  }
}

template <class Traits>
const vnn_backend* make_table(uint32_t host_abi_version) {
  // An older or newer core gets the table anyway: it reads abi_version and
  // reports the mismatch itself.
  (void)host_abi_version;
  return &table_storage<Traits>();
}

}  // namespace vnn::kokkos_backend

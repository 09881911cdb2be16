// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The part of a Kokkos GPU plugin's traits (kokkos/plugin.hpp) that CUDA
// and HIP share: the Kokkos spaces, queues as execution-space instances on
// streams of their own, and native events. CudaTraits / HipTraits derive
// from GpuTraits and add the name, probe, vendor BLAS and tool ranges.
#pragma once

#include <Kokkos_Core.hpp>

#include "cuda_hip/vendor.hpp"

namespace vnn::gpu {

#if defined(VNN_GPU_HIP)
// The HIP space left Kokkos::Experimental in Kokkos 4.0.
#if KOKKOS_VERSION >= 40000
namespace kspace = ::Kokkos;
#else
namespace kspace = ::Kokkos::Experimental;
#endif
using ExecSpace = kspace::HIP;
using MemSpace = kspace::HIPSpace;
using PinnedSpace = kspace::HIPHostPinnedSpace;
inline gpuStream_t stream_of(const ExecSpace& q) { return q.hip_stream(); }
#else
using ExecSpace = Kokkos::Cuda;
using MemSpace = Kokkos::CudaSpace;
using PinnedSpace = Kokkos::CudaHostPinnedSpace;
inline gpuStream_t stream_of(const ExecSpace& q) { return q.cuda_stream(); }
#endif

struct GpuTraits {
  using ExecSpace = gpu::ExecSpace;
  using MemSpace = gpu::MemSpace;
  using PinnedSpace = gpu::PinnedSpace;
  static constexpr bool host_accessible = false;    // device memory is not host memory
  static constexpr bool inline_small_work = false;  // every kernel runs on the device

  static void before_initialize(int32_t) {}

  // A queue is an execution-space instance on a stream of its own.
  static ExecSpace make_queue() {
    gpuStream_t s = nullptr;
    VNN_GPU_CHECK(gpuStreamCreateWithFlags, &s, gpuStreamNonBlocking);
    return ExecSpace(s);
  }
  // A stream wrapped by an instance is not owned by it.
  static void destroy_queue(ExecSpace& q) { VNN_GPU_CHECK(gpuStreamDestroy, stream_of(q)); }

  // Native events on the queue's stream. The vendor event is made at the
  // first record (event_create has no error path through the ABI).
  struct Event {
    gpuEvent_t ev = nullptr;
  };
  static Event* event_create() { return new Event{}; }
  static void event_destroy(Event* e) {
    if (e && e->ev) (void)gpuEventDestroy(e->ev);
    delete e;
  }
  static void event_record(Event* e, const ExecSpace& q) {
    if (!e->ev) VNN_GPU_CHECK(gpuEventCreate, &e->ev);
    VNN_GPU_CHECK(gpuEventRecord, e->ev, stream_of(q));
  }
  static void event_synchronize(Event* e) {
    if (e->ev) VNN_GPU_CHECK(gpuEventSynchronize, e->ev);
  }
  static double event_elapsed_ms(Event* a, Event* b) {
    if (!a->ev || !b->ev)
      throw std::runtime_error(VNN_GPU_STR(gpuEventElapsedTime) ": an event was never recorded");
    float ms = 0.f;
    VNN_GPU_CHECK(gpuEventElapsedTime, &ms, a->ev, b->ev);
    return ms;
  }
  // Streams: the event query never blocks; NotReady is the normal "still
  // running" answer, not a failure. A never-recorded event has no work to
  // wait for.
  static bool event_query(Event* e) {
    if (!e->ev) return true;
    gpuError_t err = gpuEventQuery(e->ev);
    if (err == gpuErrorNotReady) {
      (void)gpuGetLastError();  // as PyTorch does: keep NotReady out of later error checks
      return false;
    }
    check(err, VNN_GPU_STR(gpuEventQuery));
    return true;
  }
  static void queue_wait_event(const ExecSpace& q, Event* e) {
    if (e->ev) VNN_GPU_CHECK(gpuStreamWaitEvent, stream_of(q), e->ev, 0);
  }
};

}  // namespace vnn::gpu

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// NCCL collectives for the CUDA plugin (Traits::Comm of backends/kokkos/
// plugin.hpp): a communicator per process group and device, made from an id
// rank 0 creates and the core passes on; collectives on the queue's stream.
// libnccl is opened with dlopen at the plugin's first table request, not
// linked: a machine with a CUDA driver but no NCCL still loads the plugin,
// whose comm_* entries are then NULL (the core stages cuda tensors for gloo).
#pragma once
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "vnn/backend_abi.h"
#include "vnn/detail/message.h"

namespace vnn::cuda_backend {

// The NCCL entry points vnn uses, resolved from libnccl.so.2.
struct NcclApi {
  decltype(&ncclGetErrorString) get_error_string = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclBroadcast) broadcast = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclReduceScatter) reduce_scatter = nullptr;
  bool loaded = false;

  // Loaded once; the handle stays open for the life of the process.
  static const NcclApi& get() {
    static const NcclApi api = load();
    return api;
  }

 private:
  template <class F> static bool bind(void* lib, const char* name, F& fn) {
    fn = reinterpret_cast<F>(dlsym(lib, name));
    return fn != nullptr;
  }
  static NcclApi load() {
    NcclApi a;
    void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return a;
    a.loaded = bind(lib, "ncclGetErrorString", a.get_error_string) && bind(lib, "ncclGetUniqueId", a.get_unique_id) &&
               bind(lib, "ncclCommInitRank", a.comm_init_rank) && bind(lib, "ncclCommDestroy", a.comm_destroy) &&
               bind(lib, "ncclAllReduce", a.all_reduce) && bind(lib, "ncclBroadcast", a.broadcast) &&
               bind(lib, "ncclAllGather", a.all_gather) && bind(lib, "ncclReduceScatter", a.reduce_scatter);
    if (!a.loaded) {
      dlclose(lib);
      a = NcclApi{};
    }
    return a;
  }
};

struct NcclComm {
  // False where libnccl.so.2 (or one of its entry points) is missing.
  static bool available() { return NcclApi::get().loaded; }
  static const NcclApi& nccl() {
    const NcclApi& a = NcclApi::get();
    if (!a.loaded) throw std::runtime_error("nccl: libnccl.so.2 could not be loaded (install NCCL, or use gloo)");
    return a;
  }
  static void check(ncclResult_t rc, const char* what) {
    if (rc != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + nccl().get_error_string(rc));
  }
  static ncclDataType_t type(int32_t dtype) {
    switch (dtype) {
      case VNN_FLOAT32: return ncclFloat32;
      case VNN_FLOAT64: return ncclFloat64;
      case VNN_INT32: return ncclInt32;
      case VNN_INT64: return ncclInt64;
      case VNN_UINT8: case VNN_BOOL: return ncclUint8;
      case VNN_INT8: return ncclInt8;
      case VNN_FLOAT16: return ncclFloat16;
#if NCCL_MAJOR > 2 || (NCCL_MAJOR == 2 && NCCL_MINOR >= 10)
      case VNN_BFLOAT16: return ncclBfloat16;
#endif
      default:
        throw std::runtime_error(vnn::detail::str_cat("nccl: dtype ", vnn::detail::abi_dtype(dtype), " is not supported"));
    }
  }
  static ncclRedOp_t op(int32_t reduce) {
    switch (reduce) {
      case VNN_REDUCE_SUM: return ncclSum;
      case VNN_REDUCE_PROD: return ncclProd;
      case VNN_REDUCE_MAX: return ncclMax;
      case VNN_REDUCE_MIN: return ncclMin;
#if NCCL_MAJOR > 2 || (NCCL_MAJOR == 2 && NCCL_MINOR >= 10)
      case VNN_REDUCE_MEAN: return ncclAvg;
#endif
      default: throw std::runtime_error("nccl: reduction " + std::to_string(reduce) + " is not supported");
    }
  }

  static void unique_id(void* id, size_t* size) {
    static_assert(sizeof(ncclUniqueId) <= VNN_COMM_ID_BYTES, "VNN_COMM_ID_BYTES holds an ncclUniqueId");
    ncclUniqueId u;
    check(nccl().get_unique_id(&u), "ncclGetUniqueId");
    std::memcpy(id, &u, sizeof u);
    *size = sizeof u;
  }
  static void* create(int32_t device, const void* id, size_t size, int32_t rank, int32_t ws) {
    if (size != sizeof(ncclUniqueId)) throw std::runtime_error("ncclCommInitRank: the id has the wrong size");
    ncclUniqueId u;
    std::memcpy(&u, id, sizeof u);
    if (cudaSetDevice(device) != cudaSuccess) throw std::runtime_error("cudaSetDevice failed before ncclCommInitRank");
    ncclComm_t c = nullptr;
    check(nccl().comm_init_rank(&c, ws, u, rank), "ncclCommInitRank");
    return c;
  }
  static void destroy(void* comm) { check(nccl().comm_destroy(static_cast<ncclComm_t>(comm)), "ncclCommDestroy"); }

  template <class Queue>
  static void allreduce(void* comm, void* data, size_t count, int32_t dtype, int32_t reduce, const Queue& q) {
    check(nccl().all_reduce(data, data, count, type(dtype), op(reduce), static_cast<ncclComm_t>(comm), q.cuda_stream()),
          "ncclAllReduce");
  }
  template <class Queue>
  static void broadcast(void* comm, void* data, size_t count, int32_t dtype, int32_t root, const Queue& q) {
    check(nccl().broadcast(data, data, count, type(dtype), root, static_cast<ncclComm_t>(comm), q.cuda_stream()),
          "ncclBroadcast");
  }
  template <class Queue>
  static void allgather(void* comm, const void* in, void* out, size_t count, int32_t dtype, const Queue& q) {
    check(nccl().all_gather(in, out, count, type(dtype), static_cast<ncclComm_t>(comm), q.cuda_stream()), "ncclAllGather");
  }
  template <class Queue>
  static void reduce_scatter(void* comm, const void* in, void* out, size_t count, int32_t dtype, int32_t reduce,
                             const Queue& q) {
    check(nccl().reduce_scatter(in, out, count, type(dtype), op(reduce), static_cast<ncclComm_t>(comm), q.cuda_stream()),
          "ncclReduceScatter");
  }
};

}  // namespace vnn::cuda_backend

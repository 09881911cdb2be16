// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Collectives a device backend runs itself (the ABI's optional comm_*
// entries: NCCL in the CUDA plugin). The core holds no CUDA / NCCL type.
#pragma once
#include <functional>
#include <map>
#include <mutex>

#include "distributed/engine.hpp"
#include "vnn/tensor.h"

namespace vnn::detail {
struct DeviceContext;
}

namespace vnn::distributed::detail {

// The tensor's backend has collectives of its own, and the tensor is
// contiguous device memory they can take.
bool device_collectives(const Tensor& t);
// Whether the backend of this device offers collectives (for the report).
bool device_has_collectives(const Device& d);

// One communicator per device and group, made on first use (a collective
// call: every rank reaches it with its first collective on that device).
class DeviceComms {
 public:
  ~DeviceComms();
  // share(bytes) returns rank 0's bytes on every rank (through the store,
  // or a broadcast where the engine has no store).
  void* get(vnn::detail::DeviceContext& ctx, int rank, int size,
            const std::function<Bytes(const std::string& key, const Bytes& mine)>& share);

 private:
  std::mutex m_;
  std::map<vnn::detail::DeviceContext*, void*> comms_;
  int generation_ = 0;
};

struct DeviceOp {
  vnn::detail::DeviceContext* ctx = nullptr;
  void* queue = nullptr;
};
DeviceOp device_op(const Tensor& t);
// An event after the queued collective: returns "is it done", sets *wait.
std::function<bool()> record_done(const DeviceOp& d, std::function<void()>* wait);

void device_allreduce(void* comm, const DeviceOp& d, const Tensor& t, ReduceOp op);
void device_broadcast(void* comm, const DeviceOp& d, const Tensor& t, int root);
void device_allgather(void* comm, const DeviceOp& d, const Tensor& out, const Tensor& in);
void device_reduce_scatter(void* comm, const DeviceOp& d, const Tensor& out, const Tensor& in, ReduceOp op);

}  // namespace vnn::distributed::detail

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Collectives on a device backend's own library (NCCL in the CUDA plugin)
// through the ABI's optional comm_* entries: the communicator is made from
// an id rank 0's plugin creates and the process group's store (or, for mpi,
// a broadcast) hands to every rank; the ops are queued on the device's
// current queue, and the Work waits on an event recorded after them.
#include "distributed/device_comm.hpp"

#include <cstring>

#include "runtime/device_context.hpp"
#include "runtime/stream_state.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::distributed::detail {

namespace {

bool has_comm(const vnn::detail::DeviceContext& ctx) {
  const vnn_backend* b = ctx.backend;
  return b && VNN_BACKEND_COVERS(b, comm_reduce_scatter) && b->comm_unique_id && b->comm_create &&
         b->comm_destroy && b->comm_allreduce && b->comm_broadcast && b->comm_allgather && b->comm_reduce_scatter;
}

int32_t reduce_fn(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return VNN_REDUCE_SUM;
    case ReduceOp::avg: return VNN_REDUCE_MEAN;
    case ReduceOp::min: return VNN_REDUCE_MIN;
    case ReduceOp::max: return VNN_REDUCE_MAX;
    case ReduceOp::product: return VNN_REDUCE_PROD;
  }
  return VNN_REDUCE_SUM;
}

}  // namespace

bool device_collectives(const Tensor& t) {
  auto& ctx = t.impl()->ctx();
  return !ctx.host_accessible && t.is_contiguous() && has_comm(ctx);
}

bool device_has_collectives(const Device& d) {
  return is_available(d) && has_comm(vnn::detail::context(d));
}

DeviceComms::~DeviceComms() {
  for (auto& [ctx, comm] : comms_) ctx->backend->comm_destroy(ctx->plugin_index, comm);
}

void* DeviceComms::get(vnn::detail::DeviceContext& ctx, int rank, int size,
                       const std::function<Bytes(const std::string&, const Bytes&)>& share) {
  std::lock_guard<std::mutex> lock(m_);
  auto it = comms_.find(&ctx);
  if (it != comms_.end()) return it->second;
  ctx.ensure_initialized();
  char id[VNN_COMM_ID_BYTES] = {};
  size_t id_size = 0;
  if (rank == 0) ctx.check(ctx.backend->comm_unique_id(ctx.plugin_index, id, &id_size), "comm_unique_id");
  Bytes got = share("comm/" + ctx.info.device.str() + "/" + std::to_string(generation_++), Bytes(id, id + id_size));
  if (got.empty() || got.size() > sizeof id)
    VNN_THROW(DistributedError, "rank ", rank, ": the communicator id from rank 0 for ", ctx.info.device.str(), " has ",
              got.size(), " bytes");
  void* comm = nullptr;
  ctx.check(ctx.backend->comm_create(ctx.plugin_index, got.data(), got.size(), rank, size, &comm), "comm_create");
  comms_[&ctx] = comm;
  return comm;
}

DeviceOp device_op(const Tensor& t) {
  DeviceOp d;
  d.ctx = &t.impl()->ctx();
  d.queue = vnn::detail::current_queue(*d.ctx);
  return d;
}

size_t byte_offset(const Tensor& t) { return size_t(t.storage_offset()) * itemsize(t.dtype()); }

std::function<bool()> record_done(const DeviceOp& d, std::function<void()>* wait) {
  auto* ctx = d.ctx;
  void* ev = nullptr;
  ctx->check(ctx->backend->event_create(ctx->plugin_index, &ev), "event_create");
  ctx->check(ctx->backend->event_record(ctx->plugin_index, ev, d.queue), "event_record");
  auto holder = std::shared_ptr<void>(ev, [ctx](void* e) { ctx->backend->event_destroy(ctx->plugin_index, e); });
  *wait = [ctx, holder] { ctx->check(ctx->backend->event_synchronize(ctx->plugin_index, holder.get()), "collective"); };
  return [ctx, holder] {
    if (!ctx->backend->event_query) return true;
    return ctx->backend->event_query(ctx->plugin_index, holder.get()) == VNN_STATUS_OK;
  };
}

void device_allreduce(void* comm, const DeviceOp& d, const Tensor& t, ReduceOp op) {
  d.ctx->check(d.ctx->backend->comm_allreduce(d.ctx->plugin_index, comm, t.raw_data(), byte_offset(t),
                                               size_t(t.numel()), int32_t(t.dtype()), reduce_fn(op), d.queue),
               "allreduce (device collectives)");
}
void device_broadcast(void* comm, const DeviceOp& d, const Tensor& t, int root) {
  d.ctx->check(d.ctx->backend->comm_broadcast(d.ctx->plugin_index, comm, t.raw_data(), byte_offset(t),
                                               size_t(t.numel()), int32_t(t.dtype()), root, d.queue),
               "broadcast (device collectives)");
}
void device_allgather(void* comm, const DeviceOp& d, const Tensor& out, const Tensor& in) {
  d.ctx->check(d.ctx->backend->comm_allgather(d.ctx->plugin_index, comm, in.raw_data(), byte_offset(in),
                                               out.raw_data(), byte_offset(out), size_t(in.numel()),
                                               int32_t(in.dtype()), d.queue),
               "allgather (device collectives)");
}
void device_reduce_scatter(void* comm, const DeviceOp& d, const Tensor& out, const Tensor& in, ReduceOp op) {
  d.ctx->check(d.ctx->backend->comm_reduce_scatter(d.ctx->plugin_index, comm, in.raw_data(), byte_offset(in),
                                                    out.raw_data(), byte_offset(out), size_t(out.numel()),
                                                    int32_t(out.dtype()), reduce_fn(op), d.queue),
               "reduce_scatter (device collectives)");
}

}  // namespace vnn::distributed::detail

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The engine interface behind ProcessGroup: blocking collectives on host
// (or engine-native) memory, run in issue order on the group's worker
// thread. ProcessGroup does validation, staging, async Work and errors'
// context; an engine only moves bytes with its library. Failures throw
// (any std::exception); the group wraps them in DistributedError.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "distributed/store.hpp"
#include "vnn/distributed.h"
#include "vnn/dtype.h"

namespace vnn::distributed::detail {

// A posted send or recv; wait() blocks until it completed (or throws).
class PendingP2P {
 public:
  virtual ~PendingP2P() = default;
  virtual void wait(Millis timeout) = 0;
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual const char* name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // op is sum, min, max or product (avg is a sum the group then divides).
  // `tag` keeps collectives apart on the wire: the group derives it from the
  // collective and its size, so ranks that disagree on either never pair
  // their messages (Gloo would abort the process) but stall, which the group
  // detects (process_group.cpp). Engines without tagged collectives ignore it.
  virtual void allreduce(void* data, size_t count, DType dtype, ReduceOp op, Millis timeout, uint32_t tag) = 0;
  virtual void broadcast(void* data, size_t bytes, int root, Millis timeout, uint32_t tag) = 0;
  // out holds size() * bytes: rank r's `in` at r * bytes.
  virtual void allgather(const void* in, void* out, size_t bytes, Millis timeout, uint32_t tag) = 0;
  // in holds size() * count elements; out gets op over ranks of piece rank().
  virtual void reduce_scatter(const void* in, void* out, size_t count, DType dtype, ReduceOp op, Millis timeout,
                              uint32_t tag) = 0;
  virtual void barrier(Millis timeout) = 0;
  // Posted right away (so that two ranks sending to each other first do not
  // deadlock); the caller waits on the result.
  virtual std::unique_ptr<PendingP2P> send(const void* data, size_t bytes, int dst, int tag) = 0;
  virtual std::unique_ptr<PendingP2P> recv(void* data, size_t bytes, int src, int tag) = 0;
};

struct EngineConfig {
  int rank = 0, world_size = 1;
  std::string master_addr;
  Millis timeout{30000};
};

// Gloo over TCP, rendezvous through `store`. Throws Unsupported when vnn
// was built without Gloo.
std::unique_ptr<Engine> make_gloo_engine(const EngineConfig& cfg, Store& store);
// MPI_COMM_WORLD (MPI_Init_thread on first use). Throws Unsupported when
// vnn was built without MPI.
std::unique_ptr<Engine> make_mpi_engine(const EngineConfig& cfg);
bool gloo_available();
bool mpi_available();

// Element size of the dtypes reductions accept; throws DTypeError otherwise.
size_t reducible_itemsize(DType dtype, const char* collective);

}  // namespace vnn::distributed::detail

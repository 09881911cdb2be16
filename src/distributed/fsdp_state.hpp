// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// FullyShardedDataParallel's machinery, shared by fsdp.cpp (sharding,
// gathering, gradient reduction) and fsdp_checkpoint.cpp (state dicts and
// sharded checkpoints).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vnn/distributed.h"
#include "vnn/nn/fsdp.h"

namespace vnn::nn {

// One flat buffer: some parameters of a unit (one dtype, one group), padded
// to a multiple of the world size; each rank holds one slice as `shard`.
struct FlatParam {
  std::vector<Tensor> params;       // the module's parameter tensors (leaves)
  std::vector<std::string> names;   // each one's first dotted path
  std::vector<Shape> shapes;
  std::vector<int64_t> offsets;     // element offset of each in the flat buffer
  int64_t numel = 0, padded = 0, shard_numel = 0;
  DType dtype = kFloat32;           // the model's (shard and optimizer) dtype
  DType gather_dtype = kFloat32;    // the gathered parameters' dtype
  DType reduce_dtype = kFloat32;
  Device device;
  int group = 0;
  bool requires_grad = false;
  Tensor shard;  // leaf [shard_numel]: what the optimizer steps
  Tensor full;   // [padded] gather_dtype; its memory is given back while sharded
  Tensor empty;  // the parameters' stand-in while sharded ([0] elements)
  Tensor gather_src;
  distributed::Work work;
  enum class Status { sharded, gathering, unsharded } status = Status::sharded;
  uint64_t version = 0;  // the storage version the gathered buffer must keep
};

// A wrapped submodule (or the root) and its flat buffers.
struct Unit {
  std::string path;                // "" for the root
  std::shared_ptr<Module> inner;   // the original module
  std::vector<FlatParam> flats;
  int64_t expected = 0;            // parameters that require grad
  int64_t pending = 0;             // of those, still without this backward's gradient
  bool ran = false;                // its forward ran with grad in this iteration
  bool in_backward = false;        // gathered for its backward
  bool is_root = false;
};

struct PendingReduce {
  FlatParam* flat;
  Tensor input, output;
  distributed::Work work;
};

struct FullyShardedDataParallel::State {
  distributed::ProcessGroup& pg;
  FSDPOptions options;
  int rank = 0, world = 1;
  std::vector<std::unique_ptr<Unit>> units;  // [0] is the root
  std::vector<size_t> order, last_order;     // units in forward order (this and the last iteration)
  bool recording = false;
  int64_t units_pending = 0;
  bool sync = true;
  std::vector<PendingReduce> reduces;
  Stats stats;
  std::weak_ptr<State> self;

  State(distributed::ProcessGroup& g, FSDPOptions o) : pg(g), options(std::move(o)) {}

  void unshard(Unit& u, bool prefetch);
  void wait_unshard(Unit& u);
  void reshard(Unit& u);
  void pre_forward(size_t u);
  void post_forward(size_t u, const Tensor& out);
  void pre_backward(size_t u);
  void on_gradient(size_t u);
  void post_backward(Unit& u);
  void finalize();
  void drain();  // waits for the pending reduce-scatters and adds them into the shards' .grad()
  // Every flat buffer of every unit, in unit order (the checkpoints' numbering).
  std::vector<FlatParam*> all_flats();
};

}  // namespace vnn::nn

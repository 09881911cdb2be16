// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn::distributed: process groups and collectives across processes and
// machines (the counterpart of torch.distributed), on real communication
// engines: Gloo (TCP, the default for cpu / opencl / hip tensors), MPI (when
// launched by mpirun, or asked for) and NCCL (cuda tensors, inside the CUDA
// plugin).
//
//   // vnn-run --nproc-per-node 2 ./train   (or torchrun's variables, or mpirun -np 2)
//   vnn::distributed::init_process_group();          // reads RANK, WORLD_SIZE, MASTER_ADDR, ...
//   vnn::Device dev = vnn::distributed::local_device();
//   vnn::Tensor t = vnn::ones({4}, dev);
//   vnn::distributed::all_reduce(t);                   // t = sum over ranks, in place
//   auto work = vnn::distributed::group().allreduce(t, vnn::distributed::ReduceOp::avg);
//   ...                                                // overlap other work
//   work.wait();                                       // throws DistributedError on failure
//   vnn::distributed::destroy_process_group();
//
// Every collective is asynchronous: it returns a Work handle; the tensors
// hold the result once wait() returns (cpu tensors as soon as
// is_completed() says true), and must not be touched meanwhile. Collectives
// run in the order they were issued, the same order on every rank. Tensors
// may live on any vnn device; devices without collectives of their own are
// staged through pinned host memory. Failures (a peer gone, a timeout, sizes
// that disagree) throw vnn::DistributedError naming the rank, the collective
// and what happened.
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "vnn/device.h"
#include "vnn/tensor.h"

namespace vnn::distributed {

/// The reduction of a collective: sum, avg (floating dtypes), min, max, product.
enum class ReduceOp { sum, avg, min, max, product };
/// The op's name: "sum", "avg", "min", "max", "product".
const char* name(ReduceOp op);

/// The communication engine of a process group.
enum class Engine {
  automatic,  // mpi when started by mpirun, else gloo (nccl joins for cuda tensors)
  gloo,
  mpi,
};
/// The engine's name: "automatic", "gloo", "mpi".
const char* name(Engine e);

/// Options of init_process_group; -1 and "" fields come from the environment (torchrun or mpirun variables).
struct InitOptions {
  /// The engine (default: mpi under mpirun, else gloo).
  Engine engine = Engine::automatic;
  /// -1 / "": taken from the environment (RANK, WORLD_SIZE, LOCAL_RANK,
  /// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT as torchrun sets them, or
  /// OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK / _LOCAL_SIZE under mpirun).
  int rank = -1;
  /// Number of processes (-1: from WORLD_SIZE or OMPI_COMM_WORLD_SIZE).
  int world_size = -1;
  /// Rank within this machine (-1: from LOCAL_RANK or OMPI_COMM_WORLD_LOCAL_RANK).
  int local_rank = -1;
  /// Processes on this machine (-1: from LOCAL_WORLD_SIZE or OMPI_COMM_WORLD_LOCAL_SIZE).
  int local_world_size = -1;
  /// Host of rank 0's TCP store ("": from MASTER_ADDR).
  std::string master_addr;
  /// Port of rank 0's TCP store (-1: from MASTER_PORT).
  int master_port = -1;
  /// Rendezvous: "env://", a TCP store served by rank 0 on
  /// MASTER_ADDR:MASTER_PORT (the only method so far; mpi needs none).
  std::string init_method = "env://";
  /// After this long a collective (and the rendezvous) throws
  /// DistributedError. VNN_DIST_TIMEOUT (seconds) overrides the default.
  std::chrono::milliseconds timeout = std::chrono::seconds(30);
  /// An allocation on this rank that throws OutOfMemory aborts the group
  /// (ProcessGroup::abort), so the other ranks throw at once instead of
  /// waiting on this one. VNN_DIST_ABORT_ON_OOM=0 turns it off.
  bool abort_on_out_of_memory = true;
};

/// One pending or finished collective. Copyable handle; a default-constructed
/// Work is complete.
class Work {
 public:
  /// The engine's state behind the handle (defined in the library).
  struct State;
  /// A completed Work.
  Work() = default;
  /// Wraps an engine's pending collective (used by the engines).
  explicit Work(std::shared_ptr<State> state) : state_(std::move(state)) {}
  /// Blocks until done; copies staged results back into the tensors; throws
  /// DistributedError (or the error the collective hit) on failure.
  void wait();
  /// Non-blocking; true once the engine finished (successfully or not).
  bool is_completed() const;
  /// Ok so far (false after a failure; wait() then throws it).
  bool is_success() const;

 private:
  std::shared_ptr<State> state_;
};

/// A group of ranks running collectives in issue order on one engine (torch's ProcessGroup).
class ProcessGroup {
 public:
  /// The engine behind the group (defined in the library).
  struct Impl;
  /// Wraps an initialised engine (init_process_group builds the default group).
  explicit ProcessGroup(std::unique_ptr<Impl> impl);
  /// Destroys the group and its engine.
  ~ProcessGroup();
  /// Not copyable (one group, one engine).
  ProcessGroup(const ProcessGroup&) = delete;
  /// Not assignable.
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  /// This process's rank in the group.
  int rank() const;
  /// Number of ranks in the group.
  int size() const;
  /// The engine's name: "gloo" or "mpi".
  std::string engine() const;  // "gloo", "mpi"

  /// In place on `tensor`. avg divides by size() (floating dtypes only).
  /// Dtypes: float32, float64, int32, int64, uint8.
  Work allreduce(const Tensor& tensor, ReduceOp op = ReduceOp::sum);
  /// Every rank's `tensor` gets root's values. Any dtype.
  Work broadcast(const Tensor& tensor, int root = 0);
  /// outputs[r] = rank r's input; size() outputs, each shaped like input. Any dtype.
  Work allgather(const std::vector<Tensor>& outputs, const Tensor& input);
  /// output (size() * input.numel() elements, first dim size() * input.size(0)
  /// or any shape with that many elements) = the inputs of ranks 0..size()-1, concatenated.
  Work allgather_into_tensor(const Tensor& output, const Tensor& input);
  /// output = op over ranks of inputs[rank()]; size() inputs, each shaped like output.
  Work reduce_scatter(const Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op = ReduceOp::sum);
  /// output = op over ranks of the rank()-th of size() equal pieces of input.
  Work reduce_scatter_tensor(const Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::sum);
  /// Completes once every rank has called it.
  Work barrier();
  /// Point to point; tag tells apart messages between the same pair.
  Work send(const Tensor& tensor, int dst, int tag = 0);
  /// Receives into `tensor` what rank `src` sent with the same `tag`.
  Work recv(const Tensor& tensor, int src, int tag = 0);

  /// Sets how long a collective may take before it throws DistributedError.
  void set_timeout(std::chrono::milliseconds timeout);
  /// The collective timeout.
  std::chrono::milliseconds timeout() const;

  /// Fails the group on every rank, for a failure the others cannot see
  /// (an OutOfMemory, an exception in a pipeline stage): this rank's pending
  /// and later work throws DistributedError, and so does every other
  /// rank's at once, naming "rank R failed: <reason>" (the reason travels
  /// through the rendezvous store; under MPI only this rank's work fails,
  /// mpirun ends the job when a rank exits). A collective that fails (a
  /// peer gone, a timeout) aborts the group the same way. Idempotent;
  /// destroy the group afterwards.
  void abort(const std::string& reason);
  /// Why the group was aborted, here or by a peer ("" while it is not).
  std::string abort_reason() const;

  /// Which engine serves which device kind, and why (e.g. "hip: host-staged
  /// gloo, Debian 12 has no RCCL").
  std::string report() const;

  /// The engine (for the library's own code; not stable API).
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

/// The default group. init_process_group throws ValueError when a variable is
/// missing or malformed, DistributedError when the rendezvous fails (port in
/// use, peers not arriving within the timeout, world sizes that disagree).
void init_process_group(const InitOptions& options = {});
/// Waits for pending work and tears the default group down; idempotent.
void destroy_process_group();  // waits for pending work; idempotent
/// Whether init_process_group has run (and destroy_process_group has not).
bool is_initialized();
/// The default group (ValueError unless initialised).
ProcessGroup& group();  // throws ValueError unless initialised
/// This process's rank in the default group.
int rank();
/// Number of ranks in the default group.
int world_size();
/// This process's rank on its machine.
int local_rank();
/// Number of ranks on this machine.
int local_world_size();
/// The device this rank should use: cuda:LOCAL_RANK / hip:LOCAL_RANK where
/// such GPUs exist, otherwise vnn::best_device().
Device local_device();
/// True when the program runs under mpirun (OMPI_COMM_WORLD_SIZE is set).
bool launched_by_mpirun();

/// Shorthands on the default group that wait for the result.
void all_reduce(const Tensor& tensor, ReduceOp op = ReduceOp::sum);
/// Broadcasts root's `tensor` to every rank and waits.
void broadcast(const Tensor& tensor, int root = 0);
/// Gathers every rank's `input` into `outputs` and waits.
void all_gather(const std::vector<Tensor>& outputs, const Tensor& input);
/// Reduce-scatter over the default group, waiting for the result.
void reduce_scatter(const Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op = ReduceOp::sum);
/// Waits until every rank of the default group arrives.
void barrier();
/// Sends `tensor` to rank `dst` and waits.
void send(const Tensor& tensor, int dst, int tag = 0);
/// Receives from rank `src` into `tensor` and waits.
void recv(const Tensor& tensor, int src, int tag = 0);

}  // namespace vnn::distributed

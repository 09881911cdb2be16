// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The MPI engine: MPI_COMM_WORLD (duplicated per group), non-blocking MPI
// collectives polled against the group's timeout (MPI itself has none).
#include <climits>
#include <cstdlib>
#include <thread>

#include "distributed/engine.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"

#ifdef VNN_HAVE_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only (no libmpi_cxx)
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace vnn::distributed::detail {

#ifdef VNN_HAVE_MPI
bool mpi_available() { return true; }

namespace {

std::string mpi_text(int code) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, buf, &len);
  return std::string(buf, size_t(len));
}

void check(int code, const char* call) {
  VNN_CHECK(DistributedError, code == MPI_SUCCESS, call, " failed: ", mpi_text(code));
}

int count_of(size_t n, const char* what) {
  if (n > size_t(INT_MAX))
    VNN_THROW(ValueError, what, ": ", n, " elements exceed MPI's int count; split the tensor (or use the gloo engine)");
  return int(n);
}

MPI_Datatype mpi_type(DType d) {
  switch (d) {
    case kFloat32: return MPI_FLOAT;
    case kFloat64: return MPI_DOUBLE;
    case kInt32: return MPI_INT32_T;
    case kInt64: return MPI_INT64_T;
    case kUInt8: return MPI_UINT8_T;
    default: reducible_itemsize(d, "mpi");
  }
  return MPI_BYTE;
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::product: return MPI_PROD;
    case ReduceOp::min: return MPI_MIN;
    case ReduceOp::max: return MPI_MAX;
    default: return MPI_SUM;
  }
}

// Polls a request until done or the timeout; sleeps a little between polls
// so that a waiting rank leaves the (shared) cores to the others.
void wait_request(MPI_Request& req, Millis timeout, const char* what) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int spins = 0;
  while (true) {
    int done = 0;
    check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), what);
    if (done) return;
    if (std::chrono::steady_clock::now() > deadline)
      VNN_THROW(DistributedError, what, ": timed out after ", timeout.count(), " ms");
    if (++spins < 64) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

class MpiP2P final : public PendingP2P {
 public:
  explicit MpiP2P(MPI_Request r, const char* what) : req_(r), what_(what) {}
  void wait(Millis timeout) override { wait_request(req_, timeout, what_); }

 private:
  MPI_Request req_;
  const char* what_;
};

class MpiEngine final : public Engine {
 public:
  MpiEngine() {
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
      int provided = 0;
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
      std::atexit([] {
        int fin = 0;
        MPI_Finalized(&fin);
        if (!fin) MPI_Finalize();
      });
      if (provided < MPI_THREAD_MULTIPLE)
        VNN_THROW(DistributedError, "init_process_group: this MPI offers thread level ", provided,
                  ", vnn needs MPI_THREAD_MULTIPLE (collectives run on a worker thread)");
    }
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);  // errors come back as codes, not aborts
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiEngine() override {
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) MPI_Comm_free(&comm_);
  }
  const char* name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void allreduce(void* data, size_t count, DType dtype, ReduceOp op, Millis timeout, uint32_t) override {
    MPI_Request r;
    check(MPI_Iallreduce(MPI_IN_PLACE, data, count_of(count, "allreduce"), mpi_type(dtype), mpi_op(op), comm_, &r),
          "MPI_Iallreduce");
    wait_request(r, timeout, "MPI_Iallreduce");
  }
  void broadcast(void* data, size_t bytes, int root, Millis timeout, uint32_t) override {
    MPI_Request r;
    check(MPI_Ibcast(data, count_of(bytes, "broadcast"), MPI_BYTE, root, comm_, &r), "MPI_Ibcast");
    wait_request(r, timeout, "MPI_Ibcast");
  }
  void allgather(const void* in, void* out, size_t bytes, Millis timeout, uint32_t) override {
    MPI_Request r;
    int n = count_of(bytes, "allgather");
    check(MPI_Iallgather(in, n, MPI_BYTE, out, n, MPI_BYTE, comm_, &r), "MPI_Iallgather");
    wait_request(r, timeout, "MPI_Iallgather");
  }
  void reduce_scatter(const void* in, void* out, size_t count, DType dtype, ReduceOp op, Millis timeout,
                      uint32_t) override {
    MPI_Request r;
    check(MPI_Ireduce_scatter_block(in, out, count_of(count, "reduce_scatter"), mpi_type(dtype), mpi_op(op), comm_,
                                    &r),
          "MPI_Ireduce_scatter_block");
    wait_request(r, timeout, "MPI_Ireduce_scatter_block");
  }
  void barrier(Millis timeout) override {
    MPI_Request r;
    check(MPI_Ibarrier(comm_, &r), "MPI_Ibarrier");
    wait_request(r, timeout, "MPI_Ibarrier");
  }
  std::unique_ptr<PendingP2P> send(const void* data, size_t bytes, int dst, int tag) override {
    MPI_Request r;
    check(MPI_Isend(data, count_of(bytes, "send"), MPI_BYTE, dst, tag, comm_, &r), "MPI_Isend");
    return std::make_unique<MpiP2P>(r, "MPI_Isend");
  }
  std::unique_ptr<PendingP2P> recv(void* data, size_t bytes, int src, int tag) override {
    MPI_Request r;
    check(MPI_Irecv(data, count_of(bytes, "recv"), MPI_BYTE, src, tag, comm_, &r), "MPI_Irecv");
    return std::make_unique<MpiP2P>(r, "MPI_Irecv");
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
};

}  // namespace

std::unique_ptr<Engine> make_mpi_engine(const EngineConfig&) { return std::make_unique<MpiEngine>(); }

#else
bool mpi_available() { return false; }
std::unique_ptr<Engine> make_mpi_engine(const EngineConfig&) {
  VNN_THROW(Unsupported, "init_process_group: this vnn was built without MPI (install libopenmpi-dev and rebuild)");
}
#endif

}  // namespace vnn::distributed::detail

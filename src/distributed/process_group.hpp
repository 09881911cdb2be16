// ProcessGroup's insides, shared by the group (process_group.cpp), the
// process-wide default group (init.cpp) and DistributedDataParallel.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "distributed/device_comm.hpp"
#include "distributed/engine.hpp"
#include "vnn/distributed.h"

namespace vnn::distributed {

struct Work::State {
  std::string what;  // "allreduce"
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::exception_ptr error;
  std::function<void()> finish;  // on the waiting thread, once: staged results back into the tensors
  std::vector<Tensor> keep;      // tensors the engine reads or writes
  // Collectives a device runs itself: done once its event completed.
  std::function<bool()> device_done;
  std::function<void()> device_wait;
};

struct ProcessGroup::Impl {
  using Millis = detail::Millis;
  std::unique_ptr<detail::Store> store;  // null for mpi
  std::unique_ptr<detail::Engine> engine;
  std::string report;
  detail::DeviceComms device_comms;  // NCCL & co., per device, made on first use
  std::atomic<int64_t> timeout_ms{30000};
  // Check before each collective that every rank runs the same one on the
  // same size (VNN_DIST_CHECK_SIZES=0 turns it off).
  bool check_sizes = true;
  enum class Lane { collectives, sends, recvs };

  Impl(std::unique_ptr<detail::Store> s, std::unique_ptr<detail::Engine> e, std::string report, Millis timeout);
  ~Impl();

  int rank() const { return engine->rank(); }
  int size() const { return engine->size(); }
  Millis timeout() const { return Millis(timeout_ms.load()); }

  // Runs body(timeout) on the lane's thread after the lane's earlier tasks
  // (sends and receives complete on lanes of their own, so that ranks that
  // both send first do not wait on each other); errors become DistributedError.
  Work enqueue(std::string what, std::function<void(Millis)> body, std::function<void()> finish,
               std::vector<Tensor> keep, Lane lane = Lane::collectives);
  // A Work for a collective queued on a device (device_comm.hpp).
  Work device_work(std::string what, const detail::DeviceOp& d, std::vector<Tensor> keep);
  // The device communicator for t's device.
  void* device_comm(const Tensor& t);
  // Waits for everything queued so far (errors stay with their Work).
  void drain();
  bool broken() const;

 private:
  struct Queue {
    std::thread thread;
    std::mutex m;
    std::condition_variable cv;
    std::deque<std::pair<std::shared_ptr<Work::State>, std::function<void(Millis)>>> tasks;
    bool stop = false;
    int running = 0;
  };
  void serve(Queue& q, const std::string& track);
  Queue collectives_, sends_, recvs_;
  mutable std::mutex broken_m_;
  std::string broken_;  // the first failure: later collectives fail fast with it
};

}  // namespace vnn::distributed

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
  // Set when the group is aborted while this task runs in the engine: wait()
  // gives the task a moment to finish (it may have completed just before the
  // abort) and then throws this instead of waiting on the engine.
  std::exception_ptr aborted;
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
  // Waits for everything queued so far (errors stay with their Work). Once
  // the group is aborted it gives up after `aborted_limit` (tasks blocked in
  // the engine on a peer that will never answer) and returns false.
  bool drain(Millis aborted_limit = Millis(2000));
  bool broken() const;

  // Fails the group with `text` (the whole reason, "rank 1 failed: ..."):
  // every pending Work throws it, and so does later work. publish: tell
  // every peer too, through the store (their watchers abort with the same
  // text). The first reason wins.
  void abort(const std::string& text, bool publish);
  std::string aborted() const;
  // The abort's reason once one arrives within `limit` ("" if none): a peer
  // that fails tells the store before it closes its connections, so a
  // connection closed under us may soon come with the reason.
  std::string wait_for_abort(Millis limit) const;
  // Throws DistributedError when the group was aborted (before posting work).
  void check_open(const std::string& what) const;
  // A send or recv the engine refused to post (a peer gone): the failure,
  // or the abort it came from, as DistributedError; the group is aborted.
  [[noreturn]] void fail_post(const std::string& what, const std::exception& e);
  // Waits on this rank's key "abort/<rank>" on a store connection of its
  // own, for a peer's abort (or for rank 0's store to vanish).
  void start_abort_watch(std::unique_ptr<detail::Store> watch);
  // Ends the watch (sets this rank's key empty); before the destroy barrier.
  void stop_abort_watch();
  // Aborts (and tells the peers) when an allocation here throws OutOfMemory.
  void abort_on_out_of_memory();

 private:
  struct Queue {
    std::thread thread;
    std::mutex m;
    std::condition_variable cv;
    std::deque<std::pair<std::shared_ptr<Work::State>, std::function<void(Millis)>>> tasks;
    bool stop = false;
    int running = 0;
    std::shared_ptr<Work::State> current;  // the task running now
  };
  void fail_pending(Queue& q, const std::string& text);
  void serve(Queue& q, const std::string& track);
  Queue collectives_, sends_, recvs_;
  mutable std::mutex broken_m_;
  mutable std::condition_variable abort_cv_;
  std::string broken_;  // the first failure: later collectives fail fast with it
  std::string aborted_;  // the abort's reason: later work of every lane fails fast with it
  std::unique_ptr<detail::Store> watch_store_;
  std::thread watch_thread_;
  std::atomic<bool> watch_stop_{false};
  int oom_listener_ = 0;
};

}  // namespace vnn::distributed

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ProcessGroup's insides, shared by the group (process_group.cpp), the
// process-wide default group (init.cpp) and DistributedDataParallel.
#pragma once
#include <atomic>
#include <chrono>
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
  // A collective's signature (kind and options, bytes): what the stall probe
  // compares across ranks. bytes < 0: none (point to point, device work).
  int64_t code = 0, bytes = -1;
};

struct ProcessGroup::Impl {
  using Millis = detail::Millis;
  std::unique_ptr<detail::Store> store;  // null for mpi
  std::unique_ptr<detail::Engine> engine;
  std::string report;
  detail::DeviceComms device_comms;  // NCCL & co., per device, made on first use
  std::atomic<int64_t> timeout_ms{30000};
  // How ranks that call different collectives (or sizes) are caught
  // (VNN_DIST_CHECK_SIZES, docs/distributed.md). every_call: 32 bytes are
  // max-reduced before each collective (the error is immediate and the group
  // stays usable; one more round trip per collective). on_stall: collectives
  // travel on tags derived from their signature, so disagreeing ranks stall
  // instead of pairing, and a collective that runs past the probe interval
  // compares signatures through the store (the error comes within about two
  // intervals and aborts the group; nothing on the fast path). off: tags
  // only; a disagreement ends in the timeout.
  enum class SizeCheck { off, on_stall, every_call };
  SizeCheck size_check = SizeCheck::every_call;
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
               std::vector<Tensor> keep, Lane lane = Lane::collectives, int64_t code = 0, int64_t bytes = -1);
  // A collective on the collectives lane: checked as size_check says, then
  // body(timeout, tag) with the tag of its signature (code, bytes).
  Work collective(std::string what, int64_t code, int64_t bytes, std::function<void(Millis, uint32_t)> body,
                  std::function<void()> finish, std::vector<Tensor> keep);
  // Starts the stall probe (on_stall, a store, 2+ ranks); stop_stall_probe
  // ends it. Its interval: a quarter of the timeout, within 0.1..2 s.
  void start_stall_probe();
  void stop_stall_probe();
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
    std::shared_ptr<Work::State> current;         // the task running now
    int64_t started = 0;                          // tasks started so far: the current one's number
    std::chrono::steady_clock::time_point since;  // when the current one started
  };
  void probe_stalls();
  Millis probe_interval() const;
  bool probe_sleep(Millis d);  // false once the probe stops
  // Compares collective number `seq` (code, bytes, what) with every rank's
  // through the store; "" when they agree or not every rank is stalled there.
  std::string compare_stalled(int64_t seq, const Work::State& st);
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
  std::thread probe_thread_;
  std::mutex probe_m_;
  std::condition_variable probe_cv_;
  bool probe_stop_ = false;
};

}  // namespace vnn::distributed

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One rank of the pipeline and fault tests: `dist_pipeline_worker SCENARIO [ARG]`,
// started by test_pipeline. Exits 0 when every check held; prints "FAIL: ..."
// and exits 1 otherwise.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <map>

#include "distributed/pipeline_common.hpp"
#include "distributed/worker_common.hpp"
#include "vnn/distributed.h"
#include "vnn/nn/distributed.h"

namespace dist = vnn::distributed;
using vnn::Tensor;
using namespace vnn::test::dist;
using namespace vnn::test::pipeline;

namespace {

vnn::Device dev;

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// ARG "gpipe:mlp": stage `rank` of the split into world-size stages on this
// rank, against the same stage of the single-device full-batch run.
int pipe_train(const std::string& arg) {
  std::string sched = arg.substr(0, arg.find(':')), kind = arg.substr(arg.find(':') + 1);
  int r = dist::rank(), ns = dist::world_size();
  vnn::nn::Sequential model = make_model(kind);
  auto parts = pp::split_sequential(model, split_points(kind, ns));
  pp::PipelineStage stage(parts[size_t(r)], r, ns, dev, dist::group());
  auto schedule = make_schedule(sched, stage);
  const auto batch = make_batch(kind);  // captured below: no structured binding in C++17
  auto params = parts[size_t(r)]->parameters();
  auto t0 = std::chrono::steady_clock::now();
  Trace got = train(kind, params, params, [&] { return schedule->step(batch.first, batch.second); });
  double s = seconds_since(t0);
  Trace ref = reference(kind, r, ns);
  std::string where;
  double d = max_rel_diff(got, ref, &where);
  DIST_CHECK(d <= 1e-12, "rank " << r << " " << arg << ": relative difference " << d << " at " << where);
  if (stage.is_last())
    for (size_t k = 0; k < ref.losses.size(); ++k)
      DIST_CHECK(std::fabs(got.losses[k] - ref.losses[k]) <= 1e-12 * std::fabs(ref.losses[k]),
                 "loss " << k << ": " << got.losses[k] << " vs " << ref.losses[k]);
  else
    DIST_CHECK(std::isnan(got.losses[0]), "the first stage returned a loss");
  int want_peak = sched == "1f1b" ? ns - r : kMicrobatches;
  DIST_CHECK(stage.peak_in_flight() == want_peak, "peak in flight " << stage.peak_in_flight() << " != " << want_peak);
  std::cout << "rank " << r << " " << arg << ": max relative difference " << d << ", " << kSteps << " steps in " << s
            << " s" << std::endl;
  return 0;
}

// The error `f` throws must be a DistributedError naming this rank and every needle, within `limit_s`.
int expect_distributed_error(const std::function<void()>& f, std::initializer_list<const char*> needles,
                             double limit_s) {
  auto t0 = std::chrono::steady_clock::now();
  int r = dist::rank();
  try {
    f();
  } catch (const vnn::DistributedError& e) {
    double s = seconds_since(t0);
    std::string text = e.what();
    DIST_CHECK(text.find("rank " + std::to_string(r)) != std::string::npos, "message lacks this rank: " << text);
    for (const char* n : needles) DIST_CHECK(text.find(n) != std::string::npos, "message lacks '" << n << "': " << text);
    DIST_CHECK(s < limit_s, "took " << s << " s: " << text);
    std::cout << "rank " << r << " caught after " << s << " s: " << text << std::endl;
    return 0;
  } catch (const std::exception& e) {
    fail(std::string("threw the wrong type: ") + e.what());
  }
  fail("rank " + std::to_string(r) + " finished although the other rank failed");
}

// The last stage SIGKILLs itself in the loss of micro-batch 3 of step 2; the first must throw.
int pipe_kill() {
  dist::group().set_timeout(std::chrono::milliseconds(4000));
  int r = dist::rank(), calls = 0;
  auto model = make_model("mlp");
  auto parts = pp::split_sequential(model, split_points("mlp"));
  pp::PipelineStage stage(parts[size_t(r)], r, 2, dev, dist::group());
  pp::Schedule1F1B sched(stage, kMicrobatches, [&](const Tensor& out, const Tensor& y) {
    if (++calls == kMicrobatches + 4) ::kill(::getpid(), SIGKILL);
    return mse(out, y);
  });
  const auto batch = make_batch("mlp");  // captured below: no structured binding in C++17
  return expect_distributed_error([&] {
    for (int step = 0; step < 50; ++step) sched.step(batch.first, batch.second);
  }, {"recv"}, 12);
}

struct Net : vnn::nn::Module {
  vnn::nn::Sequential body{nullptr};
  std::function<void()> on_forward;
  Net() : Module("Net") { body = register_module("body", make_model("mlp")); }
  Tensor forward(const Tensor& x) {
    if (on_forward) on_forward();
    return body(x);
  }
};

// Rank 0 (the store's host) SIGKILLs itself in its forward of step 3; rank 1 must throw.
int ddp_kill() {
  dist::group().set_timeout(std::chrono::milliseconds(4000));
  int r = dist::rank(), steps = 0;
  auto net = std::make_shared<Net>();
  net->to(dev);
  net->on_forward = [&] {
    if (r == 0 && ++steps == 3) ::kill(::getpid(), SIGKILL);
  };
  vnn::nn::DistributedDataParallel ddp(net);
  // Plain tensors (no structured binding): the lambdas below capture them.
  const auto batch = make_batch("mlp");
  Tensor x = batch.first.to(dev), y = batch.second.to(dev);
  return expect_distributed_error([&] {
    for (int step = 0; step < 50; ++step) mse(ddp.forward(x), y).backward();
  }, {"allreduce"}, 12);
}

// Rank 1 sends 16 MB allreduces that rank 0 never joins; rank 0 SIGKILLs itself with
// their bytes unread, so its kernel resets the connection under rank 1's writes. Those
// must raise DistributedError, not SIGPIPE (whose default action ends the process).
int send_to_dead() {
  struct sigaction pipe_action {};
  ::sigaction(SIGPIPE, nullptr, &pipe_action);
  DIST_CHECK(pipe_action.sa_handler == SIG_IGN, "the gloo group left SIGPIPE's default action (ending the process)");
  dist::group().set_timeout(std::chrono::milliseconds(4000));
  dist::barrier();
  if (dist::rank() == 0) {
    ::usleep(500 * 1000);
    ::kill(::getpid(), SIGKILL);
  }
  Tensor big = vnn::ones({1 << 22}).to(dev);
  return expect_distributed_error([&] {
    for (int k = 0; k < 20; ++k) dist::all_reduce(big);
  }, {"allreduce"}, 12);
}

// Rank `victim` gets a memory budget its step cannot meet: it must throw
// OutOfMemory, and the other rank DistributedError "rank <victim> failed: OutOfMemory" at once.
int expect_oom_or_abort(int victim, const std::function<void()>& setup, const std::function<void()>& step) {
  dist::group().set_timeout(std::chrono::milliseconds(20000));  // the abort must come long before this
  int r = dist::rank();
  setup();
  if (r != victim)
    return expect_distributed_error(step, {"aborted", "failed: OutOfMemory", "memory limit"}, 5);
  try {
    step();
  } catch (const vnn::OutOfMemory& e) {
    std::cout << "rank " << r << " ran out of memory: " << e.what() << std::endl;
    DIST_CHECK(dist::group().abort_reason().find("OutOfMemory") != std::string::npos, "the group was not aborted");
    return 0;
  }
  fail("rank " + std::to_string(r) + " did not run out of memory");
}

void set_budget(int victim) {
  if (dist::rank() != victim) return;
  auto s = vnn::memory_stats(dev);
  vnn::set_memory_limit(dev, s.reserved + 1024);
}

int ddp_oom() {
  auto net = std::make_shared<Net>();
  net->to(dev);
  vnn::nn::DistributedDataParallel ddp(net);
  // Plain tensors (no structured binding): the lambdas below capture them.
  const auto batch = make_batch("mlp");
  Tensor x = batch.first.to(dev), y = batch.second.to(dev);
  int victim = 1;
  return expect_oom_or_abort(victim, [&] { mse(ddp.forward(x), y).backward(); set_budget(victim); }, [&] {
    // The victim's batch grows past its budget; the other keeps its own.
    Tensor xb = dist::rank() == victim ? vnn::cat({x, x, x, x, x, x, x, x}, 0) : x;
    Tensor yb = dist::rank() == victim ? vnn::cat({y, y, y, y, y, y, y, y}, 0) : y;
    for (int step = 0; step < 5; ++step) mse(ddp.forward(xb), yb).backward();
  });
}

int pipe_oom() {
  int r = dist::rank();
  auto model = make_model("mlp");
  auto parts = pp::split_sequential(model, split_points("mlp"));
  pp::PipelineStage stage(parts[size_t(r)], r, 2, dev, dist::group());
  pp::ScheduleGPipe sched(stage, kMicrobatches, mse);
  const auto batch = make_batch("mlp");  // captured below: no structured binding in C++17
  int victim = 1;
  return expect_oom_or_abort(victim, [&] { set_budget(victim); }, [&] {
    for (int step = 0; step < 5; ++step) sched.step(batch.first, batch.second);
  });
}

}  // namespace

int main(int argc, char** argv) {
  return run_scenario(argc, argv, dev,
                      {{"pipe_train", pipe_train}, {"pipe_kill", plain(pipe_kill)}, {"ddp_kill", plain(ddp_kill)},
                       {"send_to_dead", plain(send_to_dead)},
                       {"ddp_oom", plain(ddp_oom)}, {"pipe_oom", plain(pipe_oom)}});
}

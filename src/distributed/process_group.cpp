// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ProcessGroup: argument checks, staging through pinned host memory for
// devices the engine cannot read, async Work on an in-order worker thread,
// and errors that name the rank, the collective and what happened.
#include "distributed/process_group.hpp"

#include <pthread.h>
#include <sched.h>

#include <cstring>

#include "runtime/caching_allocator.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/autograd.h"
#include "vnn/checked_size.h"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/profiler.h"

namespace vnn::distributed {

const char* name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::avg: return "avg";
    case ReduceOp::min: return "min";
    case ReduceOp::max: return "max";
    case ReduceOp::product: return "product";
  }
  return "?";
}

const char* name(Engine e) {
  switch (e) {
    case Engine::automatic: return "automatic";
    case Engine::gloo: return "gloo";
    case Engine::mpi: return "mpi";
  }
  return "?";
}

// ---- Work ------------------------------------------------------------------

void Work::wait() {
  if (!state_) return;
  std::unique_lock<std::mutex> lock(state_->m);
  state_->cv.wait(lock, [&] { return state_->done || state_->aborted; });
  if (!state_->done) {
    // The group was aborted while the engine ran this: it may have finished
    // just before (a peer that completed it, then failed); else it is stuck.
    state_->cv.wait_for(lock, std::chrono::milliseconds(500), [&] { return state_->done; });
    if (!state_->done) std::rethrow_exception(state_->aborted);
  }
  if (state_->error) std::rethrow_exception(state_->error);
  if (state_->device_wait) {
    auto w = state_->device_wait;
    lock.unlock();
    w();
    lock.lock();
  }
  if (state_->finish) {
    auto finish = std::move(state_->finish);
    state_->finish = nullptr;
    lock.unlock();
    finish();
  }
}

bool Work::is_completed() const {
  if (!state_) return true;
  std::lock_guard<std::mutex> lock(state_->m);
  return state_->done && (!state_->device_done || state_->device_done());
}

bool Work::is_success() const {
  if (!state_) return true;
  std::lock_guard<std::mutex> lock(state_->m);
  return !state_->error;
}

// ---- the worker queues -----------------------------------------------------

namespace {

// Gloo aborts the whole process when ranks pair messages of different sizes
// (inside its I/O thread, beyond any catch). Two guards (SizeCheck): each
// collective travels on a tag derived from its signature, so ranks that
// disagree never pair; and every_call first max-reduces
// (code, bytes, -code, -bytes): 32 bytes that show any disagreement.
enum Kind : int64_t { kAllreduce = 1, kBroadcast = 2, kAllgather = 3, kReduceScatter = 4, kBarrier = 5 };
int64_t code_of(Kind k, int64_t sub) { return int64_t(k) * 1000000 + sub; }

// 32 well-mixed bits of (code, bytes) (splitmix64's finaliser).
uint32_t tag_of(int64_t code, int64_t bytes) {
  uint64_t x = uint64_t(code) * 0x9E3779B97F4A7C15ull ^ uint64_t(bytes);
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return uint32_t((x ^ (x >> 31)) >> 32);
}

std::string failure_text(int rank, const std::string& what, const char* engine, const std::string& cause,
                         detail::Millis timeout) {
  std::string hint;
  if (cause.find("imed out") != std::string::npos || cause.find("imeout") != std::string::npos)
    hint = " (no answer within the timeout of " + std::to_string(timeout.count()) +
           " ms: a peer exited, hangs, or called a different collective or a different size)";
  else if (cause.find("losed") != std::string::npos || cause.find("reset") != std::string::npos ||
           cause.find("EOF") != std::string::npos || cause.find("Broken pipe") != std::string::npos)
    hint = " (a peer closed its connection: it exited or was killed)";
  return "rank " + std::to_string(rank) + ": " + what + " on the " + engine + " engine failed: " + cause + hint;
}

}  // namespace

namespace detail {
// Ranks called different collectives or sizes: every rank finds out in the
// check itself, so the group stays usable.
struct Disagreement : DistributedError {
  using DistributedError::DistributedError;
};
}  // namespace detail

ProcessGroup::Impl::Impl(std::unique_ptr<detail::Store> s, std::unique_ptr<detail::Engine> e, std::string rep,
                         Millis timeout)
    : store(std::move(s)), engine(std::move(e)), report(std::move(rep)), timeout_ms(timeout.count()) {
  std::string eng = engine->name();
  collectives_.thread = std::thread([this, eng] { serve(collectives_, "collectives (" + eng + ")"); });
  sends_.thread = std::thread([this, eng] { serve(sends_, "sends (" + eng + ")"); });
  recvs_.thread = std::thread([this, eng] { serve(recvs_, "recvs (" + eng + ")"); });
}

ProcessGroup::Impl::~Impl() {
  if (oom_listener_) ::vnn::detail::remove_out_of_memory_listener(oom_listener_);
  stop_stall_probe();
  stop_abort_watch();
  for (Queue* q : {&collectives_, &sends_, &recvs_}) {
    {
      std::lock_guard<std::mutex> lock(q->m);
      q->stop = true;
    }
    q->cv.notify_all();
    if (q->thread.joinable()) q->thread.join();
  }
}

bool ProcessGroup::Impl::broken() const {
  std::lock_guard<std::mutex> lock(broken_m_);
  return !broken_.empty();
}

std::string ProcessGroup::Impl::aborted() const {
  std::lock_guard<std::mutex> lock(broken_m_);
  return aborted_;
}

std::string ProcessGroup::Impl::wait_for_abort(Millis limit) const {
  std::unique_lock<std::mutex> lock(broken_m_);
  abort_cv_.wait_for(lock, limit, [&] { return !aborted_.empty(); });
  return aborted_;
}

void ProcessGroup::Impl::check_open(const std::string& what) const {
  std::string reason = aborted();
  if (!reason.empty())
    VNN_THROW(DistributedError, "rank ", rank(), ": ", what, " cannot run: the group was aborted (", reason,
              "); destroy it and exit or restart");
}

void ProcessGroup::Impl::fail_post(const std::string& what, const std::exception& e) {
  std::string reason = wait_for_abort(Millis(200));
  if (!reason.empty())
    VNN_THROW(DistributedError, "rank ", rank(), ": ", what, " aborted: ", reason,
              "; the group is unusable: destroy it (destroy_process_group) and exit or restart");
  std::string text = failure_text(rank(), what, engine->name(), e.what(), timeout());
  {
    std::lock_guard<std::mutex> lock(broken_m_);
    if (broken_.empty()) broken_ = text;
  }
  abort(text, true);
  throw DistributedError(text);
}

void ProcessGroup::Impl::fail_pending(Queue& q, const std::string& text) {
  std::vector<std::shared_ptr<Work::State>> queued;
  std::shared_ptr<Work::State> running;
  {
    std::lock_guard<std::mutex> lock(q.m);
    for (auto& t : q.tasks) queued.push_back(t.first);
    running = q.current;
  }
  auto error_for = [&](const Work::State& st) {
    return std::make_exception_ptr(DistributedError(::vnn::detail::str_cat(
        "rank ", rank(), ": ", st.what, " aborted: ", text,
        "; the group is unusable: destroy it (destroy_process_group) and exit or restart")));
  };
  for (auto& st : queued) {  // never started (serve skips them): failed now
    {
      std::lock_guard<std::mutex> lock(st->m);
      if (st->done) continue;
      st->done = true;
      st->finish = nullptr;
      st->error = error_for(*st);
    }
    st->cv.notify_all();
  }
  if (running) {  // in the engine: its own end decides, unless it stays blocked (Work::wait)
    {
      std::lock_guard<std::mutex> lock(running->m);
      if (!running->done) running->aborted = error_for(*running);
    }
    running->cv.notify_all();
  }
}

void ProcessGroup::Impl::abort(const std::string& text, bool publish) {
  {
    std::lock_guard<std::mutex> lock(broken_m_);
    if (!aborted_.empty()) return;
    aborted_ = text;
    if (broken_.empty()) broken_ = text;
  }
  abort_cv_.notify_all();
  for (Queue* q : {&collectives_, &sends_, &recvs_}) fail_pending(*q, text);
  if (!publish || !store) return;
  for (int r = 0; r < size(); ++r) {
    if (r == rank()) continue;
    try {
      store->set("abort/" + std::to_string(r), detail::to_bytes(text));
    } catch (const std::exception&) {
      return;  // rank 0's store is gone: the peers see that themselves
    }
  }
}

void ProcessGroup::Impl::start_abort_watch(std::unique_ptr<detail::Store> watch) {
  watch_store_ = std::move(watch);
  watch_thread_ = std::thread([this] {
    std::string text;
    try {
      text = detail::to_string(watch_store_->get("abort/" + std::to_string(rank())));
    } catch (const std::exception& e) {
      text = e.what();  // rank 0 (and its store) gone
    }
    if (!watch_stop_ && !text.empty()) abort(text, false);
  });
}

void ProcessGroup::Impl::stop_abort_watch() {
  if (!watch_thread_.joinable()) return;
  watch_stop_ = true;
  try {
    store->set("abort/" + std::to_string(rank()), {});  // wakes this rank's watcher
  } catch (const std::exception&) {
    // The store is gone, and so is the watcher's connection: it has returned.
  }
  watch_thread_.join();
}

void ProcessGroup::Impl::abort_on_out_of_memory() {
  oom_listener_ = ::vnn::detail::add_out_of_memory_listener([this](const std::string& message) {
    abort(::vnn::detail::str_cat("rank ", rank(), " failed: OutOfMemory: ", message), true);
  });
}

void ProcessGroup::Impl::serve(Queue& q, const std::string& track) {
  profiler::set_thread_name(track);  // collectives get a track of their own in traces
#ifdef __linux__
  // SCHED_BATCH: a woken batch thread does not preempt the running one.
  // Woken by Gloo's I/O thread, this thread used to preempt it (or be
  // preempted) while one of them held a Gloo pair's mutex; Gloo's loop only
  // try-locks that mutex, its socket still readable, and so spun out a
  // whole time slice: 3.4-3.9 ms per small allreduce on one CPU instead of
  // 0.4 (docs/benchmarks.md). Any thread may lower itself to SCHED_BATCH.
  sched_param batch{};
  pthread_setschedparam(pthread_self(), SCHED_BATCH, &batch);
#endif
  while (true) {
    std::pair<std::shared_ptr<Work::State>, std::function<void(Millis)>> task;
    {
      std::unique_lock<std::mutex> lock(q.m);
      q.cv.wait(lock, [&] { return q.stop || !q.tasks.empty(); });
      if (q.tasks.empty()) return;  // stop, and nothing left
      task = std::move(q.tasks.front());
      q.tasks.pop_front();
      ++q.running;
      q.current = task.first;
      ++q.started;
      q.since = std::chrono::steady_clock::now();
    }
    auto& st = *task.first;
    std::exception_ptr error;
    std::string earlier, aborted;
    bool failed = false;
    {
      std::lock_guard<std::mutex> lock(broken_m_);
      earlier = broken_;
      aborted = aborted_;
    }
    if (!aborted.empty()) {
      error = std::make_exception_ptr(DistributedError(::vnn::detail::str_cat(
          "rank ", rank(), ": ", st.what, " cannot run: the group was aborted (", aborted,
          "); destroy it and exit or restart")));
    } else if (!earlier.empty() && &q == &collectives_) {
      error = std::make_exception_ptr(DistributedError(
          ::vnn::detail::str_cat("rank ", rank(), ": ", st.what, " cannot run: an earlier collective failed (", earlier,
                                 "); the group is unusable, destroy it and exit")));
    } else {
      try {
        profiler::Range range(st.what + "[" + engine->name() + "]");
        task.second(timeout());
      } catch (const DTypeError&) {
        error = std::current_exception();
      } catch (const detail::Disagreement&) {
        error = std::current_exception();
      } catch (const std::exception& e) {
        // A peer that failed told the store first: its reason makes the better message.
        std::string reason = wait_for_abort(Millis(200));
        std::string text = reason.empty() ? failure_text(rank(), st.what, engine->name(), e.what(), timeout())
                                          : ::vnn::detail::str_cat("rank ", rank(), ": ", st.what, " aborted: ", reason,
                                                                   "; the group is unusable: destroy it "
                                                                   "(destroy_process_group) and exit or restart");
        {
          std::lock_guard<std::mutex> lock(broken_m_);
          if (broken_.empty()) broken_ = text;
        }
        error = std::make_exception_ptr(DistributedError(text));
        failed = true;
      }
    }
    {
      std::lock_guard<std::mutex> lock(st.m);
      st.done = true;
      st.error = error;
      if (error) st.finish = nullptr;
      if (error || !st.finish) st.keep.clear();
    }
    st.cv.notify_all();
    {
      std::lock_guard<std::mutex> lock(q.m);
      --q.running;
      q.current = nullptr;
    }
    q.cv.notify_all();
    if (failed) {  // a peer gone or silent: the other ranks need not wait for their own timeouts
      std::lock_guard<std::mutex> lock(broken_m_);
      earlier = broken_;
    }
    if (failed) abort(earlier, true);
  }
}

Work ProcessGroup::Impl::enqueue(std::string what, std::function<void(Millis)> body, std::function<void()> finish,
                                 std::vector<Tensor> keep, Lane lane, int64_t code, int64_t bytes) {
  auto st = std::make_shared<Work::State>();
  st->what = std::move(what);
  st->code = code;
  st->bytes = bytes;
  st->finish = std::move(finish);
  st->keep = std::move(keep);
  Queue& q = lane == Lane::sends ? sends_ : lane == Lane::recvs ? recvs_ : collectives_;
  {
    std::lock_guard<std::mutex> lock(q.m);
    q.tasks.emplace_back(st, std::move(body));
  }
  q.cv.notify_all();
  return Work(st);
}

Work ProcessGroup::Impl::device_work(std::string what, const detail::DeviceOp& d, std::vector<Tensor> keep) {
  auto st = std::make_shared<Work::State>();
  st->what = std::move(what);
  st->keep = std::move(keep);
  st->device_done = detail::record_done(d, &st->device_wait);
  st->done = true;
  return Work(st);
}

void* ProcessGroup::Impl::device_comm(const Tensor& t) {
  return device_comms.get(t.impl()->ctx(), rank(), size(), [this](const std::string& key, const detail::Bytes& mine) {
    if (store) {
      if (rank() == 0) store->set(key, mine);
      return store->get(key);
    }
    // No store (mpi): a broadcast on the collective lane, in order.
    uint64_t n = mine.size();
    detail::Bytes out(detail::Bytes(mine).size() ? mine : detail::Bytes(VNN_COMM_ID_BYTES));
    auto* eng = engine.get();
    int64_t code = code_of(kBroadcast, 0);
    collective("broadcast (communicator id)", code, int64_t(sizeof n),
               [eng, &n](Millis t, uint32_t tag) { eng->broadcast(&n, sizeof n, 0, t, tag); }, nullptr, {})
        .wait();
    out.resize(size_t(n));
    collective("broadcast (communicator id)", code, int64_t(n),
               [eng, &out](Millis t, uint32_t tag) { eng->broadcast(out.data(), out.size(), 0, t, tag); }, nullptr,
               {})
        .wait();
    return out;
  });
}

bool ProcessGroup::Impl::drain(Millis aborted_limit) {
  std::chrono::steady_clock::time_point give_up{};
  for (Queue* q : {&collectives_, &sends_, &recvs_}) {
    std::unique_lock<std::mutex> lock(q->m);
    while (!(q->tasks.empty() && q->running == 0)) {
      q->cv.wait_for(lock, Millis(50));
      if (aborted().empty()) continue;
      auto now = std::chrono::steady_clock::now();
      if (give_up == std::chrono::steady_clock::time_point{}) give_up = now + aborted_limit;
      if (now >= give_up) return false;
    }
  }
  return true;
}

// ---- staging ---------------------------------------------------------------

namespace {

// Host memory the engine works on: the tensor's own when it is a contiguous
// host-accessible tensor, else a (pinned, for devices) host copy that the
// Work copies back on wait().
struct Buf {
  Tensor user, host;
  void* ptr = nullptr;
  bool staged = false;
  size_t bytes() const { return user.nbytes(); }
};

void check_defined(const Tensor& t, const std::string& what, const char* arg) {
  VNN_CHECK(ValueError, t.defined(), what, ": argument ", arg, " is an undefined tensor");
}

Buf stage(const Tensor& t, bool read) {
  auto& ctx = t.impl()->ctx();
  Buf b;
  b.user = t;
  if (ctx.host_accessible && t.is_contiguous()) {
    ctx.synchronize();  // the engine reads and writes it from another thread
    b.host = t;
    b.ptr = t.numel() ? vnn::detail::host_pointer(*t.impl()) : nullptr;
    return b;
  }
  autograd::NoGradGuard no_grad;
  TensorOptions o = TensorOptions(Device("cpu", 0)).with(t.dtype());
  o = o.pinned_memory(!t.device().is_cpu());  // the copy from a device goes over DMA
  b.host = empty(t.sizes(), o);
  if (read) b.host.copy_(t);
  ctx.synchronize();
  b.host.impl()->ctx().synchronize();
  b.ptr = t.numel() ? vnn::detail::host_pointer(*b.host.impl()) : nullptr;
  b.staged = true;
  return b;
}

// Copies staged results back into the user's tensors (on the waiting thread).
std::function<void()> copy_back(std::vector<Buf> bufs) {
  bool any = false;
  for (auto& b : bufs) any = any || b.staged;
  if (!any) return nullptr;
  return [bufs = std::move(bufs)]() mutable {
    autograd::NoGradGuard no_grad;
    for (auto& b : bufs)
      if (b.staged) b.user.copy_(b.host);
  };
}

std::vector<Tensor> keep_of(const std::vector<Buf>& bufs) {
  std::vector<Tensor> out;
  for (auto& b : bufs) {
    out.push_back(b.user);
    out.push_back(b.host);
  }
  return out;
}

void agree(detail::Engine& eng, int64_t code, int64_t bytes, const std::string& what, detail::Millis t) {
  if (eng.size() == 1) return;
  int64_t sig[4] = {code, bytes, -code, -bytes};
  eng.allreduce(sig, 4, kInt64, ReduceOp::max, t, 0);
  if (sig[0] == code && sig[1] == bytes && -sig[2] == code && -sig[3] == bytes) return;
  std::string how = -sig[2] != sig[0] ? "different collectives (or dtypes, ops, roots)" : "different sizes";
  VNN_THROW(detail::Disagreement, "rank ", eng.rank(), ": ", what, " of ", bytes, " bytes here, but the ranks called ",
            how, ": sizes range over ", -sig[3], "..", sig[1],
            " bytes; every rank must call the same collective, in the same order, with tensors "
            "of the same size and dtype");
}

void divide(void* p, size_t n, DType dtype, int by) {
  if (dtype == kFloat32) {
    float* f = static_cast<float*>(p);
    for (size_t i = 0; i < n; ++i) f[i] /= float(by);
  } else {
    double* d = static_cast<double*>(p);
    for (size_t i = 0; i < n; ++i) d[i] /= double(by);
  }
}

void check_reducible(const Tensor& t, ReduceOp op, const std::string& what) {
  detail::reducible_itemsize(t.dtype(), what.c_str());
  if (op == ReduceOp::avg && t.dtype() != kFloat32 && t.dtype() != kFloat64)
    VNN_THROW(DTypeError, what, ": ReduceOp::avg needs a floating tensor (float32 or float64), got ",
              vnn::name(t.dtype()), "; use ReduceOp::sum and divide");
}

int64_t times_world(int64_t numel, int ws, const std::string& what) {
  int64_t out = 0;
  VNN_CHECK(ShapeError, checked::mul(numel, int64_t(ws), &out), what, ": ", numel, " elements x world size ", ws,
            " overflows int64");
  return out;
}

void check_like(const Tensor& t, const Tensor& ref, const std::string& what, const std::string& arg) {
  VNN_CHECK(DTypeError, t.dtype() == ref.dtype(), what, ": ", arg, " is ", vnn::name(t.dtype()), " but must be ",
            vnn::name(ref.dtype()));
  VNN_CHECK(ShapeError, t.sizes() == ref.sizes(), what, ": ", arg, " has shape ", t.sizes(), " but must have shape ",
            ref.sizes());
}

}  // namespace

// ---- collectives: tags, checks and the stall probe --------------------------

Work ProcessGroup::Impl::collective(std::string what, int64_t code, int64_t bytes,
                                    std::function<void(Millis, uint32_t)> body, std::function<void()> finish,
                                    std::vector<Tensor> keep) {
  auto* eng = engine.get();
  bool every = size_check == SizeCheck::every_call;
  uint32_t tag = tag_of(code, bytes);
  return enqueue(what, [eng, every, code, bytes, what, tag, body = std::move(body)](Millis t) {
    if (every) agree(*eng, code, bytes, what, t);
    body(t, tag);
  }, std::move(finish), std::move(keep), Lane::collectives, code, bytes);
}

void ProcessGroup::Impl::start_stall_probe() {
  if (!store || size() < 2 || size_check != SizeCheck::on_stall) return;
  probe_thread_ = std::thread([this] { probe_stalls(); });
}

void ProcessGroup::Impl::stop_stall_probe() {
  {
    std::lock_guard<std::mutex> lock(probe_m_);
    probe_stop_ = true;
  }
  probe_cv_.notify_all();
  if (probe_thread_.joinable()) probe_thread_.join();
}

ProcessGroup::Impl::Millis ProcessGroup::Impl::probe_interval() const {
  return std::max(Millis(100), std::min(Millis(2000), timeout() / 4));
}

bool ProcessGroup::Impl::probe_sleep(Millis d) {
  std::unique_lock<std::mutex> lock(probe_m_);
  return !probe_cv_.wait_for(lock, d, [&] { return probe_stop_; });
}

// A collective that runs past the interval may be one the ranks disagree on
// (their tags differ, so it never ends): each such rank posts its signature
// under the collective's number, and once every rank has, compares.
void ProcessGroup::Impl::probe_stalls() {
  int64_t probed = 0;
  while (probe_sleep(probe_interval() / 4)) {
    std::shared_ptr<Work::State> st;
    int64_t seq = 0;
    {
      std::lock_guard<std::mutex> lock(collectives_.m);
      if (!collectives_.current || std::chrono::steady_clock::now() - collectives_.since < probe_interval()) continue;
      st = collectives_.current;
      seq = collectives_.started;
    }
    if (seq == probed || st->bytes < 0) continue;
    probed = seq;
    std::string text;
    try {
      text = compare_stalled(seq, *st);
    } catch (const std::exception&) {
      continue;  // the store is gone: the abort watch reports why
    }
    if (!text.empty()) abort(text, true);
  }
}

std::string ProcessGroup::Impl::compare_stalled(int64_t seq, const Work::State& st) {
  std::string key = "stall/" + std::to_string(seq) + "/";
  store->set(key + std::to_string(rank()), detail::to_bytes(::vnn::detail::str_cat(st.code, " ", st.bytes, " ",
                                                                                  st.what)));
  store->add(key + "n", 1);
  while (store->add(key + "n", 0) < size()) {  // a rank not there yet: slow, or stalled elsewhere
    if (!probe_sleep(probe_interval() / 4)) return "";
    std::lock_guard<std::mutex> lock(collectives_.m);
    if (collectives_.started != seq || !collectives_.current) return "";  // it finished after all
  }
  std::string calls;
  bool same = true, same_kind = true;
  for (int r = 0; r < size(); ++r) {
    std::string entry = detail::to_string(store->get(key + std::to_string(r)));
    int64_t code = 0, bytes = 0;
    size_t a = entry.find(' '), b = entry.find(' ', a + 1);
    if (a != std::string::npos && b != std::string::npos) {
      code = std::stoll(entry.substr(0, a));
      bytes = std::stoll(entry.substr(a + 1, b - a - 1));
    }
    same = same && code == st.code && bytes == st.bytes;
    same_kind = same_kind && code == st.code;
    calls += ::vnn::detail::str_cat(r ? ", " : "", "rank ", r, " ",
                                    b == std::string::npos ? entry : entry.substr(b + 1), " of ", bytes, " bytes");
  }
  if (same) return "";  // a slow collective, not a disagreement
  return ::vnn::detail::str_cat(
      "rank ", rank(), " found that collective #", seq, " differs across ranks (",
      same_kind ? "different sizes" : "different collectives (or dtypes, ops, roots)", "): ", calls,
      "; every rank must call the same collective, in the same order, with tensors of the same size and dtype "
      "(VNN_DIST_CHECK_SIZES=1 checks each collective before it runs, and keeps the group usable)");
}

// ---- ProcessGroup ----------------------------------------------------------

ProcessGroup::ProcessGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProcessGroup::~ProcessGroup() = default;

int ProcessGroup::rank() const { return impl_->rank(); }
int ProcessGroup::size() const { return impl_->size(); }
std::string ProcessGroup::engine() const { return impl_->engine->name(); }
void ProcessGroup::set_timeout(std::chrono::milliseconds t) {
  if (t.count() <= 0) VNN_THROW(ValueError, "ProcessGroup::set_timeout: the timeout must be positive");
  impl_->timeout_ms = t.count();
}
std::chrono::milliseconds ProcessGroup::timeout() const { return impl_->timeout(); }
std::string ProcessGroup::report() const { return impl_->report; }
void ProcessGroup::abort(const std::string& reason) {
  impl_->abort(::vnn::detail::str_cat("rank ", rank(), " failed: ", reason), true);
}
std::string ProcessGroup::abort_reason() const { return impl_->aborted(); }

Work ProcessGroup::allreduce(const Tensor& tensor, ReduceOp op) {
  std::string what = std::string("allreduce(") + name(op) + ")";
  check_defined(tensor, what, "tensor");
  check_reducible(tensor, op, what);
  if (detail::device_collectives(tensor)) {  // NCCL & co. on the device's queue
    auto d = detail::device_op(tensor);
    detail::device_allreduce(impl_->device_comm(tensor), d, tensor, op);
    return impl_->device_work(what, d, {tensor});
  }
  Buf b = stage(tensor, true);
  auto* eng = impl_->engine.get();
  size_t n = size_t(tensor.numel());
  DType dt = tensor.dtype();
  void* p = b.ptr;
  int ws = size();
  std::vector<Buf> bufs{b};
  int64_t code = code_of(kAllreduce, int64_t(op) * 100 + int64_t(dt));
  return impl_->collective(what, code, int64_t(n * itemsize(dt)), [eng, p, n, dt, op, ws](detail::Millis t,
                                                                                          uint32_t tag) {
    if (n == 0) return;
    eng->allreduce(p, n, dt, op == ReduceOp::avg ? ReduceOp::sum : op, t, tag);
    if (op == ReduceOp::avg) divide(p, n, dt, ws);
  }, copy_back(bufs), keep_of(bufs));
}

Work ProcessGroup::broadcast(const Tensor& tensor, int root) {
  std::string what = "broadcast";
  check_defined(tensor, what, "tensor");
  if (root < 0 || root >= size())
    VNN_THROW(ValueError, "broadcast: root ", root, " is not a rank of this group of ", size());
  if (detail::device_collectives(tensor)) {  // NCCL & co. on the device's queue
    auto d = detail::device_op(tensor);
    detail::device_broadcast(impl_->device_comm(tensor), d, tensor, root);
    return impl_->device_work(what, d, {tensor});
  }
  Buf b = stage(tensor, rank() == root);
  auto* eng = impl_->engine.get();
  void* p = b.ptr;
  size_t bytes = b.bytes();
  std::vector<Buf> bufs{b};
  return impl_->collective(what, code_of(kBroadcast, root), int64_t(bytes), [eng, p, bytes, root](detail::Millis t,
                                                                                                   uint32_t tag) {
    if (bytes) eng->broadcast(p, bytes, root, t, tag);
  }, rank() == root ? nullptr : copy_back(bufs), keep_of(bufs));
}

Work ProcessGroup::allgather_into_tensor(const Tensor& output, const Tensor& input) {
  std::string what = "allgather";
  check_defined(output, what, "output");
  check_defined(input, what, "input");
  VNN_CHECK(DTypeError, output.dtype() == input.dtype(), "allgather: output is ", vnn::name(output.dtype()),
            " but input is ", vnn::name(input.dtype()));
  int64_t want = times_world(input.numel(), size(), what);
  VNN_CHECK(ShapeError, output.numel() == want, "allgather: output has ", output.numel(), " elements (shape ",
            output.sizes(), ") but must hold ", size(), " x ", input.numel(), " (world size x input shape ",
            input.sizes(), ")");
  if (detail::device_collectives(input) && detail::device_collectives(output) && input.device() == output.device()) {
    auto d = detail::device_op(input);
    detail::device_allgather(impl_->device_comm(input), d, output, input);
    return impl_->device_work(what, d, {input, output});
  }
  Buf in = stage(input, true), out = stage(output, false);
  auto* eng = impl_->engine.get();
  const void* pi = in.ptr;
  void* po = out.ptr;
  size_t bytes = in.bytes();
  std::vector<Buf> bufs{in, out};
  return impl_->collective(what, code_of(kAllgather, 0), int64_t(bytes), [eng, pi, po, bytes](detail::Millis t,
                                                                                                uint32_t tag) {
    if (bytes) eng->allgather(pi, po, bytes, t, tag);
  }, copy_back({out}), keep_of(bufs));
}

Work ProcessGroup::allgather(const std::vector<Tensor>& outputs, const Tensor& input) {
  std::string what = "allgather";
  check_defined(input, what, "input");
  VNN_CHECK(ValueError, int(outputs.size()) == size(), "allgather: got ", outputs.size(),
            " output tensors, need one per rank (", size(), ")");
  for (size_t r = 0; r < outputs.size(); ++r) {
    check_defined(outputs[r], what, "outputs[r]");
    check_like(outputs[r], input, what, "outputs[" + std::to_string(r) + "]");
  }
  Buf in = stage(input, true);
  std::vector<Buf> outs;
  for (auto& o : outputs) outs.push_back(stage(o, false));
  auto* eng = impl_->engine.get();
  size_t bytes = in.bytes();
  std::vector<void*> dst;
  for (auto& o : outs) dst.push_back(o.ptr);
  const void* pi = in.ptr;
  std::vector<Buf> all = outs;
  all.push_back(in);
  return impl_->collective(what, code_of(kAllgather, 0), int64_t(bytes), [eng, pi, dst, bytes](detail::Millis t,
                                                                                                 uint32_t tag) {
    if (!bytes) return;
    std::vector<char> gathered(bytes * dst.size());
    eng->allgather(pi, gathered.data(), bytes, t, tag);
    for (size_t r = 0; r < dst.size(); ++r) std::memcpy(dst[r], gathered.data() + r * bytes, bytes);
  }, copy_back(outs), keep_of(all));
}

Work ProcessGroup::reduce_scatter_tensor(const Tensor& output, const Tensor& input, ReduceOp op) {
  std::string what = std::string("reduce_scatter(") + name(op) + ")";
  check_defined(output, what, "output");
  check_defined(input, what, "input");
  check_reducible(input, op, what);
  VNN_CHECK(DTypeError, output.dtype() == input.dtype(), what, ": output is ", vnn::name(output.dtype()),
            " but input is ", vnn::name(input.dtype()));
  int64_t want = times_world(output.numel(), size(), what);
  VNN_CHECK(ShapeError, input.numel() == want, what, ": input has ", input.numel(), " elements (shape ", input.sizes(),
            ") but must hold ", size(), " x ", output.numel(), " (world size x output shape ", output.sizes(), ")");
  if (detail::device_collectives(input) && detail::device_collectives(output) && input.device() == output.device()) {
    auto d = detail::device_op(input);
    detail::device_reduce_scatter(impl_->device_comm(input), d, output, input, op);
    return impl_->device_work(what, d, {input, output});
  }
  Buf in = stage(input, true), out = stage(output, false);
  auto* eng = impl_->engine.get();
  const void* pi = in.ptr;
  void* po = out.ptr;
  size_t n = size_t(output.numel());
  DType dt = output.dtype();
  int ws = size();
  std::vector<Buf> bufs{in, out};
  int64_t code = code_of(kReduceScatter, int64_t(op) * 100 + int64_t(dt));
  return impl_->collective(what, code, int64_t(n * itemsize(dt)), [eng, pi, po, n, dt, op, ws](detail::Millis t,
                                                                                               uint32_t tag) {
    if (!n) return;
    eng->reduce_scatter(pi, po, n, dt, op == ReduceOp::avg ? ReduceOp::sum : op, t, tag);
    if (op == ReduceOp::avg) divide(po, n, dt, ws);
  }, copy_back({out}), keep_of(bufs));
}

Work ProcessGroup::reduce_scatter(const Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op) {
  std::string what = std::string("reduce_scatter(") + name(op) + ")";
  check_defined(output, what, "output");
  VNN_CHECK(ValueError, int(inputs.size()) == size(), what, ": got ", inputs.size(),
            " input tensors, need one per rank (", size(), ")");
  for (size_t r = 0; r < inputs.size(); ++r) {
    check_defined(inputs[r], what, "inputs[r]");
    check_like(inputs[r], output, what, "inputs[" + std::to_string(r) + "]");
  }
  check_reducible(output, op, what);
  std::vector<Buf> ins;
  for (auto& i : inputs) ins.push_back(stage(i, true));
  Buf out = stage(output, false);
  auto* eng = impl_->engine.get();
  std::vector<const void*> src;
  for (auto& i : ins) src.push_back(i.ptr);
  void* po = out.ptr;
  size_t n = size_t(output.numel()), bytes = output.nbytes();
  DType dt = output.dtype();
  int ws = size();
  std::vector<Buf> all = ins;
  all.push_back(out);
  int64_t code = code_of(kReduceScatter, int64_t(op) * 100 + int64_t(dt));
  return impl_->collective(what, code, int64_t(bytes), [eng, src, po, n, bytes, dt, op, ws](detail::Millis t,
                                                                                            uint32_t tag) {
    if (!n) return;
    std::vector<char> packed(bytes * src.size());
    for (size_t r = 0; r < src.size(); ++r) std::memcpy(packed.data() + r * bytes, src[r], bytes);
    eng->reduce_scatter(packed.data(), po, n, dt, op == ReduceOp::avg ? ReduceOp::sum : op, t, tag);
    if (op == ReduceOp::avg) divide(po, n, dt, ws);
  }, copy_back({out}), keep_of(all));
}

Work ProcessGroup::barrier() {
  auto* eng = impl_->engine.get();
  return impl_->collective("barrier", code_of(kBarrier, 0), 0, [eng](detail::Millis t, uint32_t) { eng->barrier(t); },
                           nullptr, {});
}

// Point to point: a 16-byte header (size) goes ahead of the payload on a
// slot of its own, so a receiver whose tensor has another size throws
// instead of Gloo aborting the process on the oversized message.
namespace {
struct P2PHeader {
  uint64_t magic = 0x766e6e7032703031ull;  // "vnnp2p01"
  uint64_t bytes = 0;
};
void check_peer(const ProcessGroup& pg, int peer, int tag, const char* what, const char* role) {
  if (peer < 0 || peer >= pg.size() || peer == pg.rank())
    VNN_THROW(ValueError, what, ": ", role, " ", peer, " must be another rank of this group of ", pg.size(),
              " (this is rank ", pg.rank(), ")");
  if (tag < 0 || tag >= (1 << 29)) VNN_THROW(ValueError, what, ": tag must be in 0..2^29-1, got ", tag);
}
}  // namespace

Work ProcessGroup::send(const Tensor& tensor, int dst, int tag) {
  check_defined(tensor, "send", "tensor");
  check_peer(*this, dst, tag, "send", "destination");
  Buf b = stage(tensor, true);
  auto header = std::make_shared<P2PHeader>();
  header->bytes = b.bytes();
  auto* eng = impl_->engine.get();
  std::string what = ::vnn::detail::str_cat("send to rank ", dst);
  impl_->check_open(what);
  std::shared_ptr<detail::PendingP2P> h, d;
  try {
    h.reset(eng->send(header.get(), sizeof(P2PHeader), dst, 2 * tag).release());
    if (b.bytes()) d.reset(eng->send(b.ptr, b.bytes(), dst, 2 * tag + 1).release());
  } catch (const std::exception& e) {
    impl_->fail_post(what, e);
  }
  return impl_->enqueue(what, [h, d, header](detail::Millis t) {
    h->wait(t);
    if (d) d->wait(t);
  }, nullptr, keep_of({b}), Impl::Lane::sends);
}

Work ProcessGroup::recv(const Tensor& tensor, int src, int tag) {
  check_defined(tensor, "recv", "tensor");
  check_peer(*this, src, tag, "recv", "source");
  Buf b = stage(tensor, false);
  auto header = std::make_shared<P2PHeader>();
  auto* eng = impl_->engine.get();
  std::string what = ::vnn::detail::str_cat("recv from rank ", src);
  impl_->check_open(what);
  std::shared_ptr<detail::PendingP2P> h;
  try {
    h.reset(eng->recv(header.get(), sizeof(P2PHeader), src, 2 * tag).release());
  } catch (const std::exception& e) {
    impl_->fail_post(what, e);
  }
  void* p = b.ptr;
  size_t bytes = b.bytes();
  int me = rank();
  std::vector<Buf> bufs{b};
  return impl_->enqueue(what, [eng, h, header, p, bytes, src, tag, me](detail::Millis t) {
    h->wait(t);
    if (header->magic != P2PHeader().magic || header->bytes != bytes)
      VNN_THROW(detail::Disagreement, "rank ", me, ": recv from rank ", src, " (tag ", tag, ") into a tensor of ",
                bytes, " bytes, but rank ", src, " sent ", header->bytes,
                " bytes; the tensors must have the same size");
    if (bytes) eng->recv(p, bytes, src, 2 * tag + 1)->wait(t);
  }, copy_back(bufs), keep_of(bufs), Impl::Lane::recvs);
}

}  // namespace vnn::distributed

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The process-wide default group: torchrun's / Open MPI's environment
// contract, rendezvous, agreement checks, and the shorthands.
#include <cstdlib>
#include <memory>
#include <mutex>

#include "distributed/process_group.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::distributed {

namespace {

struct Global {
  std::mutex m;
  std::unique_ptr<ProcessGroup> group;
  int local_rank = 0, local_world_size = 1;
};
Global& global() {
  static Global* g = new Global;  // never destroyed: ranks may exit with a group alive
  return *g;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

int parse_int(const char* var, const char* text) {
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 0 || v > (1L << 30))
    VNN_THROW(ValueError, "init_process_group: ", var, "='", text, "' is not a non-negative integer");
  return int(v);
}

// An explicit option, else the first set variable, else fallback (-1: required).
int pick(int given, std::initializer_list<const char*> vars, int fallback, const char* what) {
  if (given >= 0) return given;
  for (const char* v : vars)
    if (const char* s = env(v)) return parse_int(v, s);
  if (fallback >= 0) return fallback;
  std::string names;
  for (const char* v : vars) names += (names.empty() ? "" : " / ") + std::string(v);
  VNN_THROW(ValueError, "init_process_group: ", what, " is not known: ", names,
            " is not set; start the program with vnn-run (or torchrun, or mpirun), or pass InitOptions::", what);
}

detail::Millis timeout_of(const InitOptions& o) {
  if (const char* s = env("VNN_DIST_TIMEOUT")) {
    char* end = nullptr;
    double sec = std::strtod(s, &end);
    if (end == s || *end != '\0' || !(sec > 0))
      VNN_THROW(ValueError, "init_process_group: VNN_DIST_TIMEOUT='", s, "' is not a positive number of seconds");
    return detail::Millis(int64_t(sec * 1000));
  }
  if (o.timeout.count() <= 0) VNN_THROW(ValueError, "init_process_group: InitOptions::timeout must be positive");
  return o.timeout;
}

// Every rank reaches `key` before any leaves (through the store).
void store_barrier(detail::Store& s, const std::string& key, int n) {
  if (s.add(key, 1) == n) s.set(key + "/done", {'1'});
  s.get(key + "/done");
}

// Ranks must agree on the world size, and each rank number is taken once.
void check_agreement(detail::Store& s, int rank, int ws) {
  VNN_CHECK(DistributedError, s.add("claim/" + std::to_string(rank), 1) == 1,
            "init_process_group: two processes claim RANK=", rank,
            "; every process needs its own rank in 0..WORLD_SIZE-1");
  s.set("world_size/" + std::to_string(rank), detail::to_bytes(std::to_string(ws)));
  for (int r = 0; r < ws; ++r) {
    if (r == rank) continue;
    std::string theirs;
    try {
      theirs = detail::to_string(s.get("world_size/" + std::to_string(r)));
    } catch (const DistributedError& e) {
      VNN_THROW(DistributedError, "init_process_group: rank ", r, " of ", ws, " did not join (this is rank ", rank,
                "): ", e.what());
    }
    VNN_CHECK(DistributedError, theirs == std::to_string(ws),
              "init_process_group: ranks disagree on the world size: rank ", rank, " has WORLD_SIZE=", ws, " but rank ",
              r, " has WORLD_SIZE=", theirs, "; start every rank with the same WORLD_SIZE");
  }
}

// VNN_DIST_CHECK_SIZES: 1 (every collective), stall (when one stalls: needs
// the store, so Gloo's default) or 0; MPI without a store checks every call.
ProcessGroup::Impl::SizeCheck size_check_from_env(bool have_store) {
  using S = ProcessGroup::Impl::SizeCheck;
  S dflt = have_store ? S::on_stall : S::every_call;
  const char* c = env("VNN_DIST_CHECK_SIZES");
  if (!c || !*c) return dflt;
  std::string v = c;
  if (v == "0" || v == "off") return S::off;
  if (v == "1" || v == "every") return S::every_call;
  if (v == "stall") return dflt;
  VNN_THROW(ValueError, "VNN_DIST_CHECK_SIZES=", v, " is not one of 1 (check every collective), stall (check a ",
            "collective that stalls; the default with a store) or 0 (off)");
}

std::string make_report(const std::string& engine, const std::string& how) {
  std::string r = "process group: engine " + engine + " (" + how + ")\n";
  r += "  cpu tensors: " + engine + " on their own memory\n";
  r += "  opencl tensors: " + engine + ", staged through pinned host memory (OpenCL has no collectives library)\n";
  bool nccl = detail::device_has_collectives(Device("cuda", 0));
  r += nccl ? std::string("  cuda tensors: the CUDA plugin's NCCL collectives on the device queue\n")
            : "  cuda tensors: " + engine + ", staged through pinned host memory (" +
                  (is_available(Device("cuda", 0)) ? "the CUDA plugin was built without NCCL" : "no cuda device here") +
                  ")\n";
  r += "  hip tensors: " + engine +
       ", staged through pinned host memory (Debian 12 has no RCCL; the HIP plugin has no collectives)\n";
  return r;
}

}  // namespace

bool launched_by_mpirun() { return env("OMPI_COMM_WORLD_SIZE") != nullptr; }

void init_process_group(const InitOptions& o) {
  Global& g = global();
  std::lock_guard<std::mutex> lock(g.m);
  VNN_CHECK(ValueError, !g.group, "init_process_group: the default process group is already initialised (rank ",
            g.group->rank(), " of ", g.group->size(), "); call destroy_process_group() first");
  if (o.init_method != "env://" && !o.init_method.empty())
    VNN_THROW(ValueError, "init_process_group: init_method '", o.init_method, "' is not supported; use \"env://\"");
  bool mpirun = launched_by_mpirun();
  Engine engine = o.engine;
  if (engine == Engine::automatic) engine = mpirun && detail::mpi_available() ? Engine::mpi : Engine::gloo;
  int rank = pick(o.rank, {"RANK", "OMPI_COMM_WORLD_RANK"}, -1, "rank");
  int ws = pick(o.world_size, {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"}, -1, "world_size");
  if (ws < 1) VNN_THROW(ValueError, "init_process_group: WORLD_SIZE must be at least 1, got ", ws);
  if (rank >= ws)
    VNN_THROW(ValueError, "init_process_group: RANK=", rank, " is outside 0..WORLD_SIZE-1 (WORLD_SIZE=", ws, ")");
  int local_rank = pick(o.local_rank, {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"}, rank, "local_rank");
  int local_ws = pick(o.local_world_size, {"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE"}, ws, "local_world_size");
  detail::Millis timeout = timeout_of(o);

  detail::EngineConfig cfg;
  cfg.rank = rank;
  cfg.world_size = ws;
  cfg.timeout = timeout;
  std::unique_ptr<detail::Store> store, watch;
  std::unique_ptr<detail::Engine> eng;
  std::string how;
  if (engine == Engine::mpi) {
    eng = detail::make_mpi_engine(cfg);
    if (eng->rank() != rank || eng->size() != ws)
      VNN_THROW(DistributedError, "init_process_group: MPI says rank ", eng->rank(), " of ", eng->size(),
                " but the environment says RANK=", rank, " WORLD_SIZE=", ws, "; start the program with mpirun -np ", ws,
                " only");
    how = "MPI_COMM_WORLD";
  } else {
    cfg.master_addr = o.master_addr.empty() ? (env("MASTER_ADDR") ? env("MASTER_ADDR") : "") : o.master_addr;
    VNN_CHECK(ValueError, !cfg.master_addr.empty(),
              "init_process_group: MASTER_ADDR is not set: the gloo engine needs the address of rank 0's "
              "host (export MASTER_ADDR=127.0.0.1 on one machine, vnn-run sets it, or pass "
              "InitOptions::master_addr)");
    int port = o.master_port >= 0 ? o.master_port
                                  : (env("MASTER_PORT") ? parse_int("MASTER_PORT", env("MASTER_PORT")) : -1);
    if (port < 0)
      VNN_THROW(ValueError,
                "init_process_group: MASTER_PORT is not set: the gloo engine needs a free TCP port on rank "
                "0's host (export MASTER_PORT=29500, vnn-run sets it, or pass InitOptions::master_port)");
    if (port < 1 || port > 65535)
      VNN_THROW(ValueError, "init_process_group: MASTER_PORT=", port, " is not a TCP port (1..65535)");
    store = detail::make_tcp_store(cfg.master_addr, port, rank == 0, rank, timeout);
    try {
      check_agreement(*store, rank, ws);
      auto gloo_store = detail::make_prefix_store("gloo", *store);
      eng = detail::make_gloo_engine(cfg, *gloo_store);
      // A connection of its own on which the group waits for a peer's abort (a day: no timeout).
      watch = detail::make_tcp_store(cfg.master_addr, port, false, rank, std::chrono::hours(24));
      store_barrier(*store, "init", ws);  // nobody tears the store down while a peer still reads it
    } catch (const Error&) {
      store->linger(std::chrono::seconds(5));  // rank 0: let the others read why before the store goes
      throw;
    }
    how = "TCP, rendezvous at " + cfg.master_addr + ":" + std::to_string(port);
  }
  std::string report = make_report(eng->name(), how);
  auto impl = std::make_unique<ProcessGroup::Impl>(std::move(store), std::move(eng), report, timeout);
  impl->size_check = size_check_from_env(impl->store != nullptr);
  if (watch) impl->start_abort_watch(std::move(watch));
  impl->start_stall_probe();
  const char* oom = env("VNN_DIST_ABORT_ON_OOM");
  if (oom ? std::string(oom) != "0" : o.abort_on_out_of_memory) impl->abort_on_out_of_memory();
  g.group = std::make_unique<ProcessGroup>(std::move(impl));
  g.local_rank = local_rank;
  g.local_world_size = local_ws;
}

void destroy_process_group() {
  Global& g = global();
  std::lock_guard<std::mutex> lock(g.m);
  if (!g.group) return;
  auto& impl = g.group->impl();
  if (!impl.drain()) {
    // Aborted, with tasks still blocked in the engine on a peer that will
    // never answer: leave the group to them rather than wait for the
    // engine's timeout (the process is expected to exit).
    (void)g.group.release();
    return;
  }
  impl.stop_stall_probe();
  impl.stop_abort_watch();  // before the barrier, while rank 0's store is surely there
  if (!impl.broken() && impl.store) {
    try {
      impl.store->stop_accepting();
      store_barrier(*impl.store, "destroy", impl.size());  // rank 0 serves the store until all are done
    } catch (const Error&) {
      // A peer already gone: nothing left to coordinate.
    }
  }
  g.group.reset();
}

bool is_initialized() {
  std::lock_guard<std::mutex> lock(global().m);
  return global().group != nullptr;
}

ProcessGroup& group() {
  Global& g = global();
  std::lock_guard<std::mutex> lock(g.m);
  VNN_CHECK(ValueError, g.group,
            "vnn::distributed: the default process group is not initialised; call "
            "vnn::distributed::init_process_group() first");
  return *g.group;
}

int rank() { return group().rank(); }
int world_size() { return group().size(); }
int local_rank() {
  group();
  return global().local_rank;
}
int local_world_size() {
  group();
  return global().local_world_size;
}

Device local_device() {
  int lr = is_initialized() ? local_rank() : (env("LOCAL_RANK") ? parse_int("LOCAL_RANK", env("LOCAL_RANK")) : 0);
  for (const char* kind : {"cuda", "hip"}) {
    Device d(kind, lr);
    if (is_available(d)) return d;
  }
  return best_device();
}

void all_reduce(const Tensor& t, ReduceOp op) { group().allreduce(t, op).wait(); }
void broadcast(const Tensor& t, int root) { group().broadcast(t, root).wait(); }
void all_gather(const std::vector<Tensor>& outputs, const Tensor& input) { group().allgather(outputs, input).wait(); }
void reduce_scatter(const Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op) {
  group().reduce_scatter(output, inputs, op).wait();
}
void barrier() { group().barrier().wait(); }
void send(const Tensor& t, int dst, int tag) { group().send(t, dst, tag).wait(); }
void recv(const Tensor& t, int src, int tag) { group().recv(t, src, tag).wait(); }

}  // namespace vnn::distributed

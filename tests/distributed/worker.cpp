// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One rank of a distributed test: `dist_worker SCENARIO [ARG]`, started N
// times by test_distributed (or by mpirun). Exits 0 when every check held;
// prints "FAIL: ..." and exits 1 otherwise.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <map>

#include "distributed/worker_common.hpp"
#include "vnn/distributed.h"

namespace dist = vnn::distributed;
using vnn::Tensor;
using namespace vnn::test::dist;

int ddp_main(const std::string& scenario, const std::string& arg);  // worker_ddp.cpp

namespace {

vnn::Device dev;

// Rank r's value at element i: small integers, so that sums and products of
// a few ranks are exact in every dtype (uint8 products stay below 256).
double value(int r, int64_t i, vnn::DType dt) {
  if (dt == vnn::kUInt8) return double(1 + (r + i) % 2);
  return double(1 + (r * 3 + i) % 4) * ((r + i) % 3 == 0 && dt != vnn::kUInt8 ? -1 : 1);
}

Tensor rank_tensor(int r, int64_t n, vnn::DType dt) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = value(r, i, dt);
  return vnn::from_vector<double>(v, {n}).to(dt).to(dev);
}

double reduce_ref(dist::ReduceOp op, int ws, int64_t i, vnn::DType dt) {
  double acc = value(0, i, dt);
  for (int r = 1; r < ws; ++r) {
    double v = value(r, i, dt);
    switch (op) {
      case dist::ReduceOp::sum: case dist::ReduceOp::avg: acc += v; break;
      case dist::ReduceOp::product: acc *= v; break;
      case dist::ReduceOp::min: acc = std::min(acc, v); break;
      case dist::ReduceOp::max: acc = std::max(acc, v); break;
    }
  }
  return op == dist::ReduceOp::avg ? acc / ws : acc;
}

void expect_values(const Tensor& t, const std::function<double(int64_t)>& ref, const std::string& what) {
  DIST_CHECK(t.device() == dev, what << ": result moved to " << t.device().str());
  auto got = t.to(vnn::kFloat64).to_vector<double>();
  for (size_t i = 0; i < got.size(); ++i)
    DIST_CHECK(std::fabs(got[i] - ref(int64_t(i))) <= 1e-6 * (1 + std::fabs(ref(int64_t(i)))),
               what << ": element " << i << " is " << got[i] << ", expected " << ref(int64_t(i)));
}

// Every collective against a reference computed from every rank's inputs.
int collectives() {
  auto& pg = dist::group();
  int r = pg.rank(), ws = pg.size();
  DIST_CHECK(pg.engine() == (dist::launched_by_mpirun() ? "mpi" : "gloo"), "engine " << pg.engine());
  const int64_t n = 37;  // not a multiple of the world size or a segment size
  for (vnn::DType dt : {vnn::kFloat32, vnn::kFloat64, vnn::kInt32, vnn::kInt64, vnn::kUInt8}) {
    std::string d = vnn::name(dt);
    std::vector<dist::ReduceOp> ops{dist::ReduceOp::sum, dist::ReduceOp::min, dist::ReduceOp::max,
                                    dist::ReduceOp::product};
    if (dt == vnn::kFloat32 || dt == vnn::kFloat64) ops.push_back(dist::ReduceOp::avg);
    for (auto op : ops) {
      Tensor t = rank_tensor(r, n, dt);
      pg.allreduce(t, op).wait();
      expect_values(t, [&](int64_t i) { return reduce_ref(op, ws, i, dt); },
                    "allreduce " + std::string(dist::name(op)) + " " + d);
      // reduce_scatter: rank k's piece of (ws * m) elements.
      const int64_t m = 5;
      Tensor in = rank_tensor(r, m * ws, dt), out = vnn::zeros({m}, vnn::TensorOptions(dev).with(dt));
      pg.reduce_scatter_tensor(out, in, op).wait();
      expect_values(out, [&](int64_t i) { return reduce_ref(op, ws, r * m + i, dt); },
                    "reduce_scatter_tensor " + std::string(dist::name(op)) + " " + d);
      std::vector<Tensor> pieces = rank_tensor(r, m * ws, dt).split(m);
      Tensor out2 = vnn::zeros({m}, vnn::TensorOptions(dev).with(dt));
      pg.reduce_scatter(out2, pieces, op).wait();
      expect_values(out2, [&](int64_t i) { return reduce_ref(op, ws, r * m + i, dt); },
                    "reduce_scatter " + std::string(dist::name(op)) + " " + d);
    }
    // A non-contiguous tensor is reduced through a staging copy.
    Tensor base = rank_tensor(r, 12, dt).view({3, 4});
    Tensor tr = base.transpose(0, 1);
    pg.allreduce(tr, dist::ReduceOp::sum).wait();
    auto flat = base.to(vnn::kFloat64).to_vector<double>();
    for (int64_t i = 0; i < 12; ++i)
      DIST_CHECK(std::fabs(flat[size_t(i)] - reduce_ref(dist::ReduceOp::sum, ws, i, dt)) < 1e-6,
                 "allreduce of a transposed view " << d << " element " << i);
    // reduce_scatter_tensor from a strided input (every other element of a
    // [ws * 5, 2] tensor) into the middle of a padded buffer, whose padding
    // it must leave alone (FSDP's shards are narrows of padded flat buffers).
    const int64_t m = 5;
    Tensor wide = rank_tensor(r, m * ws * 2, dt).view({m * ws, 2}).narrow(1, 0, 1);
    Tensor padded = vnn::zeros({m + 4}, vnn::TensorOptions(dev).with(dt));
    pg.reduce_scatter_tensor(padded.narrow(0, 2, m), wide, dist::ReduceOp::sum).wait();
    expect_values(padded, [&](int64_t i) {
      return i < 2 || i >= 2 + m ? 0.0 : reduce_ref(dist::ReduceOp::sum, ws, 2 * (r * m + i - 2), dt);
    }, "reduce_scatter_tensor of a strided input into a padded buffer " + d);
  }
  // broadcast, allgather, send / recv move bytes: every dtype.
  for (vnn::DType dt : {vnn::kFloat32, vnn::kFloat64, vnn::kInt32, vnn::kInt64, vnn::kUInt8, vnn::kBool,
                        vnn::kFloat16, vnn::kBFloat16}) {
    std::string d = vnn::name(dt);
    auto src = [&](int k, int64_t i) { return dt == vnn::kBool ? double((k + i) % 2) : double((k * 7 + i) % 5); };
    auto make = [&](int k, int64_t len) {
      std::vector<double> v(static_cast<size_t>(len));
      for (int64_t i = 0; i < len; ++i) v[size_t(i)] = src(k, i);
      return vnn::from_vector<double>(v, {len}).to(dt).to(dev);
    };
    int root = ws - 1;
    Tensor b = r == root ? make(root, 21) : vnn::zeros({21}, vnn::TensorOptions(dev).with(dt));
    pg.broadcast(b, root).wait();
    expect_values(b, [&](int64_t i) { return src(root, i); }, "broadcast " + d);
    std::vector<Tensor> outs;
    for (int k = 0; k < ws; ++k) outs.push_back(vnn::zeros({6}, vnn::TensorOptions(dev).with(dt)));
    pg.allgather(outs, make(r, 6)).wait();
    for (int k = 0; k < ws; ++k) expect_values(outs[size_t(k)], [&](int64_t i) { return src(k, i); }, "allgather " + d);
    Tensor cat = vnn::zeros({ws, 6}, vnn::TensorOptions(dev).with(dt));
    pg.allgather_into_tensor(cat, make(r, 6)).wait();
    expect_values(cat, [&](int64_t i) { return src(int(i / 6), i % 6); }, "allgather_into_tensor " + d);
    // Into a transposed view (staged) and into the middle of a padded buffer.
    Tensor cols = vnn::zeros({6, ws}, vnn::TensorOptions(dev).with(dt));
    pg.allgather_into_tensor(cols.transpose(0, 1), make(r, 6)).wait();
    expect_values(cols, [&](int64_t i) { return src(int(i % ws), i / ws); }, "allgather_into_tensor transposed " + d);
    Tensor pad = vnn::zeros({6 * ws + 3}, vnn::TensorOptions(dev).with(dt));
    pg.allgather_into_tensor(pad.narrow(0, 1, 6 * ws), make(r, 6)).wait();
    expect_values(pad, [&](int64_t i) {
      return i < 1 || i > 6 * ws ? 0.0 : src(int((i - 1) / 6), (i - 1) % 6);
    }, "allgather_into_tensor into a padded buffer " + d);
    // A ring: everyone sends first, then receives (must not deadlock).
    Tensor got = vnn::zeros({9}, vnn::TensorOptions(dev).with(dt));
    if (ws > 1) {
      auto s = pg.send(make(r, 9), (r + 1) % ws, 3);
      auto rv = pg.recv(got, (r + ws - 1) % ws, 3);
      rv.wait();
      s.wait();
      expect_values(got, [&](int64_t i) { return src((r + ws - 1) % ws, i); }, "send/recv " + d);
    }
  }
  pg.barrier().wait();
  // Empty tensors are a no-op, not a hang.
  Tensor empty = vnn::zeros({0}, dev);
  pg.allreduce(empty).wait();
  return 0;
}

// Several collectives in flight at once, waited for out of order.
int async_work() {
  auto& pg = dist::group();
  int r = pg.rank(), ws = pg.size();
  std::vector<Tensor> ts;
  std::vector<dist::Work> works;
  for (int k = 0; k < 8; ++k) {
    ts.push_back(vnn::full({int64_t(1000 * (k + 1))}, double(r + k), vnn::TensorOptions(dev)));
    works.push_back(pg.allreduce(ts.back()));
  }
  dist::Work bar = pg.barrier();
  for (int k = 7; k >= 0; --k) works[size_t(k)].wait();
  bar.wait();
  for (int k = 0; k < 8; ++k) {
    DIST_CHECK(works[size_t(k)].is_completed() && works[size_t(k)].is_success(), "work " << k << " not complete");
    double want = double(ws * k + ws * (ws - 1) / 2);
    expect_values(ts[size_t(k)], [&](int64_t) { return want; }, "async allreduce " + std::to_string(k));
  }
  // is_completed() turns true without wait() (polled, bounded).
  Tensor big = vnn::ones({1 << 16}, vnn::TensorOptions(dev));
  dist::Work w = pg.allreduce(big);
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!w.is_completed() && std::chrono::steady_clock::now() < until) usleep(1000);
  DIST_CHECK(w.is_completed(), "is_completed never became true");
  w.wait();
  expect_values(big, [&](int64_t) { return double(ws); }, "polled allreduce");
  dist::Work none;
  DIST_CHECK(none.is_completed(), "a default Work is complete");
  none.wait();
  return 0;
}

// Bad arguments: typed errors before anything is sent.
int bad_arguments() {
  auto& pg = dist::group();
  int ws = pg.size();
  expect_throw<vnn::DTypeError>([&] { pg.allreduce(vnn::zeros({3}, vnn::TensorOptions(dev).with(vnn::kBool))); },
                                {"allreduce", "bool"}, "allreduce of bool");
  expect_throw<vnn::DTypeError>(
      [&] { pg.allreduce(vnn::zeros({3}, vnn::TensorOptions(dev).with(vnn::kInt32)), dist::ReduceOp::avg); },
      {"avg", "int32"}, "avg of int32");
  expect_throw<vnn::ValueError>([&] { pg.broadcast(vnn::zeros({3}, dev), ws); }, {"root"}, "broadcast root");
  expect_throw<vnn::ValueError>([&] { pg.allgather({vnn::zeros({3}, dev)}, vnn::zeros({3}, dev)); },
                                {"one per rank"}, "allgather output count");
  std::vector<Tensor> outs(size_t(ws), vnn::zeros({4}, dev));
  expect_throw<vnn::ShapeError>([&] { pg.allgather(outs, vnn::zeros({3}, dev)); }, {"outputs[0]", "[3]"},
                                "allgather output shape");
  expect_throw<vnn::ShapeError>([&] { pg.allgather_into_tensor(vnn::zeros({3}, dev), vnn::zeros({3}, dev)); },
                                {"world size"}, "allgather_into_tensor size");
  expect_throw<vnn::ValueError>([&] { pg.send(vnn::zeros({3}, dev), pg.rank()); }, {"another rank"}, "send to self");
  expect_throw<vnn::ValueError>([&] { pg.allreduce(Tensor()); }, {"undefined"}, "undefined tensor");
  pg.barrier().wait();  // the group still works
  return 0;
}

// VNN_DIST_CHECK_SIZES=1 (launched so): ranks disagree on the size or the
// collective: every rank gets a DistributedError naming it at once (Gloo
// itself would abort the process), and the group stays usable. A receiver
// with the wrong size throws too.
int size_mismatch() {
  auto& pg = dist::group();
  pg.set_timeout(std::chrono::milliseconds(3000));
  int r = pg.rank();
  Tensor t = vnn::ones({r == 0 ? 1000 : 3000}, vnn::TensorOptions(dev));
  expect_throw<vnn::DistributedError>([&] { pg.allreduce(t).wait(); }, {"rank", "allreduce", "different sizes"},
                                      "mismatched allreduce sizes");
  expect_throw<vnn::DistributedError>(
      [&] { (r == 0 ? pg.broadcast(t, 0) : pg.allgather_into_tensor(vnn::zeros({3000 * pg.size()}, dev), t)).wait(); },
      {"different collectives"}, "broadcast against allgather");
  Tensor ok = vnn::ones({8}, vnn::TensorOptions(dev));
  pg.allreduce(ok).wait();  // the group still works
  expect_values(ok, [&](int64_t) { return double(pg.size()); }, "allreduce after a disagreement");
  if (pg.size() == 2) {
    if (r == 0)
      expect_throw<vnn::DistributedError>([&] { pg.send(vnn::ones({10}, dev), 1).wait(); }, {"send"},
                                          "send to a receiver of another size");
    else
      expect_throw<vnn::DistributedError>([&] { pg.recv(vnn::zeros({20}, dev), 0).wait(); },
                                          {"recv from rank 0", "sent 40 bytes"}, "recv of another size");
  }
  return 0;
}

// The default check (on a stall): the ranks' allreduces of different sizes
// travel on different tags, so they stall instead of pairing (Gloo would
// abort the process); the stall probe compares them through the store and
// aborts the group on every rank within about two probe intervals (here 2 s,
// a quarter of the timeout), naming each rank's call. Later work fails fast.
int size_mismatch_on_stall() {
  auto& pg = dist::group();
  pg.set_timeout(std::chrono::milliseconds(8000));
  int r = pg.rank();
  Tensor ok = vnn::ones({8}, vnn::TensorOptions(dev));
  pg.allreduce(ok).wait();  // agreeing collectives are untouched
  expect_values(ok, [&](int64_t) { return double(pg.size()); }, "allreduce before the disagreement");
  Tensor t = vnn::ones({r == 0 ? 1000 : 3000}, vnn::TensorOptions(dev));
  auto t0 = std::chrono::steady_clock::now();
  expect_throw<vnn::DistributedError>([&] { pg.allreduce(t).wait(); },
                                      {"allreduce(sum)", "different sizes", "rank 0 allreduce(sum) of 4000 bytes",
                                       "rank 1 allreduce(sum) of 12000 bytes", "VNN_DIST_CHECK_SIZES=1"},
                                      "mismatched allreduce sizes, found on a stall");
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  DIST_CHECK(s < 6.0, "the disagreement took " << s << " s to report (probe interval 2 s, timeout 8 s)");
  expect_throw<vnn::DistributedError>([&] { pg.barrier().wait(); }, {"aborted", "different sizes"},
                                      "work after the abort");
  return 0;
}

// The last rank SIGKILLs itself in the middle of a step; the others must
// throw DistributedError within the timeout.
int kill_rank() {
  auto& pg = dist::group();
  pg.set_timeout(std::chrono::milliseconds(4000));
  int r = pg.rank(), ws = pg.size();
  Tensor t = vnn::ones({1 << 15}, vnn::TensorOptions(dev));
  auto start = std::chrono::steady_clock::now();
  try {
    for (int step = 0; step < 1000; ++step) {
      if (step == 5 && r == ws - 1) ::kill(::getpid(), SIGKILL);
      pg.allreduce(t, dist::ReduceOp::avg).wait();
    }
  } catch (const vnn::DistributedError& e) {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::string text = e.what();
    DIST_CHECK(text.find("rank " + std::to_string(r)) != std::string::npos, "message lacks the rank: " << text);
    DIST_CHECK(text.find("allreduce") != std::string::npos, "message lacks the collective: " << text);
    DIST_CHECK(s < 12, "took " << s << " s");
    std::cout << "rank " << r << " caught after " << s << " s: " << text << std::endl;
    return 0;
  }
  fail("rank " + std::to_string(r) + " finished 1000 steps although a rank was killed");
}

// init_process_group must fail with a message containing ARG.
int init_error(const std::string& needle) {
  try {
    dist::init_process_group();
  } catch (const vnn::Error& e) {
    std::string text = e.what();
    DIST_CHECK(text.find(needle) != std::string::npos, "message lacks '" << needle << "': " << text);
    std::cout << "ok: " << text << std::endl;
    return 0;
  }
  fail("init_process_group succeeded; expected an error containing '" + needle + "'");
}

// init / destroy twice in one process, report, and the env accessors.
int lifecycle() {
  for (int round = 0; round < 2; ++round) {
    dist::init_process_group();
    DIST_CHECK(dist::is_initialized(), "not initialised");
    DIST_CHECK(dist::rank() == std::atoi(std::getenv("RANK") ? std::getenv("RANK") : std::getenv("OMPI_COMM_WORLD_RANK")),
               "rank");
    std::string rep = dist::group().report();
    DIST_CHECK(rep.find("hip tensors") != std::string::npos && rep.find("RCCL") != std::string::npos, rep);
    expect_throw<vnn::ValueError>([] { dist::init_process_group(); }, {"already initialised"}, "double init");
    Tensor t = vnn::ones({4}, dev);
    dist::all_reduce(t);
    expect_values(t, [](int64_t) { return double(dist::world_size()); }, "all_reduce shorthand");
    dist::destroy_process_group();
    DIST_CHECK(!dist::is_initialized(), "still initialised");
  }
  dist::destroy_process_group();  // idempotent
  expect_throw<vnn::ValueError>([] { dist::group(); }, {"not initialised"}, "group() after destroy");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Scenarios table{{"collectives", plain(collectives)}, {"async", plain(async_work)},
                  {"bad_arguments", plain(bad_arguments)}, {"size_mismatch", plain(size_mismatch)},
                  {"size_mismatch_on_stall", plain(size_mismatch_on_stall)}, {"kill_rank", plain(kill_rank)}};
  for (const char* s : {"ddp_train", "ddp_overlap", "ddp_unused", "ddp_mismatch", "ddp_tied"})
    table[s] = [s](const std::string& arg) { return ddp_main(s, arg); };
  return run_scenario(argc, argv, dev, table, {{"init_error", init_error}, {"lifecycle", plain(lifecycle)}});
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The profiler on the device under test: a training step's ops with their
// device, phase and path; table arithmetic; the Chrome trace as JSON with
// host, device-queue and DataLoader-worker tracks; memory statistics over a
// known allocation pattern; nothing recorded while off.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "io/json.hpp"
#include "support/device_under_test.hpp"
#include "vnn/vnn.h"

using namespace vnn;
using vnn::test::device_under_test;
namespace prof = vnn::profiler;

namespace {

// One step of a small MLP: forward, backward, SGD.
void train_step(nn::Module& model, optim::Optimizer& opt, const Tensor& x, const Tensor& y) {
  opt.zero_grad();
  Tensor loss = nn::cross_entropy(model(x), y);
  loss.backward();
  opt.step();
}

nn::Sequential small_model(const Device& dev) {
  using namespace vnn::nn;
  auto m = Sequential(std::initializer_list<ModulePtr>{
      Linear(16, 32), ReLU(), Linear(32, 4)});
  m->to(dev);
  return m;
}

std::string path_of(const std::string& name) {
  auto a = name.find('['), b = name.rfind(']');
  return a == std::string::npos || b == std::string::npos ? "" : name.substr(a + 1, b - a - 1);
}

const io::json::Value* member(const io::json::Value& v, const char* key) { return v.find(key); }

double number(const io::json::Value& v) { return v.is_uint ? double(v.u) : std::stod(v.s); }

}  // namespace

TEST_CASE("off: nothing is recorded and only one profile runs at a time") {
  Device dev = device_under_test();
  REQUIRE_FALSE(prof::is_profiling());
  Tensor a = ones({64}, TensorOptions(dev));
  Tensor b = add(a, a);  // dispatched with the profiler off
  prof::Profile p;
  REQUIRE(prof::is_profiling());
  REQUIRE_THROWS_AS(prof::Profile(), ValueError);
  REQUIRE_THROWS_AS(p.key_averages(), ValueError);  // still running
  p.stop();
  REQUIRE_FALSE(prof::is_profiling());
  Tensor c = add(b, a);  // after stop: not recorded
  { prof::Range r("after stop"); }
  REQUIRE(p.events().empty());
  REQUIRE(p.key_averages().empty());
  p.stop();  // idempotent
  REQUIRE(c.to_vector<float>()[0] == 3.0f);
}

TEST_CASE("every op of a training step is recorded with its device, phase and path") {
  Device dev = device_under_test();
  manual_seed(1);
  auto model = small_model(dev);
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
  Tensor x = randn({8, 16}).to(dev);
  Tensor y = from_vector(std::vector<int64_t>{0, 1, 2, 3, 0, 1, 2, 3}, {8}).to(dev);
  train_step(*model, opt, x, y);  // warm-up: kernel builds, first allocations

  prof::Profile p;
  {
    prof::Range r("step");
    train_step(*model, opt, x, y);
  }
  // A large matmul: the CPU backend hands it to OpenBLAS.
  Tensor big = ones({256, 256}, TensorOptions(dev));
  Tensor prod = matmul(big, big);
  p.stop();
  REQUIRE(prod.to(Device("cpu", 0)).to_vector<float>()[0] == 256.0f);

  std::map<prof::Phase, int> ops_by_phase;
  std::set<std::string> names, ranges, paths;
  for (const auto& e : p.events()) {
    if (e.kind == prof::EventKind::range) {
      ranges.insert(e.name);
      REQUIRE(e.device.empty());
      continue;
    }
    names.insert(e.name);
    REQUIRE(e.device == dev.str());
    REQUIRE(e.host_us >= 0);
    REQUIRE(e.self_us == e.host_us);
    REQUIRE(e.device_us >= 0);  // device events on every backend
    REQUIRE(e.device_start_us >= 0);
    ++ops_by_phase[e.phase];
    if (e.name.rfind("matmul", 0) == 0) paths.insert(path_of(e.name));
  }
  CHECK(ranges.count("step") == 1);
  CHECK(ranges.count("autograd::backward") == 1);
  CHECK(ranges.count("optimizer::step") == 1);
  CHECK(ops_by_phase[prof::Phase::forward] >= 4);   // 2 matmuls, adds, relu, loss
  CHECK(ops_by_phase[prof::Phase::backward] >= 4);  // their gradients
  CHECK(ops_by_phase[prof::Phase::optimizer] >= 4);  // one update per parameter
  // The implementation the backend chose is part of the name.
  REQUIRE_FALSE(paths.empty());
  const std::map<std::string, std::set<std::string>> paths_of = {
      {"cpu", {"kokkos", "openblas", "onednn"}},
      {"opencl", {"clblast", "tiled", "longk", "widen", "simple"}},
      {"cuda", {"cublas"}},
      {"hip", {"kokkos"}}};
  REQUIRE(paths_of.count(dev.backend()) == 1);
  for (const auto& path : paths) CHECK(paths_of.at(dev.backend()).count(path) == 1);
  if (dev.backend() == "cpu") {
    // A CPU plugin built without OpenBLAS (VNN_CPU_BLAS=OFF) says so in its description.
    bool blas = false;
    for (const auto& r : vnn::backend_report())
      if (r.backend == "openmp") blas = r.description.find("OpenBLAS") != std::string::npos;
    // Where oneDNN's JIT has AVX-512 the plugin routes float32 GEMMs from
    // 32^3 to it (its properties say matmul_onednn=yes...), else OpenBLAS.
    bool onednn = false;
    for (const auto& [k, v] : device_info(dev).properties)
      if (k == "matmul_onednn") onednn = v.rfind("yes", 0) == 0;
    const std::string large_path = onednn ? "onednn" : "openblas";
    INFO("the 256^3 matmul's expected path: " << large_path);
    CHECK(paths.count(large_path) == (blas ? 1u : 0u));  // the 256^3 one
    CHECK(paths.count("kokkos") == 1);                    // the 8x16x32 ones stay inline
  }
  // Input shapes are the caller's, not the coalesced ones.
  bool saw_shape = false;
  for (const auto& e : p.events())
    if (e.name.rfind("matmul", 0) == 0 && e.shapes == "[256, 256], [256, 256]") saw_shape = true;
  CHECK(saw_shape);

  // The same step profiled twice records the same op sequence.
  auto names_of = [&](const prof::Profile& q) {
    std::vector<std::string> v;
    for (const auto& e : q.events())
      if (e.kind == prof::EventKind::op) v.push_back(e.name);
    return v;
  };
  prof::Profile p1;
  train_step(*model, opt, x, y);
  p1.stop();
  prof::Profile p2;
  train_step(*model, opt, x, y);
  p2.stop();
  CHECK(names_of(p1) == names_of(p2));
  CHECK(names_of(p1).size() >= 12);
}

TEST_CASE("the table's numbers add up") {
  Device dev = device_under_test();
  manual_seed(2);
  auto model = small_model(dev);
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.05));
  Tensor x = randn({8, 16}).to(dev);
  Tensor y = from_vector(std::vector<int64_t>{3, 2, 1, 0, 3, 2, 1, 0}, {8}).to(dev);
  train_step(*model, opt, x, y);
  prof::Profile p;
  for (int i = 0; i < 3; ++i) {
    prof::Range r("iteration");
    train_step(*model, opt, x, y);
  }
  p.stop();
  const auto& ev = p.events();
  REQUIRE(ev.size() > 20);

  double self_sum = 0, total_sum = 0, root_sum = 0, device_sum = 0;
  int64_t alloc_sum = 0;
  for (const auto& e : ev) {
    REQUIRE(e.self_us <= e.host_us + 1e-9);
    REQUIRE(e.self_us >= -1e-6);
    self_sum += e.self_us;
    total_sum += e.host_us;
    if (e.depth == 0) root_sum += e.host_us;
    if (e.device_us >= 0) device_sum += e.device_us;
    alloc_sum += e.bytes_allocated * (e.kind == prof::EventKind::op ? 1 : 0);
  }
  // Self times partition the roots' time: nothing counted twice or lost.
  CHECK(self_sum == Approx(root_sum).epsilon(1e-9).margin(1e-6));

  for (bool by_shape : {false, true}) {
    prof::TableOptions t;
    t.group_by_shape = by_shape;
    auto rows = p.key_averages(t);
    double rs = 0, rt = 0, rd = 0, pct = 0, dpct = 0;
    int64_t calls = 0, ra = 0;
    for (const auto& r : rows) {
      REQUIRE(r.self_host_us <= r.total_host_us + 1e-9);
      REQUIRE(r.calls > 0);
      CHECK(r.avg_host_us == Approx(r.total_host_us / double(r.calls)));
      rs += r.self_host_us, rt += r.total_host_us, rd += r.device_us, pct += r.self_host_pct;
      dpct += r.device_pct, calls += r.calls;
      if (!r.is_range) ra += r.bytes_allocated;
    }
    CHECK(calls == int64_t(ev.size()));
    CHECK(rs == Approx(self_sum));
    CHECK(rt == Approx(total_sum));
    CHECK(rd == Approx(device_sum));
    CHECK(ra == alloc_sum);
    CHECK(pct == Approx(100.0));
    CHECK(dpct == Approx(100.0));
  }
  // A range's total covers its ops; "iteration" ran 3 times.
  for (const auto& r : p.key_averages())
    if (r.name == "iteration") CHECK(r.calls == 3);

  // Sorting: descending by the chosen column, names ascending.
  for (auto by : {prof::SortBy::device_total, prof::SortBy::self_host, prof::SortBy::calls,
                  prof::SortBy::total_host, prof::SortBy::bytes_allocated}) {
    prof::TableOptions t;
    t.sort = by;
    auto rows = p.key_averages(t);
    for (size_t i = 1; i < rows.size(); ++i) {
      auto key = [&](const prof::Row& r) {
        switch (by) {
          case prof::SortBy::device_total: return r.device_us;
          case prof::SortBy::self_host: return r.self_host_us;
          case prof::SortBy::calls: return double(r.calls);
          case prof::SortBy::total_host: return r.total_host_us;
          default: return double(r.bytes_allocated);
        }
      };
      REQUIRE(key(rows[i - 1]) >= key(rows[i]));
    }
  }
  prof::TableOptions by_name;
  by_name.sort = prof::SortBy::name;
  by_name.row_limit = 3;
  auto first3 = p.key_averages(by_name);
  REQUIRE(first3.size() == 3);
  REQUIRE(first3[0].name <= first3[1].name);

  prof::TableOptions grouped;
  grouped.group_by_phase = true;
  std::string text = p.table(grouped);
  CHECK(text.find("Self host %") != std::string::npos);
  CHECK(text.find("Device total") != std::string::npos);
  CHECK(text.find("backward") != std::string::npos);
  CHECK(text.find("[range] iteration") != std::string::npos);
}

TEST_CASE("the Chrome trace is valid JSON with host, device and DataLoader worker tracks") {
  Device dev = device_under_test();
  Tensor data = randn({64, 16});
  Tensor target = from_vector(std::vector<int64_t>(64, 1), {64});
  auto ds = std::make_shared<data::TensorDataset>(data, target);
  data::DataLoaderOptions o;
  o.batch_size = 16;
  o.num_workers = 1;
  o.device = dev;
  data::DataLoader loader(ds, o);
  auto model = small_model(dev);
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.05));

  prof::Profile p;
  for (auto& batch : loader) train_step(*model, opt, batch.data, batch.target);
  Tensor on_cpu = add(data, data);  // the CPU reference device too: its own process
  p.stop();
  // Each op carries the device it ran on.
  int cpu_ops = 0, dev_ops = 0;
  for (const auto& e : p.events()) {
    if (e.kind != prof::EventKind::op) continue;
    REQUIRE((e.device == dev.str() || e.device == "cpu:0"));
    if (e.device == "cpu:0") ++cpu_ops;
    if (e.device == dev.str()) ++dev_ops;
  }
  CHECK(cpu_ops >= 1);
  CHECK(dev_ops >= 5);  // the training steps

  const std::string path = "test_profiler_trace_" + dev.backend() + ".json";
  p.export_chrome_trace(path);
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  io::json::Value root = io::json::parse(text.data(), text.size(), path);
  const io::json::Value* events = member(root, "traceEvents");
  REQUIRE(events);
  REQUIRE(events->type == io::json::Value::Type::array);

  std::map<int, std::string> processes;                  // pid -> name
  std::map<std::pair<int, int>, std::string> threads;    // (pid, tid) -> name
  std::map<std::pair<int, int>, std::set<std::string>> slices;
  int counters = 0;
  for (const auto& e : events->items) {
    const std::string ph = member(e, "ph")->s;
    int pid = int(number(*member(e, "pid"))), tid = int(number(*member(e, "tid")));
    if (ph == "M") {
      std::string name = member(*member(e, "args"), "name")->s;
      if (member(e, "name")->s == "process_name") processes[pid] = name;
      else threads[{pid, tid}] = name;
    } else if (ph == "X") {
      REQUIRE(number(*member(e, "dur")) >= 0);
      REQUIRE(number(*member(e, "ts")) >= 0);
      slices[{pid, tid}].insert(member(e, "name")->s);
    } else if (ph == "C") {
      ++counters;
    }
  }
  int host_pid = -1, dev_pid = -1;
  for (auto& kv : processes) {
    if (kv.second == "host") host_pid = kv.first;
    if (kv.second == dev.str()) dev_pid = kv.first;
  }
  REQUIRE(host_pid >= 0);
  REQUIRE(dev_pid >= 0);
  int cpu_pid = -1;
  for (auto& kv : processes)
    if (kv.second == "cpu:0") cpu_pid = kv.first;
  REQUIRE(cpu_pid >= 0);
  CHECK(slices[{cpu_pid, 0}].count("add") == 1);
  REQUIRE(threads.count({dev_pid, 0}) == 1);
  CHECK(slices[{dev_pid, 0}].size() >= 5);  // kernels on the device queue track
  CHECK(counters > 0);                      // allocated bytes
  // The main thread ran the ops; the worker track has the "data" ranges.
  bool main_has_ops = false, worker_has_data = false;
  for (auto& kv : threads) {
    if (kv.first.first != host_pid) continue;
    auto& names = slices[kv.first];
    if (kv.second.rfind("dataloader worker 0", 0) == 0) worker_has_data = names.count("data") > 0;
    else if (names.count("autograd::backward")) main_has_ops = true;
  }
  CHECK(main_has_ops);
  CHECK(worker_has_data);
  std::remove(path.c_str());

  REQUIRE_THROWS_AS(p.export_chrome_trace("/nonexistent-dir/x/trace.json"), Error);
}

TEST_CASE("memory statistics follow a known allocation pattern") {
  Device dev = device_under_test();
  synchronize();
  empty_cache(dev);
  reset_peak_memory_stats(dev);
  const MemoryStats s0 = memory_stats(dev);
  REQUIRE(s0.peak_allocated == s0.allocated);
  const uint64_t small = 4096, large = uint64_t(2) << 20;  // rounded block sizes
  prof::Profile p;
  {
    Tensor a = zeros({1000}, TensorOptions(dev));    // 4000 B -> 4096
    Tensor b = zeros({300000}, TensorOptions(dev));  // 1.2 MB -> 2 MiB
    MemoryStats s1 = memory_stats(dev);
    CHECK(s1.allocated == s0.allocated + small + large);
    CHECK(s1.peak_allocated == s0.allocated + small + large);
  }
  MemoryStats s2 = memory_stats(dev);
  CHECK(s2.allocated == s0.allocated);
  CHECK(s2.peak_allocated == s0.allocated + small + large);  // the peak stays
  CHECK(s2.reserved >= s0.reserved + small + large);         // blocks are cached, not returned
  {
    Tensor c = zeros({1000}, TensorOptions(dev));  // the cached 4096 block comes back
    MemoryStats s3 = memory_stats(dev);
    CHECK(s3.cache_hits == s2.cache_hits + 1);
    CHECK(s3.backend_allocations == s2.backend_allocations);
  }
  p.stop();
  // The fills of the three zeros() were charged their output blocks.
  std::vector<int64_t> charged;
  for (const auto& e : p.events())
    if (e.kind == prof::EventKind::op) charged.push_back(e.bytes_allocated);
  REQUIRE(charged.size() == 3);
  CHECK(charged[0] == int64_t(small));
  CHECK(charged[1] == int64_t(large));
  CHECK(charged[2] == int64_t(small));
  // The second fill's thread freed nothing before it; the third one follows
  // the release of a and b.
  CHECK(p.events()[2].bytes_freed == int64_t(small + large));
  auto mem = p.memory();
  REQUIRE(mem.size() == 1);
  CHECK(mem[0].device == dev.str());
  CHECK(mem[0].peak_allocated == s0.allocated + small + large);

  reset_peak_memory_stats(dev);
  CHECK(memory_stats(dev).peak_allocated == memory_stats(dev).allocated);
  empty_cache(dev);
  CHECK(memory_stats(dev).reserved == memory_stats(dev).allocated);
  std::string summary = memory_summary(dev);
  CHECK(summary.find("peak") != std::string::npos);
  CHECK(summary.find("cache hits") != std::string::npos);
}

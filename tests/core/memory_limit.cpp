// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The device memory budget (vnn::set_memory_limit, VNN_MEMORY_LIMIT): the
// caching allocator keeps reserved bytes under it, gives cached blocks back
// before it gives up, and throws OutOfMemory with a text that names the
// device, the request, the limit, what is held and what to do.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/child_process.hpp"
#include "support/device_under_test.hpp"
#include "vnn/nn.h"
#include "vnn/optim.h"

using namespace vnn;
using vnn::test::device_under_test;

namespace {

constexpr uint64_t kKiB = 1024, kMiB = 1024 * 1024;

// Sets a limit for a scope and lifts it at the end (also when a CHECK throws).
struct LimitScope {
  Device dev;
  explicit LimitScope(const Device& d, uint64_t bytes) : dev(d) { set_memory_limit(dev, bytes); }
  ~LimitScope() { set_memory_limit(dev, 0); }
};

// What live tensors hold on `dev` once the cache is given back.
uint64_t live_bytes(const Device& dev) {
  empty_cache(dev);
  return memory_stats(dev).allocated;
}

// 512 KiB of float32: rounds to exactly one 512 KiB block.
Tensor block512k(const Device& dev) { return empty({int64_t(512 * kKiB / 4)}, TensorOptions(dev)); }

}  // namespace

TEST_CASE("memory limit: reserved bytes stay under it, and the next allocation throws OutOfMemory") {
  const Device dev = device_under_test();
  CHECK(memory_limit(dev) == 0);  // none unless set (VNN_MEMORY_LIMIT is not set here)
  const uint64_t base = live_bytes(dev);
  LimitScope limit(dev, base + 4 * kMiB);
  CHECK(memory_limit(dev) == base + 4 * kMiB);
  CHECK(memory_stats(dev).limit == base + 4 * kMiB);
  std::vector<Tensor> held;
  for (int i = 0; i < 8; ++i) {
    held.push_back(block512k(dev));
    CHECK(memory_stats(dev).reserved <= base + 4 * kMiB);
  }
  CHECK(memory_stats(dev).allocated == base + 4 * kMiB);
  CHECK_THROWS_AS(block512k(dev), OutOfMemory);
  CHECK_THROWS_AS(zeros({100}, TensorOptions(dev)), OutOfMemory);  // even a small one: the budget is full
  CHECK(memory_stats(dev).allocated == base + 4 * kMiB);           // a failed request holds nothing
  CHECK(memory_stats(dev).reserved == base + 4 * kMiB);
  CHECK(memory_summary(dev).find("memory limit") != std::string::npos);
}

TEST_CASE("memory limit: the OutOfMemory text names the device, request, limit, what is held and what to do") {
  const Device dev = device_under_test();
  const uint64_t base = live_bytes(dev);
  LimitScope limit(dev, base + kMiB + kKiB);
  Tensor a = block512k(dev), b = block512k(dev);
  { Tensor c = empty({256}, TensorOptions(dev)); }  // 1 KiB: cached, given back by the failing request
  std::string text;
  try {
    Tensor too_much = empty({int64_t(600 * kKiB / 4)}, TensorOptions(dev));  // 600 KiB
    FAIL("no OutOfMemory");
  } catch (const OutOfMemory& e) {
    text = e.what();
  }
  INFO(text);
  CHECK(text.find("out of memory on " + dev.str()) != std::string::npos);
  CHECK(text.find("tried to allocate 600.00 KiB (614400 bytes)") != std::string::npos);
  CHECK(text.find("memory limit is " ) != std::string::npos);
  CHECK(text.find("(" + std::to_string(base + kMiB + kKiB) + " bytes)") != std::string::npos);  // the limit
  CHECK(text.find(std::to_string(base + kMiB) + " bytes) is allocated by live tensors") != std::string::npos);
  CHECK(text.find("reserved by vnn's caching allocator") != std::string::npos);
  CHECK(text.find("were given back first") != std::string::npos);  // the 1 KiB cached block
  CHECK(text.find("smaller batch") != std::string::npos);
  CHECK(text.find("vnn::utils::checkpoint") != std::string::npos);
  CHECK(text.find("FSDP") != std::string::npos);
  CHECK(text.find("vnn::set_memory_limit(" + dev.str()) != std::string::npos);
  CHECK(text.find("VNN_MEMORY_LIMIT") != std::string::npos);
}

TEST_CASE("memory limit: freeing makes room again; cached blocks are given back before it throws; 0 lifts it") {
  const Device dev = device_under_test();
  const uint64_t base = live_bytes(dev);
  {
    LimitScope limit(dev, base + 4 * kMiB);
    std::vector<Tensor> held;
    for (int i = 0; i < 8; ++i) held.push_back(block512k(dev));
    CHECK_THROWS_AS(block512k(dev), OutOfMemory);
    held.resize(4);  // 2 MiB back in the cache: reserved is still at the limit
    CHECK(memory_stats(dev).allocated == base + 2 * kMiB);
    CHECK(memory_stats(dev).reserved == base + 4 * kMiB);
    Tensor again = block512k(dev);  // a cached block of that size: no new bytes
    CHECK(memory_stats(dev).reserved == base + 4 * kMiB);
    again = Tensor();
    // A 2 MiB block (1.5 MiB rounds up) is in no cache: the cached 512 KiB
    // blocks are given back first, then it fits.
    Tensor big = empty({int64_t(3 * kMiB / 8)}, TensorOptions(dev));
    const MemoryStats s = memory_stats(dev);
    CHECK(s.allocated == base + 4 * kMiB);
    CHECK(s.reserved == base + 4 * kMiB);
    CHECK(s.peak_reserved >= s.reserved);
    // A limit below what is reserved gives the cache back at once and lets nothing more in.
    big = Tensor();
    set_memory_limit(dev, base + 1 * kMiB);
    CHECK(memory_stats(dev).reserved == base + 2 * kMiB);  // the 4 live blocks stay
    CHECK_THROWS_AS(empty({16}, TensorOptions(dev)), OutOfMemory);
    held.clear();
    Tensor fits = block512k(dev);  // freed blocks are cached: served from there
    CHECK(memory_stats(dev).allocated == base + 512 * kKiB);
  }
  CHECK(memory_limit(dev) == 0);  // lifted
  Tensor large = zeros({int64_t(64 * kMiB / 4)}, TensorOptions(dev));  // 64 MiB, past every limit above
  CHECK(sum(large).item() == 0.0);
}

TEST_CASE("memory limit: one device's budget leaves the others alone") {
  const Device dev = device_under_test();
  const Device cpu("cpu", 0);
  if (dev == cpu) return;  // cpu only: the opencl run covers it
  const uint64_t base = live_bytes(dev);
  LimitScope limit(dev, base + 512 * kKiB);
  CHECK(memory_limit(cpu) == 0);
  Tensor on_cpu = zeros({int64_t(4 * kMiB / 4)}, TensorOptions(cpu));  // 4 MiB on cpu:0: no limit there
  CHECK_THROWS_AS(on_cpu.to(dev), OutOfMemory);
  CHECK(sum(on_cpu).item() == 0.0);
}

namespace {

// One training step of a 4-layer MLP, batch 64: returns the loss.
double train_step(nn::Sequential& net, optim::Optimizer& opt, const Tensor& x, const Tensor& y) {
  opt.zero_grad();
  Tensor loss = nn::mse_loss(net->forward(x), y);
  loss.backward();
  opt.step();
  return loss.item();
}

}  // namespace

TEST_CASE("memory limit: a training step that fits without it throws OutOfMemory under a small one, trains after") {
  const Device dev = device_under_test();
  Generator g(5);
  nn::Sequential net{nn::Linear(256, 512, true, &g), nn::ReLU(), nn::Linear(512, 512, true, &g), nn::ReLU(),
                     nn::Linear(512, 512, true, &g), nn::ReLU(), nn::Linear(512, 16, true, &g)};
  net->to(dev);
  optim::Adam opt(net->parameters(), optim::AdamOptions(1e-3));
  Tensor x = randn({64, 256}, TensorOptions(), &g).to(dev), y = randn({64, 16}, TensorOptions(), &g).to(dev);
  const double first = train_step(net, opt, x, y);  // Adam's state exists from here on
  const uint64_t base = live_bytes(dev);            // parameters, Adam state, gradients, data
  reset_peak_memory_stats(dev);
  train_step(net, opt, x, y);
  const uint64_t step_peak = memory_stats(dev).peak_allocated - base;
  INFO("model state " << base << " bytes, one step's peak on top " << step_peak << " bytes");
  REQUIRE(step_peak > 64 * kKiB);
  {
    LimitScope limit(dev, live_bytes(dev) + step_peak / 4);
    CHECK_THROWS_AS(train_step(net, opt, x, y), OutOfMemory);
    CHECK(memory_stats(dev).reserved <= memory_limit(dev));
  }
  {
    // A budget with room for the step: it trains under it.
    LimitScope limit(dev, live_bytes(dev) + step_peak + 4 * kMiB);
    reset_peak_memory_stats(dev);
    const double under = train_step(net, opt, x, y);
    CHECK(std::isfinite(under));
    CHECK(memory_stats(dev).peak_reserved <= memory_limit(dev));
  }
  double last = 0;
  for (int i = 0; i < 5; ++i) last = train_step(net, opt, x, y);  // lifted: trains on
  CHECK(last < first);
}

// ---- VNN_MEMORY_LIMIT, read at a device's first use: run in a child process ----

TEST_CASE("memory limit: child reads VNN_MEMORY_LIMIT", "[.env_limit]") {
  const char* env = std::getenv("VNN_MEMORY_LIMIT");
  const char* expect = std::getenv("VNN_TEST_EXPECT_LIMIT");
  REQUIRE(env);
  REQUIRE(expect);
  const Device dev = device_under_test();
  if (std::string(expect) == "bad") {
    CHECK_THROWS_AS(memory_limit(dev), ValueError);
    CHECK_THROWS_WITH(memory_limit(dev), Catch::Contains("VNN_MEMORY_LIMIT=\"" + std::string(env) + "\"") &&
                                             Catch::Contains("entry") &&
                                             Catch::Contains("cpu:0=2G,opencl:0=512M"));
    CHECK_THROWS_AS(zeros({3}, TensorOptions(dev)), ValueError);  // at the device's first allocation, typed
    set_memory_limit(dev, 0);  // one set in code replaces it (the bad variable stops every device:
    set_memory_limit(Device("cpu", 0), 0);  // item() reads back through cpu:0)
    CHECK(sum(zeros({3}, TensorOptions(dev))).item() == 0);
  } else {
    const uint64_t want = std::strtoull(expect, nullptr, 10);
    CHECK(memory_limit(dev) == want);
    CHECK(memory_stats(dev).limit == want);
    if (want != 0) {
      CHECK_THROWS_AS(empty({int64_t(want / 4 + 1)}, TensorOptions(dev)), OutOfMemory);
      Tensor fits = zeros({int64_t(want / 8)}, TensorOptions(dev));
      CHECK(sum(fits).item() == 0);
    }
  }
}

namespace {
// Runs this program's hidden case [.env_limit] with VNN_MEMORY_LIMIT=value.
int run_child(const char* value, const std::string& expect, std::string* out) {
  return vnn::test::run_case_in_child("[.env_limit]", {{"VNN_MEMORY_LIMIT", value}, {"VNN_TEST_EXPECT_LIMIT", expect}},
                                      out);
}
}  // namespace

TEST_CASE("memory limit: VNN_MEMORY_LIMIT parses per device; a bad value is a ValueError naming the entry") {
  const std::string b = device_under_test().backend();
  const std::string mib3 = std::to_string(3 * kMiB);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"cpu:0=3M,opencl:0=3M", mib3},
      {" cpu:0 = 3MiB , opencl:0 = 3145728 ,", mib3},  // spaces, a unit, bytes, a trailing comma
      {b + "=1G," + b + ":0=3M", mib3},                // the indexed entry wins over the backend's
      {b + "=3m", mib3},                               // a bare backend covers its devices
      {b + ":1=1G,cuda:0=5G", "0"},                    // others' devices: no limit here
      {b + ":0=0", "0"},                               // 0 = none
      {"cpu:0=lots", "bad"},
      {b + ":0", "bad"},
      {"=5M", "bad"},
      {b + ":x=1G", "bad"},
      {b + ":0=1G," + b + ":0=2G", "bad"},
      {"cpu:0=2G,,opencl:0=1G", "bad"},
      {b + ":0=-5M", "bad"},
  };
  for (const auto& [value, expect] : cases) {
    std::string out;
    INFO("VNN_MEMORY_LIMIT=" << value << " (expect " << expect << ")");
    int rc = run_child(value.c_str(), expect, &out);
    INFO(out);
    CHECK(rc == 0);
  }
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Pinned host memory recycled by events (issue 20): a block read or written
// by a queued non_blocking copy stays pending until an event recorded
// behind that copy completes, is never handed out before, and is reused
// after; a soft limit bounds the blocks held; a DataLoader loop with
// pin_memory + non_blocking and no synchronize holds pinned memory flat.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/child_process.hpp"
#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;

namespace {

// Whether pin_memory gives page-locked memory here (some device has memory
// of its own); without one it keeps ordinary host memory.
bool pins_here() {
  for (const DeviceInfo& d : devices())
    if (!d.host_accessible) return true;
  return false;
}

Tensor pinned_filled(int64_t n, float value) {
  TensorOptions opt(Device("cpu", 0));
  opt = opt.pinned_memory(true);
  Tensor t = empty({n}, opt);
  float* p = t.data<float>();
  std::fill(p, p + n, value);
  return t;
}

void check_all(const Tensor& t, float value) {
  auto v = t.to_vector<float>();
  REQUIRE(!v.empty());
  for (size_t i = 0; i < v.size(); i += 97) REQUIRE(v[i] == value);
  REQUIRE(v.back() == value);
}

// Queues about 200 ms of device work on dev's current stream, so that
// copies enqueued next cannot have run for a while (its length is
// measured with events, so it holds on fast and slow devices alike).
double keep_device_busy(const Device& dev) {
  Tensor c = full({int64_t(1) << 22}, 1.0, TensorOptions(dev));
  c = c * 1.0001 + 0.5;  // warm: kernels compiled, blocks cached
  synchronize(dev);
  Event s, e;
  s.record(dev);
  c = c * 1.0001 + 0.5;
  e.record(dev);
  double one = std::max(s.elapsed_time(e), 1e-3);
  int reps = int(std::min(20000.0, 200.0 / one)) + 1;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) c = c * 1.0001 + 0.5;
  double host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("keep_device_busy(%s): %d steps of %.3f ms queued in %.1f ms\n", dev.str().c_str(), reps, one, host_ms);
  return one * reps;
}

// Every pinned block back to the backend (pending ones once their device
// is synchronised), so a case starts from a known state.
void drain_pinned() {
  for (const DeviceInfo& d : devices()) empty_cache(d.device);
}

}  // namespace

TEST_CASE("pinned memory: a block under a queued copy is pending, never reused before its event, reused after") {
  Device dev = device_under_test();
  if (!pins_here()) {
    WARN("no device here has memory of its own: pin_memory keeps ordinary host memory, nothing to recycle");
    CHECK(pinned_filled(100, 1.f).to_vector<float>()[99] == 1.f);
    return;
  }
  if (device_info(dev).host_accessible) {
    WARN(dev << " memory is host memory: copies to it are synchronous memcpys and never leave a block "
              "pending (the limit and DataLoader cases below check its reuse)");
    return;
  }
  drain_pinned();
  const int64_t n = 16384;  // 64 KiB: one size class
  const uint64_t cls = 65536;

  SECTION("host to device: the block the copy reads") {
    Tensor a = pinned_filled(n, 1.f);
    const void* a_block = a.raw_data();
    keep_device_busy(dev);
    const HostMemoryStats s0 = host_memory_stats();
    Tensor d = a.to(dev, /*non_blocking=*/true);
    a = Tensor();
    const HostMemoryStats s1 = host_memory_stats();
    CHECK(s1.blocks_pending == s0.blocks_pending + 1);
    CHECK(s1.pending == s0.pending + cls);
    CHECK(s1.in_use == s0.in_use - cls);
    CHECK(s1.reserved == s0.reserved);
    // Same size class while the copy waits behind ~200 ms of work: a new block.
    Tensor b = pinned_filled(n, 2.f);
    CHECK(b.raw_data() != a_block);
    synchronize(dev);
    check_all(d, 1.f);  // the copy read 1s: the block was not refilled under it
    const HostMemoryStats s2 = host_memory_stats();
    // The event has completed: the next allocation of the class takes the
    // pending block from the cache, not from the backend.
    Tensor c = pinned_filled(n, 3.f);
    const HostMemoryStats s3 = host_memory_stats();
    CHECK(s3.backend_allocations == s2.backend_allocations);
    CHECK(s3.allocations == s2.allocations + 1);
    CHECK(s3.blocks_pending == s2.blocks_pending - 1);
    CHECK(c.raw_data() == a_block);
  }

  SECTION("device to host: the block the copy writes") {
    Tensor src = full({n}, 5.0, TensorOptions(dev));
    keep_device_busy(dev);
    Tensor h = pinned_filled(n, 0.f);
    const void* h_block = h.raw_data();
    h.copy_(src, /*non_blocking=*/true);
    h = Tensor();
    CHECK(host_memory_stats().blocks_pending >= 1);
    // Were h's block handed out now, the queued copy would overwrite these 7s.
    Tensor b = pinned_filled(n, 7.f);
    CHECK(b.raw_data() != h_block);
    synchronize(dev);
    check_all(b, 7.f);
  }
  drain_pinned();
  CHECK(host_memory_stats().blocks_pending == 0);
}

TEST_CASE("pinned memory: past the soft limit, allocation waits for the oldest pending block instead of growing") {
  Device dev = device_under_test();
  if (!pins_here()) {
    WARN("no device here has memory of its own: pin_memory keeps ordinary host memory, nothing to limit");
    return;
  }
  const bool async = !device_info(dev).host_accessible;
  drain_pinned();
  const uint64_t old_limit = pinned_memory_limit();
  const uint64_t cls = 65536;
  set_pinned_memory_limit(3 * cls);
  const HostMemoryStats before = host_memory_stats();
  CHECK(before.limit == 3 * cls);
  CHECK(before.reserved == 0);

  if (async) keep_device_busy(dev);
  std::vector<Tensor> outs;
  for (int i = 0; i < 8; ++i) {
    Tensor h = pinned_filled(16384, float(i));
    outs.push_back(async ? h.to(dev, /*non_blocking=*/true) : h.clone());
    h = Tensor();
    const HostMemoryStats s = host_memory_stats();
    INFO("block " << i << ": reserved " << s.reserved << " pending " << s.pending << " cached " << s.cached);
    CHECK(s.reserved <= 3 * cls);
    CHECK(s.blocks <= 3);
  }
  const HostMemoryStats after = host_memory_stats();
  CHECK(after.backend_allocations - before.backend_allocations <= 3);
  // 8 copies queued behind ~200 ms of work, room for 3 blocks: the 4th
  // allocation found 3 pending blocks and had to wait for the oldest.
  if (async) CHECK(after.limit_waits > before.limit_waits);
  for (int i = 0; i < 8; ++i) check_all(outs[size_t(i)], float(i));  // no block was refilled under its copy

  // A larger class past the limit: cached blocks of other sizes go back first;
  // a block bigger than the limit is still given (the limit is soft).
  synchronize(dev);
  Tensor big = pinned_filled(65536, 9.f);  // 256 KiB
  const HostMemoryStats s = host_memory_stats();
  CHECK(s.blocks == 1);
  CHECK(s.reserved == 4 * cls);
  CHECK(s.backend_frees > after.backend_frees);
  big = Tensor();
  CHECK(host_memory_stats().reserved == 0);  // over the limit: given back at release, not cached
  set_pinned_memory_limit(old_limit);
  CHECK(pinned_memory_limit() == old_limit);
}

TEST_CASE("pinned memory: 10 000 DataLoader batches with pin_memory + non_blocking and no synchronize stay flat") {
  Device dev = device_under_test();
  const bool pinning = pins_here();
  if (!pinning) WARN("no device here has memory of its own: pin_memory keeps ordinary host memory");
  drain_pinned();
  const HostMemoryStats start = host_memory_stats();
  // 4 samples of 16 floats per batch: data and target each fit a 4 KiB block.
  const int64_t batches = 10000, bs = 4, width = 16;
  // Row r holds r % 1024 (sums stay exact in float32).
  std::vector<float> rows(size_t(batches * bs * width));
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = float((i / size_t(width)) % 1024);
  Tensor x = from_vector(rows, {batches * bs, width});
  Tensor y = arange(0, double(batches * bs), 1).to(kInt64);
  auto ds = std::make_shared<data::TensorDataset>(x, y);
  data::DataLoaderOptions o;
  o.batch_size = bs;
  o.pin_memory = true;
  o.non_blocking = true;
  o.num_workers = 2;  // workers pin their batches concurrently
  o.device = dev;
  data::DataLoader loader(ds, o);
  int64_t k = 0;
  HostMemoryStats early;
  uint64_t max_blocks = 0, max_reserved = 0;
  for (auto& b : loader) {
    REQUIRE(b.data.device() == dev);
    // What a training step reads back every step (loss.item()): the sum of
    // the batch's data and of its targets, checked against the formula.
    double want = 0;
    for (int64_t r = k * bs; r < (k + 1) * bs; ++r) want += double(width * (r % 1024));
    REQUIRE(sum(b.data).item() == want);
    REQUIRE(sum(b.target).item() == double(bs * (k * bs) + bs * (bs - 1) / 2));
    const HostMemoryStats s = host_memory_stats();
    if (k == 20) {
      early = s;
      reset_peak_host_memory_stats();
    }
    if (k >= 20) {
      max_blocks = std::max(max_blocks, s.blocks);
      max_reserved = std::max(max_reserved, s.reserved);
    }
    ++k;
  }
  REQUIRE(k == batches);
  const HostMemoryStats end = host_memory_stats();
  std::printf("%s: pinned blocks after 20 batches %llu (%llu bytes), max after %llu (%llu bytes), peak %llu; "
              "%llu blocks from the backend for %llu handed out; %llu limit waits\n",
              dev.str().c_str(), (unsigned long long)early.blocks, (unsigned long long)early.reserved,
              (unsigned long long)max_blocks, (unsigned long long)max_reserved, (unsigned long long)end.peak_blocks,
              (unsigned long long)(end.backend_allocations - start.backend_allocations),
              (unsigned long long)(end.allocations - start.allocations),
              (unsigned long long)(end.limit_waits - start.limit_waits));
  if (!pinning) {
    CHECK(end.allocations == 0);
    return;
  }
  CHECK(end.allocations >= uint64_t(2 * batches));  // every batch's data and target were pinned
  // In flight at once: 2 workers x prefetch 2 + the staged and the current
  // batch + the 2 being built, data and target each, plus a few whose
  // events have not been seen complete yet. Without recycling, 20 000.
  CHECK(max_blocks <= 40);
  CHECK(max_reserved <= 40 * 4096);
  CHECK(end.peak_blocks <= 40);
  // Flat: after the first batches, (almost) nothing new from the backend.
  CHECK(end.backend_allocations - early.backend_allocations <= 8);
  CHECK(end.limit_waits == start.limit_waits);  // far below the default limit

  // No host reads at all (the host may run ahead of the device), under a
  // limit of 32 blocks: the limit holds, since at most ~16 blocks are ever
  // in live tensors and past it allocation waits for pending blocks.
  const uint64_t old_limit = pinned_memory_limit();
  set_pinned_memory_limit(32 * 4096);
  Tensor total = zeros({}, TensorOptions(dev).with(kInt64));
  int64_t n = 0;
  max_reserved = 0;
  for (auto& b : loader) {
    total = total + sum(b.target);
    max_reserved = std::max(max_reserved, host_memory_stats().reserved);
    if (++n == 2000) break;
  }
  set_pinned_memory_limit(old_limit);
  INFO("no reads, limit 32 blocks: max reserved " << max_reserved);
  CHECK(max_reserved <= 32 * 4096);
  const double m = double(n * bs);
  CHECK(total.item() == m * (m - 1) / 2);
}

// Run in a child process (the limit is read once per process) by the case below.
TEST_CASE("pinned memory: child reads VNN_PINNED_MEMORY_LIMIT", "[.env_limit]") {
  const char* env = std::getenv("VNN_PINNED_MEMORY_LIMIT");
  REQUIRE(env);
  if (std::string(env) == "256K") {
    CHECK(pinned_memory_limit() == 262144);
    CHECK(host_memory_stats().limit == 262144);
  } else {
    CHECK_THROWS_AS(pinned_memory_limit(), ValueError);
    CHECK_THROWS_WITH(pinned_memory_limit(), Catch::Contains("VNN_PINNED_MEMORY_LIMIT=\"") &&
                                                 Catch::Contains("is not a size"));
    if (pins_here()) CHECK_THROWS_AS(pinned_filled(10, 1.f), ValueError);  // at the first pin, typed
    CHECK(sum(zeros({3})).item() == 0);  // and the process keeps working
  }
}

namespace {
// Runs this program's hidden case [.env_limit] with VNN_PINNED_MEMORY_LIMIT=value.
int run_child(const char* value, std::string* out) {
  return vnn::test::run_case_in_child("[.env_limit]", {{"VNN_PINNED_MEMORY_LIMIT", value}}, out);
}
}  // namespace

TEST_CASE("pinned memory: the limit from VNN_PINNED_MEMORY_LIMIT; a bad value is a ValueError") {
  for (const char* value : {"256K", "lots", "12Q", "-5"}) {
    std::string out;
    INFO("VNN_PINNED_MEMORY_LIMIT=" << value);
    int rc = run_child(value, &out);
    INFO(out);
    CHECK(rc == 0);
  }
  // The default when unset: min(1 GiB, RAM / 10); and the stats add up.
  const HostMemoryStats s = host_memory_stats();
  CHECK(s.limit == pinned_memory_limit());
  CHECK(s.limit > 0);
  CHECK(s.limit <= (uint64_t(1) << 30));
  CHECK(s.reserved == s.in_use + s.pending + s.cached);
  CHECK(s.blocks == s.blocks_in_use + s.blocks_pending + s.blocks_cached);
  CHECK(s.peak_reserved >= s.reserved);
}

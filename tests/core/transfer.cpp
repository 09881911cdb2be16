// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Moving tensors between the device under test and the host, blocking and
// non-blocking, through pinned memory; same-device rule.
#include <catch2/catch.hpp>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;

TEST_CASE("round trips preserve values") {
  Device dev = device_under_test();
  std::vector<float> v(100003);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i) * 0.5f;
  Tensor host = from_vector(v, {int64_t(v.size())});
  Tensor d = host.to(dev);
  CHECK(d.device() == dev);
  CHECK(d.to(Device("cpu")).to_vector<float>() == v);
  CHECK(d.to(dev).raw_data() == d.raw_data());  // no copy when nothing changes
  Tensor empty_t = zeros({0, 3}, dev);
  CHECK(empty_t.to(Device("cpu")).numel() == 0);
}

TEST_CASE("non-blocking copies from pinned memory land after synchronize") {
  Device dev = device_under_test();
  Tensor src = arange(0.0, 4096, 1).pin_memory();
  if (!dev.is_cpu() && !device_info(dev).host_accessible) CHECK(src.is_pinned());
  Tensor d = src.to(dev, /*non_blocking=*/true);
  synchronize(dev);
  auto back = d.to(Device("cpu")).to_vector<float>();
  for (int i = 0; i < 4096; i += 511) REQUIRE(back[size_t(i)] == float(i));
  Tensor host_dst = empty({4096}).pin_memory();
  host_dst.copy_(d, /*non_blocking=*/true);
  synchronize(dev);
  CHECK(host_dst.to_vector<float>()[4095] == 4095.f);
}

TEST_CASE("pinned host blocks are cached and reused, never while a copy still reads them") {
  Device dev = device_under_test();
  const HostMemoryStats before = host_memory_stats();
  std::vector<float> v(50000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i);
  Tensor first = from_vector(v, {int64_t(v.size())}).pin_memory();
  const HostMemoryStats pinned = host_memory_stats();
  if (pinned.allocations == before.allocations) {
    WARN("no device here has memory of its own: pin_memory keeps ordinary host memory, nothing to cache");
    CHECK(first.to_vector<float>() == v);
    return;
  }
  CHECK(pinned.in_use >= before.in_use + v.size() * sizeof(float));
  // a block under a queued non-blocking copy is pending (not reusable)
  // until that copy's event completes (on cpu, to(cpu) would alias the
  // pinned tensor: copy it)
  Tensor d = dev.is_cpu() ? first.clone() : first.to(dev, /*non_blocking=*/true);
  first = Tensor();
  const HostMemoryStats dropped = host_memory_stats();
  CHECK(dropped.in_use == before.in_use);
  if (!device_info(dev).host_accessible) CHECK(dropped.pending == pinned.pending + (pinned.in_use - before.in_use));
  synchronize();
  const HostMemoryStats released = host_memory_stats();
  CHECK(released.in_use == before.in_use);
  CHECK(released.cached + released.pending >= before.cached + before.pending + v.size() * sizeof(float));
  // the same size class comes back from the cache, not the backend
  std::vector<float> w(45000, 2.f);
  Tensor second = from_vector(w, {int64_t(w.size())}).pin_memory();
  const HostMemoryStats reused = host_memory_stats();
  CHECK(reused.backend_allocations == released.backend_allocations);
  CHECK(reused.allocations == released.allocations + 1);
  CHECK(second.to(dev).to_vector<float>() == w);
  CHECK(d.to_vector<float>() == v);
  second = Tensor();
  empty_cache(dev);
  for (const DeviceInfo& info : devices()) empty_cache(info.device);
  CHECK(host_memory_stats().cached == 0);
}

TEST_CASE("copies between devices of different backends go through the host") {
  Device dev = device_under_test();
  for (const auto& other : devices()) {
    if (other.device == dev) continue;
    INFO(dev << " -> " << other.device);
    Tensor a = arange(0, 10, 1, dev).to(kInt64);
    Tensor b = a.to(other.device);
    CHECK(b.device() == other.device);
    CHECK(b.to_vector<int64_t>()[9] == 9);
    Tensor c = b.to(dev, kFloat32);
    CHECK(c.to_vector<float>()[3] == 3.f);
  }
}

TEST_CASE("data<T>() refuses device memory the host cannot read") {
  Device dev = device_under_test();
  Tensor t = ones({3}, dev);
  if (device_info(dev).host_accessible) {
    CHECK(t.data<float>()[2] == 1.f);
    CHECK_THROWS_AS(t.data<double>(), DTypeError);
  } else {
    CHECK_THROWS_AS(t.data<float>(), ValueError);
  }
}

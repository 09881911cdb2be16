// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Streams and events on the device under test: current-stream bookkeeping,
// ops and copies on non-default streams, event timing and cross-stream
// ordering, the allocator's per-stream reuse, errors, and that non_blocking
// copies really overlap (checked with events).
#include <catch2/catch.hpp>
#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "support/child_process.hpp"
#include "support/device_under_test.hpp"
#include "vnn/vnn.h"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Some other usable device than d (cpu <-> opencl here), if there is one.
bool other_device(const Device& d, Device* out) {
  for (const auto& info : devices())
    if (info.device != d) {
      *out = info.device;
      return true;
    }
  return false;
}

Tensor pinned_pattern(int64_t n) {
  TensorOptions opt(Device("cpu", 0));
  opt = opt.pinned_memory(true);
  Tensor host = empty({n}, opt);
  float* p = host.data<float>();
  for (int64_t i = 0; i < n; ++i) p[i] = float(i % 4093) * 0.25f;
  return host;
}

// Every 4099th element of a copy of pinned_pattern, read back and compared
// with the formula (the whole tensor is too large to compare cheaply twice).
void check_pattern(const Tensor& t) {
  auto v = t.to_vector<float>();
  REQUIRE(int64_t(v.size()) == t.numel());
  for (size_t i = 0; i < v.size(); i += 4099) REQUIRE(v[i] == float(int64_t(i) % 4093) * 0.25f);
  REQUIRE(v.back() == float((int64_t(v.size()) - 1) % 4093) * 0.25f);
}

// Runs this test program again as a fresh process (discovery runs once
// per process, and this one's already ran) with the test plugins of
// VNN_STREAMS_FAKE_DIR on the search path, running only the hidden test
// case `tag`. Returns its exit status and sets *out to its output.
int rerun_with_fakes(const char* tag, std::string* out) {
  return vnn::test::run_case_in_child(tag, {{"VNN_BACKEND_PATH", VNN_STREAMS_FAKE_DIR}, {"VNN_TEST_BACKEND", "cpu"}},
                                      out);
}

}  // namespace

TEST_CASE("streams: create, guard, nesting and restore") {
  Device dev = device_under_test();
  Stream def = Stream::default_stream(dev);
  CHECK(def.is_default());
  CHECK(def.device() == dev);
  CHECK(current_stream(dev) == def);
  Stream s1(dev), s2(dev);
  CHECK(!s1.is_default());
  CHECK(s1 != s2);
  CHECK(s1 != def);
  CHECK(s1.device() == dev);
  {
    StreamGuard g1(s1);
    CHECK(current_stream(dev) == s1);
    {
      StreamGuard g2(s2);
      CHECK(current_stream(dev) == s2);
      {
        StreamGuard g3(def);  // the default stream can be made current explicitly
        CHECK(current_stream(dev) == def);
      }
      CHECK(current_stream(dev) == s2);
      // Another thread has its own current streams.
      bool other_thread_default = false;
      std::thread([&] { other_thread_default = current_stream(dev) == def; }).join();
      CHECK(other_thread_default);
    }
    CHECK(current_stream(dev) == s1);
  }
  CHECK(current_stream(dev) == def);

  // A guard only changes the current stream of its own device.
  Device other;
  if (other_device(dev, &other)) {
    Stream so(other);
    StreamGuard g(so);
    CHECK(current_stream(other) == so);
    CHECK(current_stream(dev) == def);
  } else {
    WARN("only " << dev << " is available: the per-device independence of guards is not checked");
  }
  // A copy of a Stream is the same stream.
  Stream copy = s1;
  CHECK(copy == s1);
  s1.synchronize();
  CHECK(s1.query());
}

TEST_CASE("streams: ops on a non-default stream match the default stream and float64 math") {
  Device dev = device_under_test();
  Stream s(dev);
  for (int64_t n : {300, 70000}) {  // below and above the inline grain (32768 elements)
    INFO("n = " << n << " on " << dev);
    auto v = vnn::test::spread_values(2 * n, -2.f, 2.f);
    Tensor host = from_vector(v, {n, 2});
    Tensor x = host.to(dev).transpose(0, 1);  // non-contiguous [2, n]
    REQUIRE(!x.is_contiguous());
    auto f = [](const Tensor& t) { return sum(exp(t * 0.5) + t, 1); };
    Tensor on_default = f(x);
    Tensor on_stream;
    {
      StreamGuard g(s);
      on_stream = f(x);
      CHECK(on_stream.device() == dev);
    }
    s.synchronize();  // cross-stream order is the caller's job
    CHECK(max_abs_diff(on_stream, on_default) <= 1e-6 * double(n));
    CHECK(max_abs_diff(on_stream, f(x.to("cpu"))) <= 1e-6 * double(n));
    auto got = on_stream.to_vector<double>();
    for (int r = 0; r < 2; ++r) {
      double want = 0;
      for (int64_t i = 0; i < n; ++i) {
        double a = double(v[size_t(i * 2 + r)]);
        want += std::exp(a * 0.5) + a;
      }
      CHECK(got[size_t(r)] == Approx(want).epsilon(1e-5));
    }
  }
}

// Ops whose backends keep scratch buffers between calls (the OpenCL
// plugin's per-queue pool: reduction partials of long rows, the packed
// operand of x @ W^T, split-K partials) run on two streams from two host
// threads at once, each result checked against the CPU: a buffer handed
// from one queue to the other while its kernels still ran would show here.
TEST_CASE("streams: ops with backend scratch on two streams at once match the CPU") {
  Device dev = device_under_test();
  const int64_t rows = 3, len = 400000, m = 48, k = 520, n = 264;
  auto make = [](int64_t count, float lo, float hi) { return vnn::test::spread_values(count, lo, hi); };
  std::vector<Tensor> xs, ws, xh, wh;
  for (int t = 0; t < 2; ++t) {
    xh.push_back(from_vector(make(rows * len, -1.f + t, 1.f + t), {rows, len}));
    wh.push_back(from_vector(make(n * k, -0.5f - t, 0.5f), {n, k}));
    xs.push_back(xh.back().to(dev));
    ws.push_back(wh.back().to(dev));
  }
  auto work = [&](int t, Tensor* sums, Tensor* prods) {
    Tensor a = xs[size_t(t)].narrow(1, 0, k).narrow(0, 0, 1).expand({m, k}).contiguous();
    *sums = sum(xs[size_t(t)], 1);
    *prods = matmul(a, ws[size_t(t)].t());  // b = W^T: k-contiguous
  };
  Stream s0(dev), s1(dev);
  std::vector<Tensor> sums(2 * 8), prods(2 * 8);
  auto run = [&](int t, Stream& s) {
    StreamGuard g(s);
    for (int i = 0; i < 8; ++i) work(t, &sums[size_t(t * 8 + i)], &prods[size_t(t * 8 + i)]);
    s.synchronize();
  };
  std::thread th([&] { run(1, s1); });
  run(0, s0);
  th.join();
  for (int t = 0; t < 2; ++t) {
    Tensor a = xh[size_t(t)].narrow(1, 0, k).narrow(0, 0, 1).expand({m, k}).contiguous();
    Tensor want_sum = sum(xh[size_t(t)], 1), want_prod = matmul(a, wh[size_t(t)].t());
    for (int i = 0; i < 8; ++i) {
      INFO("thread " << t << " iteration " << i << " on " << dev);
      CHECK(max_abs_diff(sums[size_t(t * 8 + i)], want_sum) <= 1e-5 * double(len));
      CHECK(max_abs_diff(prods[size_t(t * 8 + i)], want_prod) <= 1e-4 * double(k));
    }
  }
}

TEST_CASE("streams: copies on a stream land correctly in both directions") {
  Device dev = device_under_test();
  Stream s(dev);
  auto v = vnn::test::spread_values(50000, -1.f, 1.f);
  Tensor host = from_vector(v, {50000});
  StreamGuard g(s);
  Tensor d = host.to(dev, /*non_blocking=*/true);
  Tensor back = (d * 2.0).to("cpu");
  auto got = back.to_vector<float>();
  for (size_t i = 0; i < v.size(); i += 7) REQUIRE(got[i] == v[i] * 2.f);
  // from_vector writes through the current stream too.
  Tensor direct = from_vector(v, {50000}, dev) + 1.0;
  got = direct.to_vector<float>();
  for (size_t i = 0; i < v.size(); i += 7) REQUIRE(got[i] == v[i] + 1.f);
}

TEST_CASE("events: timing is non-negative and ordered") {
  Device dev = device_under_test();
  Stream s(dev);
  Event a, b, c;
  CHECK(!a.is_recorded());
  CHECK(a.query());  // never recorded: nothing pending
  Tensor x = ones({200000}, TensorOptions(dev));
  StreamGuard g(s);
  a.record(s);
  for (int i = 0; i < 5; ++i) x = x * 1.5 + 1.0;
  b.record(s);
  for (int i = 0; i < 5; ++i) x = x * 1.5 + 1.0;
  c.record(s);
  c.record();  // again, on the current stream of c's device: s, under the guard
  c.synchronize();
  CHECK(a.query());
  CHECK(b.query());
  CHECK(c.query());
  CHECK(a.device() == dev);
  double ab = a.elapsed_time(b), ac = a.elapsed_time(c), bc = b.elapsed_time(c);
  INFO("a->b " << ab << " ms, a->c " << ac << " ms, b->c " << bc << " ms on " << dev);
  CHECK(ab >= 0);
  CHECK(bc >= 0);
  CHECK(ac >= ab);
  CHECK(ac == Approx(ab + bc).margin(1e-2));
  Event d;
  d.record(dev);  // current stream of dev: s, under the guard
  CHECK(d.device() == dev);
  CHECK(c.elapsed_time(d) >= 0);
}

TEST_CASE("events: wait_event and wait_stream order work across two streams") {
  Device dev = device_under_test();
  Stream producer(dev), consumer(dev);
  for (int64_t n : {1000, 1 << 20}) {
    INFO("n = " << n << " on " << dev);
    Tensor y;
    Event ready;
    {
      StreamGuard g(producer);
      y = zeros({n}, TensorOptions(dev));
      for (int i = 0; i < 20; ++i) y = y + 1.0;  // long enough that an unordered read would see a partial value
      ready.record(producer);
    }
    Tensor z;
    {
      StreamGuard g(consumer);
      consumer.wait_event(ready);
      z = y * 3.0;
    }
    consumer.synchronize();
    auto got = z.to_vector<float>();
    for (size_t i = 0; i < got.size(); i += 997) REQUIRE(got[i] == 60.f);

    {
      StreamGuard g(producer);
      y.add_(1.0);  // 21
    }
    consumer.wait_stream(producer);
    {
      StreamGuard g(consumer);
      z = y * 2.0;
    }
    consumer.synchronize();
    got = z.to_vector<float>();
    for (size_t i = 0; i < got.size(); i += 997) REQUIRE(got[i] == 42.f);
  }
  // Waiting on a never-recorded event and on oneself are no-ops.
  Event never;
  consumer.wait_event(never);
  consumer.wait_stream(consumer);
  CHECK(consumer.query() == true);
}

TEST_CASE("caching allocator: a freed block is reused only on the stream it was allocated on") {
  Device dev = device_under_test();
  const Shape shape{3 * 1024 * 1024 + 17};  // a size class (14 MiB) no other case here uses
  empty_cache(dev);
  {
    Stream s(dev);
    {
      StreamGuard g(s);
      Tensor t = empty(shape, TensorOptions(dev));
      t.fill_(1.0);
    }  // t freed: its block is cached for s
    MemoryStats before = memory_stats(dev);
    {
      Tensor other = empty(shape, TensorOptions(dev));  // default stream: must not get s's block
      MemoryStats mid = memory_stats(dev);
      CHECK(mid.cache_hits == before.cache_hits);
      CHECK(mid.backend_allocations == before.backend_allocations + 1);
    }
    MemoryStats after_default = memory_stats(dev);
    {
      StreamGuard g(s);
      Tensor again = empty(shape, TensorOptions(dev));  // s gets its own block back
      MemoryStats mid = memory_stats(dev);
      CHECK(mid.cache_hits == after_default.cache_hits + 1);
      CHECK(mid.backend_allocations == after_default.backend_allocations);
    }
  }  // s destroyed: synchronised, its blocks go to the default stream
  MemoryStats before = memory_stats(dev);
  Tensor a = empty(shape, TensorOptions(dev));
  Tensor b = empty(shape, TensorOptions(dev));
  MemoryStats after = memory_stats(dev);
  CHECK(after.cache_hits == before.cache_hits + 2);  // both cached blocks now serve the default stream
  CHECK(after.backend_allocations == before.backend_allocations);
}

TEST_CASE("profiler records ops enqueued on a non-default stream") {
  Device dev = device_under_test();
  Stream s(dev);
  Tensor x = ones({1000}, TensorOptions(dev));
  profiler::Profile prof;
  {
    StreamGuard g(s);
    Tensor y = x * 2.0;
  }
  prof.stop();
  bool found = false;
  for (const auto& e : prof.events())
    if (e.name == "mul" && e.device == dev.str()) {
      found = true;
      CHECK(e.device_us >= 0);
    }
  CHECK(found);
}

TEST_CASE("stream and event errors are typed and name what went wrong") {
  Device dev = device_under_test();
  Event never, start;
  Stream s(dev);
  start.record(s);
  SECTION("elapsed_time of a never-recorded event") {
    CHECK_THROWS_AS(never.elapsed_time(start), ValueError);
    CHECK_THROWS_WITH(start.elapsed_time(never), Catch::Contains("elapsed_time") && Catch::Contains("end event was never recorded"));
    CHECK_THROWS_WITH(never.device(), Catch::Contains("never recorded"));
  }
  SECTION("elapsed_time without timing") {
    Event untimed(false);
    untimed.record(s);
    CHECK_THROWS_AS(start.elapsed_time(untimed), ValueError);
    CHECK_THROWS_WITH(start.elapsed_time(untimed), Catch::Contains("enable_timing=false"));
  }
  SECTION("a stream of an unknown device") {
    CHECK_THROWS_AS(Stream(Device("cuda", 77)), DeviceNotFound);
    CHECK_THROWS_AS(current_stream(Device("cuda", 77)), DeviceNotFound);
  }
  SECTION("events and streams of different devices") {
    Device other;
    if (!other_device(dev, &other)) {
      WARN("only " << dev << " is available: cross-device errors need a second device");
      CHECK(devices().size() == 1);
      return;
    }
    Stream so(other);
    Event eo;
    eo.record(so);
    CHECK_THROWS_AS(s.wait_event(eo), DeviceMismatch);
    CHECK_THROWS_WITH(s.wait_event(eo), Catch::Contains("wait_event") && Catch::Contains(other.str()) &&
                                            Catch::Contains(dev.str()));
    CHECK_THROWS_AS(s.wait_stream(so), DeviceMismatch);
    CHECK_THROWS_WITH(s.wait_stream(so), Catch::Contains(other.str()) && Catch::Contains(dev.str()));
    CHECK_THROWS_AS(start.elapsed_time(eo), DeviceMismatch);
    // An event may be recorded again on another device.
    eo.record(s);
    CHECK(eo.device() == dev);
    eo.synchronize();
    CHECK(start.elapsed_time(eo) >= 0);
  }
}

TEST_CASE("overlap: a non_blocking copy of pinned memory returns before it completes") {
  Device dev = device_under_test();
  const DeviceInfo& info = device_info(dev);
  const int64_t n = int64_t(64) << 18;  // 64 MiB of float32
  Tensor host = pinned_pattern(n);
  INFO("pinned host memory: " << host.is_pinned());
  Stream s(dev);
  Event start, end;
  StreamGuard g(s);
  Tensor d = empty({n}, TensorOptions(dev));  // copy_, not .to(): on cpu, .to(cpu) would not copy at all
  start.record(s);
  auto t0 = std::chrono::steady_clock::now();
  d.copy_(host, /*non_blocking=*/true);
  end.record(s);
  double enqueue_ms = ms_since(t0);
  bool done_at_return = end.query();
  end.synchronize();
  double complete_ms = ms_since(t0);
  double device_ms = start.elapsed_time(end);
  INFO(dev << ": enqueue " << enqueue_ms << " ms, complete after " << complete_ms << " ms, events say "
           << device_ms << " ms, complete when enqueue returned: " << done_at_return);
  CHECK(device_ms >= 0);
  CHECK(end.query());
  if (!info.host_accessible) {
    // The host got control back while the copy was still running.
    CHECK((!done_at_return || enqueue_ms * 4 < complete_ms));
  } else {
    WARN(dev << " memory is host memory: a copy to it is a synchronous memcpy, so there is nothing to "
              "overlap (checked: data and event order)");
  }
  check_pattern(d);
}

TEST_CASE("overlap: a copy on one stream runs while another stream computes") {
  Device dev = device_under_test();
  const DeviceInfo& info = device_info(dev);
  const bool gpu = info.type == DeviceType::gpu;
  const int64_t copy_n = gpu ? int64_t(256) << 18 : int64_t(16) << 18;  // 256 MiB on GPUs, 16 MiB here
  const int64_t work_n = gpu ? int64_t(1) << 24 : int64_t(1) << 20;
  const int steps = gpu ? 400 : 10;
  Tensor host = pinned_pattern(copy_n);
  Stream copier(dev), worker(dev);
  Tensor y = zeros({work_n}, TensorOptions(dev));
  Tensor d = empty({copy_n}, TensorOptions(dev));
  {
    // Warm the worker stream's cache (two blocks: result and operand), so
    // that no backend allocation, which may synchronise, runs while timed.
    StreamGuard g(worker);
    for (int i = 0; i < 2; ++i) y = y + 0.0;
  }
  synchronize(dev);
  Event t0, cs, ce, ks, ke;
  t0.record(worker);
  copier.wait_event(t0);  // both streams start after the common reference
  {
    StreamGuard g(copier);
    ks.record(copier);
    d.copy_(host, /*non_blocking=*/true);
    ke.record(copier);
  }
  {
    StreamGuard g(worker);
    cs.record(worker);
    for (int i = 0; i < steps; ++i) y = y + 1.0;
    ce.record(worker);
  }
  synchronize(dev);
  double k0 = t0.elapsed_time(ks), k1 = t0.elapsed_time(ke);
  double c0 = t0.elapsed_time(cs), c1 = t0.elapsed_time(ce);
  INFO(dev << ": copy [" << k0 << ", " << k1 << "] ms, compute [" << c0 << ", " << c1 << "] ms after the reference");
  CHECK(k0 >= 0);
  CHECK(c0 >= 0);
  CHECK(k1 >= k0);
  CHECK(c1 >= c0);
  if (gpu) {
    CHECK(std::max(k0, c0) < std::min(k1, c1));  // the intervals intersect
  } else {
    WARN(dev << " is a " << name(info.type) << " device: its queues share the host's cores (and cpu work "
              "completes before the host goes on), so copy/compute overlap is only asserted on GPUs; "
              "checked here: results and event order");
  }
  check_pattern(d);
  auto got = y.to_vector<float>();
  for (size_t i = 0; i < got.size(); i += 4099) REQUIRE(got[i] == float(steps));
}

TEST_CASE("a plugin without the stream entries (older struct_size) gets the core's fallbacks") {
  // The subject is the old-ABI test plugin, not the device under test: the
  // check runs in a fresh process that loads it (see rerun_with_fakes).
  std::string out;
  int rc = rerun_with_fakes("[.oldabi_child]", &out);
  INFO(out);
  CHECK(rc == 0);
  CHECK(out.find("All tests passed") != std::string::npos);
}

TEST_CASE("old-ABI fallbacks, inside the fresh process", "[.oldabi_child]") {
  Device od("oldabi", 0);
  REQUIRE(is_available(od));  // discovery ran: the plugin is loaded
  void* so = dlopen(VNN_STREAMS_FAKE_DIR "/libvnn-backend-oldabi.so", RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(so);
  auto syncs = reinterpret_cast<int (*)()>(dlsym(so, "vnn_oldabi_sync_count"));
  REQUIRE(syncs);
  Stream s1(od), s2(od);
  Event e;
  e.record(s1);
  int c0 = syncs();
  CHECK(e.query());  // no event_query: the core waits for the event, then answers "complete"
  CHECK(syncs() == c0 + 1);
  s2.wait_event(e);  // no queue_wait_event: the host waits for the event
  CHECK(syncs() == c0 + 2);
  Tensor t;
  {
    StreamGuard g(s2);
    t = full({4}, 3.0, od);
  }
  s2.synchronize();
  CHECK(s2.query());
  CHECK(t.to_vector<float>()[3] == 3.f);
  Event f;
  f.record(s2);
  CHECK(e.elapsed_time(f) >= 0);

  // A plugin without queues or events: typed errors naming the entry, and
  // its default stream still works.
  Device nq("noqueues", 0);
  REQUIRE(is_available(nq));
  CHECK_THROWS_AS(Stream(nq), Unsupported);
  CHECK_THROWS_WITH(Stream(nq), Catch::Contains("noqueues:0") && Catch::Contains("queue_create"));
  Event g;
  CHECK_THROWS_AS(g.record(Stream::default_stream(nq)), Unsupported);
  CHECK_THROWS_WITH(g.record(nq), Catch::Contains("event_record"));
  CHECK(!g.is_recorded());
  CHECK(full({2}, 5.0, nq).to_vector<float>()[1] == 5.f);
}

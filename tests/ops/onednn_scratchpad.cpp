// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A plugin's temporaries from the core's caching allocator (the ABI's
// set_core_allocator; docs/onednn-scratchpad.md): in the CPU plugin,
// oneDNN's scratchpad and blocked-layout temporaries of a conv2d. Checked
// through the public API (memory_stats sees the block during the op, it is
// back in the cache after it) and through the C ABI with tables of this
// test's own (every block is returned with its size; an allocator that
// answers NULL makes the op fail with VNN_STATUS_OUT_OF_MEMORY, the core's
// OutOfMemory; NULL hands the plugin back its own memory). On a backend
// without the entry, or with oneDNN off, the tests check that nothing is
// asked of the allocator. Plugins built before the entry (struct_size
// ending earlier) keep loading: test_streams runs one (streams_oldabi).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"
#include "support/plugin_table.hpp"
#include "vnn/profiler.h"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::onednn_on;

namespace {

// A conv2d that oneDNN runs in its blocked layout (>= 8 input channels):
// reorders into and out of nChw16c temporaries, so the scratch is not empty.
const Shape kX{8, 32, 14, 14}, kW{64, 32, 3, 3}, kY{8, 64, 14, 14};

// A vnn_core_allocator of this test: malloc'ed blocks, counted.
struct Counting {
  int allocs = 0, frees = 0;
  size_t live = 0, peak = 0;
  bool fail = false, bad_free = false;
  std::vector<std::pair<void*, size_t>> blocks;
};
void* counting_alloc(void* ctx, size_t bytes) {
  auto* c = static_cast<Counting*>(ctx);
  if (c->fail) return nullptr;
  void* p = std::aligned_alloc(64, (bytes + 63) & ~size_t(63));
  ++c->allocs;
  c->live += bytes;
  c->peak = std::max(c->peak, c->live);
  c->blocks.emplace_back(p, bytes);
  return p;
}
void counting_free(void* ctx, void* block, size_t bytes) {
  auto* c = static_cast<Counting*>(ctx);
  for (auto it = c->blocks.begin(); it != c->blocks.end(); ++it)
    if (it->first == block && it->second == bytes) {
      c->blocks.erase(it);
      ++c->frees;
      c->live -= bytes;
      std::free(block);
      return;
    }
  c->bad_free = true;  // a block it did not hand out, or another size (no exception across the C ABI)
}

}  // namespace

// First in the file: the later C-ABI test replaces the core's table.
TEST_CASE("memory_stats counts oneDNN's scratch during a conv2d and gets it back after") {
  Device dev = device_under_test();
  Tensor x = randn(kX).to(dev), w = randn(kW).to(dev);
  Tensor y0 = conv2d(x, w, {}, 1, 1);  // warm: primitive built, output-sized block cached
  y0 = Tensor();
  synchronize(dev);
  const MemoryStats before = memory_stats(dev);
  reset_peak_memory_stats(dev);
  profiler::Profile prof;
  Tensor y = conv2d(x, w, {}, 1, 1);
  synchronize(dev);
  prof.stop();
  const MemoryStats after = memory_stats(dev);
  bool whole = false;
  for (const auto& e : prof.events()) whole |= e.name == "conv2d[onednn]";
  const size_t out_bytes = after.allocated - before.allocated;  // y's block: the only tensor still alive
  CHECK(out_bytes >= size_t(kY.numel()) * 4);
  INFO("allocated before " << before.allocated << ", peak during " << after.peak_allocated << ", output block "
                           << out_bytes << (whole ? " (conv2d[onednn])" : " (not oneDNN)"));
  if (whole) {
    // The output and, at the same time, the scratch block.
    CHECK(after.peak_allocated > before.allocated + out_bytes);
    REQUIRE(onednn_on(dev));
  } else {
    CHECK_FALSE((dev.backend() == "cpu" && onednn_on(dev)));  // on the CPU with oneDNN on, this conv is oneDNN's
  }
  // After the op the scratch block is back in the cache: reserved, not allocated.
  CHECK(after.allocated == before.allocated + out_bytes);
  CHECK(after.reserved >= after.allocated);
}

TEST_CASE("set_core_allocator: blocks returned with their size, NULL is out of memory, NULL table is the plugin's own") {
  std::string plugin;
  const vnn_backend* b = vnn::test::plugin_table(&plugin);
  REQUIRE(b != nullptr);
  Device d = device_under_test();
  const int32_t dev = d.index();
  zeros({1}, d).item<float>();  // initialised
  const bool takes = VNN_BACKEND_HAS(b, set_core_allocator);
  if (plugin == "openmp") CHECK(takes);
  if (!takes) return;  // nothing more to check on a backend without the entry
  const bool expect_use = plugin == "openmp" && onednn_on(d);
  Tensor x = randn(kX).to(d), w = randn(kW).to(d);
  Tensor y = zeros(kY, d);
  vnn::test::Conv2dRequest req;
  auto fill = [](vnn_tensor_desc* r, const Tensor& t) {
    r->dtype = VNN_FLOAT32;
    r->ndim = int32_t(t.dim());
    r->data = t.raw_data();
    r->offset = t.storage_offset();
    for (int i = 0; i < r->ndim; ++i) r->sizes[i] = t.size(i), r->strides[i] = t.stride(i);
  };
  fill(&req.in[0], x), fill(&req.in[1], w), fill(&req.out, y);
  vnn_op& op = req.op;

  Counting c;
  vnn_core_allocator mine{sizeof(vnn_core_allocator), &c, &counting_alloc, &counting_free};
  b->set_core_allocator(dev, &mine);
  vnn_status s = b->run(dev, &op);
  CHECK((s == VNN_STATUS_OK || s == VNN_STATUS_UNSUPPORTED));
  CHECK(c.allocs == c.frees);  // every block back, with its size
  CHECK_FALSE(c.bad_free);
  CHECK(c.live == 0);
  if (expect_use) {
    CHECK(s == VNN_STATUS_OK);
    CHECK(c.allocs >= 1);
    CHECK(c.peak > 0);
  }
  const auto y_ok = y.to_vector<float>();

  c.fail = true;  // the core's allocator is out of memory
  s = b->run(dev, &op);
  if (expect_use) {
    INFO(b->last_error());
    CHECK(s == VNN_STATUS_OUT_OF_MEMORY);
    CHECK(std::string(b->last_error()).find("out of memory") != std::string::npos);
  }
  c.fail = false;

  b->set_core_allocator(dev, nullptr);  // the plugin's own memory again
  const int allocs = c.allocs;
  s = b->run(dev, &op);
  CHECK((s == VNN_STATUS_OK || s == VNN_STATUS_UNSUPPORTED));
  CHECK(c.allocs == allocs);
  if (s == VNN_STATUS_OK && expect_use) CHECK(y.to_vector<float>() == y_ok);
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <catch2/catch.hpp>

#include "vnn/vnn.h"

using namespace vnn;

TEST_CASE("the caching allocator reuses blocks and keeps statistics") {
  Device cpu("cpu");
  empty_cache(cpu);
  reset_peak_memory_stats(cpu);
  MemoryStats before = memory_stats(cpu);
  {
    Tensor a = empty({1024}, cpu);  // 4 KiB
    MemoryStats s = memory_stats(cpu);
    CHECK(s.allocated == before.allocated + 4096);
    CHECK(s.reserved >= s.allocated);
  }
  MemoryStats after_free = memory_stats(cpu);
  CHECK(after_free.allocated == before.allocated);
  CHECK(after_free.reserved == before.reserved + 4096);  // cached, not returned
  uint64_t hits = after_free.cache_hits;
  { Tensor b = empty({1000}, cpu); }  // rounds to the same 4 KiB block
  CHECK(memory_stats(cpu).cache_hits == hits + 1);
  CHECK(memory_stats(cpu).peak_allocated >= before.allocated + 4096);
  empty_cache(cpu);
  CHECK(memory_stats(cpu).reserved == before.reserved);
  CHECK(memory_summary(cpu).find("cache hits") != std::string::npos);
}

TEST_CASE("negative sizes are rejected") {
  CHECK_THROWS_AS(empty({2, -1}), ValueError);  // names dimension 1 and the size -1
}

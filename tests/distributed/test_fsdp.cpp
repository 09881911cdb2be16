// FullyShardedDataParallel on loopback ranks (fsdp_worker.cpp holds the
// checks): training under a memory budget DDP cannot meet, on 2 and 4 ranks.
#include <catch2/catch.hpp>

#include "distributed/launch.hpp"

using namespace vnn::test::dist;

namespace {

void expect_all_ok(const LaunchResult& r) {
  INFO(r.summary());
  REQUIRE_FALSE(r.timed_out);
  for (auto& k : r.ranks) REQUIRE(k.exit_code == 0);
}

}  // namespace

TEST_CASE("fsdp: a GPT over one rank's budget: DDP runs out, FSDP on 2 and 4 ranks == one process",
          "[distributed][fsdp]") {
  SECTION("DDP, 2 ranks") { expect_all_ok(launch(2, "ddp_oom")); }
  for (int n : {2, 4}) {
    DYNAMIC_SECTION("FSDP, " << n << " ranks") {
      LaunchResult r = launch(n, "fsdp_train", "", {}, 300);
      for (auto& k : r.ranks) WARN(k.output);
      expect_all_ok(r);
    }
  }
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The distributed correctness matrix (worker_matrix.cpp) on 2 ranks, one
// launch per device layout: DDP, DDP with no_sync, FSDP, GPipe and 1F1B,
// each with SGD momentum, SGD nesterov, Adam and AdamW under a StepLR, in
// float64, float32 and bf16 autocast, against one process on whole batches.
// Under VNN_TEST_BACKEND=cpu the layout is cpu+cpu; under another backend B
// the layouts are cpu+B, B+cpu and B+B.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "distributed/launch.hpp"

using namespace vnn::test::dist;

namespace {

std::string backend_under_test() {
  const char* b = std::getenv("VNN_TEST_BACKEND");
  return b && *b ? b : "cpu";
}

void run_layout(const std::string& rank0, const std::string& rank1) {
  LaunchResult r = launch(2, "matrix", "all",
                          {{0, {{"VNN_TEST_BACKEND", rank0}}}, {1, {{"VNN_TEST_BACKEND", rank1}}}}, 300);
  INFO(r.summary());
  REQUIRE_FALSE(r.timed_out);
  for (auto& k : r.ranks) {
    if (k.exit_code == 77) {  // the worker found no such device
      WARN(rank0 + "+" + rank1 + ": a device is missing: " + k.output);
      return;
    }
    REQUIRE(k.exit_code == 0);
  }
  // Every rank printed its 60 comparisons (5 parallelisms x 4 optimizers x 3 settings).
  for (auto& k : r.ranks) {
    size_t ok = 0;
    for (size_t at = k.output.find(" ok ("); at != std::string::npos; at = k.output.find(" ok (", at + 1)) ++ok;
    CHECK(ok == 60);
  }
}

}  // namespace

TEST_CASE("every layout of 2 ranks trains as one process (DDP, no_sync, FSDP, GPipe, 1F1B)", "[distributed][matrix]") {
  const std::string b = backend_under_test();
  if (b == "cpu") {
    run_layout("cpu", "cpu");
    return;
  }
  SECTION("cpu + " + b) { run_layout("cpu", b); }
  SECTION(b + " + cpu") { run_layout(b, "cpu"); }
  SECTION(b + " + " + b) { run_layout(b, b); }
}

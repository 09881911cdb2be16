// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// FullyShardedDataParallel on loopback ranks (fsdp_worker.cpp holds the
// checks): training under a memory budget DDP cannot meet, on 2 and 4 ranks.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "distributed/launch.hpp"

using namespace vnn::test::dist;

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

TEST_CASE("fsdp: activation checkpointing, clip_grad_norm_, no_sync, bf16 gathers", "[distributed][fsdp]") {
  expect_all_ok(launch(2, "fsdp_features", "", {}, 300));
}

TEST_CASE("fsdp: a sharded checkpoint written by 2 ranks resumes on 1 and on 4", "[distributed][fsdp]") {
  const std::string dir = "/tmp/vnn-fsdp-ckpt-" + std::to_string(::getpid());
  expect_all_ok(launch(2, "fsdp_ckpt_save", dir, {}, 300));
  for (int n : {1, 4}) {
    DYNAMIC_SECTION(n << " ranks") { expect_all_ok(launch(n, "fsdp_ckpt_load", dir, {}, 300)); }
  }
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("mpi: FSDP on 2 ranks under mpirun == one process", "[distributed][mpi][fsdp]") {
  if (!mpirun_available()) {
    WARN("mpirun not found: FSDP over the MPI engine is not tested here");
    return;
  }
  expect_all_ok(launch_mpirun(2, "fsdp_train", "", 300));
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn::distributed on loopback: 2 and 4 ranks as separate processes, on the
// device under test, for the Gloo engine and (under mpirun) the MPI engine.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "distributed/launch.hpp"

using namespace vnn::test::dist;

TEST_CASE("gloo: every collective against its reference, 2 and 4 ranks", "[distributed][gloo]") {
  for (int n : {2, 4}) {
    DYNAMIC_SECTION(n << " ranks") { expect_all_ok(launch(n, "collectives")); }
  }
}

TEST_CASE("gloo: async Work handles, bad arguments, init / destroy twice", "[distributed][gloo]") {
  for (int n : {2, 4}) {
    DYNAMIC_SECTION(n << " ranks") {
      expect_all_ok(launch(n, "async"));
      expect_all_ok(launch(n, "bad_arguments"));
      expect_all_ok(launch(n, "lifecycle"));
    }
  }
}

TEST_CASE("gloo: DDP on shards == one process on the batch (20 steps, no_sync)", "[distributed][gloo][ddp]") {
  for (int n : {2, 4}) {
    // Generous: OpenCL compiles each float64 kernel on first use.
    DYNAMIC_SECTION(n << " ranks") { expect_all_ok(launch(n, "ddp_train", "", {}, 600)); }
  }
}

TEST_CASE("gloo: DDP bucket 0's allreduce starts before backward ends", "[distributed][gloo][ddp]") {
  expect_all_ok(launch(2, "ddp_overlap"));
}

TEST_CASE("gloo: DDP unused parameters and models that differ", "[distributed][gloo][ddp]") {
  expect_all_ok(launch(2, "ddp_unused"));
  expect_all_ok(launch(2, "ddp_mismatch"));
}

TEST_CASE("gloo: DDP sees a tied weight once and trains as one process", "[distributed][gloo][ddp]") {
  expect_all_ok(launch(2, "ddp_tied"));
}

TEST_CASE("gloo: a rank SIGKILLed mid-step makes the others throw DistributedError", "[distributed][gloo][fault]") {
  for (int n : {2, 4}) {
    DYNAMIC_SECTION(n << " ranks") {
      LaunchResult r = launch(n, "kill_rank", "", {}, 60);
      INFO(r.summary());
      REQUIRE_FALSE(r.timed_out);
      CHECK(r.ranks.back().signal == SIGKILL);
      for (int k = 0; k + 1 < n; ++k) CHECK(r.ranks[size_t(k)].exit_code == 0);
      CHECK(r.seconds < 30);
    }
  }
}

TEST_CASE("gloo: mismatched tensor sizes across ranks fail on every rank", "[distributed][gloo][fault]") {
  SECTION("checked before each collective (VNN_DIST_CHECK_SIZES=1): at once, the group stays usable") {
    std::map<std::string, std::string> strict{{"VNN_DIST_CHECK_SIZES", "1"}};
    expect_all_ok(launch(2, "size_mismatch", "", {{0, strict}, {1, strict}}, 60));
  }
  SECTION("the default: found when the collective stalls, the group aborted") {
    expect_all_ok(launch(2, "size_mismatch_on_stall", "", {}, 60));
  }
}

TEST_CASE("init_process_group: clear errors for a bad environment", "[distributed][gloo][fault]") {
  SECTION("missing MASTER_ADDR") {
    expect_all_ok(launch(1, "init_error", "MASTER_ADDR is not set", {{0, {{"MASTER_ADDR", "\x01unset"}}}}));
  }
  SECTION("missing RANK") {
    expect_all_ok(launch(1, "init_error", "RANK / OMPI_COMM_WORLD_RANK is not set", {{0, {{"RANK", "\x01unset"}}}}));
  }
  SECTION("RANK outside the world") {
    expect_all_ok(launch(1, "init_error", "outside 0..WORLD_SIZE-1", {{0, {{"RANK", "3"}}}}));
  }
  SECTION("MASTER_PORT already in use") {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = 0;
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 4) == 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    int port = ntohs(a.sin_port);
    expect_all_ok(launch(1, "init_error", "is already in use", {}, 60, port));
    ::close(fd);
  }
  SECTION("ranks with different WORLD_SIZE") {
    expect_all_ok(launch(2, "init_error", "disagree on the world size", {{1, {{"WORLD_SIZE", "3"}}}}, 60));
  }
  SECTION("a rank that never arrives") {
    expect_all_ok(launch(1, "init_error", "did not join", {{0, {{"WORLD_SIZE", "2"}, {"VNN_DIST_TIMEOUT", "2"}}}}, 60));
  }
}

TEST_CASE("mpi: collectives, async, DDP and a killed rank under mpirun", "[distributed][mpi]") {
  if (!mpirun_available()) {
    WARN("mpirun not found: the MPI engine is not tested here");
    return;
  }
  for (int n : {2, 4}) {
    DYNAMIC_SECTION(n << " ranks") {
      for (const char* s : {"collectives", "async", "bad_arguments", "ddp_train"}) {
        LaunchResult r = launch_mpirun(n, s, "", 600);
        INFO(s << "\n" << r.summary());
        REQUIRE_FALSE(r.timed_out);
        REQUIRE(r.ranks[0].exit_code == 0);
      }
      // mpirun ends the job when a rank dies: it must exit non-zero, promptly.
      LaunchResult r = launch_mpirun(n, "kill_rank", "", 60);
      INFO(r.summary());
      REQUIRE_FALSE(r.timed_out);
      CHECK(r.ranks[0].exit_code != 0);
    }
  }
}

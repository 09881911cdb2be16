// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Starts the ranks of a distributed test as child processes on loopback
// (torchrun's variables, or mpirun) and collects how each ended.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace vnn::test::dist {

struct RankResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string output;  // stdout + stderr
};

struct LaunchResult {
  std::vector<RankResult> ranks;
  double seconds = 0;
  bool timed_out = false;
  std::string summary() const;  // every rank's code and output, for failure messages
};

// Env overrides per rank: a value of "\x01unset" removes the variable.
using EnvFn = std::map<std::string, std::string> (*)(int rank, int world);

// n ranks of WORKER SCENARIO ARG with RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT=<a free port>;
// extra(rank) may change or unset them. Every rank is killed after limit_s.
LaunchResult launch(int n, const std::string& scenario, const std::string& arg = "",
                    const std::map<int, std::map<std::string, std::string>>& extra = {}, double limit_s = 120,
                    int master_port = 0);
// mpirun -np n (as root: --allow-run-as-root; --oversubscribe for 2 cores).
LaunchResult launch_mpirun(int n, const std::string& scenario, const std::string& arg = "", double limit_s = 120);
bool mpirun_available();
// Catch2 checks: the launch did not time out and every rank (mpirun's one
// process) exited 0; on failure the message holds every rank's output.
void expect_all_ok(const LaunchResult& r);
int free_port();
std::string worker_path();

}  // namespace vnn::test::dist

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn-run: the environment contract, output prefixing, failure propagation
// (the others are ended, nothing is left behind) and signal forwarding.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Result {
  int status = -1;
  std::string out, err;
  double seconds = 0;
  int exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
};

// Runs vnn-run with args; `during(pid)` runs while it is running. The whole
// run is killed after 30 s so a broken launcher fails the test, not the CI.
template <class F>
Result run_launcher(const std::vector<std::string>& args, F during) {
  int out[2], err[2];
  REQUIRE(pipe(out) == 0);
  REQUIRE(pipe(err) == 0);
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    for (int fd : {out[0], out[1], err[0], err[1]}) close(fd);
    std::vector<char*> argv{const_cast<char*>(VNN_RUN)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(VNN_RUN, argv.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  fcntl(err[0], F_SETFL, O_NONBLOCK);
  std::thread helper([&] { during(pid); });
  Result r;
  int open_fds = 2;
  bool hung = false;
  while (open_fds > 0) {
    pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    int n = poll(fds, 2, 30000);
    if (n == 0) {
      kill(pid, SIGKILL);
      hung = true;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (!fds[i].revents || fds[i].fd < 0) continue;
      char buf[4096];
      ssize_t k = read(i == 0 ? out[0] : err[0], buf, sizeof(buf));
      if (k > 0)
        (i == 0 ? r.out : r.err).append(buf, size_t(k));
      else if (k == 0) {
        --open_fds;
        if (i == 0) out[0] = -1; else err[0] = -1;  // poll ignores negative fds
      }
    }
  }
  for (int fd : {out[0], err[0]})
    if (fd >= 0) close(fd);
  waitpid(pid, &r.status, 0);
  helper.join();
  if (hung) FAIL("vnn-run did not finish within 30 s; its output so far:\n" << r.out << r.err);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

Result run_launcher(const std::vector<std::string>& args) {
  return run_launcher(args, [](pid_t) {});
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::string temp_dir() {
  char tmpl[] = "/tmp/vnn-run-test-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}

// Pids recorded by the ranks (files DIR/NAME.RANK), waiting up to 10 s for
// `count` of them.
std::vector<pid_t> recorded(const std::string& dir, const std::string& name, int ranks, int count) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    std::vector<pid_t> pids;
    for (int r = 0; r < ranks; ++r) {
      std::ifstream f(dir + "/" + name + "." + std::to_string(r));
      long p = 0;
      if (f >> p) pids.push_back(pid_t(p));
    }
    if (int(pids.size()) >= count || std::chrono::steady_clock::now() > deadline) return pids;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool alive(pid_t pid) {
  // Killed processes are reaped by vnn-run (or by init once it is gone);
  // a zombie left for init counts as gone.
  if (kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string s;
  std::getline(stat, s);
  auto close_paren = s.rfind(')');
  return close_paren == std::string::npos || s.size() < close_paren + 3 || s[close_paren + 2] != 'Z';
}

bool all_gone(const std::vector<pid_t>& pids) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    bool any = false;
    for (pid_t p : pids) any = any || alive(p);
    if (!any) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

TEST_CASE("vnn-run: every rank sees torchrun's environment contract", "[launcher]") {
  unsetenv("OMP_NUM_THREADS");
  Result r = run_launcher({"--nproc-per-node", "3", RANK_PROBE, "env", "x y"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code() == 0);
  auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 3);
  std::regex re(R"(\[rank(\d)\]: RANK=(\d) WORLD_SIZE=3 LOCAL_RANK=(\d) LOCAL_WORLD_SIZE=3 GROUP_RANK=0 )"
                R"(MASTER_ADDR=127\.0\.0\.1 MASTER_PORT=(\d+) OMP_NUM_THREADS=1 ARGS=x y)");
  std::set<std::string> ranks, ports;
  for (const auto& l : lines) {
    std::smatch m;
    REQUIRE(std::regex_match(l, m, re));
    CHECK(m[1] == m[2]);
    CHECK(m[2] == m[3]);
    ranks.insert(m[2]);
    ports.insert(m[4]);
    int port = std::stoi(m[4]);
    CHECK(port > 0);
    CHECK(port < 65536);
  }
  CHECK(ranks == std::set<std::string>{"0", "1", "2"});
  CHECK(ports.size() == 1);  // one port for every rank
}

TEST_CASE("vnn-run: several nodes: global ranks from the node rank, the given master", "[launcher]") {
  {
    setenv("OMP_NUM_THREADS", "4", 1);
    Result n = run_launcher({"--nproc-per-node=2", "--nnodes", "3", "--node_rank", "2", "--master-addr", "10.1.2.3",
                             "--master-port", "29511", RANK_PROBE, "env"});
    unsetenv("OMP_NUM_THREADS");
    INFO(n.out << n.err);
    REQUIRE(n.exit_code() == 0);
    auto nl = lines_of(n.out);
    CHECK(contains(nl, "[rank4]: RANK=4 WORLD_SIZE=6 LOCAL_RANK=0 LOCAL_WORLD_SIZE=2 GROUP_RANK=2 "
                       "MASTER_ADDR=10.1.2.3 MASTER_PORT=29511 OMP_NUM_THREADS=4 ARGS="));
    CHECK(contains(nl, "[rank5]: RANK=5 WORLD_SIZE=6 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 GROUP_RANK=2 "
                       "MASTER_ADDR=10.1.2.3 MASTER_PORT=29511 OMP_NUM_THREADS=4 ARGS="));
  }
}

TEST_CASE("vnn-run: bad arguments are refused with the reason", "[launcher]") {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {{RANK_PROBE, "env"}, "--nproc-per-node N is required"},
           {{"--nproc-per-node", "0", RANK_PROBE}, "--nproc-per-node wants an integer in [1,"},
           {{"--nproc-per-node", "2"}, "no PROGRAM given"},
           {{"--nproc-per-node", "2", "--nnodes", "2", "--node-rank", "2", RANK_PROBE}, "must be below --nnodes 2"},
           {{"--nproc-per-node", "2", "--nnodes", "2", RANK_PROBE}, "needs --master-addr"},
           {{"--nproc-per-node", "2", "--master-port", "70000", RANK_PROBE}, "--master-port wants an integer"},
           {{"--nproc-per-node", "2", "--frobnicate", "1", RANK_PROBE}, "unknown option --frobnicate"}}) {
    Result r = run_launcher(c.args);
    INFO(r.err);
    CHECK(r.exit_code() == 2);
    CHECK(r.err.find(c.says) != std::string::npos);
  }
}

TEST_CASE("vnn-run: a program that cannot be started is a failed rank", "[launcher]") {
  {
    Result r = run_launcher({"--nproc-per-node", "2", "--grace-period", "1", "/nonexistent/program"});
    INFO(r.err);
    CHECK(r.exit_code() == 127);
    CHECK(r.err.find("cannot start '/nonexistent/program': No such file or directory") != std::string::npos);
    CHECK(r.err.find("vnn-run: failed: rank") != std::string::npos);
  }
}

TEST_CASE("vnn-run: each line is prefixed with its rank, pieces joined", "[launcher]") {
  Result r = run_launcher({"--nproc-per-node", "2", RANK_PROBE, "lines"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code() == 0);
  auto out = lines_of(r.out), err = lines_of(r.err);
  for (int k : {0, 1}) {
    std::string p = "[rank" + std::to_string(k) + "]: ";
    CHECK(contains(out, p + "piece-by-piece " + std::to_string(k)));
    CHECK(contains(out, p + "two " + std::to_string(k)));
    CHECK(contains(out, p + "three " + std::to_string(k)));
    CHECK(contains(out, p + "no newline " + std::to_string(k)));
    CHECK(contains(err, p + "to stderr " + std::to_string(k)));
    CHECK(contains(out, p + "windows line " + std::to_string(k)));  // "\r\n" ends a line
  }
  CHECK(out.size() == 10);  // nothing else, nothing split
  // Order within a rank is kept.
  auto pos = [&](const std::string& l) { return std::find(out.begin(), out.end(), l) - out.begin(); };
  CHECK(pos("[rank1]: two 1") < pos("[rank1]: three 1"));
}

TEST_CASE("vnn-run: a progress bar's \\r redraws are prefixed too", "[launcher]") {
  Result r = run_launcher({"--nproc-per-node", "1", RANK_PROBE, "bar"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code() == 0);
  CHECK(r.out == "[rank0]: bar 1\r[rank0]: bar 2\r[rank0]: bar 3\n");
}

TEST_CASE("vnn-run: a failing rank ends the others; its code and message come back", "[launcher]") {
  std::string dir = temp_dir();
  // Rank 2 exits 3; rank 0 ignores SIGTERM (SIGKILL after the 1 s grace
  // period); every rank but 2 started a child of its own.
  Result r = run_launcher({"--nproc-per-node", "4", "--grace-period", "1", RANK_PROBE, "fail", "2", "3", dir});
  INFO(r.out << r.err);
  CHECK(r.exit_code() == 3);
  CHECK(r.err.find("[rank2]: error: rank 2 failed on purpose") != std::string::npos);
  CHECK(r.err.find("vnn-run: rank 2 (local rank 2, pid ") != std::string::npos);
  CHECK(
      r.err.find("vnn-run: failed: rank 2 exited with code 3; its last error line: error: rank 2 failed on purpose") !=
      std::string::npos);
  CHECK(r.seconds < 10);
  auto pids = recorded(dir, "pid", 4, 3), children = recorded(dir, "child", 4, 3);
  CHECK(pids.size() == 3);
  CHECK(children.size() == 3);
  CHECK(all_gone(pids));
  CHECK(all_gone(children));
}

TEST_CASE("vnn-run: a rank killed by SIGKILL ends the others too", "[launcher]") {
  std::string dir = temp_dir();
  Result r = run_launcher({"--nproc-per-node", "3", "--grace-period", "1", RANK_PROBE, "fail", "1", "-9", dir});
  INFO(r.out << r.err);
  CHECK(r.exit_code() == 128 + SIGKILL);
  CHECK(r.err.find("vnn-run: failed: rank 1 was killed by signal 9") != std::string::npos);
  CHECK(r.err.find("its last error line: error: rank 1 failed on purpose") != std::string::npos);
  auto pids = recorded(dir, "pid", 3, 2), children = recorded(dir, "child", 3, 2);
  CHECK(pids.size() == 2);
  CHECK(all_gone(pids));
  CHECK(all_gone(children));
}

TEST_CASE("vnn-run: SIGTERM and SIGINT reach every rank", "[launcher]") {
  for (int sig : {SIGTERM, SIGINT}) {
    std::string dir = temp_dir();
    std::vector<pid_t> pids;
    Result r = run_launcher({"--nproc-per-node", "2", RANK_PROBE, "wait", dir}, [&](pid_t launcher) {
      pids = recorded(dir, "pid", 2, 2);
      kill(launcher, sig);
    });
    INFO(r.out << r.err);
    REQUIRE(pids.size() == 2);
    auto out = lines_of(r.out);
    CHECK(contains(out, "[rank0]: rank 0 got signal " + std::to_string(sig)));
    CHECK(contains(out, "[rank1]: rank 1 got signal " + std::to_string(sig)));
    CHECK(r.exit_code() == 128 + sig);
    CHECK(all_gone(pids));
  }
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "distributed/launch.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "tools/free_port.hpp"

extern char** environ;

namespace vnn::test::dist {

std::string worker_path() { return VNN_DIST_WORKER; }

void expect_all_ok(const LaunchResult& r) {
  INFO(r.summary());
  REQUIRE_FALSE(r.timed_out);
  for (auto& k : r.ranks) REQUIRE(k.exit_code == 0);
}

bool mpirun_available() { return std::string(VNN_MPIEXEC).size() > 0 && ::access(VNN_MPIEXEC, X_OK) == 0; }

int free_port() {
  const int port = vnn::tools::free_port();
  REQUIRE(port > 0);
  return port;
}

std::string LaunchResult::summary() const {
  std::ostringstream os;
  os << "after " << seconds << " s" << (timed_out ? " (timed out)" : "") << "\n";
  for (size_t r = 0; r < ranks.size(); ++r)
    os << "--- rank " << r << ": exit " << ranks[r].exit_code << " signal " << ranks[r].signal << "\n"
       << ranks[r].output << "\n";
  return os.str();
}

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Starts argv with env; output to a file.
pid_t spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
            const std::string& out_path) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::setpgid(0, 0);  // so that a stuck rank and its children can be killed together
  int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(fd, 1);
  ::dup2(fd, 2);
  std::map<std::string, std::string> all;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) all[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (auto& [k, v] : env) {
    if (v == "\x01unset") all.erase(k);
    else all[k] = v;
  }
  std::vector<std::string> envs;
  for (auto& [k, v] : all) envs.push_back(k + "=" + v);
  std::vector<char*> a, e;
  for (auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  for (auto& s : envs) e.push_back(const_cast<char*>(s.c_str()));
  e.push_back(nullptr);
  ::execve(a[0], a.data(), e.data());
  std::perror("execve");
  ::_exit(127);
}

LaunchResult wait_all(const std::vector<pid_t>& pids, const std::vector<std::string>& outs,
                      std::chrono::steady_clock::time_point start, double limit_s) {
  LaunchResult res;
  res.ranks.resize(pids.size());
  std::vector<bool> done(pids.size(), false);
  size_t left = pids.size();
  while (left > 0) {
    for (size_t i = 0; i < pids.size(); ++i) {
      if (done[i]) continue;
      int status = 0;
      if (::waitpid(pids[i], &status, WNOHANG) == pids[i]) {
        done[i] = true;
        --left;
        if (WIFEXITED(status)) res.ranks[i].exit_code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) res.ranks[i].signal = WTERMSIG(status);
      }
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (left > 0 && s > limit_s) {
      res.timed_out = true;
      for (size_t i = 0; i < pids.size(); ++i)
        if (!done[i]) ::kill(-pids[i], SIGKILL);
    }
    if (left > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (size_t i = 0; i < pids.size(); ++i) {
    res.ranks[i].output = slurp(outs[i]);
    ::unlink(outs[i].c_str());
  }
  return res;
}

std::string out_file(int r) {
  return "/tmp/vnn-dist-" + std::to_string(::getpid()) + "-" + std::to_string(r) + ".log";
}

LaunchResult launch_on(int port, int n, const std::string& scenario, const std::string& arg,
                       const std::map<int, std::map<std::string, std::string>>& extra, double limit_s) {
  auto start = std::chrono::steady_clock::now();
  std::vector<pid_t> pids;
  std::vector<std::string> outs;
  for (int r = 0; r < n; ++r) {
    std::map<std::string, std::string> env{{"RANK", std::to_string(r)},
                                           {"WORLD_SIZE", std::to_string(n)},
                                           {"LOCAL_RANK", std::to_string(r)},
                                           {"LOCAL_WORLD_SIZE", std::to_string(n)},
                                           {"MASTER_ADDR", "127.0.0.1"},
                                           {"MASTER_PORT", std::to_string(port)},
                                           {"OMP_NUM_THREADS", "1"},
                                           {"VNN_DIST_TIMEOUT", "30"}};
    if (auto it = extra.find(r); it != extra.end())
      for (auto& [k, v] : it->second) env[k] = v;
    outs.push_back(out_file(r));
    pids.push_back(spawn({worker_path(), scenario, arg}, env, outs.back()));
  }
  return wait_all(pids, outs, start, limit_s);
}

}  // namespace

LaunchResult launch(int n, const std::string& scenario, const std::string& arg,
                    const std::map<int, std::map<std::string, std::string>>& extra, double limit_s, int master_port) {
  if (master_port) return launch_on(master_port, n, scenario, arg, extra, limit_s);
  // A port taken between the probe and rank 0's bind (another process
  // outside the test's control): up to two more tries, each on another port.
  LaunchResult r;
  for (int attempt = 0; attempt < 3; ++attempt) {
    r = launch_on(free_port(), n, scenario, arg, extra, limit_s);
    if (r.ranks.empty() || r.ranks[0].output.find("is already in use on this host") == std::string::npos) break;
    WARN("MASTER_PORT was taken meanwhile; launching again on another port");
  }
  return r;
}

LaunchResult launch_mpirun(int n, const std::string& scenario, const std::string& arg, double limit_s) {
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> argv{VNN_MPIEXEC, "-np", std::to_string(n), "--oversubscribe", "--allow-run-as-root",
                                "--mca", "btl", "self,tcp", "-x", "VNN_TEST_BACKEND", "-x", "OMP_NUM_THREADS=1",
                                "-x", "VNN_DIST_TIMEOUT=30", worker_path(), scenario};
  if (!arg.empty()) argv.push_back(arg);
  std::map<std::string, std::string> env{{"RANK", "\x01unset"}, {"WORLD_SIZE", "\x01unset"},
                                         {"MASTER_ADDR", "\x01unset"}, {"MASTER_PORT", "\x01unset"}};
  std::vector<std::string> outs{out_file(0)};
  std::vector<pid_t> pids{spawn(argv, env, outs[0])};
  return wait_all(pids, outs, start, limit_s);
}

}  // namespace vnn::test::dist

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runs one hidden Catch2 case of this test program in a child process with
// extra environment variables (what a variable read once per process, at
// first use, needs), and collects its stdout and stderr.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

extern char** environ;

namespace vnn::test {

// The child's exit status (-1 when it did not exit); its output in *out.
// `env` overrides (or adds to) this process's environment.
inline int run_case_in_child(const char* test_case, const std::vector<std::pair<std::string, std::string>>& env,
                             std::string* out) {
  // The child's environment is built before fork(): after fork() in a process
  // with threads (Kokkos's pool, the allocator's) the child may only call
  // async-signal-safe functions until exec, and setenv allocates (under TSan
  // a child hung on the allocator lock another thread held at the fork).
  std::vector<std::string> env_strings;
  for (const auto& [name, value] : env) env_strings.push_back(name + "=" + value);
  for (char** e = environ; *e; ++e) {
    bool overridden = false;
    for (const auto& kv : env) {
      const std::string& name = kv.first;
      overridden |= std::strncmp(*e, name.c_str(), name.size()) == 0 && (*e)[name.size()] == '=';
    }
    if (!overridden) env_strings.emplace_back(*e);
  }
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string program = "test", case_name = test_case;
  char* argv[] = {program.data(), case_name.data(), nullptr};

  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    execve("/proc/self/exe", argv, envp.data());
    _exit(127);
  }
  close(fds[1]);
  char buf[4096];
  ssize_t got;
  while ((got = read(fds[0], buf, sizeof(buf))) > 0) out->append(buf, size_t(got));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace vnn::test

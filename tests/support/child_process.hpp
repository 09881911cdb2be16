// Runs one hidden Catch2 case of this test program in a child process with
// extra environment variables (what a variable read once per process, at
// first use, needs), and collects its stdout and stderr.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace vnn::test {

// The child's exit status (-1 when it did not exit); its output in *out.
inline int run_case_in_child(const char* test_case, const std::vector<std::pair<std::string, std::string>>& env,
                             std::string* out) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    execl("/proc/self/exe", "test", test_case, static_cast<char*>(nullptr));
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

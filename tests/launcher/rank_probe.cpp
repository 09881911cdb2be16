// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A rank program for the launcher tests. Modes:
//   env                   prints the contract variables it sees
//   lines                 writes lines in pieces, on stdout and stderr
//   bar                   redraws a line with \r, then ends it
//   fail R CODE DIR       rank R fails with CODE (a negative CODE: killed by
//                         signal -CODE); the others record their
//                         pid (and a child's) in DIR and wait; rank 0 ignores
//                         SIGTERM, so only SIGKILL ends it
//   wait DIR              records its pid in DIR, then waits for a signal and
//                         reports it
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {

std::string env(const char* k) {
  const char* v = std::getenv(k);
  return v ? v : "<unset>";
}

int rank() { return std::atoi(env("RANK").c_str()); }

void record_pid(const std::string& dir, const std::string& name, pid_t pid) {
  std::string path = dir + "/" + name + "." + std::to_string(rank());
  std::ofstream(path + ".tmp") << pid << "\n";
  std::rename((path + ".tmp").c_str(), path.c_str());  // readers never see half a file
}

volatile sig_atomic_t got = 0;
void on_signal(int s) { got = s; }

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "env") {
    std::printf("RANK=%s WORLD_SIZE=%s LOCAL_RANK=%s LOCAL_WORLD_SIZE=%s GROUP_RANK=%s MASTER_ADDR=%s MASTER_PORT=%s "
                "OMP_NUM_THREADS=%s ARGS=%s\n",
                env("RANK").c_str(), env("WORLD_SIZE").c_str(), env("LOCAL_RANK").c_str(),
                env("LOCAL_WORLD_SIZE").c_str(), env("GROUP_RANK").c_str(), env("MASTER_ADDR").c_str(),
                env("MASTER_PORT").c_str(), env("OMP_NUM_THREADS").c_str(), argc > 2 ? argv[2] : "");
    return 0;
  }
  if (mode == "lines") {
    // One line written in three pieces with pauses, then two at once, and a
    // last line without a newline: the launcher must join and split them.
    std::setvbuf(stdout, nullptr, _IONBF, 0);
    std::printf("piece-");
    usleep(20000);
    std::printf("by-");
    usleep(20000);
    std::printf("piece %d\n", rank());
    std::printf("two %d\nthree %d\n", rank(), rank());
    std::fprintf(stderr, "to stderr %d\n", rank());
    std::printf("windows line %d\r\n", rank());
    std::printf("no newline %d", rank());
    return 0;
  }
  if (mode == "bar") {  // a progress bar redrawn in place
    std::setvbuf(stdout, nullptr, _IONBF, 0);
    std::printf("bar 1\rbar 2\r");
    usleep(20000);
    std::printf("bar 3\n");
    return 0;
  }
  if (mode == "fail" && argc == 5) {
    int bad = std::atoi(argv[2]), code = std::atoi(argv[3]);
    std::string dir = argv[4];
    if (rank() == bad) {
      // Fail once every other rank has recorded itself (and its child), so
      // the test knows whom to look for, however loaded the machine is.
      int world = std::atoi(env("WORLD_SIZE").c_str());
      for (int tries = 0; tries < 1000; ++tries) {
        int ready = 0;
        for (int r = 0; r < world; ++r)
          ready += r != bad && access((dir + "/pid." + std::to_string(r)).c_str(), F_OK) == 0;
        if (ready == world - 1) break;
        usleep(10000);
      }
      std::fprintf(stderr, "some earlier message\n");
      std::fprintf(stderr, "error: rank %d failed on purpose\n", rank());
      if (code < 0) kill(getpid(), -code);  // killed by a signal instead (SIGKILL: -9)
      return code;
    }
    if (rank() == 0) signal(SIGTERM, SIG_IGN);
    pid_t child = fork();
    if (child == 0) {
      for (;;) pause();  // a process the rank started: must not outlive it
    }
    record_pid(dir, "child", child);
    record_pid(dir, "pid", getpid());
    for (;;) pause();
  }
  if (mode == "wait" && argc == 3) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    record_pid(argv[2], "pid", getpid());
    while (!got) pause();
    std::printf("rank %d got signal %d\n", rank(), int(got));
    return 0;
  }
  std::fprintf(stderr, "rank_probe: unknown mode '%s'\n", mode.c_str());
  return 2;
}

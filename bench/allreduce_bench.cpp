// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// allreduce_bench: vnn::distributed allreduce (sum, float32, cpu tensors)
// bus bandwidth on loopback, 4 KiB .. 256 MiB, as nccl-tests reports it:
// busbw = bytes / time * 2 (n - 1) / n.
//
//   allreduce_bench --nproc 2 [--min-bytes 4096] [--max-mib 256] [--engine gloo|mpi]
// starts the ranks itself (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT);
// bench/allreduce_compare.sh runs it beside torch.distributed (gloo) in one
// run. Rank 0 prints one line per size: bytes, us per allreduce, busbw GB/s.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "vnn/distributed.h"
#include "vnn/vnn.h"

namespace dist = vnn::distributed;

namespace {

int run_rank(size_t min_bytes, double max_mib, dist::Engine engine) {
  dist::InitOptions o;
  o.engine = engine;
  o.timeout = std::chrono::seconds(300);
  dist::init_process_group(o);
  auto& pg = dist::group();
  int ws = pg.size();
  if (pg.rank() == 0) std::printf("# vnn %s, %d ranks\n# bytes us busbw_GBps\n", pg.engine().c_str(), ws);
  for (size_t bytes = min_bytes; bytes <= size_t(max_mib * 1024 * 1024); bytes *= 4) {
    int64_t n = int64_t(bytes / 4);
    vnn::Tensor t = vnn::ones({n});
    pg.allreduce(t).wait();  // warm-up (connections, pages)
    // Enough repetitions for ~0.5 s of data, at least 3.
    int iters = int(std::clamp<double>(2e9 / 4 / double(bytes), 3, 200));
    std::vector<double> times;
    for (int rep = 0; rep < 3; ++rep) {
      pg.barrier().wait();
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) pg.allreduce(t).wait();
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters);
    }
    double best = *std::min_element(times.begin(), times.end());
    if (pg.rank() == 0)
      std::printf("%zu %.1f %.3f\n", bytes, best * 1e6, double(bytes) / best * 2.0 * (ws - 1) / ws / 1e9);
    std::fflush(stdout);
  }
  dist::destroy_process_group();
  return 0;
}

int free_port() { return 20000 + int(::getpid() % 20000); }

}  // namespace

int main(int argc, char** argv) {
  int nproc = 2;
  double max_mib = 256;
  size_t min_bytes = 4096;
  dist::Engine engine = dist::Engine::gloo;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--nproc" && i + 1 < argc) nproc = std::atoi(argv[++i]);
    else if (a == "--max-mib" && i + 1 < argc) max_mib = std::atof(argv[++i]);
    else if (a == "--min-bytes" && i + 1 < argc) min_bytes = std::max<size_t>(4, std::strtoull(argv[++i], nullptr, 10));
    else if (a == "--engine" && i + 1 < argc) engine = std::string(argv[++i]) == "mpi" ? dist::Engine::mpi : dist::Engine::gloo;
    else {
      std::fprintf(stderr, "usage: %s [--nproc N] [--min-bytes B] [--max-mib M] [--engine gloo|mpi]\n", argv[0]);
      return 2;
    }
  }
  if (std::getenv("RANK") || std::getenv("OMPI_COMM_WORLD_RANK")) return run_rank(min_bytes, max_mib, engine);
  // Launcher: one child per rank, as torchrun would.
  std::string port = std::to_string(free_port());
  std::vector<pid_t> kids;
  for (int r = 0; r < nproc; ++r) {
    pid_t p = ::fork();
    if (p == 0) {
      ::setenv("RANK", std::to_string(r).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(nproc).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      ::setenv("LOCAL_WORLD_SIZE", std::to_string(nproc).c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", port.c_str(), 1);
      ::execv("/proc/self/exe", argv);
      std::perror("execv");
      ::_exit(127);
    }
    kids.push_back(p);
  }
  int rc = 0;
  for (pid_t p : kids) {
    int st = 0;
    ::waitpid(p, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) rc = 1;
  }
  return rc;
}

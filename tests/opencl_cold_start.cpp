// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// OpenCL's first run (issue 34): a small CNN + MLP with 12 distinct GEMM and
// conv shapes trains a few steps on opencl:0 in child processes, each with
// its own VNN_OPENCL_CACHE_DIR and POCL_CACHE_DIR (temporary, empty), and
// VNN_OPENCL_STATS=1 (the plugin's counters of program builds and tuning
// runs, printed at exit):
// 1. two processes fill one empty cache at once: both train to the same
//    losses, each builds at most kMaxBuilds programs, none tunes (defaults
//    until a shape has run long enough), and their stdout and stderr hold
//    nothing but vnn's own lines (no "N warnings generated." from PoCL);
// 2. a third process on the filled cache builds nothing and trains alike;
// 3. random bytes over every cached binary and the tuning file: the next
//    process says so in one vnn line, rebuilds and trains alike.
// 1-3 keep vnn's program binaries (VNN_OPENCL_BINARY_CACHE=1). 4. The
// driver's default: on PoCL vnn leaves binaries to PoCL's own kernel cache
// (program_cache.cpp binary_cache), so a warm process loads no vnn binary
// and PoCL's cache gains no file (it compiled nothing); elsewhere as in 2.
// 5. A transformer layer run on sequences of 1 to 12 tokens after one of 12
//    (a GPT generating token by token) adds few of PoCL's kernel binaries:
//    work-group shapes and attention tiles do not follow the length.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "vnn/autograd.h"
#include "vnn/nn.h"
#include "vnn/nn/transformer.h"
#include "vnn/optim.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using namespace vnn;

// The programs a cold run of the model below may build: 19 on PoCL 3.1
// (elementwise functions, reductions, copies, im2col / col2im, pooling, the
// GEMM kernels, the optimizer, random; sibling variants share programs, 27
// before they did), with room for other drivers.
constexpr int kMaxBuilds = 28;
constexpr int kSteps = 3;

// The model's losses, one line each ("loss <step> <value>").
TEST_CASE("cold start child: train a few steps", "[.cold_child]") {
  const Device dev("opencl", 0);
  Generator g(5);
  // Shapes: conv 1->8 on 16x16 and 8->16 on 8x8 (im2col + GEMM forward,
  // weight and data gradients), Linear 1024->32 and 32->10 (forward and
  // both gradients): 12 GEMM problems of distinct shape.
  nn::Sequential net{nn::Conv2d(nn::Conv2dOptions(1, 8, 3).padding(1), &g), nn::ReLU(), nn::MaxPool2d(2),
                     nn::Conv2d(nn::Conv2dOptions(8, 16, 3).padding(1), &g), nn::ReLU(), nn::Flatten(),
                     nn::Linear(16 * 8 * 8, 32, true, &g), nn::ReLU(), nn::Linear(32, 10, true, &g)};
  net->to(dev);
  Tensor x = randn({16, 1, 16, 16}, TensorOptions(), &g).to(dev);
  Tensor y = randint(0, 10, {16}, TensorOptions().with(kInt64), &g).to(dev);
  optim::Adam opt(net->parameters(), optim::AdamOptions(0.01));
  for (int i = 0; i < kSteps; ++i) {
    opt.zero_grad();
    Tensor loss = nn::cross_entropy(net->forward(x), y);
    loss.backward();
    opt.step();
    std::printf("loss %d %.6f\n", i, loss.item());
  }
  std::fflush(stdout);
}

// PoCL's compiled kernels under dir (it leaves a tempfile_* behind each
// run too); 0 when dir is not there.
size_t kernel_files(const fs::path& dir) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file() && it->path().filename().string().rfind("tempfile_", 0) != 0) ++n;
  return n;
}

// Kernel binaries PoCL adds while a causal transformer layer runs on 1 to
// 12 tokens, after one run on 12 ("sweep_binaries N").
TEST_CASE("cold start child: growing sequences", "[.cold_child]") {
  const Device dev("opencl", 0);
  Generator g(7);
  NoGradGuard no_grad;
  nn::Embedding tokens(16, 32), positions(16, 32);
  nn::TransformerEncoderLayer layer(
      nn::TransformerEncoderLayerOptions(32, 2).dim_feedforward(64).batch_first(true).norm_first(true));
  tokens->to(dev), positions->to(dev), layer->to(dev);
  layer->eval();
  const auto run = [&](int64_t T) {
    Tensor idx = randint(0, 16, {1, T}, TensorOptions().with(kInt64), &g).to(dev);
    Tensor x = add(tokens(idx), positions(arange(T, TensorOptions(dev).with(kInt64))));
    Tensor mask = nn::Transformer::generate_square_subsequent_mask(T).to(dev);
    return layer(x, mask).sum().item();
  };
  run(12);
  const char* cache = std::getenv("POCL_CACHE_DIR");
  const size_t before = cache ? kernel_files(cache) : 0;
  double total = 0;
  for (int64_t T = 1; T <= 12; ++T) total += run(T);
  std::printf("sweep_binaries %zu (sum %.3f)\n", cache ? kernel_files(cache) - before : 0, total);
  std::fflush(stdout);
}

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string out;
  int status = -1;
};

// Starts this program's hidden case in a child with both cache variables
// and VNN_OPENCL_STATS=1 (and no VNN_OPENCL_LOG / _VERBOSE), its stdout and
// stderr into one pipe; binaries: VNN_OPENCL_BINARY_CACHE=1, else the
// driver's default.
Child start(const fs::path& vnn_cache, const fs::path& pocl_cache, bool binaries = true,
            std::string name = "cold start child: train a few steps") {
  std::vector<std::string> env = {"VNN_OPENCL_CACHE_DIR=" + vnn_cache.string(),
                                  "POCL_CACHE_DIR=" + pocl_cache.string(), "VNN_OPENCL_STATS=1"};
  if (binaries) env.push_back("VNN_OPENCL_BINARY_CACHE=1");
  for (char** e = environ; *e; ++e) {
    const std::string s(*e);
    bool ours = false;
    for (const char* name : {"VNN_OPENCL_CACHE_DIR=", "POCL_CACHE_DIR=", "VNN_OPENCL_STATS=", "VNN_OPENCL_LOG=",
                             "VNN_OPENCL_VERBOSE=", "VNN_OPENCL_TUNE=", "VNN_OPENCL_TUNE_AFTER=",
                             "VNN_OPENCL_BINARY_CACHE="})
      ours |= s.rfind(name, 0) == 0;
    if (!ours) env.push_back(s);
  }
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string program = "test";
  char* argv[] = {program.data(), name.data(), nullptr};
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  Child c;
  c.pid = fork();
  REQUIRE(c.pid >= 0);
  if (c.pid == 0) {
    close(fds[0]);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    execve("/proc/self/exe", argv, envp.data());
    _exit(127);
  }
  close(fds[1]);
  c.fd = fds[0];
  return c;
}

void finish(Child& c) {
  char buf[4096];
  ssize_t got;
  while ((got = read(c.fd, buf, sizeof buf)) > 0) c.out.append(buf, size_t(got));
  close(c.fd);
  int st = 0;
  waitpid(c.pid, &st, 0);
  c.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::vector<double> losses(const std::string& out) {
  std::vector<double> r;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    int step = 0;
    double v = 0;
    if (std::sscanf(line.c_str(), "loss %d %lf", &step, &v) == 2) r.push_back(v);
  }
  return r;
}

// The count of "name=N (...)" in the plugin's stats line; -1 when absent.
int counter(const std::string& out, const char* name) {
  const std::string key = std::string(name) + "=";
  const size_t at = out.find("vnn-opencl: program_builds=");
  if (at == std::string::npos) return -1;
  const size_t k = out.find(key, at);
  return k == std::string::npos ? -1 : std::atoi(out.c_str() + k + key.size());
}

// Lines that are neither vnn's nor the child's own (losses, Catch2's
// summary): a driver's compiler output ("2 warnings generated.") would be.
std::string foreign_lines(const std::string& out) {
  std::istringstream in(out);
  std::string line, r;
  while (std::getline(in, line)) {
    bool ours = line.find_first_not_of('=') == std::string::npos;  // empty, or a Catch2 rule
    for (const char* start :
         {"loss ", "sweep_binaries ", "vnn", "Filters:", "test cases:", "assertions:", "All tests passed"})
      ours |= line.rfind(start, 0) == 0;
    if (!ours) r += line + "\n";
  }
  return r;
}

void same_losses(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == size_t(kSteps));
  REQUIRE(b.size() == a.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(std::fabs(a[i] - b[i]) <= 1e-5 * (1 + std::fabs(a[i])));
}

// Random bytes over every file of dir (cached binaries and the tuning file).
int scramble(const fs::path& dir) {
  std::mt19937 rng(34);
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const auto size = std::max<uintmax_t>(e.file_size() / 2, 16);
    std::string bytes(size_t(size), '\0');
    for (char& ch : bytes) ch = char(rng());
    std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << bytes;
    ++n;
  }
  return n;
}

}  // namespace

// Whether opencl:0 is PoCL (its platform, from vnn's device properties).
bool is_pocl() {
  for (const auto& [k, v] : device_info(Device("opencl", 0)).properties)
    if (v.find("Portable Computing Language") != std::string::npos) return true;
  return false;
}

TEST_CASE("OpenCL cold start: few builds, no tuning, no compiler output, a shared cache", "[opencl]") {
  if (!is_available(Device("opencl", 0))) {
    WARN("no opencl:0 here");
    std::exit(77);
  }
  char tmpl[] = "/tmp/vnn-cold-start-XXXXXX";
  REQUIRE(mkdtemp(tmpl));
  const fs::path root(tmpl), vnn_cache = root / "vnn", pocl_cache = root / "pocl";
  fs::create_directories(vnn_cache);
  fs::create_directories(pocl_cache);

  // 1. Two processes fill the empty caches at once.
  Child a = start(vnn_cache, pocl_cache), b = start(vnn_cache, pocl_cache);
  finish(a);
  finish(b);
  INFO("first child:\n" << a.out << "\nsecond child:\n" << b.out);
  REQUIRE(a.status == 0);
  REQUIRE(b.status == 0);
  same_losses(losses(a.out), losses(b.out));
  for (const Child* c : {&a, &b}) {
    CHECK(counter(c->out, "program_builds") >= 1);
    CHECK(counter(c->out, "program_builds") <= kMaxBuilds);
    CHECK(counter(c->out, "tuning_runs") == 0);
    CHECK(foreign_lines(c->out) == "");
  }

  // 2. The filled cache: nothing to build.
  Child warm = start(vnn_cache, pocl_cache);
  finish(warm);
  INFO("warm child:\n" << warm.out);
  REQUIRE(warm.status == 0);
  same_losses(losses(a.out), losses(warm.out));
  CHECK(counter(warm.out, "program_builds") == 0);
  CHECK(counter(warm.out, "program_loads") >= 1);
  CHECK(foreign_lines(warm.out) == "");

  // 3. Random bytes over every file of vnn's cache.
  CHECK(scramble(vnn_cache) >= 2);
  Child bad = start(vnn_cache, pocl_cache);
  finish(bad);
  INFO("child on the scrambled cache:\n" << bad.out);
  REQUIRE(bad.status == 0);
  same_losses(losses(a.out), losses(bad.out));
  CHECK(counter(bad.out, "program_builds") >= 1);
  CHECK(bad.out.find("vnn-opencl: warning: ignoring the corrupt tuning cache") != std::string::npos);
  CHECK(foreign_lines(bad.out) == "");

  // 4. The driver's default, from empty caches again.
  const fs::path vnn2 = root / "vnn2", pocl2 = root / "pocl2";
  fs::create_directories(vnn2);
  fs::create_directories(pocl2);
  Child cold = start(vnn2, pocl2, false);
  finish(cold);
  INFO("cold child, the driver's default:\n" << cold.out);
  REQUIRE(cold.status == 0);
  same_losses(losses(a.out), losses(cold.out));
  const bool pocl = is_pocl();
  const size_t pocl_files = kernel_files(pocl2);
  Child warm2 = start(vnn2, pocl2, false);
  finish(warm2);
  INFO("warm child, the driver's default:\n" << warm2.out);
  REQUIRE(warm2.status == 0);
  same_losses(losses(a.out), losses(warm2.out));
  CHECK(counter(warm2.out, "tuning_runs") == 0);
  CHECK(foreign_lines(warm2.out) == "");
  if (pocl) {
    CHECK(counter(warm2.out, "program_loads") == 0);  // PoCL's cache, not vnn's binaries
    CHECK(pocl_files > 0);
    CHECK(kernel_files(pocl2) == pocl_files);  // every kernel came from PoCL's cache
  } else {
    CHECK(counter(warm2.out, "program_builds") == 0);
    CHECK(counter(warm2.out, "program_loads") >= 1);
  }
  std::error_code ec;
  fs::remove_all(root, ec);
}

TEST_CASE("OpenCL cold start: a sequence growing token by token compiles few kernels", "[opencl]") {
  if (!is_available(Device("opencl", 0))) {
    WARN("no opencl:0 here");
    std::exit(77);
  }
  if (!is_pocl()) {
    WARN("opencl:0 is not PoCL: its driver compiles programs, not kernels per launch shape");
    return;
  }
  char tmpl[] = "/tmp/vnn-cold-sweep-XXXXXX";
  REQUIRE(mkdtemp(tmpl));
  const fs::path root(tmpl);
  fs::create_directories(root / "vnn");
  fs::create_directories(root / "pocl");
  Child c = start(root / "vnn", root / "pocl", false, "cold start child: growing sequences");
  finish(c);
  INFO("child:\n" << c.out);
  REQUIRE(c.status == 0);
  CHECK(foreign_lines(c.out) == "");
  const size_t at = c.out.find("sweep_binaries ");
  REQUIRE(at != std::string::npos);
  // 1 to 12 tokens: work-group sides and attention tiles that followed the
  // length compiled ~40 kernels more (a kernel per length for the position
  // cast, the embedding rows, the attention tiles); powers of two dividing
  // the sizes leave a few per kernel at most (lengths 1, 2, 4, 8).
  const int added = std::atoi(c.out.c_str() + at + 15);
  CHECK(added <= 16);
  std::error_code ec;
  fs::remove_all(root, ec);
}

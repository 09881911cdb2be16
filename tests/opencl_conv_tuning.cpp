// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The OpenCL plugin's per-shape conv2d choice (direct kernel or im2col +
// GEMM, backends/opencl/ops_conv_direct.cpp) in the tuning cache, in child
// processes (the tuning file is read once per process):
// 1. a fresh cache directory: the first conv2d forward / input gradient /
//    weight gradient of a shape times the candidates and writes one
//    choice= line each; results match cpu:0;
// 2. a second process with the same cache makes the same choices;
// 3. the file is obeyed, not re-measured: a choice line edited (with a
//    valid checksum) to the other path is the path the next process takes;
// 4. a choice line that cannot be parsed makes the file corrupt: ignored
//    with a warning and rebuilt.
// Exit 0 passed, 77 skipped (no OpenCL device), else failed.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "vnn/vnn.h"
#include "support/exit_check.hpp"

namespace {

vnn::Tensor values(const vnn::Shape& s, uint32_t seed) {
  std::vector<float> v(size_t(s.numel()));
  uint32_t x = seed * 2654435761u + 7;
  for (float& f : v) x = x * 1664525u + 1013904223u, f = float(x >> 8) / float(1u << 24) - 0.5f;
  return vnn::from_vector(v, s);
}

// Child: conv2d forward and backward through autograd on opencl:0, checked
// against cpu:0; prints "pass <name> <path>" for the three passes.
int child() {
  const vnn::Device cl("opencl", 0), cpu("cpu", 0);
  if (!vnn::is_available(cl)) return 77;
  // Above the plugin's ~8M multiply-add floor for timing a shape.
  const vnn::Tensor x = values({8, 16, 20, 20}, 1), w = values({32, 16, 3, 3}, 2), b = values({32}, 3);
  const vnn::Tensor r = values({8, 32, 20, 20}, 4);
  vnn::Tensor grads[2][4];
  int col = 0;
  for (const vnn::Device& dev : {cpu, cl}) {
    vnn::Tensor xd = x.to(dev).detach().requires_grad_(true), wd = w.to(dev).detach().requires_grad_(true),
                bd = b.to(dev).detach().requires_grad_(true);
    vnn::profiler::Profile p;
    vnn::Tensor y = vnn::conv2d(xd, wd, bd, 1, 1);
    vnn::sum(vnn::mul(y, r.to(dev))).backward();
    p.stop();
    grads[col][0] = y.detach().to(cpu), grads[col][1] = xd.grad().to(cpu), grads[col][2] = wd.grad().to(cpu),
    grads[col][3] = bd.grad().to(cpu);
    if (dev == cl) {
      // The whole-pass ops name their path; where one is absent the core's
      // im2col + GEMM path ran.
      for (const char* pass : {"conv2d", "conv2d_backward_input", "conv2d_backward_weight"}) {
        std::string path = "gemm";
        for (const auto& e : p.events())
          if (e.name == std::string(pass) + "[direct]") path = "direct";
        std::printf("pass %s %s\n", pass, path.c_str());
      }
    }
    ++col;
  }
  for (int i = 0; i < 4; ++i) {
    const double err = vnn::max(vnn::abs(vnn::sub(grads[0][i], grads[1][i]))).item();
    CHECK(err < 1e-3, "result %d differs from cpu:0 by %g", i, err);
  }
  return 0;
}

struct Run {
  int status = -1;
  std::string out;
  std::string passes() const {
    std::string r;
    for (size_t at = out.find("pass "); at != std::string::npos; at = out.find("pass ", at + 1))
      r += out.substr(at, out.find('\n', at) - at) + ";";
    return r;
  }
};

Run spawn(const std::string& self) {
  Run r;
  FILE* p = popen(("'" + self + "' --child 2>&1").c_str(), "r");
  CHECK(p, "popen failed");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The tuning file's checksum line (backends/opencl/program_cache.cpp: FNV-1a 64 of the body).
std::string with_checksum(const std::string& body) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : body) h = (h ^ c) * 0x100000001b3ull;
  char buf[40];
  std::snprintf(buf, sizeof buf, "check=%016llx\n", static_cast<unsigned long long>(h));
  return body + buf;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--child") == 0) return child();
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  char tmpl[] = "/tmp/vnn-opencl-conv-tuning-XXXXXX";
  CHECK(mkdtemp(tmpl), "mkdtemp failed");
  const std::string dir = tmpl;
  setenv("VNN_OPENCL_CACHE_DIR", dir.c_str(), 1);
  unsetenv("VNN_OPENCL_CONV");
  unsetenv("VNN_OPENCL_TUNE");
  setenv("VNN_OPENCL_TUNE_AFTER", "0", 1);  // tuned at first use, as this test checks

  const Run first = spawn(self);
  if (first.status == 77) {
    std::printf("SKIP: no OpenCL device\n");
    std::filesystem::remove_all(dir);
    return 77;
  }
  CHECK(first.status == 0, "first child failed:\n%s", first.out.c_str());
  std::string file;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind("tune-", 0) == 0) file = e.path().string();
  CHECK(!file.empty(), "no tuning file in %s", dir.c_str());
  std::string text = slurp(file);
  for (const char* kind : {"choice=conv2d:fwd:", "choice=conv2d:data:", "choice=conv2d:weight:"})
    CHECK(text.find(kind) != std::string::npos, "no %s line in\n%s", kind, text.c_str());
  std::printf("  tuned: %s\n", first.passes().c_str());

  const Run second = spawn(self);
  CHECK(second.status == 0 && second.passes() == first.passes(), "same cache, other choices: %s vs %s",
        second.passes().c_str(), first.passes().c_str());
  CHECK(slurp(file) == text, "the tuning file changed on a cached run");

  // Edit the forward choice to the other path (0 = im2col + GEMM, 1 = the
  // widest direct kernel) and re-sign the file: the next process follows it.
  const size_t at = text.find("choice=conv2d:fwd:");
  const size_t sp = text.find(' ', at), eol = text.find('\n', at);
  const bool was_gemm = text.substr(sp + 1, eol - sp - 1) == "0";
  std::string body = text.substr(0, text.rfind("check="));
  body.replace(sp + 1, eol - sp - 1, was_gemm ? "1" : "0");
  std::ofstream(file, std::ios::binary | std::ios::trunc) << with_checksum(body);
  const Run edited = spawn(self);
  CHECK(edited.status == 0, "child on the edited file failed:\n%s", edited.out.c_str());
  CHECK(edited.out.find(was_gemm ? "pass conv2d direct" : "pass conv2d gemm") != std::string::npos,
        "the edited choice was not followed:\n%s", edited.out.c_str());
  std::printf("  edited forward choice followed: %s\n", edited.passes().c_str());

  // An unparsable choice line: the file is corrupt, ignored and rebuilt.
  body.replace(sp + 1, 1, "x");
  std::ofstream(file, std::ios::binary | std::ios::trunc) << with_checksum(body);
  const Run corrupt = spawn(self);
  CHECK(corrupt.status == 0, "child on the corrupt file failed:\n%s", corrupt.out.c_str());
  CHECK(corrupt.out.find("warning: ignoring the corrupt tuning cache") != std::string::npos &&
            corrupt.out.find("bad choice line") != std::string::npos,
        "no warning for a bad choice line:\n%s", corrupt.out.c_str());
  CHECK(slurp(file).find("choice=conv2d:fwd:") != std::string::npos, "the file was not rebuilt");
  std::printf("  bad choice line: warned, rebuilt\n");
  std::filesystem::remove_all(dir);
  std::printf("PASSED\n");
  return 0;
}

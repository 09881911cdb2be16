// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The OpenCL plugin's tuning cache, through the C ABI in child processes
// (the tuning is read once per process):
//   opencl_tuning <path/to/libvnn-backend-opencl.so>
// 1. a fresh cache directory: the first MATMUL tunes and writes the file;
// 2. a second process with the same cache reads it and makes the same
//    choices (variant, path per shape, 1-D work-group size);
// 3. a corrupt file (garbage, truncated, an edited line that fails its
//    checksum) is ignored with a warning, tuned again and rewritten, and the
//    next process reads the rewritten file.
// Exit 0 passed, 77 skipped (no OpenCL device), else failed.
#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "vnn/backend_abi.h"
#include "support/exit_check.hpp"

namespace {

vnn_tensor_desc matrix(void* h, int64_t rows, int64_t cols, bool transposed) {
  vnn_tensor_desc d{};
  d.data = h;
  d.dtype = VNN_FLOAT32;
  d.ndim = 2;
  d.sizes[0] = rows;
  d.sizes[1] = cols;
  d.strides[0] = transposed ? 1 : cols;
  d.strides[1] = transposed ? rows : 1;
  return d;
}

// Child: two MATMULs of different shape classes, checked against the host,
// then the device report and the path each took.
int child(const char* plugin) {
  void* lib = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
  CHECK(lib, "dlopen %s: %s", plugin, dlerror());
  auto entry = reinterpret_cast<vnn_backend_entry_fn>(dlsym(lib, VNN_BACKEND_ENTRY_NAME));
  const vnn_backend* B = entry ? entry(VNN_BACKEND_ABI_VERSION) : nullptr;
  CHECK(B, "no backend table");
  int32_t count = 0;
  if (B->probe(&count) != VNN_STATUS_OK || count < 1) return 77;
  CHECK(B->init_device(0) == VNN_STATUS_OK, "%s", B->last_error());
  struct Shape {
    int64_t m, n, k;
    bool tb;
  };
  for (const Shape& s : {Shape{48, 40, 56, false}, Shape{16, 24, 3000, true}}) {
    std::vector<float> ha(size_t(s.m * s.k)), hb(size_t(s.k * s.n)), hc(size_t(s.m * s.n));
    for (size_t i = 0; i < ha.size(); ++i) ha[i] = float(int(i % 7) - 3);
    for (size_t i = 0; i < hb.size(); ++i) hb[i] = float(int(i % 5) - 2) * 0.5f;
    void *a = nullptr, *b = nullptr, *c = nullptr;
    CHECK(B->alloc(0, ha.size() * 4, &a) == VNN_STATUS_OK && B->alloc(0, hb.size() * 4, &b) == VNN_STATUS_OK &&
              B->alloc(0, hc.size() * 4, &c) == VNN_STATUS_OK,
          "%s", B->last_error());
    CHECK(B->copy_to_device(0, a, 0, ha.data(), ha.size() * 4, nullptr, 1) == VNN_STATUS_OK, "%s", B->last_error());
    CHECK(B->copy_to_device(0, b, 0, hb.data(), hb.size() * 4, nullptr, 1) == VNN_STATUS_OK, "%s", B->last_error());
    vnn_tensor_desc in[2] = {matrix(a, s.m, s.k, false), matrix(b, s.k, s.n, s.tb)};
    vnn_tensor_desc out = matrix(c, s.m, s.n, false);
    double scalars[2] = {1.0, 0.0};
    vnn_op op{};
    op.struct_size = sizeof op;
    op.kind = VNN_OP_MATMUL;
    op.num_inputs = 2;
    op.num_outputs = 1;
    op.num_scalars = 2;
    op.inputs = in;
    op.outputs = &out;
    op.scalars = scalars;
    CHECK(B->run(0, &op) == VNN_STATUS_OK, "%s", B->last_error());
    CHECK(B->copy_to_host(0, hc.data(), c, 0, hc.size() * 4, nullptr, 1) == VNN_STATUS_OK, "%s", B->last_error());
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        double want = 0;
        for (int64_t p = 0; p < s.k; ++p)
          want += double(ha[size_t(i * s.k + p)]) * double(s.tb ? hb[size_t(j * s.k + p)] : hb[size_t(p * s.n + j)]);
        CHECK(std::fabs(hc[size_t(i * s.n + j)] - want) <= 1e-4 * (1 + std::fabs(want)), "[%lld,%lld] %g vs %g",
              (long long)i, (long long)j, double(hc[size_t(i * s.n + j)]), want);
      }
    vnn_device_info info{};
    info.struct_size = sizeof info;
    CHECK(B->device_info(0, &info) == VNN_STATUS_OK, "%s", B->last_error());
    const char* p = std::strstr(info.properties, "gemm_last=");
    CHECK(p, "no gemm_last in the report");
    std::printf("path %lldx%lldx%lld %.*s\n", (long long)s.m, (long long)s.n, (long long)s.k,
                int(std::strcspn(p + 10, "\n")), p + 10);
    for (void* h : {a, b, c}) B->free(0, h);
  }
  vnn_device_info info{};
  info.struct_size = sizeof info;
  CHECK(B->device_info(0, &info) == VNN_STATUS_OK, "%s", B->last_error());
  std::printf("%s", info.properties);
  return 0;
}

struct Run {
  int status = -1;
  std::string out;
  std::string line(const char* key) const {  // "key=value" -> value
    size_t at = out.find(std::string("\n") + key + "=");
    if (at == std::string::npos) return "";
    at += std::strlen(key) + 2;
    return out.substr(at, out.find('\n', at) - at);
  }
  std::string paths() const {
    std::string r;
    for (size_t at = out.find("path "); at != std::string::npos; at = out.find("path ", at + 1))
      r += out.substr(at, out.find('\n', at) - at) + ";";
    return r;
  }
};

Run spawn(const std::string& self, const char* plugin) {
  Run r;
  std::string cmd = "'" + self + "' '" + plugin + "' --child 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  CHECK(p, "popen failed");
  char buf[4096];
  size_t n;
  r.out = "\n";
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void spit(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// A corrupt file: the warning, a fresh tuning, a rewritten file that the
// next process reads.
void expect_rebuilt(const std::string& self, const char* plugin, const std::string& file, const char* how) {
  Run r = spawn(self, plugin);
  CHECK(r.status == 0, "child failed (%s):%s", how, r.out.c_str());
  CHECK(r.out.find("warning: ignoring the corrupt tuning cache") != std::string::npos, "no warning (%s):%s", how,
        r.out.c_str());
  CHECK(r.line("gemm_tuning") == "tuned", "not tuned again (%s):%s", how, r.out.c_str());
  Run next = spawn(self, plugin);
  CHECK(next.status == 0 && next.line("gemm_tuning") == "cache", "rewritten file not read (%s):%s", how,
        next.out.c_str());
  CHECK(next.out.find("warning") == std::string::npos, "warning on the rewritten file (%s):%s", how,
        next.out.c_str());
  CHECK(next.line("gemm_variant") == r.line("gemm_variant") && next.paths() == r.paths() &&
            next.line("launch_local") == r.line("launch_local"),
        "the rewritten cache gives other choices (%s)", how);
  std::printf("  %s: warned, tuned again, rewritten (%zu bytes)\n", how, slurp(file).size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[2], "--child") == 0) return child(argv[1]);
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <libvnn-backend-opencl.so>\n", argv[0]);
    return 2;
  }
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  char tmpl[] = "/tmp/vnn-opencl-tuning-XXXXXX";
  CHECK(mkdtemp(tmpl), "mkdtemp failed");
  const std::string dir = tmpl;
  setenv("VNN_OPENCL_CACHE_DIR", dir.c_str(), 1);
  unsetenv("VNN_OPENCL_TUNE");
  setenv("VNN_OPENCL_TUNE_AFTER", "0", 1);  // tuned at first use, as this test checks
  unsetenv("VNN_OPENCL_GEMM");
  unsetenv("VNN_OPENCL_GEMM_VARIANT");

  Run first = spawn(self, argv[1]);
  if (first.status == 77) {
    std::printf("SKIP: no OpenCL device\n");
    std::filesystem::remove_all(dir);
    return 77;
  }
  CHECK(first.status == 0, "first child failed:%s", first.out.c_str());
  CHECK(first.line("gemm_tuning") == "tuned", "fresh cache, not tuned:%s", first.out.c_str());
  const std::string file = first.line("tuning_cache");
  CHECK(!file.empty() && std::filesystem::exists(file), "no tuning cache file:%s", first.out.c_str());
  std::printf("  tuned: variant %s, %s\n", first.line("gemm_variant").c_str(), first.paths().c_str());
  // The 1-D kernels' work-group size was measured too (a power of two the
  // device allows).
  const std::string local = first.line("launch_local");
  const long lv = std::atol(local.c_str());
  CHECK(lv >= 32 && (lv & (lv - 1)) == 0 && lv <= std::atol(first.line("max_work_group_size").c_str()),
        "launch_local '%s':%s", local.c_str(), first.out.c_str());
  std::printf("  tuned: 1-D work-group size %s\n", local.c_str());

  for (int i = 0; i < 2; ++i) {  // the same cache, the same choice, every time
    Run again = spawn(self, argv[1]);
    CHECK(again.status == 0 && again.line("gemm_tuning") == "cache", "cache not read:%s", again.out.c_str());
    CHECK(again.line("gemm_variant") == first.line("gemm_variant"), "variant %s then %s",
          first.line("gemm_variant").c_str(), again.line("gemm_variant").c_str());
    CHECK(again.paths() == first.paths(), "paths %s then %s", first.paths().c_str(), again.paths().c_str());
    CHECK(again.line("launch_local") == local, "launch_local %s then %s", local.c_str(),
          again.line("launch_local").c_str());
  }
  std::printf("  cached: same variant, paths and work-group size in two more processes\n");

  const std::string good = slurp(file);
  spit(file, "not a tuning file\n\x01\x02");
  expect_rebuilt(self, argv[1], file, "garbage");
  spit(file, good.substr(0, good.size() / 2));
  expect_rebuilt(self, argv[1], file, "truncated");
  std::string edited = slurp(file);
  size_t at = edited.find("gemm_variant=");
  CHECK(at != std::string::npos, "no gemm_variant line in %s", file.c_str());
  edited[at + 13] = edited[at + 13] == '1' ? '2' : '1';  // checksum no longer matches
  spit(file, edited);
  expect_rebuilt(self, argv[1], file, "edited line");
  std::filesystem::remove_all(dir);
  std::printf("PASSED\n");
  return 0;
}

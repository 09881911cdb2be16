// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runs the plugin C ABI test cases (abi.cpp, abi_linalg.cpp) against a
// plugin, through dlopen only, as the core loads it:
//   test_backend_abi --plugin <libvnn-backend-X.so> [Catch2 options]
//   test_backend_abi [--plugin-dir <dir>]      every plugin found there
//                                              (default: the build's)
// Exit 0: passed; 77: skipped (the plugin has no device or no driver here);
// anything else: failed. Without --plugin each plugin runs in a child
// process of its own, and the program passes when none failed.
#define CATCH_CONFIG_RUNNER
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "backends/abi_plugin.hpp"

#ifndef VNN_ABI_PLUGIN_DIR
#define VNN_ABI_PLUGIN_DIR ""
#endif

namespace {

using abi_test::table;

constexpr int kSkip = 77;

// Loads the plugin, checks the table and probes. Returns -1 to go on with
// the test cases, else the exit code.
int load(const std::string& path) {
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "FAILED: dlopen %s: %s\n", path.c_str(), dlerror());
    return 1;
  }
  auto entry = reinterpret_cast<vnn_backend_entry_fn>(dlsym(lib, VNN_BACKEND_ENTRY_NAME));
  if (!entry) {
    std::fprintf(stderr, "FAILED: %s exports no %s\n", path.c_str(), VNN_BACKEND_ENTRY_NAME);
    return 1;
  }
  const vnn_backend* b = entry(VNN_BACKEND_ABI_VERSION);
  if (!b || b->abi_version != VNN_BACKEND_ABI_VERSION || b->struct_size != sizeof(vnn_backend) || !b->name ||
      !b->last_error) {
    std::fprintf(stderr, "FAILED: %s: bad table (ABI %u, struct_size %zu, want %u / %zu)\n", path.c_str(),
                 b ? b->abi_version : 0u, b ? b->struct_size : size_t{0}, VNN_BACKEND_ABI_VERSION,
                 sizeof(vnn_backend));
    return 1;
  }
  table() = b;
  int32_t count = -1;
  const vnn_status st = b->probe(&count);
  if (st == VNN_STATUS_NO_DEVICE || st == VNN_STATUS_DRIVER_MISSING) {
    // The ABI's contract for a failed probe: no devices, and a reason.
    if (count != 0 || std::strlen(b->last_error()) == 0) {
      std::fprintf(stderr, "FAILED: %s: probe status %d with count %d and reason '%s'\n", b->name, int(st), count,
                   b->last_error());
      return 1;
    }
    std::printf("SKIP %s: %s\n", b->name, b->last_error());
    return kSkip;
  }
  if (st != VNN_STATUS_OK || count <= 0) {
    std::fprintf(stderr, "FAILED: %s: probe status %d, count %d: %s\n", b->name, int(st), count, b->last_error());
    return 1;
  }
  return -1;
}

// Every plugin in dir, each in a child process (each may start a runtime
// of its own).
int run_all(const std::string& self, const std::string& dir) {
  std::vector<std::string> plugins;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string f = e.path().filename().string();
    if (f.rfind("libvnn-backend-", 0) == 0 && e.path().extension() == ".so") plugins.push_back(e.path().string());
  }
  if (plugins.empty()) {
    std::fprintf(stderr, "FAILED: no libvnn-backend-*.so in '%s'%s\n", dir.c_str(),
                 ec ? (": " + ec.message()).c_str() : "");
    return 1;
  }
  std::sort(plugins.begin(), plugins.end());
  int passed = 0, skipped = 0, failed = 0;
  for (const std::string& p : plugins) {
    std::printf("== %s\n", p.c_str());
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
      execl(self.c_str(), self.c_str(), "--plugin", p.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
      ++failed;
      continue;
    }
    const int rc = WEXITSTATUS(status);
    rc == 0 ? ++passed : rc == kSkip ? ++skipped : ++failed;
  }
  std::printf("%d plugins: %d passed, %d skipped, %d failed\n", int(plugins.size()), passed, skipped, failed);
  return failed ? 1 : passed ? 0 : kSkip;
}

}  // namespace

int main(int argc, char** argv) {
  std::string plugin, dir = VNN_ABI_PLUGIN_DIR;
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--plugin" || a == "--plugin-dir") && i + 1 < argc)
      (a == "--plugin" ? plugin : dir) = argv[++i];
    else
      rest.push_back(argv[i]);
  }
  if (plugin.empty()) return run_all(std::filesystem::canonical("/proc/self/exe").string(), dir);
  if (int rc = load(plugin); rc >= 0) return rc;

  // init_device is idempotent and thread-safe: the first call comes from
  // four threads at once. Every case needs device 0 initialised.
  std::vector<std::thread> threads;
  std::vector<vnn_status> init(4, VNN_STATUS_INTERNAL);
  std::vector<std::string> why(init.size());
  for (size_t t = 0; t < init.size(); ++t)
    threads.emplace_back([&init, &why, t] {
      init[t] = table()->init_device(abi_test::kDevice);
      if (init[t] != VNN_STATUS_OK) why[t] = table()->last_error();  // thread-local text
    });
  for (auto& t : threads) t.join();
  for (size_t t = 0; t < init.size(); ++t)
    if (init[t] != VNN_STATUS_OK) {
      std::fprintf(stderr, "FAILED: %s: init_device from thread %zu: status %d: %s\n", table()->name, t,
                   int(init[t]), why[t].c_str());
      return 1;
    }
  return Catch::Session().run(static_cast<int>(rest.size()), rest.data());
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The loader and discovery against fake plugins. Discovery runs once per
// process, so every scenario runs in a forked child with its own
// environment and sends back a summary string.
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>

#include "vnn/vnn.h"

using namespace vnn;

namespace {

std::string in_child(const std::vector<std::pair<const char*, const char*>>& env,
                     const std::function<std::string()>& body) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    setenv("VNN_BACKEND_PATH", VNN_FAKE_PLUGIN_DIR, 1);
    for (auto& [k, v] : env) setenv(k, v, 1);
    std::string out;
    try {
      out = body();
    } catch (const std::exception& e) {
      out = std::string("threw: ") + e.what();
    }
    ssize_t written = write(fds[1], out.data(), out.size());
    _exit(written == ssize_t(out.size()) ? 0 : 1);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) out.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  return out;
}

std::string report_line(const std::string& backend) {
  for (auto& r : backend_report())
    if (r.backend == backend) return r.status + " | " + r.detail;
  return "absent";
}

}  // namespace

TEST_CASE("every broken plugin is reported with its reason, the good ones load") {
  std::string out = in_child({}, [] {
    std::string s;
    for (auto b : {"fakegpu", "fakeabi", "fakenoentry", "fakeprobe", "garbage", "openmp"})
      s += std::string(b) + ": " + report_line(b) + "\n";
    return s;
  });
  INFO(out);
  CHECK(out.find("fakegpu: ok") != std::string::npos);
  CHECK(out.find("fakeabi: abi mismatch | plugin speaks ABI version 999") != std::string::npos);
  CHECK(out.find("fakenoentry: missing entry point") != std::string::npos);
  CHECK(out.find("fakeprobe: driver missing | libfakedriver.so.1") != std::string::npos);
  CHECK(out.find("garbage: dlopen failed") != std::string::npos);
  CHECK(out.find("openmp: ok") != std::string::npos);
}

TEST_CASE("a GPU ranks above the CPU, and ops reach the plugin") {
  std::string out = in_child({}, [] {
    std::string s = best_device().str() + "\n";
    for (auto& d : devices()) s += d.device.str() + " ";
    Tensor t = full({3}, 2.0, Device("fakegpu:1"));
    s += "\nfill " + std::to_string(t.to(Device("cpu")).to_vector<float>()[2]) + "\n";
    try {
      (void)(t + t);
    } catch (const Unsupported& e) {
      s += std::string("unsupported: ") + e.what() + "\n";
    }
    try {
      (void)(t + ones({3}));
    } catch (const DeviceMismatch& e) {
      s += std::string("mismatch: ") + e.what() + "\n";
    }
    return s;
  });
  INFO(out);
  CHECK(out.rfind("fakegpu:1\n", 0) == 0);  // the larger fake GPU wins
  CHECK(out.find("fakegpu:1 fakegpu:0 cpu:0") != std::string::npos);
  CHECK(out.find("fill 2.0") != std::string::npos);
  CHECK(out.find("unsupported: add on fakegpu:1") != std::string::npos);
  CHECK(out.find("mismatch: Expected all tensors to be on the same device") != std::string::npos);
}

TEST_CASE("VNN_BACKENDS is an allow-list") {
  std::string out = in_child({{"VNN_BACKENDS", "cpu"}}, [] {
    return best_device().str() + " " + std::to_string(devices().size()) + " " + report_line("fakegpu");
  });
  CHECK(out.rfind("cpu:0 1 disabled", 0) == 0);
}

TEST_CASE("VNN_DEVICE picks a device; a missing one falls back unless strict") {
  CHECK(in_child({{"VNN_DEVICE", "fakegpu:0"}}, [] { return best_device().str(); }) == "fakegpu:0");
  CHECK(in_child({{"VNN_DEVICE", "cpu"}}, [] { return best_device().str(); }) == "cpu:0");
  CHECK(in_child({{"VNN_DEVICE", "cuda:5"}}, [] { return best_device().str(); }) == "fakegpu:1");
  std::string strict = in_child({{"VNN_DEVICE", "cuda:5"}, {"VNN_BACKENDS", "cpu,fakegpu"}, {"VNN_STRICT", "1"}},
                                [] { return best_device().str(); });
  INFO(strict);
  CHECK(strict.find("threw: best_device (strict mode): VNN_DEVICE=cuda:5 is not available") == 0);
  CHECK(strict.find("fakegpu:0") != std::string::npos);  // lists what exists
}

TEST_CASE("strict mode refuses to run past a broken plugin") {
  std::string out = in_child({{"VNN_STRICT", "1"}}, [] { return best_device().str(); });
  INFO(out);
  CHECK(out.rfind("threw: best_device (strict mode): backend library", 0) == 0);
  std::string api = in_child({}, [] {
    set_strict(true);
    return best_device().str();
  });
  CHECK(api.rfind("threw:", 0) == 0);
}

TEST_CASE("an unknown device string lists the devices that exist") {
  std::string out = in_child({}, [] {
    (void)zeros({1}, Device("opencl:9"));
    return std::string("no throw");
  });
  INFO(out);
  CHECK(out.find("threw: device opencl:9 is not available; available devices: fakegpu:1, fakegpu:0, cpu:0") == 0);
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The vendor-free half of the CUDA and HIP probes
// (backends/cuda_hip/probe_common.hpp), checked on the host: what both
// plugins answer before and around their vendor calls.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "cuda_hip/probe_common.hpp"

using namespace vnn::gpu_probe;

TEST_CASE("open_first takes the first library that opens and keeps the first error", "[gpu_probe]") {
  Library l;
  std::string err;
  CHECK_FALSE(open_first(l, {"libvnn-no-such-a.so", "libvnn-no-such-b.so"}, &err));
  CHECK(l.lib == nullptr);
  CHECK(err.find("libvnn-no-such-a.so") != std::string::npos);

  Library c;
  std::string err2;
  REQUIRE(open_first(c, {"libvnn-no-such-a.so", "libc.so.6"}, &err2));
  CHECK(c.lib_name == "libc.so.6");
  size_t (*len)(const char*) = nullptr;
  CHECK(load(c.lib, "strlen", &len));
  REQUIRE(len != nullptr);
  CHECK(len("four") == 4);
  int (*none)() = nullptr;
  CHECK_FALSE(load(c.lib, "vnn_no_such_symbol", &none));
}

TEST_CASE("answer_probe reports the count only on success", "[gpu_probe]") {
  Library l;
  fail(l, VNN_STATUS_NO_DEVICE, "no GPU found");
  int32_t count = -1;
  std::string why;
  CHECK(answer_probe(l, &count, &why) == VNN_STATUS_NO_DEVICE);
  CHECK(count == 0);
  CHECK(why == "no GPU found");

  l.status = VNN_STATUS_OK;
  l.count = 2;
  why.clear();
  CHECK(answer_probe(l, &count, &why) == VNN_STATUS_OK);
  CHECK(count == 2);
  CHECK(why.empty());
  CHECK(answer_probe(l, nullptr, nullptr) == VNN_STATUS_OK);  // both out-arguments optional
}

TEST_CASE("begin_device_info checks the library, the index and the struct", "[gpu_probe]") {
  Library l;
  fail(l, VNN_STATUS_DRIVER_MISSING, "libcuda.so.1 not found");
  vnn_device_info info{};
  info.struct_size = sizeof info;
  std::string why;
  CHECK(begin_device_info(l, "cuda", 0, &info, &why) == VNN_STATUS_DRIVER_MISSING);
  CHECK(why == "libcuda.so.1 not found");

  l.status = VNN_STATUS_OK;
  l.count = 2;
  CHECK(begin_device_info(l, "cuda", 2, &info, &why) == VNN_STATUS_INVALID_ARGUMENT);
  CHECK(why == "cuda: no device 2 (2 found)");
  CHECK(begin_device_info(l, "hip", -1, &info, &why) == VNN_STATUS_INVALID_ARGUMENT);
  CHECK(why == "hip: no device -1 (2 found)");
  CHECK(begin_device_info(l, "hip", 0, nullptr, &why) == VNN_STATUS_INVALID_ARGUMENT);
  info.struct_size = sizeof info - 1;
  CHECK(begin_device_info(l, "hip", 0, &info, &why) == VNN_STATUS_INVALID_ARGUMENT);
  CHECK(why == "hip: vnn_device_info.struct_size is smaller than this plugin's");

  // On success everything past struct_size is cleared, and a GPU is a GPU.
  info.struct_size = sizeof info;
  std::memset(info.name, 'x', sizeof info.name);
  info.usable = 7;
  info.host_accessible = 1;
  REQUIRE(begin_device_info(l, "cuda", 1, &info, &why) == VNN_STATUS_OK);
  CHECK(info.struct_size == sizeof info);
  CHECK(info.name[0] == 0);
  CHECK(info.usable == 0);
  CHECK(info.host_accessible == 0);
  CHECK(info.type == VNN_DEVICE_GPU);
}

TEST_CASE("copy_str and set_usable stay inside the fixed fields", "[gpu_probe]") {
  vnn_device_info info{};
  copy_str(info.pci_id, std::string(100, 'a'));
  CHECK(std::strlen(info.pci_id) == sizeof info.pci_id - 1);
  set_usable(&info, false, "compiled for gfx908, device is gfx90a");
  CHECK(info.usable == 0);
  CHECK(std::string(info.unusable_reason) == "compiled for gfx908, device is gfx90a");
  vnn_device_info ok_info{};
  set_usable(&ok_info, true, "ignored");
  CHECK(ok_info.usable == 1);
  CHECK(ok_info.unusable_reason[0] == 0);
}

namespace {
std::atomic<int> g_opens{0};
struct Counted : Library {};
void open_counted(Counted& c) {
  ++g_opens;
  c.status = VNN_STATUS_OK;
  c.count = 3;
}
}  // namespace

TEST_CASE("once opens the library once, from any number of threads", "[gpu_probe]") {
  std::vector<std::thread> threads;
  std::vector<int> counts(8, 0);
  for (size_t t = 0; t < counts.size(); ++t)
    threads.emplace_back([&counts, t] { counts[t] = once<Counted, open_counted>().count; });
  for (auto& t : threads) t.join();
  CHECK(g_opens.load() == 1);
  for (int c : counts) CHECK(c == 3);
  CHECK(&once<Counted, open_counted>() == &once<Counted, open_counted>());
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <catch2/catch.hpp>

#include "vnn/vnn.h"

using namespace vnn;

TEST_CASE("device strings parse") {
  CHECK(Device("cpu") == Device("cpu", 0));
  CHECK(Device("cuda:1").backend() == "cuda");
  CHECK(Device("cuda:1").index() == 1);
  CHECK(Device("OpenCL:2").str() == "opencl:2");
  CHECK(Device("openmp").str() == "cpu:0");
  CHECK_THROWS_AS(Device("cuda:"), DeviceNotFound);
  CHECK_THROWS_AS(Device("cuda:-1"), DeviceNotFound);
  CHECK_THROWS_AS(Device("cuda:x"), DeviceNotFound);
  CHECK_THROWS_AS(Device(""), DeviceNotFound);
  CHECK_THROWS_AS(Device("9pu"), DeviceNotFound);
}

TEST_CASE("an unknown device names what exists") {
  try {
    (void)zeros({2}, Device("cuda:7"));
    FAIL("no throw");
  } catch (const DeviceNotFound& e) {
    std::string m = e.what();
    CHECK(m.find("cuda:7") != std::string::npos);
    CHECK(m.find("cpu:0") != std::string::npos);
  }
}

TEST_CASE("cpu:0 is always discovered") {
  REQUIRE(is_available(Device("cpu")));
  const DeviceInfo& info = device_info(Device("cpu"));
  CHECK(info.plugin == "openmp");
  CHECK(info.type == DeviceType::cpu);
  CHECK(info.compute_units >= 1);
  CHECK(info.total_memory > 0);
  bool found_threads = false;
  for (auto& [k, v] : info.properties) found_threads |= k == "threads";
  CHECK(found_threads);
  CHECK_NOTHROW(best_device());
}

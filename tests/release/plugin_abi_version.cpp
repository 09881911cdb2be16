// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A plugin built for another ABI version is refused, and the report says
// which version the plugin speaks and which this libvnn speaks (ctest gives
// VNN_BACKEND_PATH the folder of tests/release/other_abi_plugin.cpp).
#include <catch2/catch.hpp>

#include <string>

#include "vnn/backend_abi.h"
#include "vnn/vnn.h"

TEST_CASE("a plugin built for another ABI version is refused, naming both versions") {
  const vnn::BackendReport* other = nullptr;
  for (const auto& r : vnn::backend_report())
    if (r.backend == "otherabi") other = &r;
  REQUIRE(other != nullptr);
  INFO(other->status << " | " << other->detail);
  CHECK_FALSE(other->loaded);
  CHECK(other->status == "abi mismatch");
  const std::string plugin_version = std::to_string(VNN_BACKEND_ABI_VERSION + 1u);
  const std::string our_version = std::to_string(VNN_BACKEND_ABI_VERSION);
  CHECK(other->detail.find("plugin speaks ABI version " + plugin_version) != std::string::npos);
  CHECK(other->detail.find("this libvnn speaks " + our_version) != std::string::npos);
  // No device of it is listed; the CPU is still there.
  for (const auto& d : vnn::devices()) CHECK(d.device.str().rfind("otherabi", 0) != 0);
  CHECK(vnn::is_available(vnn::Device("cpu")));
}

TEST_CASE("the library's version is the headers' version") {
  CHECK(std::string(vnn::version()) == VNN_VERSION_STRING);
  CHECK(vnn::version_number() == VNN_VERSION);
  CHECK(vnn::version_number() == VNN_VERSION_MAJOR * 10000 + VNN_VERSION_MINOR * 100 + VNN_VERSION_PATCH);
  CHECK(vnn::runtime_matches_headers());
  CHECK(vnn::backend_abi_version() == VNN_BACKEND_ABI_VERSION);
}

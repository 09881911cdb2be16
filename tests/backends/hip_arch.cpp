// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Which AMD devices the HIP plugin reports usable (backends/hip/
// hip_arch.hpp): the HIP runtime runs only code objects of the device's exact
// processor with compatible xnack/sramecc settings, and Kokkos aborts at its
// first launch otherwise, so the probe must mark the others unusable with
// the reason and the rebuild option. Host-only: runs where there is no GPU.
#include <catch2/catch.hpp>

#include "hip/hip_arch.hpp"

using vnn::hip_arch::check;
using vnn::hip_arch::parse;
using vnn::hip_arch::split;
using vnn::hip_arch::Target;

namespace {
const std::vector<std::string> built{"gfx908", "gfx90a"};  // the default VNN_HIP_ARCHS
}

TEST_CASE("hip_arch: the device's exact processor is usable, with or without its feature suffix") {
  CHECK(check(built, "gfx908").usable);
  CHECK(check(built, "gfx90a").usable);
  // What ROCm 5 reports for an MI100 and an MI250X.
  CHECK(check(built, "gfx908:sramecc+:xnack-").usable);
  CHECK(check(built, "gfx90a:sramecc+:xnack-").usable);
  CHECK(check(built, "gfx90a:sramecc-:xnack+").usable);  // code without features runs in either mode
  CHECK(check(built, "gfx90a:xnack+:sramecc+").usable);  // feature order does not matter
  CHECK(check(built, "gfx90a:sramecc+:xnack-").reason.empty());
}

TEST_CASE("hip_arch: a processor without a code object is unusable, naming it, the build and the option") {
  for (const std::string dev : {"gfx942:sramecc+:xnack-", "gfx940", "gfx906", "gfx1030", "gfx1100"}) {
    INFO(dev);
    const auto c = check(built, dev);
    CHECK_FALSE(c.usable);
    const std::string base = dev.substr(0, dev.find(':'));
    CHECK_THAT(c.reason, Catch::Contains("device is " + base + " (gcnArchName " + dev + ")") &&
                             Catch::Contains("code objects for gfx908, gfx90a only") &&
                             Catch::Contains("-DVNN_HIP_ARCHS=\"gfx908;gfx90a;" + base + "\""));
  }
  // The processor is compared whole: gfx90a code is not gfx90c, gfx908 not gfx9080.
  CHECK_FALSE(check({"gfx90a"}, "gfx90c").usable);
  CHECK_FALSE(check({"gfx908"}, "gfx9080").usable);
}

TEST_CASE("hip_arch: a code object built for one feature setting needs the device in that mode") {
  const std::vector<std::string> xnack_on{"gfx908", "gfx90a:xnack+"};
  CHECK(check(xnack_on, "gfx90a:sramecc+:xnack+").usable);
  const auto off = check(xnack_on, "gfx90a:sramecc+:xnack-");
  CHECK_FALSE(off.usable);
  CHECK_THAT(off.reason, Catch::Contains("its gfx90a one needs xnack+ and the device runs xnack-") &&
                             Catch::Contains("-DVNN_HIP_ARCHS=\"gfx908;gfx90a\""));
  // A device that does not say its mode cannot run code that requires one.
  const auto silent = check(xnack_on, "gfx90a");
  CHECK_FALSE(silent.usable);
  CHECK_THAT(silent.reason, Catch::Contains("does not report its xnack mode"));
  // Several features: all must agree.
  CHECK(check({"gfx90a:sramecc+:xnack-"}, "gfx90a:sramecc+:xnack-").usable);
  CHECK_FALSE(check({"gfx90a:sramecc+:xnack-"}, "gfx90a:sramecc-:xnack-").usable);
  // Another entry for the same processor can still match.
  CHECK(check({"gfx90a:xnack+", "gfx90a:xnack-"}, "gfx90a:sramecc+:xnack-").usable);
}

TEST_CASE("hip_arch: an empty compiled list runs nowhere") {
  const auto c = check({}, "gfx90a:sramecc+:xnack-");
  CHECK_FALSE(c.usable);
  CHECK_THAT(c.reason, Catch::Contains("this build has no code objects;") &&
                           Catch::Contains("-DVNN_HIP_ARCHS=\"gfx90a\""));
  CHECK(split("").empty());
  CHECK(split(" ; ,").empty());
}

TEST_CASE("hip_arch: malformed or missing device names are unusable, never matched") {
  const auto none = check(built, "");
  CHECK_FALSE(none.usable);
  CHECK_THAT(none.reason, Catch::Contains("did not report the device's arch") && Catch::Contains("gfx908, gfx90a"));
  for (const std::string dev : {"908", "gfx", "gfx90", "gfx90A", "gfx90a:", "gfx90a:xnack", "gfx90a:xnack*",
                                "gfx90a:xnack+:xnack-", "gfx90a::xnack+", "Vega 20", "gfx90a :xnack+",
                                "gfx12345"}) {
    INFO(dev);
    const auto c = check(built, dev);
    CHECK_FALSE(c.usable);
    CHECK_THAT(c.reason, Catch::Contains("device's arch is unreadable") && Catch::Contains("'" + dev + "'") &&
                             Catch::Contains("gfx908, gfx90a"));
  }
  // A malformed entry in the compiled list never matches anything.
  CHECK_FALSE(check({"gfx90a:xnack"}, "gfx90a:sramecc+:xnack-").usable);
}

TEST_CASE("hip_arch: target IDs parse into processor and features; the build's list splits") {
  Target t;
  std::string why;
  REQUIRE(parse("gfx90a:sramecc+:xnack-", &t, &why));
  CHECK(t.processor == "gfx90a");
  REQUIRE(t.features.size() == 2);
  CHECK(t.features[0] == std::make_pair(std::string("sramecc"), '+'));
  CHECK(t.features[1] == std::make_pair(std::string("xnack"), '-'));
  REQUIRE(parse("gfx1030", &t, &why));
  CHECK(t.features.empty());
  CHECK_FALSE(parse("gfx90a:xnack", &t, &why));
  CHECK_THAT(why, Catch::Contains("feature 'xnack' lacks its + or -"));
  CHECK(split("gfx908;gfx90a") == std::vector<std::string>{"gfx908", "gfx90a"});
  CHECK(split("gfx908, gfx90a:xnack+") == std::vector<std::string>{"gfx908", "gfx90a:xnack+"});
  CHECK(vnn::hip_arch::describe({"gfx908", "gfx90a"}) == "gfx908, gfx90a");
}

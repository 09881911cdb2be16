// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA plugin's rules for several GPUs in one process (backends/cuda/
// cuda_devices.hpp) and for which devices a Kokkos 4.x build can run
// (backends/cuda/cuda_arch.hpp's Kokkos-version rule). Host-only: runs where
// there is no GPU; the GPU side is in ci/gpu-check.sh.
#include <catch2/catch.hpp>

#include "cuda/cuda_arch.hpp"
#include "cuda/cuda_devices.hpp"

using namespace vnn::cuda_devices;

TEST_CASE("the one-GPU rule holds before Kokkos 4.3 and says why") {
  for (int v : {30401, 40000, 40299}) {
    INFO("KOKKOS_VERSION " << v);
    const Rule r = rule(v);
    CHECK_FALSE(r.multi_gpu);
    CHECK_THAT(r.reason, Catch::Contains("one GPU per process with Kokkos " + version_text(v)) &&
                             Catch::Contains("Kokkos >= 4.3") && Catch::Contains("-DKokkos_DIR"));
    CHECK_THAT(report(r), Catch::StartsWith("multi_gpu=no (one GPU per process"));
  }
  CHECK(version_text(30401) == "3.4.1");
  CHECK(version_text(40601) == "4.6.1");
}

TEST_CASE("Kokkos 4.3 and later run several GPUs") {
  for (int v : {40300, 40601, 50000}) {
    INFO("KOKKOS_VERSION " << v);
    CHECK(rule(v).multi_gpu);
    CHECK(rule(v).reason.empty());
    CHECK_THAT(report(rule(v)), Catch::StartsWith("multi_gpu=yes"));
  }
}

TEST_CASE("init_device admits devices by the rule") {
  const Rule one = rule(30401), many = rule(40601);
  // The first device always starts; starting it again is a no-op.
  CHECK(admit(one, {}, 1, 2).ok);
  CHECK(admit(one, {1}, 1, 2).ok);
  // A second device: refused with the first one and the reason on 3.4.
  Admission a = admit(one, {0}, 1, 2);
  CHECK_FALSE(a.ok);
  CHECK_THAT(a.reason, Catch::StartsWith("this process already runs on cuda:0; one GPU per process"));
  // Accepted on 4.6, in any order, as long as the device exists.
  CHECK(admit(many, {0}, 1, 2).ok);
  CHECK(admit(many, {1, 0}, 2, 4).ok);
  for (int bad : {-1, 2, 7}) {
    Admission b = admit(many, {0}, bad, 2);
    CHECK_FALSE(b.ok);
    CHECK_THAT(b.reason, Catch::Contains("no device cuda:" + std::to_string(bad) + " (2 found)"));
    CHECK_FALSE(admit(one, {}, bad, 2).ok);
  }
}

TEST_CASE("copies between two devices go peer-to-peer only where peer access is on") {
  CHECK(route(0, 0, false) == CopyRoute::same_device);
  CHECK(route(1, 1, true) == CopyRoute::same_device);
  CHECK(route(0, 1, true) == CopyRoute::peer);
  CHECK(route(1, 0, false) == CopyRoute::staged_host);
  CHECK(std::string(route_name(CopyRoute::staged_host)) == "staged through host memory");
}

TEST_CASE("a Kokkos 4.x build also runs its PTX on later GPUs") {
  using vnn::cuda_arch::check;
  const std::vector<int> hopper{90};  // Kokkos_ARCH_HOPPER90: sm_90 SASS + compute_90 PTX
  CHECK(check(hopper, 90, 9, 0, 40601).usable);
  CHECK(check(hopper, 90, 10, 0, 40601).usable);   // Blackwell through the JIT: Kokkos 4 only warns
  CHECK_FALSE(check(hopper, 90, 10, 0, 30401).usable);  // Kokkos 3.4 aborts there
  const auto older = check(hopper, 90, 8, 0, 40601);  // code for a newer GPU never runs
  CHECK_FALSE(older.usable);
  CHECK_THAT(older.reason, Catch::Contains("sm_80") && Catch::Contains("sm_90") &&
                               Catch::Contains("compute_90 PTX") && Catch::Contains("Kokkos_ARCH_"));
  const std::vector<int> ampere{80};
  CHECK(check(ampere, 80, 9, 0, 40601).usable);        // sm_80 PTX JIT on an H100/H200
  CHECK_FALSE(check(ampere, 80, 9, 0, 30401).usable);  // the 3.4 rule: fatal
  CHECK(check(ampere, 80, 8, 6, 30401).usable);        // same major: both rules
}

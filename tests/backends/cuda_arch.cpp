// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Which NVIDIA devices the CUDA plugin reports usable (backends/cuda/
// cuda_arch.hpp): Kokkos aborts the process at initialisation unless the
// plugin has SASS of the device's major compute capability, so the probe
// must mark the others skipped with the reason instead. Host-only: runs
// where there is no GPU.
#include <catch2/catch.hpp>

#include "cuda/cuda_arch.hpp"

using vnn::cuda_arch::check;

TEST_CASE("devices with SASS of their major version are usable") {
  const std::vector<int> built{80, 90};  // the default build: AMPERE80 + extra sm_90
  CHECK(check(built, 8, 0).usable);      // A100
  CHECK(check(built, 8, 6).usable);      // RTX 30xx, A10: sm_80 code runs on 8.6
  CHECK(check(built, 8, 9).usable);      // L4, RTX 40xx
  CHECK(check(built, 9, 0).usable);      // H100 / H200
}

TEST_CASE("devices of another major version are skipped, saying why and what to do") {
  const std::vector<int> built{80, 90};
  for (auto cc : {std::pair<int, int>{7, 0}, {7, 5}, {10, 0}, {12, 0}}) {
    auto c = check(built, cc.first, cc.second);
    INFO("sm_" << cc.first << cc.second);
    CHECK_FALSE(c.usable);
    CHECK_THAT(c.reason, Catch::Contains("sm_" + std::to_string(cc.first) + std::to_string(cc.second)) &&
                             Catch::Contains("sm_80, sm_90") &&
                             Catch::Contains("VNN_KOKKOS_CUDA_EXTRA_SASS=" + std::to_string(cc.first) +
                                             std::to_string(cc.second)));
  }
  // sm_80 alone (a user's Kokkos without the extra SASS) cannot run Hopper:
  // the JIT of its PTX would start, and Kokkos would abort.
  CHECK_FALSE(check({80}, 9, 0).usable);
  // SASS for a higher minor does not run on a lower one (sm_86 on an A100).
  CHECK_FALSE(check({86}, 8, 0).usable);
  CHECK(vnn::cuda_arch::describe({80, 90}, 80) == "sm_80 sm_90 SASS, compute_80 PTX");
}

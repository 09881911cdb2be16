// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// float32 matmul where the CPU plugin may route it to oneDNN's sgemm
// (backends/openmp/onednn_matmul.cpp: large GEMMs where oneDNN's JIT has
// AVX-512): results against float64 on the same
// device, transposed operands included, and the profiler names the path the
// device's properties announce (matmul_onednn=yes...), on either side of the
// size rule. OPENBLAS_CORETYPE is left as the machine sets it.
#include <catch2/catch.hpp>
#include <string>

#include "support/device_under_test.hpp"
#include "vnn/profiler.h"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

bool sgemm_onednn(const Device& dev) {
  for (const auto& [k, v] : device_info(dev).properties)
    if (k == "matmul_onednn") return v.rfind("yes", 0) == 0;
  return false;
}

Tensor values(const Shape& s, uint32_t seed, const Device& dev) {
  return from_vector(vnn::test::lcg_values(size_t(s.numel()), seed, 12345u, -1.0, 1.0), s).to(dev).to(kFloat32);
}

}  // namespace

TEST_CASE("float32 matmul on the CPU BLAS the rule picks matches float64, and the profiler names it") {
  Device dev = device_under_test();
  const bool onednn = sgemm_onednn(dev);
  bool blas = false;  // a CPU plugin built without OpenBLAS (VNN_CPU_BLAS=OFF) runs the Kokkos kernel
  for (const auto& r : vnn::backend_report())
    if (r.backend == "openmp") blas = r.description.find("OpenBLAS") != std::string::npos;
  struct M {
    int64_t m, k, n;
    bool large;  // at least 32^3 multiply-adds (the rule's floor)
  };
  for (M s : {M{600, 530, 520, true}, M{256, 256, 256, true}, M{64, 32, 16, true}})
    for (int variant = 0; variant < 3; ++variant) {
      INFO(s.m << "x" << s.k << " @ " << s.k << "x" << s.n << " variant " << variant << " on " << dev
               << (onednn ? " (oneDNN sgemm rule on)" : ""));
      // 0: plain; 1: a transposed view; 2: b transposed view.
      Tensor a = variant == 1 ? values({s.k, s.m}, 1, dev).transpose(0, 1) : values({s.m, s.k}, 1, dev);
      Tensor b = variant == 2 ? values({s.n, s.k}, 2, dev).transpose(0, 1) : values({s.k, s.n}, 2, dev);
      profiler::Profile p;
      Tensor c = matmul(a, b);
      REQUIRE(c.dtype() == kFloat32);
      synchronize(dev);
      p.stop();
      Tensor want = matmul(a.to(kFloat64), b.to(kFloat64));
      CHECK(max_abs_diff(c.to(kFloat64), want) < 1e-3);
      std::string path;
      for (const auto& e : p.events())
        if (e.name.rfind("matmul", 0) == 0) path = e.name;
      if (dev.is_cpu())
        CHECK(path == (onednn && s.large ? "matmul[onednn]" : blas ? "matmul[openblas]" : "matmul[kokkos]"));
    }
}

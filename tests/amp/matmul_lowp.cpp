// float16 / bfloat16 matmul on the device under test against float64 math
// on the same (16-bit) values: every result within one rounding of the
// exact product (float32 accumulation, one rounding), over the layouts a
// view can have and both sides of the CPU plugin's BLAS threshold and of
// its 256-wide k panels. On cpu the product reads the 16-bit storage (no
// COPY ops: the profiler sees one matmul and nothing else).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::lcg_values;

namespace {

// Relative step of the 16-bit type (2^-10 float16, 2^-7 bfloat16).
double ulp(DType t) { return t == kFloat16 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -7); }

Tensor values(const Shape& s, DType t, uint32_t salt, const Device& dev) {
  const auto v = lcg_values(size_t(s.numel()), 14, salt, -1.0, 1.0);
  return from_vector(v, s).to(dev).to(t);
}

// Each element of got within one 16-bit rounding (plus float32 sums) of
// a @ b computed in float64 from the same 16-bit inputs.
void check_product(const Tensor& a, const Tensor& b, const std::string& what) {
  INFO(what << " " << name(a.dtype()) << " " << a.sizes().str() << " @ " << b.sizes().str());
  Tensor got = matmul(a, b);
  REQUIRE(got.dtype() == a.dtype());
  Tensor exact = matmul(a.to(kFloat64), b.to(kFloat64));
  Tensor mag = matmul(abs(a.to(kFloat64)), abs(b.to(kFloat64)));  // bounds the float32 sum's error
  REQUIRE(got.sizes() == exact.sizes());
  auto g = got.to(kFloat64).contiguous().to_vector<double>(), e = exact.contiguous().to_vector<double>(),
       m = mag.contiguous().to_vector<double>();
  const double k = double(a.size(-1));
  int bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double tol = ulp(a.dtype()) * std::fabs(e[i]) + k * std::ldexp(1.0, -23) * m[i] + 1e-30;
    if (!(std::fabs(g[i] - e[i]) <= tol) && ++bad <= 3) {
      INFO("element " << i << ": got " << g[i] << ", exact " << e[i] << ", tolerance " << tol);
      CHECK(std::fabs(g[i] - e[i]) <= tol);
    }
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("float16/bfloat16 matmul: within one rounding of the exact product, every layout") {
  Device dev = device_under_test();
  for (DType t : {kFloat16, kBFloat16}) {
    check_product(values({5, 7}, t, 1, dev), values({7, 3}, t, 2, dev), "small (inline kernel)");
    check_product(values({64, 600}, t, 3, dev), values({600, 70}, t, 4, dev), "k over two panels (BLAS)");
    check_product(values({300, 96}, t, 5, dev).transpose(0, 1), values({300, 80}, t, 6, dev), "transposed a");
    check_product(values({96, 300}, t, 7, dev), values({80, 300}, t, 8, dev).transpose(0, 1), "transposed b");
    check_product(values({3, 40, 257}, t, 9, dev), values({257, 33}, t, 10, dev), "batched, broadcast b");
    check_product(values({2, 3, 50, 20}, t, 11, dev).slice(3, 0, 20, 2), values({2, 3, 10, 40}, t, 12, dev),
                  "strided a (packed)");
    check_product(values({4, 0}, t, 13, dev), values({0, 6}, t, 14, dev), "k = 0");
  }
}

TEST_CASE("float16/bfloat16 matmul on cpu reads the 16-bit storage: one op, no float32 copies") {
  Device dev = device_under_test();
  if (dev.backend() != "cpu") return;  // the OpenCL plugin keeps its float32 route
  for (DType t : {kFloat16, kBFloat16}) {
    Tensor a = values({64, 300}, t, 21, dev), b = values({300, 80}, t, 22, dev);
    (void)matmul(a, b);  // the first call learns the native path
    profiler::Profile p;
    Tensor c = matmul(a, b);
    p.stop();
    int matmuls = 0, others = 0;
    for (const auto& e : p.events()) {
      if (e.kind != profiler::EventKind::op) continue;
      (e.name.rfind("matmul", 0) == 0 ? matmuls : others)++;
    }
    CHECK(matmuls == 1);
    CHECK(others == 0);
    CHECK(c.dtype() == t);
  }
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Kokkos kernels' float16 <-> float32 conversions (backends/kokkos/
// kernels/types.hpp, branch-free so that loops over 16-bit storage
// vectorise) against straightforward bit-by-bit reference versions: every
// one of the 65536 halves to float, and float to half at every rounding
// boundary (each half, each midpoint between neighbours, one and two ulps
// either side), over a sweep of all float bit patterns, and the specials.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "kokkos/kernels/types.hpp"

namespace {

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// IEEE 754 binary16 decoded field by field.
float ref_half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1f) return from_bits(sign | 0x7f800000u | (man << 13));  // inf / NaN, payload kept
  if (exp == 0) {
    const float v = std::ldexp(float(man), -24);  // zero / subnormal
    return sign ? -v : v;
  }
  return from_bits(sign | ((exp + 112u) << 23) | (man << 13));
}

// Round to nearest, ties to even, done on the exact value in double.
uint16_t ref_float_to_half(float f) {
  const uint16_t sign = std::signbit(f) ? 0x8000u : 0u;
  if (std::isnan(f)) return uint16_t(sign | 0x7e00u);
  const double a = std::fabs(double(f));
  if (a == 0.0) return sign;
  if (a >= 65520.0) return uint16_t(sign | 0x7c00u);  // the midpoint of 65504 and 2^16 ties to even: inf
  // a = q * 2^(e-10) with the step of the half binade a falls in
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  const int unit = std::max(e - 1, -14) - 10;  // log2 of the half ulp at a
  const double q = a / std::ldexp(1.0, unit);  // exact: a has 24 bits, the quotient is a power-of-two scaling
  double r = std::floor(q);
  const double frac = q - r;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(r, 2.0) != 0.0)) r += 1.0;
  // r * 2^unit as half bits: subnormals (unit = -24) take r directly;
  // normals rebuild exponent and mantissa (r may have carried to 2048)
  if (unit == -24) return uint16_t(sign | uint16_t(r));  // r <= 1024: 1024 is the smallest normal, bits 0x400
  int exp = unit + 10 + 15;                             // biased exponent of 2^(unit+10)
  uint32_t m = uint32_t(r);
  if (m == 2048) m = 1024, ++exp;
  return uint16_t(sign | uint32_t(exp) << 10 | (m - 1024u));
}

// Compares one conversion; counts what was checked and what differed.
struct Tally {
  int64_t checked = 0, bad = 0;
};
void check_float(float f, Tally& t) {
  const uint16_t got = vnn::kernels::float_to_half(f), want = ref_float_to_half(f);
  ++t.checked;
  if (got != want && ++t.bad <= 5) {
    INFO("float bits 0x" << std::hex << bits(f) << " value " << f << ": got 0x" << got << ", want 0x" << want);
    CHECK(got == want);
  }
}

}  // namespace

TEST_CASE("float16 to float32: all 65536 halves, exact") {
  int bad = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    const float got = vnn::kernels::half_to_float(uint16_t(h)), want = ref_half_to_float(uint16_t(h));
    if (bits(got) != bits(want)) {
      if (++bad <= 5) INFO("half 0x" << std::hex << h << ": got 0x" << bits(got) << ", want 0x" << bits(want));
      CHECK(bits(got) == bits(want));
    }
  }
  CHECK(bad == 0);
  // spot values, independent of the reference
  CHECK(vnn::kernels::half_to_float(0x3c00) == 1.0f);
  CHECK(vnn::kernels::half_to_float(0xc000) == -2.0f);
  CHECK(vnn::kernels::half_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(vnn::kernels::half_to_float(0x7bff) == 65504.0f);
  CHECK(std::isinf(vnn::kernels::half_to_float(0xfc00)));
  CHECK(std::isnan(vnn::kernels::half_to_float(0x7e00)));
  CHECK(std::signbit(vnn::kernels::half_to_float(0x8000)));
}

TEST_CASE("float32 to float16: every rounding boundary and a sweep of all floats, round to nearest even") {
  Tally t;
  for (uint32_t h = 0; h < 0x7c00u; ++h) {  // every finite positive half, its value and the midpoint above
    const double v = ref_half_to_float(uint16_t(h));
    const double next = h + 1 < 0x7c00u ? double(ref_half_to_float(uint16_t(h + 1))) : 65536.0;
    for (double x : {v, (v + next) / 2}) {  // both exact in float
      const uint32_t b = bits(float(x));
      for (int d = -2; d <= 2; ++d) {
        if (b == 0 && d < 0) continue;
        check_float(from_bits(b + uint32_t(d)), t);
        check_float(-from_bits(b + uint32_t(d)), t);
      }
    }
  }
  for (uint64_t u = 0; u <= 0xffffffffu; u += 4093) check_float(from_bits(uint32_t(u)), t);  // every binade, NaNs
  std::mt19937 rng(14);
  std::normal_distribution<float> n(0.0f, 1.0f);
  for (int i = 0; i < 200000; ++i) check_float(n(rng) * std::ldexp(1.0f, i % 40 - 30), t);
  CHECK(t.bad == 0);
  CHECK(t.checked > 1500000);
  // spot values, independent of the reference
  using vnn::kernels::float_to_half;
  CHECK(float_to_half(1.0f) == 0x3c00);
  CHECK(float_to_half(65504.0f) == 0x7bff);
  CHECK(float_to_half(65519.0f) == 0x7bff);
  CHECK(float_to_half(65520.0f) == 0x7c00);  // ties to even: up to inf
  CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);                           // tie, even below
  CHECK(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);                       // tie, even above
  CHECK(float_to_half(std::ldexp(1.0f, -25)) == 0x0000);                                   // tie to zero
  CHECK(float_to_half(std::ldexp(1.5f, -25)) == 0x0001);
  CHECK(float_to_half(-std::numeric_limits<float>::infinity()) == 0xfc00);
  CHECK(float_to_half(std::numeric_limits<float>::quiet_NaN()) == 0x7e00);
  CHECK(float_to_half(std::numeric_limits<float>::denorm_min()) == 0x0000);
  CHECK(float_to_half(-0.0f) == 0x8000);
}

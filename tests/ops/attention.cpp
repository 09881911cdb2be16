// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// scaled_dot_product_attention on the device under test: the fused kernel
// (forced with SDPBackend::flash: cpu and opencl must have one) and the math
// path, each against a float64 host reference written here; gradients by
// finite differences in float64; dropout masks equal across paths and
// devices for one seed; the fused path's memory at L = S = 8192.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor values(const Shape& s, uint32_t salt, DType t = kFloat32) {
  auto v = vnn::test::lcg_values(size_t(s.numel()), 7, salt, -1.0, 1.0);
  return from_vector(v, s).to(t);
}

struct Case {
  int64_t N, Hq, Hk, L, S, E, Ev;
  bool causal;
  int mask;  // 0 none, 1 bool [L, S], 2 float [N, 1, L, S], 3 bool [N, 1, 1, S] (padding)
};

// The reference on the host in float64: q [N, Hq, L, E], k/v [N, Hk, S, *],
// mask additive [N, Hq, L, S] (expanded) or empty; a row with no finite
// score gives 0.
std::vector<double> reference(const Case& c, const std::vector<double>& q, const std::vector<double>& k,
                              const std::vector<double>& v, const std::vector<double>& mask, double scale) {
  std::vector<double> out(size_t(c.N * c.Hq * c.L * c.Ev), 0.0);
  const int64_t G = c.Hq / c.Hk;
  std::vector<double> s(size_t(c.S));
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t h = 0; h < c.Hq; ++h)
      for (int64_t i = 0; i < c.L; ++i) {
        const int64_t hk = h / G;
        double mx = -kInf;
        for (int64_t j = 0; j < c.S; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < c.E; ++e)
            dot += q[size_t(((n * c.Hq + h) * c.L + i) * c.E + e)] * k[size_t(((n * c.Hk + hk) * c.S + j) * c.E + e)];
          double x = dot * scale;
          if (!mask.empty()) x += mask[size_t(((n * c.Hq + h) * c.L + i) * c.S + j)];
          if (c.causal && j > i) x = -kInf;
          s[size_t(j)] = x;
          mx = std::max(mx, x);
        }
        if (mx == -kInf) continue;
        double sum = 0;
        for (int64_t j = 0; j < c.S; ++j) sum += (s[size_t(j)] = std::exp(s[size_t(j)] - mx));
        for (int64_t j = 0; j < c.S; ++j)
          for (int64_t e = 0; e < c.Ev; ++e)
            out[size_t(((n * c.Hq + h) * c.L + i) * c.Ev + e)] +=
                s[size_t(j)] / sum * v[size_t(((n * c.Hk + hk) * c.S + j) * c.Ev + e)];
      }
  return out;
}

Tensor make_mask(const Case& c, const Device& dev) {
  switch (c.mask) {
    case 1: {  // a bool [L, S] band: attend where |i - j| <= 3 or j == 0
      std::vector<uint8_t> m(size_t(c.L * c.S));
      for (int64_t i = 0; i < c.L; ++i)
        for (int64_t j = 0; j < c.S; ++j) m[size_t(i * c.S + j)] = (std::abs(i - j) <= 3 || j == 0) ? 1 : 0;
      return from_vector(m, {c.L, c.S}).to(kBool).to(dev);
    }
    case 2: return mul(values({c.N, 1, c.L, c.S}, 99), 2.0).to(dev);
    case 3: {  // key padding: the last keys of batch n masked out (row n = 0 keeps all)
      std::vector<uint8_t> m(size_t(c.N * c.S));
      for (int64_t n = 0; n < c.N; ++n)
        for (int64_t j = 0; j < c.S; ++j) m[size_t(n * c.S + j)] = j < c.S - n ? 1 : 0;
      return from_vector(m, {c.N, 1, 1, c.S}).to(kBool).to(dev);
    }
    default: return Tensor();
  }
}

// The mask as the reference wants it: additive, expanded to [N, Hq, L, S].
std::vector<double> additive(const Tensor& mask, const Case& c) {
  if (!mask.defined()) return {};
  Tensor m = mask.cpu();
  if (m.dtype() == kBool) m = where(m, zeros(m.sizes(), TensorOptions().with(kFloat64)), -kInf);
  return m.to(kFloat64).expand({c.N, c.Hq, c.L, c.S}).contiguous().to_vector<double>();
}

double max_diff(const Tensor& t, const std::vector<double>& want) {
  auto got = t.to(kFloat64).cpu().contiguous().to_vector<double>();
  REQUIRE(got.size() == want.size());
  double m = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i])) return kInf;
    m = std::max(m, std::fabs(got[i] - want[i]));
  }
  return m;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {2, 3, 3, 7, 7, 8, 8, false, 0},     {1, 2, 2, 33, 70, 16, 24, false, 0}, {2, 4, 2, 65, 65, 32, 32, true, 0},
      {1, 4, 1, 1, 40, 64, 64, false, 0},  {2, 2, 2, 20, 11, 8, 5, false, 1},   {3, 2, 2, 17, 29, 16, 16, false, 2},
      {3, 2, 2, 9, 13, 8, 8, false, 3},    {1, 1, 1, 5, 300, 8, 8, true, 0},   {1, 2, 2, 130, 129, 64, 64, true, 0},
      {1, 1, 1, 3, 19, 256, 256, false, 0}, {1, 2, 1, 40, 30, 128, 96, true, 0}, {2, 2, 2, 1, 1, 4, 4, false, 0},
  };
  return all;
}

}  // namespace

TEST_CASE("sdpa: fused and math paths match a float64 reference") {
  const Device dev = device_under_test();
  for (const Case& c : cases()) {
    INFO("N=" << c.N << " Hq=" << c.Hq << " Hk=" << c.Hk << " L=" << c.L << " S=" << c.S << " E=" << c.E
              << " Ev=" << c.Ev << " causal=" << c.causal << " mask=" << c.mask << " on " << dev);
    Tensor q = values({c.N, c.Hq, c.L, c.E}, 1), k = values({c.N, c.Hk, c.S, c.E}, 2),
           v = values({c.N, c.Hk, c.S, c.Ev}, 3);
    Tensor mask = make_mask(c, dev);
    const double scale = 1.0 / std::sqrt(double(c.E));
    auto want = reference(c, q.to(kFloat64).to_vector<double>(), k.to(kFloat64).to_vector<double>(),
                          v.to(kFloat64).to_vector<double>(), additive(mask, c), scale);
    const bool gqa = c.Hq != c.Hk;
    for (SDPBackend path : {SDPBackend::flash, SDPBackend::math}) {
      INFO("path " << (path == SDPBackend::flash ? "flash" : "math"));
      SdpaKernelGuard guard(path);
      Tensor out = scaled_dot_product_attention(q.to(dev), k.to(dev), v.to(dev), mask, 0.0, c.causal, std::nullopt,
                                                gqa);
      CHECK(out.sizes() == Shape{c.N, c.Hq, c.L, c.Ev});
      CHECK(out.device() == dev);
      CHECK(max_diff(out, want) < 2e-5);
      Tensor out64 = scaled_dot_product_attention(q.to(dev).to(kFloat64), k.to(dev).to(kFloat64),
                                                  v.to(dev).to(kFloat64),
                                                  mask.defined() && mask.dtype() != kBool ? mask.to(kFloat64) : mask,
                                                  0.0, c.causal, std::nullopt, gqa);
      CHECK(out64.dtype() == kFloat64);
      CHECK(max_diff(out64, want) < 1e-12);
    }
  }
}

TEST_CASE("sdpa: PyTorch's shapes: 3-D, broadcast batch, head broadcast, scale, empty batch") {
  const Device dev = device_under_test();
  Tensor q = values({3, 6, 8}, 11).to(dev), k = values({3, 9, 8}, 12).to(dev), v = values({3, 9, 5}, 13).to(dev);
  // 3-D [H, L, E] equals the 4-D form with N = 1.
  Tensor a = scaled_dot_product_attention(q, k, v, Tensor(), 0.0, false, 0.5);
  Tensor b = scaled_dot_product_attention(q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0), Tensor(), 0.0, false, 0.5);
  CHECK(a.sizes() == Shape{3, 6, 5});
  CHECK(max_abs_diff(a, b.squeeze(0)) < 1e-6);
  // One key/value head broadcast over 3 query heads equals the repeated heads.
  Tensor k1 = k.narrow(0, 0, 1), v1 = v.narrow(0, 0, 1);
  Tensor c = scaled_dot_product_attention(q, k1, v1);
  Tensor d = scaled_dot_product_attention(q, k1.expand({3, 9, 8}).contiguous(), v1.expand({3, 9, 5}).contiguous());
  CHECK(max_abs_diff(c, d) < 1e-6);
  // GQA equals repeating each key/value head over its group.
  Tensor q4 = values({2, 4, 6, 8}, 14).to(dev), k4 = values({2, 2, 9, 8}, 15).to(dev), v4 = values({2, 2, 9, 8}, 16).to(dev);
  Tensor g = scaled_dot_product_attention(q4, k4, v4, Tensor(), 0.0, true, std::nullopt, true);
  Tensor rk = k4.unsqueeze(2).expand({2, 2, 2, 9, 8}).reshape({2, 4, 9, 8});
  Tensor rv = v4.unsqueeze(2).expand({2, 2, 2, 9, 8}).reshape({2, 4, 9, 8});
  CHECK(max_abs_diff(g, scaled_dot_product_attention(q4, rk, rv, Tensor(), 0.0, true)) < 1e-6);
  // Non-contiguous views (heads split from a [N, L, H*E] projection).
  Tensor proj = values({2, 6, 4 * 8}, 17).to(dev);
  Tensor qv = proj.view({2, 6, 4, 8}).transpose(1, 2);
  CHECK(max_abs_diff(scaled_dot_product_attention(qv, qv, qv), scaled_dot_product_attention(
                                                                    qv.contiguous(), qv.contiguous(), qv.contiguous())) < 1e-6);
  // An empty batch gives an empty output.
  Tensor e = scaled_dot_product_attention(values({0, 2, 4, 8}, 1).to(dev), values({0, 2, 4, 8}, 2).to(dev),
                                          values({0, 2, 4, 8}, 3).to(dev));
  CHECK(e.sizes() == Shape{0, 2, 4, 8});
  // Empty sequences and head dims, with gradients (zeros where defined).
  for (SDPBackend path : {SDPBackend::flash, SDPBackend::math}) {
    SdpaKernelGuard guard(path);
    struct Dims { int64_t L, S, E, Ev; };
    for (Dims s : {Dims{0, 5, 4, 4}, Dims{3, 0, 4, 4}, Dims{3, 5, 4, 0}, Dims{3, 5, 0, 2}}) {
      INFO("L=" << s.L << " S=" << s.S << " E=" << s.E << " Ev=" << s.Ev);
      Tensor qe = values({1, 2, s.L, s.E}, 5).to(dev).requires_grad_(), ke = values({1, 2, s.S, s.E}, 6).to(dev).requires_grad_(),
             ve = values({1, 2, s.S, s.Ev}, 7).to(dev).requires_grad_();
      Tensor y = scaled_dot_product_attention(qe, ke, ve);
      CHECK(y.sizes() == Shape{1, 2, s.L, s.Ev});
      // E = 0: every score is 0, so each row is the mean of the values.
      Tensor want = s.E == 0 ? mean(ve.detach(), {2}, true).expand({1, 2, s.L, s.Ev}) : zeros({1, 2, s.L, s.Ev});
      CHECK(max_abs_diff(y, want) < 1e-6);
      sum(y).backward();
      for (const Tensor& g : {qe.grad(), ke.grad()})
        if (g.defined()) CHECK(max_abs_diff(g, zeros(g.sizes())) == 0.0);
    }
  }
  // A fully masked row gives 0 (PyTorch's safe softmax), on both paths.
  Tensor none = zeros({6, 9}, TensorOptions(dev).with(kBool));
  for (SDPBackend path : {SDPBackend::flash, SDPBackend::math}) {
    SdpaKernelGuard guard(path);
    Tensor z = scaled_dot_product_attention(q, k, v, none);
    CHECK(max_abs_diff(z, zeros({3, 6, 5})) == 0.0);
  }
}

TEST_CASE("sdpa: gradients by finite differences in float64, fused and math") {
  const Device dev = device_under_test();
  for (SDPBackend path : {SDPBackend::flash, SDPBackend::math}) {
    for (int variant = 0; variant < 3; ++variant) {
      INFO("path " << int(path) << " variant " << variant << " on " << dev);
      SdpaKernelGuard guard(path);
      const int64_t Hk = variant == 2 ? 1 : 2;
      Tensor q = values({2, 2, 5, 4}, 21, kFloat64).to(dev).requires_grad_();
      Tensor k = values({2, Hk, 7, 4}, 22, kFloat64).to(dev).requires_grad_();
      Tensor v = values({2, Hk, 7, 3}, 23, kFloat64).to(dev).requires_grad_();
      Tensor mask = variant == 1 ? values({1, 1, 5, 7}, 24, kFloat64).to(dev) : Tensor();
      auto f = [&](const std::vector<Tensor>& x) {
        return scaled_dot_product_attention(x[0], x[1], x[2], mask, 0.0, variant == 0, std::nullopt, variant == 2);
      };
      auto r = autograd::gradcheck(f, {q, k, v});
      CHECK(r.ok);
      INFO(r.message);
    }
  }
  // A float mask that requires grad is differentiated (the math path).
  Tensor q = values({1, 1, 3, 4}, 31, kFloat64).to(dev), k = values({1, 1, 5, 4}, 32, kFloat64).to(dev),
         v = values({1, 1, 5, 2}, 33, kFloat64).to(dev);
  Tensor m = values({3, 5}, 34, kFloat64).to(dev).requires_grad_();
  auto r = autograd::gradcheck([&](const std::vector<Tensor>& x) { return scaled_dot_product_attention(q, k, v, x[0]); },
                               {m});
  CHECK(r.ok);
}

TEST_CASE("sdpa: fused gradients equal the math path's in float32") {
  const Device dev = device_under_test();
  for (bool causal : {false, true}) {
    Tensor q0 = values({2, 4, 70, 32}, 41), k0 = values({2, 2, 70, 32}, 42), v0 = values({2, 2, 70, 16}, 43);
    Tensor w = values({2, 4, 70, 16}, 44).to(dev);
    std::vector<Tensor> got[2];
    for (int p = 0; p < 2; ++p) {
      SdpaKernelGuard guard(p == 0 ? SDPBackend::flash : SDPBackend::math);
      Tensor q = q0.to(dev).requires_grad_(), k = k0.to(dev).requires_grad_(), v = v0.to(dev).requires_grad_();
      sum(mul(scaled_dot_product_attention(q, k, v, Tensor(), 0.0, causal, std::nullopt, true), w)).backward();
      got[p] = {q.grad(), k.grad(), v.grad()};
    }
    for (int i = 0; i < 3; ++i) CHECK(max_abs_diff(got[0][size_t(i)], got[1][size_t(i)]) < 1e-5);
  }
}

TEST_CASE("sdpa: dropout draws one mask on every path and device for one seed") {
  const Device dev = device_under_test();
  Tensor q0 = values({2, 3, 33, 16}, 51), k0 = values({2, 3, 40, 16}, 52), v0 = values({2, 3, 40, 16}, 53);
  auto run = [&](const Device& d, SDPBackend path, std::vector<Tensor>* grads) {
    SdpaKernelGuard guard(path);
    Generator gen(1234);
    gen.set_offset(77);
    Tensor q = q0.to(d).requires_grad_(), k = k0.to(d).requires_grad_(), v = v0.to(d).requires_grad_();
    Tensor out = scaled_dot_product_attention(q, k, v, Tensor(), 0.3, false, std::nullopt, false, &gen);
    CHECK(gen.offset() == 77 + (2 * 3 * 33 * 40 + 3) / 4);
    sum(out).backward();
    *grads = {q.grad(), k.grad(), v.grad()};
    return out;
  };
  std::vector<Tensor> g_flash, g_math, g_cpu;
  Tensor flash = run(dev, SDPBackend::flash, &g_flash);
  Tensor math = run(dev, SDPBackend::math, &g_math);
  Tensor cpu = run(Device("cpu", 0), SDPBackend::math, &g_cpu);
  CHECK(max_abs_diff(flash, math) < 1e-5);
  CHECK(max_abs_diff(flash, cpu) < 1e-5);
  for (size_t i = 0; i < 3; ++i) CHECK(max_abs_diff(g_flash[i], g_math[i]) < 1e-5);
  // It really drops: without dropout the output differs.
  Tensor plain = scaled_dot_product_attention(q0.to(dev), k0.to(dev), v0.to(dev));
  CHECK(max_abs_diff(flash, plain) > 1e-2);
}

TEST_CASE("sdpa: float16 and bfloat16 compute in float32 and keep their dtype") {
  const Device dev = device_under_test();
  Tensor q = values({1, 2, 19, 16}, 61), k = values({1, 2, 23, 16}, 62), v = values({1, 2, 23, 16}, 63);
  Tensor want = scaled_dot_product_attention(q, k, v, Tensor(), 0.0, true);
  for (DType t : {kFloat16, kBFloat16}) {
    Tensor out = scaled_dot_product_attention(q.to(t).to(dev), k.to(t).to(dev), v.to(t).to(dev), Tensor(), 0.0, true);
    CHECK(out.dtype() == t);
    CHECK(max_abs_diff(out, want) < (t == kFloat16 ? 4e-3 : 3e-2));
  }
}

TEST_CASE("sdpa: the profiler names the path") {
  const Device dev = device_under_test();
  Tensor q = values({1, 1, 8, 8}, 71).to(dev);
  for (SDPBackend path : {SDPBackend::flash, SDPBackend::math}) {
    SdpaKernelGuard guard(path);
    profiler::Profile prof;
    scaled_dot_product_attention(q, q, q).cpu();
    prof.stop();
    const std::string want = path == SDPBackend::flash ? "sdpa[flash]" : "sdpa[math]";
    bool found = false;
    for (const auto& row : prof.key_averages()) found = found || row.name == want;
    CHECK(found);
  }
}

TEST_CASE("sdpa: bad arguments throw typed errors naming what is wrong") {
  const Device dev = device_under_test();
  Tensor q = values({1, 2, 4, 8}, 1).to(dev), k = values({1, 2, 5, 8}, 2).to(dev), v = values({1, 2, 5, 8}, 3).to(dev);
  CHECK_THROWS_AS(scaled_dot_product_attention(q, values({1, 2, 5, 7}, 2).to(dev), v), ShapeError);
  CHECK_THROWS_AS(scaled_dot_product_attention(q, k, values({1, 2, 6, 8}, 3).to(dev)), ShapeError);
  CHECK_THROWS_AS(scaled_dot_product_attention(q, k.to(kFloat64), v), DTypeError);
  CHECK_THROWS_AS(scaled_dot_product_attention(q, k, v, Tensor(), 1.0), ValueError);
  CHECK_THROWS_AS(scaled_dot_product_attention(q, k, v, ones({4, 5}, TensorOptions(dev).with(kBool)), 0.0, true),
                  ValueError);
  CHECK_THROWS_AS(scaled_dot_product_attention(q, k, v, ones({4, 6}, TensorOptions(dev).with(kBool))), ShapeError);
  CHECK_THROWS_AS(scaled_dot_product_attention(values({1, 3, 4, 8}, 1).to(dev), k, v, Tensor(), 0.0, false,
                                               std::nullopt, true),
                  ShapeError);
  try {
    scaled_dot_product_attention(q, values({1, 2, 5, 7}, 2).to(dev), v);
  } catch (const ShapeError& e) {
    CHECK(std::string(e.what()).find("scaled_dot_product_attention") != std::string::npos);
    CHECK(std::string(e.what()).find("[1, 2, 5, 7]") != std::string::npos);
  }
  if (!dev.is_cpu()) CHECK_THROWS_AS(scaled_dot_product_attention(q, k.cpu(), v), DeviceMismatch);
}

TEST_CASE("sdpa: the fused path's memory stays linear in L (L = S = 8192)", "[slow]") {
  const Device dev = device_under_test();
  const int64_t L = 8192, H = 2, E = 64;
  Tensor q = randn({1, H, L, E}, TensorOptions(dev)), k = randn({1, H, L, E}, TensorOptions(dev)),
         v = randn({1, H, L, E}, TensorOptions(dev));
  synchronize(dev);
  const uint64_t inputs = 3 * uint64_t(H * L * E) * 4, output = uint64_t(H * L * E) * 4, lse = uint64_t(H * L) * 4;
  reset_peak_memory_stats(dev);
  const uint64_t before = memory_stats(dev).allocated;
  {
    SdpaKernelGuard guard(SDPBackend::flash);
    Tensor out = scaled_dot_product_attention(q, k, v, Tensor(), 0.0, true);
    synchronize(dev);
    CHECK(std::isfinite(sum(out).item<float>()));
  }
  const uint64_t peak = memory_stats(dev).peak_allocated;
  INFO("peak " << peak << " bytes, inputs + output + lse " << inputs + output + lse);
  CHECK(double(peak) <= 1.1 * double(inputs + output + lse));
  CHECK(peak >= before);
  // The math path's scores alone would be H * L * L * 4 bytes = 512 MiB.
  CHECK(uint64_t(H * L * L) * 4 > 20 * (inputs + output + lse));
}

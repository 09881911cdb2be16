// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The plugin C ABI's SDPA and SDPA_BACKWARD (fused attention) against a
// float64 host reference written here from the ABI comment above
// vnn_sdpa_params: causal and not, additive masks with broadcast and
// transposed strides, fully masked rows, GQA, L != S, sizes that are not
// multiples of any tile, L = 1, E up to 256, Ev != E, permuted q/k/v
// views, and dropout with the same Philox numbers (vnn/philox.h). The
// Kokkos plugins must take every request; a plugin that declines the kind
// (VNN_STATUS_UNSUPPORTED: the core then runs its math path) is told apart
// from one that answers wrongly. On the CPU plugin the cases also run the
// device code, both backward schedules, each ISA's loops and the loops
// without BLAS (the VNN_SDPA_KOKKOS knobs, kernels/attention.hpp). The ABI
// harness starts the plugin from other threads, so these run inline on
// Kokkos::Serial; tests/ops/attention.cpp and bench/sdpa_bench.cpp run the
// OpenMP pool.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backends/abi_plugin.hpp"
#include "vnn/philox.h"

using namespace abi_test;

namespace {

bool is_kokkos_plugin() {
  const std::string n = plugin_name();
  return n == "openmp" || n == "cuda" || n == "hip";
}

enum class MaskKind {
  none,
  full,        // [N, Hq, L, S] dense, a few -inf
  broadcast,   // [1, 1, L, S] broadcast to N and Hq (strides 0, 0, S, 1)
  key_pad,     // [N, 1, 1, S]: -inf on the last keys of batch 1, rows broadcast
  transposed,  // stored [N, Hq, S, L]: the last stride is L
  dead_rows    // dense, with a few rows all -inf (out 0, lse -inf, no gradient)
};

struct Case {
  const char* name;
  int64_t N, Hq, Hk, L, S, E, Ev;
  bool causal = false;
  MaskKind mask = MaskKind::none;
  double dropout = 0.0;
  bool permuted = false;  // q, k, v, out, dout as [N, L, H, E] storage seen as [N, H, L, E]
};

// A 4-D [a, b, c, d] tensor in host memory with its strides (elements).
struct Host4 {
  std::vector<double> v;
  int64_t sizes[4] = {0, 0, 0, 0}, strides[4] = {0, 0, 0, 0};
  size_t storage = 0;
  double& at(int64_t a, int64_t b, int64_t c, int64_t d) {
    return v[size_t(a * strides[0] + b * strides[1] + c * strides[2] + d * strides[3])];
  }
  double at(int64_t a, int64_t b, int64_t c, int64_t d) const {
    return v[size_t(a * strides[0] + b * strides[1] + c * strides[2] + d * strides[3])];
  }
};

Host4 dense4(int64_t a, int64_t b, int64_t c, int64_t d, bool permuted = false) {
  Host4 t;
  t.sizes[0] = a, t.sizes[1] = b, t.sizes[2] = c, t.sizes[3] = d;
  if (permuted) {  // storage [a, c, b, d]
    t.strides[0] = c * b * d, t.strides[1] = d, t.strides[2] = b * d, t.strides[3] = 1;
  } else {
    t.strides[0] = b * c * d, t.strides[1] = c * d, t.strides[2] = d, t.strides[3] = 1;
  }
  t.storage = size_t(a * b * c * d);
  t.v.assign(t.storage, 0.0);
  return t;
}

void fill_uniform(Host4& t, std::mt19937& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  for (double& x : t.v) x = u(rng);
}

// Dropout's keep decision for element e, exactly as the ABI comment says.
bool keep(uint64_t seed, uint64_t offset, int64_t threshold, int64_t e) {
  const uint64_t ctr = offset + uint64_t(e) / 4u;
  uint32_t c[4] = {uint32_t(ctr), uint32_t(ctr >> 32), 0u, 0u};
  vnn_philox_rounds(c, uint32_t(seed), uint32_t(seed >> 32));
  return int64_t(c[e & 3] >> 8) >= threshold;
}

struct Params {
  double scale = 1.0, p = 0.0;
  int64_t causal = 0, has_mask = 0, seed = 0, offset = 0, threshold = 0;
};

// The float64 reference: out, lse, and for the backward dq, dk, dv.
struct Reference {
  Host4 out, dq, dk, dv;
  std::vector<double> lse, delta;
};

Reference reference(const Case& c, const Params& pr, const Host4& q, const Host4& k, const Host4& v, const Host4* mask,
                    const Host4& dout) {
  const int64_t G = c.Hq / c.Hk;
  const double ninf = -std::numeric_limits<double>::infinity();
  Reference r;
  r.out = dense4(c.N, c.Hq, c.L, c.Ev);
  r.dq = dense4(c.N, c.Hq, c.L, c.E);
  r.dk = dense4(c.N, c.Hk, c.S, c.E);
  r.dv = dense4(c.N, c.Hk, c.S, c.Ev);
  r.lse.assign(size_t(c.N * c.Hq * c.L), 0.0);
  r.delta.assign(size_t(c.N * c.Hq * c.L), 0.0);
  std::vector<double> s(size_t(c.S)), P(size_t(c.S)), f(size_t(c.S)), dp(size_t(c.S));
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t h = 0; h < c.Hq; ++h)
      for (int64_t i = 0; i < c.L; ++i) {
        const int64_t hk = h / G;
        double mx = ninf;
        for (int64_t j = 0; j < c.S; ++j) {
          double x = 0;
          for (int64_t e = 0; e < c.E; ++e) x += q.at(n, h, i, e) * k.at(n, hk, j, e);
          x *= pr.scale;
          if (mask) x += mask->at(n, h, i, j);
          if (c.causal && j > i) x = ninf;
          s[size_t(j)] = x;
          mx = std::max(mx, x);
        }
        const size_t row = size_t((n * c.Hq + h) * c.L + i);
        if (mx == ninf) {  // no finite score: out 0, lse -inf, no gradient
          r.lse[row] = ninf;
          continue;
        }
        double l = 0;
        for (int64_t j = 0; j < c.S; ++j) l += std::exp(s[size_t(j)] - mx);
        r.lse[row] = mx + std::log(l);
        for (int64_t j = 0; j < c.S; ++j) {
          P[size_t(j)] = std::exp(s[size_t(j)] - mx) / l;
          const int64_t e = int64_t(row) * c.S + j;
          f[size_t(j)] = pr.p > 0 ? (keep(uint64_t(pr.seed), uint64_t(pr.offset), pr.threshold, e) ? 1.0 / (1.0 - pr.p) : 0.0)
                                  : 1.0;
        }
        for (int64_t d = 0; d < c.Ev; ++d) {
          double o = 0;
          for (int64_t j = 0; j < c.S; ++j) o += P[size_t(j)] * f[size_t(j)] * v.at(n, hk, j, d);
          r.out.at(n, h, i, d) = o;
        }
        double delta = 0;
        for (int64_t d = 0; d < c.Ev; ++d) delta += dout.at(n, h, i, d) * r.out.at(n, h, i, d);
        r.delta[row] = delta;
        for (int64_t j = 0; j < c.S; ++j) {
          double x = 0;
          for (int64_t d = 0; d < c.Ev; ++d) x += dout.at(n, h, i, d) * v.at(n, hk, j, d);
          dp[size_t(j)] = x;
        }
        for (int64_t j = 0; j < c.S; ++j) {
          const double Pj = P[size_t(j)], fj = f[size_t(j)];
          const double ds = Pj * (dp[size_t(j)] * fj - delta);
          for (int64_t e = 0; e < c.E; ++e) {
            r.dq.at(n, h, i, e) += pr.scale * ds * k.at(n, hk, j, e);
            r.dk.at(n, hk, j, e) += pr.scale * ds * q.at(n, h, i, e);
          }
          for (int64_t d = 0; d < c.Ev; ++d) r.dv.at(n, hk, j, d) += Pj * fj * dout.at(n, h, i, d);
        }
      }
  return r;
}

// Device copies of host tensors in the case's dtype.
template <class T>
struct Dev {
  void* h = nullptr;
  vnn_tensor_desc d{};
};

template <class T>
vnn_dtype dtype_of() {
  return std::is_same<T, float>::value ? VNN_FLOAT32 : VNN_FLOAT64;
}

template <class T>
Dev<T> to_device(const Host4& t) {
  std::vector<T> v(t.storage);
  for (size_t i = 0; i < t.storage; ++i) v[i] = T(t.v[i]);
  Dev<T> r;
  r.h = upload(v);
  r.d = desc(r.h, dtype_of<T>(), {t.sizes[0], t.sizes[1], t.sizes[2], t.sizes[3]},
             {t.strides[0], t.strides[1], t.strides[2], t.strides[3]});
  return r;
}

template <class T>
Dev<T> rows_on_device(int64_t N, int64_t H, int64_t L, const std::vector<double>& init) {
  std::vector<T> v(size_t(N * H * L), T(0));
  for (size_t i = 0; i < init.size() && i < v.size(); ++i) v[i] = T(init[i]);
  if (v.empty()) v.push_back(T(0));
  Dev<T> r;
  r.h = upload(v);
  r.d = desc(r.h, dtype_of<T>(), {N, H, L});
  return r;
}

template <class T>
Dev<T> empty_dense(int64_t a, int64_t b, int64_t c, int64_t d, bool permuted = false) {
  const Host4 shape = dense4(a, b, c, d, permuted);
  std::vector<T> v(std::max<size_t>(shape.storage, 1), T(-777));  // garbage: every output is overwritten
  Dev<T> r;
  r.h = upload(v);
  r.d = desc(r.h, dtype_of<T>(), {a, b, c, d}, {shape.strides[0], shape.strides[1], shape.strides[2], shape.strides[3]});
  return r;
}

template <class T>
Host4 from_device(const Dev<T>& t) {
  Host4 r;
  size_t span = 1;
  for (int k = 0; k < 4; ++k) {
    r.sizes[k] = t.d.sizes[k], r.strides[k] = t.d.strides[k];
    if (r.sizes[k] > 0) span += size_t((r.sizes[k] - 1) * r.strides[k]);
  }
  for (int k = 0; k < 4; ++k)
    if (r.sizes[k] == 0) span = 1;
  const std::vector<T> v = download<T>(t.h, span);
  r.storage = span;
  r.v.assign(v.begin(), v.end());
  return r;
}

vnn_status run_sdpa(int kind, std::vector<vnn_tensor_desc> in, std::vector<vnn_tensor_desc> out, const Params& p) {
  vnn_sdpa_params sp{};
  sp.scale = p.scale, sp.dropout_p = p.p, sp.is_causal = p.causal, sp.has_mask = p.has_mask;
  sp.dropout_seed = p.seed, sp.dropout_offset = p.offset, sp.dropout_threshold = p.threshold;
  double scalars[VNN_SDPA_NUM_SCALARS];
  int64_t ints[VNN_SDPA_NUM_INTS];
  vnn_sdpa_pack(&sp, scalars, ints);
  vnn_op op{};
  op.struct_size = sizeof op;
  op.kind = kind;
  op.num_inputs = int32_t(in.size());
  op.num_outputs = int32_t(out.size());
  op.num_scalars = VNN_SDPA_NUM_SCALARS;
  op.num_ints = VNN_SDPA_NUM_INTS;
  op.inputs = in.data();
  op.outputs = out.data();
  op.scalars = scalars;
  op.ints = ints;
  return table()->run(kDevice, &op);
}

// |got - want| <= atol + rtol |want| everywhere (infinities equal).
void check_close(const char* what, const Host4& got, const Host4& want, double rtol, double atol) {
  double worst = 0;
  int64_t bad = 0, first[4] = {-1, -1, -1, -1};
  double gv = 0, wv = 0;
  for (int64_t a = 0; a < want.sizes[0]; ++a)
    for (int64_t b = 0; b < want.sizes[1]; ++b)
      for (int64_t c = 0; c < want.sizes[2]; ++c)
        for (int64_t d = 0; d < want.sizes[3]; ++d) {
          const double g = got.at(a, b, c, d), w = want.at(a, b, c, d);
          const double err = std::fabs(g - w);
          const bool ok_ = std::isinf(w) ? g == w : err <= atol + rtol * std::fabs(w);
          worst = std::max(worst, std::isfinite(err) ? err : 1e300);
          if (!ok_) {
            if (bad++ == 0) first[0] = a, first[1] = b, first[2] = c, first[3] = d, gv = g, wv = w;
          }
        }
  INFO(what << ": " << bad << " elements off, worst |error| " << worst << "; first at [" << first[0] << ", " << first[1]
            << ", " << first[2] << ", " << first[3] << "]: got " << gv << ", want " << wv);
  CHECK(bad == 0);
}

void check_rows(const char* what, const std::vector<double>& got, const std::vector<double>& want, double rtol,
                double atol) {
  int64_t bad = 0;
  size_t first = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const bool ok_ = std::isinf(want[i]) ? got[i] == want[i]
                                          : std::fabs(got[i] - want[i]) <= atol + rtol * std::fabs(want[i]);
    if (!ok_ && bad++ == 0) first = i;
  }
  INFO(what << ": " << bad << " rows off; first " << first << ": got " << (bad ? got[first] : 0.0) << ", want "
            << (bad ? want[first] : 0.0));
  CHECK(bad == 0);
}

// Runs forward and backward of case c in dtype T and compares with the
// reference; returns false when the plugin declines the kind.
template <class T>
bool run_case(const Case& c, uint32_t seed) {
  INFO("case " << c.name << " (" << (std::is_same<T, float>::value ? "float32" : "float64") << "): N " << c.N
               << ", Hq " << c.Hq << ", Hk " << c.Hk << ", L " << c.L << ", S " << c.S << ", E " << c.E << ", Ev "
               << c.Ev << (c.causal ? ", causal" : "") << ", dropout " << c.dropout);
  std::mt19937 rng(seed);
  Host4 q = dense4(c.N, c.Hq, c.L, c.E, c.permuted), k = dense4(c.N, c.Hk, c.S, c.E, c.permuted),
        v = dense4(c.N, c.Hk, c.S, c.Ev, c.permuted), dout = dense4(c.N, c.Hq, c.L, c.Ev, c.permuted);
  fill_uniform(q, rng, -1, 1);
  fill_uniform(k, rng, -1, 1);
  fill_uniform(v, rng, -1, 1);
  fill_uniform(dout, rng, -1, 1);
  const double ninf = -std::numeric_limits<double>::infinity();
  Host4 mask;
  bool has_mask = c.mask != MaskKind::none;
  if (has_mask) {
    std::uniform_real_distribution<double> u(-2, 2);
    switch (c.mask) {
      case MaskKind::broadcast: {
        mask = dense4(1, 1, c.L, c.S);
        for (double& x : mask.v) x = u(rng);
        mask.sizes[0] = c.N, mask.sizes[1] = c.Hq, mask.strides[0] = 0, mask.strides[1] = 0;
        break;
      }
      case MaskKind::key_pad: {
        mask = dense4(c.N, 1, 1, c.S);
        for (int64_t n = 0; n < c.N; ++n)
          for (int64_t j = 0; j < c.S; ++j) mask.at(n, 0, 0, j) = n == 1 && j >= c.S - 3 ? ninf : 0.0;
        mask.sizes[1] = c.Hq, mask.sizes[2] = c.L, mask.strides[1] = 0, mask.strides[2] = 0;
        break;
      }
      case MaskKind::transposed: {
        mask = dense4(c.N, c.Hq, c.S, c.L);
        for (double& x : mask.v) x = u(rng);
        std::swap(mask.sizes[2], mask.sizes[3]);
        std::swap(mask.strides[2], mask.strides[3]);
        break;
      }
      default: {
        mask = dense4(c.N, c.Hq, c.L, c.S);
        for (double& x : mask.v) x = u(rng) < -1.5 ? ninf : u(rng);
        if (c.mask == MaskKind::dead_rows)
          for (int64_t n = 0; n < c.N; ++n)
            for (int64_t h = 0; h < c.Hq; ++h)
              for (int64_t i = 0; i < c.L; i += 3)
                for (int64_t j = 0; j < c.S; ++j) mask.at(n, h, i, j) = ninf;
        break;
      }
    }
  }
  // The operands in T, then the reference on exactly those values.
  auto round_t = [](Host4& t) {
    for (double& x : t.v) x = double(T(x));
  };
  round_t(q), round_t(k), round_t(v), round_t(dout);
  if (has_mask) round_t(mask);
  Params p;
  p.scale = 1.0 / std::sqrt(double(std::max<int64_t>(c.E, 1)));
  p.causal = c.causal, p.has_mask = has_mask;
  if (c.dropout > 0) {
    p.p = c.dropout, p.seed = 0x1234567890abLL, p.offset = 12345;
    p.threshold = int64_t(std::ceil(c.dropout * 16777216.0));
  }
  const Reference ref = reference(c, p, q, k, v, has_mask ? &mask : nullptr, dout);

  const double rtol = std::is_same<T, float>::value ? 2e-4 : 1e-10;
  const double atol = std::is_same<T, float>::value ? 2e-5 : 1e-12;
  Dev<T> dq_ = to_device<T>(q), dk_ = to_device<T>(k), dv_ = to_device<T>(v), ddout = to_device<T>(dout);
  Dev<T> dmask;
  if (has_mask) dmask = to_device<T>(mask);
  Dev<T> dout_o = empty_dense<T>(c.N, c.Hq, c.L, c.Ev, c.permuted);
  Dev<T> dlse = rows_on_device<T>(c.N, c.Hq, c.L, {});
  std::vector<vnn_tensor_desc> in = {dq_.d, dk_.d, dv_.d};
  if (has_mask) in.push_back(dmask.d);
  const vnn_status st = run_sdpa(VNN_OP_SDPA, in, {dout_o.d, dlse.d}, p);
  if (st == VNN_STATUS_UNSUPPORTED && !is_kokkos_plugin()) {
    release({dq_.h, dk_.h, dv_.h, ddout.h, dout_o.h, dlse.h});
    if (has_mask) release({dmask.h});
    return false;
  }
  REQUIRE(ok(st));
  const Host4 out = from_device(dout_o);
  check_close("out", out, ref.out, rtol, atol);
  const std::vector<T> lse_t = download<T>(dlse.h, size_t(std::max<int64_t>(c.N * c.Hq * c.L, 1)));
  std::vector<double> lse(lse_t.begin(), lse_t.end());
  lse.resize(ref.lse.size());
  check_rows("lse", lse, ref.lse, rtol, atol);

  // Backward from the plugin's own out and lse, delta = rowsum(dout * out)
  // as the core computes it.
  std::vector<double> delta(size_t(c.N * c.Hq * c.L), 0.0);
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t h = 0; h < c.Hq; ++h)
      for (int64_t i = 0; i < c.L; ++i) {
        double x = 0;
        for (int64_t d = 0; d < c.Ev; ++d) x += double(T(dout.at(n, h, i, d) * out.at(n, h, i, d)));
        delta[size_t((n * c.Hq + h) * c.L + i)] = double(T(x));
      }
  Dev<T> ddelta = rows_on_device<T>(c.N, c.Hq, c.L, delta);
  Dev<T> gq = empty_dense<T>(c.N, c.Hq, c.L, c.E), gk = empty_dense<T>(c.N, c.Hk, c.S, c.E),
         gv = empty_dense<T>(c.N, c.Hk, c.S, c.Ev);
  std::vector<vnn_tensor_desc> bin = {dq_.d, dk_.d, dv_.d, dout_o.d, ddout.d, dlse.d, ddelta.d};
  if (has_mask) bin.push_back(dmask.d);
  REQUIRE(ok(run_sdpa(VNN_OP_SDPA_BACKWARD, bin, {gq.d, gk.d, gv.d}, p)));
  const Host4 g_q = from_device(gq), g_k = from_device(gk), g_v = from_device(gv);
  // Gradients sum over up to S (dq) or G * L (dk, dv) terms of float32.
  const double grtol = std::is_same<T, float>::value ? 1e-3 : 1e-9;
  const double gatol = std::is_same<T, float>::value ? 1e-4 : 1e-11;
  check_close("dq", g_q, ref.dq, grtol, gatol);
  check_close("dk", g_k, ref.dk, grtol, gatol);
  check_close("dv", g_v, ref.dv, grtol, gatol);
  // Deterministic: a second run gives the same bits.
  REQUIRE(ok(run_sdpa(VNN_OP_SDPA_BACKWARD, bin, {gq.d, gk.d, gv.d}, p)));
  CHECK(from_device(gq).v == g_q.v);
  CHECK(from_device(gk).v == g_k.v);
  CHECK(from_device(gv).v == g_v.v);
  release({dq_.h, dk_.h, dv_.h, ddout.h, dout_o.h, dlse.h, ddelta.h, gq.h, gk.h, gv.h});
  if (has_mask) release({dmask.h});
  return true;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"plain", 2, 3, 3, 37, 45, 16, 24},
      {"causal, L > S", 2, 2, 2, 70, 50, 8, 8, true},
      {"causal, L < S", 1, 2, 2, 33, 90, 8, 12, true},
      {"GQA 6 / 2", 2, 6, 2, 29, 31, 8, 8},
      {"GQA causal, one group", 1, 4, 1, 40, 40, 8, 8, true},
      {"full mask", 2, 2, 2, 21, 26, 8, 8, false, MaskKind::full},
      {"broadcast mask", 2, 3, 3, 19, 23, 8, 8, false, MaskKind::broadcast},
      {"key padding mask, causal", 2, 2, 1, 24, 24, 8, 8, true, MaskKind::key_pad},
      {"transposed mask", 1, 2, 2, 17, 29, 8, 8, false, MaskKind::transposed},
      {"dead rows", 2, 2, 2, 20, 18, 8, 8, false, MaskKind::dead_rows},
      {"L = 1", 2, 4, 2, 1, 77, 16, 16},
      {"S = 1", 1, 2, 2, 9, 1, 8, 8},
      {"tiles: L 300, S 600", 1, 2, 1, 300, 600, 8, 4},
      {"tiles, causal: L 600, S 300", 1, 1, 1, 600, 300, 4, 8, true},
      {"E 256, Ev 64", 1, 2, 2, 40, 70, 256, 64},
      {"Ev 256, E 32", 1, 1, 1, 20, 530, 32, 256},
      {"dropout", 2, 2, 2, 33, 47, 8, 8, false, MaskKind::none, 0.3},
      {"dropout, causal, GQA", 1, 4, 2, 45, 45, 8, 8, true, MaskKind::none, 0.5},
      {"permuted q, k, v", 2, 3, 3, 25, 35, 16, 16, false, MaskKind::none, 0.0, true},
      {"tiny (inline)", 1, 1, 1, 2, 3, 2, 2},
  };
  return all;
}

template <class T>
void run_all(uint32_t base_seed) {
  int declined = 0, taken = 0;
  uint32_t s = base_seed;
  for (const Case& c : cases()) {
    if (run_case<T>(c, s++)) ++taken;
    else ++declined;
  }
  if (declined) {
    WARN(plugin_name() << " declines SDPA (UNSUPPORTED) for " << declined << " of " << declined + taken
                       << " cases: the core runs its math path there");
  }
  CHECK(declined + taken == int(cases().size()));
}

// Sets VNN_SDPA_KOKKOS for the scope (the CPU plugin reads it per request).
struct KokkosPath {
  explicit KokkosPath(const char* v) { setenv("VNN_SDPA_KOKKOS", v, 1); }
  ~KokkosPath() { unsetenv("VNN_SDPA_KOKKOS"); }
};

}  // namespace

TEST_CASE("SDPA: forward and backward against a float64 reference, float32", "[abi][sdpa]") { run_all<float>(1); }

TEST_CASE("SDPA: forward and backward against a float64 reference, float64", "[abi][sdpa]") {
  if (!fp64_supported()) {
    WARN(plugin_name() << ": no float64 on this device");
    return;
  }
  run_all<double>(101);
}

TEST_CASE("SDPA: the CPU plugin's other paths: team kernels, split backward, AVX2 / baseline loops, no BLAS",
          "[abi][sdpa]") {
  if (plugin_name() != "openmp") return;  // the GPU plugins run the team kernels in the cases above
  uint32_t seed = 201;
  for (const char* knobs : {"team", "split", "avx2,noblas", "base,split"}) {
    INFO("VNN_SDPA_KOKKOS=" << knobs);
    KokkosPath path(knobs);
    run_all<float>(seed++);
    run_all<double>(seed++);
  }
}

TEST_CASE("SDPA: requests the kernels decline", "[abi][sdpa]") {
  if (!is_kokkos_plugin()) return;
  std::vector<float> buf(4 * 5 * 8, 0.5f);
  void* h = upload(buf);
  Params p;
  const vnn_tensor_desc q = desc(h, VNN_FLOAT32, {1, 2, 4, 5}), k = desc(h, VNN_FLOAT32, {1, 2, 4, 5});
  const vnn_tensor_desc out = desc(h, VNN_FLOAT32, {1, 2, 4, 5}), lse = desc(h, VNN_FLOAT32, {1, 2, 4});
  // k of another dtype; lse float64 beside float32 q
  CHECK(run_sdpa(VNN_OP_SDPA, {q, desc(h, VNN_FLOAT64, {1, 2, 4, 5}), k}, {out, lse}, p) == VNN_STATUS_UNSUPPORTED);
  CHECK(std::string(table()->last_error()).find("dtype") != std::string::npos);
  CHECK(run_sdpa(VNN_OP_SDPA, {q, k, k}, {out, desc(h, VNN_FLOAT64, {1, 2, 4})}, p) == VNN_STATUS_UNSUPPORTED);
  // Hq not a multiple of Hk, a missing mask, a non-unit last stride
  CHECK(run_sdpa(VNN_OP_SDPA, {desc(h, VNN_FLOAT32, {1, 3, 4, 5}), k, k}, {desc(h, VNN_FLOAT32, {1, 3, 4, 5}),
                                                                           desc(h, VNN_FLOAT32, {1, 3, 4})},
                 p) == VNN_STATUS_UNSUPPORTED);
  Params pm = p;
  pm.has_mask = 1;
  CHECK(run_sdpa(VNN_OP_SDPA, {q, k, k}, {out, lse}, pm) == VNN_STATUS_UNSUPPORTED);
  CHECK(run_sdpa(VNN_OP_SDPA, {desc(h, VNN_FLOAT32, {1, 2, 4, 5}, {40, 20, 1, 4}), k, k}, {out, lse}, p) ==
        VNN_STATUS_UNSUPPORTED);
  // float16 (the core upcasts)
  CHECK(run_sdpa(VNN_OP_SDPA, {desc(h, VNN_FLOAT16, {1, 2, 4, 5}), desc(h, VNN_FLOAT16, {1, 2, 4, 5}),
                               desc(h, VNN_FLOAT16, {1, 2, 4, 5})},
                 {desc(h, VNN_FLOAT16, {1, 2, 4, 5}), desc(h, VNN_FLOAT16, {1, 2, 4})}, p) == VNN_STATUS_UNSUPPORTED);
  release({h});
}

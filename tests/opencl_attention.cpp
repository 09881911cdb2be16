// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The OpenCL plugin's fused attention (VNN_OP_SDPA, VNN_OP_SDPA_BACKWARD;
// backends/opencl/ops_attention.cpp, kernels/attention.cl) through the C
// ABI, against a float64 reference written here: causal and not, additive
// masks with broadcast strides (and a row with every key masked), GQA,
// L != S, sizes that are not multiples of the tiles, L = 1, head dims up to
// 256 with Ev != E, strided q / out / dq (the [N, L, H, E] layout of a head
// split), q, k, v at offsets in one buffer (a fused qkv projection), dropout
// masks from the same Philox numbers, float64. The
// reference backward is itself checked against finite differences of the
// reference forward. Runs with VNN_TEST_BACKEND=opencl (tests/CMakeLists.txt).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"
#include "support/plugin_table.hpp"
#include "vnn/philox.h"

namespace {

using vnn::test::lcg_values;

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Case {
  const char* name;
  int64_t N, Hq, Hk, L, S, E, Ev;
  bool causal = false;
  // 0 none; 1 full [N, Hq, L, S] with one row of every key masked; 2 one
  // [L, S] matrix broadcast over N and Hq (strides 0, 0, S, 1); 3 key
  // padding [N, 1, 1, S] (strides S, 0, 0, 1) with -inf past a length.
  int mask = 0;
  double dropout = 0.0;
  bool f64 = false;
  bool head_split = false;  // q, out, dq laid out [N, L, H, E]
  // q, k, v as views of one [N, L, 3, H, E] buffer at offsets (a fused qkv
  // projection's output); needs Hq = Hk, L = S, E = Ev.
  bool packed = false;
};

// Reference forward and backward in float64 on dense [N, H, L, E] arrays.
struct Ref {
  const Case& c;
  double scale;
  std::vector<double> q, k, v, mask, dout;  // mask dense [N, Hq, L, S] (what the strides select)
  std::vector<double> out, lse, dq, dk, dv;
  uint64_t seed = 0x1234567890abcdefull, offset = 77;
  int64_t threshold = 0;

  explicit Ref(const Case& cs) : c(cs), scale(1.0 / std::sqrt(double(cs.E))) {
    q = lcg_values(size_t(c.N * c.Hq * c.L * c.E), 1, 11, -1.5, 1.5);
    k = lcg_values(size_t(c.N * c.Hk * c.S * c.E), 2, 12, -1.5, 1.5);
    v = lcg_values(size_t(c.N * c.Hk * c.S * c.Ev), 3, 13, -1.0, 1.0);
    dout = lcg_values(size_t(c.N * c.Hq * c.L * c.Ev), 4, 14, -1.0, 1.0);
    mask.assign(size_t(c.N * c.Hq * c.L * c.S), 0.0);
    if (c.mask) {
      const std::vector<double> r = lcg_values(size_t(c.L * c.S), 5, 15, -2.0, 2.0);
      const std::vector<double> full = lcg_values(mask.size(), 6, 16, -2.0, 2.0);
      for (int64_t n = 0; n < c.N; ++n)
        for (int64_t h = 0; h < c.Hq; ++h)
          for (int64_t i = 0; i < c.L; ++i)
            for (int64_t j = 0; j < c.S; ++j) {
              double& m = mask[size_t(((n * c.Hq + h) * c.L + i) * c.S + j)];
              if (c.mask == 1) m = full[size_t(((n * c.Hq + h) * c.L + i) * c.S + j)];
              if (c.mask == 1 && n == c.N - 1 && h == 0 && i == c.L / 2) m = -kInf;  // a row without keys
              if (c.mask == 1 && (i + j) % 7 == 3) m = -kInf;
              if (c.mask == 2) m = r[size_t(i * c.S + j)];
              if (c.mask == 3) m = j < c.S - 3 * n - 1 ? 0.0 : -kInf;
            }
    }
    if (c.dropout > 0) threshold = int64_t(std::ceil(c.dropout * double(1 << 24)));
  }

  double keep(int64_t n, int64_t h, int64_t i, int64_t j) const {
    if (c.dropout <= 0) return 1.0;
    const uint64_t e = uint64_t(((n * c.Hq + h) * c.L + i) * c.S + j), ctr = offset + (e >> 2);
    uint32_t w[4] = {uint32_t(ctr), uint32_t(ctr >> 32), 0, 0};
    vnn_philox_rounds(w, uint32_t(seed), uint32_t(seed >> 32));
    return (w[e & 3] >> 8) >= uint32_t(threshold) ? 1.0 / (1.0 - c.dropout) : 0.0;
  }

  // Scores of row (n, h, i) over every key, -inf where masked.
  std::vector<double> scores(const std::vector<double>& qq, const std::vector<double>& kk, int64_t n, int64_t h,
                             int64_t i) const {
    const int64_t hk = h / (c.Hq / c.Hk);
    std::vector<double> s(size_t(c.S));
    for (int64_t j = 0; j < c.S; ++j) {
      double d = 0;
      for (int64_t e = 0; e < c.E; ++e)
        d += qq[size_t(((n * c.Hq + h) * c.L + i) * c.E + e)] * kk[size_t(((n * c.Hk + hk) * c.S + j) * c.E + e)];
      s[size_t(j)] = (c.causal && j > i) ? -kInf : d * scale + mask[size_t(((n * c.Hq + h) * c.L + i) * c.S + j)];
    }
    return s;
  }

  // out (and lse) of q, k, v.
  void forward(const std::vector<double>& qq, const std::vector<double>& kk, const std::vector<double>& vv,
               std::vector<double>* o, std::vector<double>* l) const {
    o->assign(size_t(c.N * c.Hq * c.L * c.Ev), 0.0);
    l->assign(size_t(c.N * c.Hq * c.L), -kInf);
    for (int64_t n = 0; n < c.N; ++n)
      for (int64_t h = 0; h < c.Hq; ++h)
        for (int64_t i = 0; i < c.L; ++i) {
          const std::vector<double> s = scores(qq, kk, n, h, i);
          double m = -kInf;
          for (double x : s) m = std::max(m, x);
          if (m == -kInf) continue;
          double sum = 0;
          for (double x : s) sum += std::exp(x - m);
          (*l)[size_t((n * c.Hq + h) * c.L + i)] = m + std::log(sum);
          const int64_t hk = h / (c.Hq / c.Hk);
          for (int64_t j = 0; j < c.S; ++j) {
            const double p = std::exp(s[size_t(j)] - m) / sum * keep(n, h, i, j);
            for (int64_t e = 0; e < c.Ev; ++e)
              (*o)[size_t(((n * c.Hq + h) * c.L + i) * c.Ev + e)] +=
                  p * vv[size_t(((n * c.Hk + hk) * c.S + j) * c.Ev + e)];
          }
        }
  }

  // FlashAttention-2's backward from out and lse; delta = rowsum(dout * out).
  void backward(const std::vector<double>& o, const std::vector<double>& l) {
    dq.assign(q.size(), 0.0), dk.assign(k.size(), 0.0), dv.assign(v.size(), 0.0);
    for (int64_t n = 0; n < c.N; ++n)
      for (int64_t h = 0; h < c.Hq; ++h)
        for (int64_t i = 0; i < c.L; ++i) {
          const size_t row = size_t((n * c.Hq + h) * c.L + i);
          if (l[row] == -kInf) continue;
          double delta = 0;
          for (int64_t e = 0; e < c.Ev; ++e)
            delta += dout[row * size_t(c.Ev) + size_t(e)] * o[row * size_t(c.Ev) + size_t(e)];
          const std::vector<double> s = scores(q, k, n, h, i);
          const int64_t hk = h / (c.Hq / c.Hk);
          for (int64_t j = 0; j < c.S; ++j) {
            const double p = std::exp(s[size_t(j)] - l[row]), z = keep(n, h, i, j);
            const size_t kr = size_t((n * c.Hk + hk) * c.S + j);
            double dp = 0;
            for (int64_t e = 0; e < c.Ev; ++e) {
              dp += dout[row * size_t(c.Ev) + size_t(e)] * v[kr * size_t(c.Ev) + size_t(e)];
              dv[kr * size_t(c.Ev) + size_t(e)] += p * z * dout[row * size_t(c.Ev) + size_t(e)];
            }
            const double ds = p * (dp * z - delta);
            for (int64_t e = 0; e < c.E; ++e) {
              dq[row * size_t(c.E) + size_t(e)] += scale * ds * k[kr * size_t(c.E) + size_t(e)];
              dk[kr * size_t(c.E) + size_t(e)] += scale * ds * q[row * size_t(c.E) + size_t(e)];
            }
          }
        }
  }
};

// Device buffers and descriptors through the plugin table.
struct Dev {
  const vnn_backend* b = nullptr;
  int32_t dev = 0;
  std::vector<void*> blocks;
  Dev() {
    std::string name;
    b = vnn::test::plugin_table(&name);
    dev = vnn::test::device_under_test().index();
  }
  ~Dev() {
    if (b) {
      b->queue_synchronize(dev, nullptr);
      for (void* p : blocks) b->free(dev, p);
    }
  }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;

  // A buffer of n elements of the dtype holding vals (converted), else NaN.
  void* buffer(size_t n, bool f64, const std::vector<double>* vals = nullptr) {
    const size_t es = f64 ? 8 : 4;
    void* h = nullptr;
    REQUIRE(b->alloc(dev, n * es + 8, &h) == VNN_STATUS_OK);
    blocks.push_back(h);
    std::vector<unsigned char> bytes(n * es);
    for (size_t i = 0; i < n; ++i) {
      const double x = vals ? (*vals)[i] : std::nan("");
      if (f64) std::memcpy(&bytes[i * 8], &x, 8);
      else {
        const float f = float(x);
        std::memcpy(&bytes[i * 4], &f, 4);
      }
    }
    if (n) REQUIRE(b->copy_to_device(dev, h, 0, bytes.data(), bytes.size(), nullptr, 1) == VNN_STATUS_OK);
    return h;
  }
  std::vector<double> read(void* h, size_t n, bool f64) {
    std::vector<unsigned char> bytes(n * (f64 ? 8 : 4));
    if (n) REQUIRE(b->copy_to_host(dev, bytes.data(), h, 0, bytes.size(), nullptr, 1) == VNN_STATUS_OK);
    std::vector<double> r(n);
    for (size_t i = 0; i < n; ++i) {
      if (f64) std::memcpy(&r[i], &bytes[i * 8], 8);
      else {
        float f;
        std::memcpy(&f, &bytes[i * 4], 4);
        r[i] = f;
      }
    }
    return r;
  }
};

vnn_tensor_desc desc(void* h, bool f64, std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  vnn_tensor_desc d{};
  d.data = h;
  d.dtype = f64 ? VNN_FLOAT64 : VNN_FLOAT32;
  d.ndim = int32_t(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) d.sizes[i] = sizes[i], d.strides[i] = strides[i];
  return d;
}

// Dense [A, B, C, D] as a [A, C, B, D] buffer (the head split's layout) or dense.
std::vector<double> to_layout(const std::vector<double>& x, int64_t A, int64_t B, int64_t C, int64_t D, bool split) {
  if (!split) return x;
  std::vector<double> y(x.size());
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t d = 0; d < D; ++d)
          y[size_t(((a * C + c) * B + b) * D + d)] = x[size_t(((a * B + b) * C + c) * D + d)];
  return y;
}
std::vector<int64_t> strides_of(int64_t B, int64_t C, int64_t D, bool split) {
  return split ? std::vector<int64_t>{C * B * D, D, B * D, 1} : std::vector<int64_t>{B * C * D, C * D, D, 1};
}

// max |got - want| / (1 + max |want|), with -inf (lse) and NaN compared exactly.
double rel_err(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  double m = 0, big = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isinf(want[i]) || std::isinf(got[i])) {
      if (got[i] != want[i]) return kInf;
      continue;
    }
    if (std::isnan(got[i]) != std::isnan(want[i])) return kInf;
    m = std::max(m, std::fabs(got[i] - want[i]));
    big = std::max(big, std::fabs(want[i]));
  }
  return m / (1 + big);
}

void run_case(const Case& c) {
  INFO(c.name << ": N " << c.N << " Hq " << c.Hq << " Hk " << c.Hk << " L " << c.L << " S " << c.S << " E " << c.E
               << " Ev " << c.Ev << (c.causal ? " causal" : "") << " mask " << c.mask << " dropout " << c.dropout
               << (c.f64 ? " float64" : " float32"));
  Dev d;
  REQUIRE(d.b != nullptr);
  Ref ref(c);
  ref.forward(ref.q, ref.k, ref.v, &ref.out, &ref.lse);
  const bool f = c.f64, sp = c.head_split;
  const int64_t N = c.N, Hq = c.Hq, Hk = c.Hk, L = c.L, S = c.S, E = c.E, Ev = c.Ev;
  const std::vector<double> qh = to_layout(ref.q, N, Hq, L, E, sp);
  void* qb = d.buffer(qh.size(), f, &qh);
  void* kb = d.buffer(ref.k.size(), f, &ref.k);
  void* vb = d.buffer(ref.v.size(), f, &ref.v);
  void* ob = d.buffer(ref.out.size(), f);
  void* lb = d.buffer(ref.lse.size(), f);
  vnn_tensor_desc in[8], out[3];
  in[0] = desc(qb, f, {N, Hq, L, E}, strides_of(Hq, L, E, sp));
  in[1] = desc(kb, f, {N, Hk, S, E}, strides_of(Hk, S, E, false));
  in[2] = desc(vb, f, {N, Hk, S, Ev}, strides_of(Hk, S, Ev, false));
  if (c.packed) {
    std::vector<double> qkv(size_t(N * L * 3 * Hq * E));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t h = 0; h < Hq; ++h)
        for (int64_t i = 0; i < L; ++i)
          for (int64_t e = 0; e < E; ++e) {
            const size_t src = size_t(((n * Hq + h) * L + i) * E + e),
                         dst = size_t((((n * L + i) * 3) * Hq + h) * E + e);
            qkv[dst] = ref.q[src], qkv[dst + size_t(Hq * E)] = ref.k[src], qkv[dst + size_t(2 * Hq * E)] = ref.v[src];
          }
    void* pb = d.buffer(qkv.size(), f, &qkv);
    for (int t = 0; t < 3; ++t) {
      in[t] = desc(pb, f, {N, Hq, L, E}, {L * 3 * Hq * E, E, 3 * Hq * E, 1});
      in[t].offset = t * Hq * E;
    }
  }
  // The mask buffer holds only what its strides select.
  vnn_tensor_desc mask{};
  if (c.mask) {
    std::vector<double> mv;
    std::vector<int64_t> ms;
    if (c.mask == 1) mv = ref.mask, ms = {Hq * L * S, L * S, S, 1};
    if (c.mask == 2) mv.assign(ref.mask.begin(), ref.mask.begin() + L * S), ms = {0, 0, S, 1};
    if (c.mask == 3) {
      for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0; j < S; ++j) mv.push_back(ref.mask[size_t(n * Hq * L * S + j)]);
      ms = {S, 0, 0, 1};
    }
    mask = desc(d.buffer(mv.size(), f, &mv), f, {N, Hq, L, S}, ms);
  }
  out[0] = desc(ob, f, {N, Hq, L, Ev}, strides_of(Hq, L, Ev, sp));
  out[1] = desc(lb, f, {N, Hq, L}, {Hq * L, L, 1});
  vnn_sdpa_params p{};
  p.scale = ref.scale, p.dropout_p = c.dropout, p.is_causal = c.causal, p.has_mask = c.mask != 0;
  p.dropout_seed = int64_t(ref.seed), p.dropout_offset = int64_t(ref.offset), p.dropout_threshold = ref.threshold;
  double scalars[VNN_SDPA_NUM_SCALARS];
  int64_t ints[VNN_SDPA_NUM_INTS];
  vnn_sdpa_pack(&p, scalars, ints);
  vnn_op op{};
  op.struct_size = sizeof op;
  op.kind = VNN_OP_SDPA;
  op.inputs = in;
  op.outputs = out;
  op.num_inputs = 3;
  op.num_outputs = 2;
  op.scalars = scalars, op.num_scalars = VNN_SDPA_NUM_SCALARS;
  op.ints = ints, op.num_ints = VNN_SDPA_NUM_INTS;
  if (c.mask) in[op.num_inputs++] = mask;
  {
    const vnn_status st = d.b->run(d.dev, &op);
    INFO(d.b->last_error());
    REQUIRE(st == VNN_STATUS_OK);
  }
  const double tol = f ? 1e-11 : 2e-5;
  const std::vector<double> got_out = to_layout(d.read(ob, ref.out.size(), f), N, L, Hq, Ev, sp);
  const std::vector<double> got_lse = d.read(lb, ref.lse.size(), f);
  CHECK(rel_err(got_out, ref.out) <= tol);
  CHECK(rel_err(got_lse, ref.lse) <= tol);

  // Backward from the device's out and lse, delta from its out (as the core does).
  ref.backward(ref.out, ref.lse);
  std::vector<double> delta(size_t(N * Hq * L), 0.0);
  for (size_t r = 0; r < delta.size(); ++r)
    for (int64_t e = 0; e < Ev; ++e)
      delta[r] += ref.dout[r * size_t(Ev) + size_t(e)] * got_out[r * size_t(Ev) + size_t(e)];
  void* dob = d.buffer(ref.dout.size(), f, &ref.dout);
  void* deb = d.buffer(delta.size(), f, &delta);
  void* dqb = d.buffer(ref.q.size(), f);
  void* dkb = d.buffer(ref.k.size(), f);
  void* dvb = d.buffer(ref.v.size(), f);
  vnn_tensor_desc bin[8], bout[3];
  bin[0] = in[0], bin[1] = in[1], bin[2] = in[2], bin[3] = out[0];
  bin[4] = desc(dob, f, {N, Hq, L, Ev}, strides_of(Hq, L, Ev, false));
  bin[5] = out[1];
  bin[6] = desc(deb, f, {N, Hq, L}, {Hq * L, L, 1});
  if (c.mask) bin[7] = mask;
  bout[0] = desc(dqb, f, {N, Hq, L, E}, strides_of(Hq, L, E, sp));
  bout[1] = desc(dkb, f, {N, Hk, S, E}, strides_of(Hk, S, E, false));
  bout[2] = desc(dvb, f, {N, Hk, S, Ev}, strides_of(Hk, S, Ev, false));
  op.kind = VNN_OP_SDPA_BACKWARD;
  op.inputs = bin, op.outputs = bout;
  op.num_inputs = c.mask ? 8 : 7, op.num_outputs = 3;
  {
    const vnn_status st = d.b->run(d.dev, &op);
    INFO(d.b->last_error());
    REQUIRE(st == VNN_STATUS_OK);
  }
  const double gtol = f ? 1e-10 : 1e-4;
  CHECK(rel_err(to_layout(d.read(dqb, ref.q.size(), f), N, L, Hq, E, sp), ref.dq) <= gtol);
  CHECK(rel_err(d.read(dkb, ref.k.size(), f), ref.dk) <= gtol);
  CHECK(rel_err(d.read(dvb, ref.v.size(), f), ref.dv) <= gtol);
}

}  // namespace

TEST_CASE("the float64 reference backward matches finite differences of its forward") {
  for (Case c : {Case{"fd", 1, 2, 1, 5, 7, 3, 4, true, 1, 0.3}, Case{"fd", 2, 2, 2, 4, 6, 3, 2, false, 3}}) {
    Ref ref(c);
    ref.forward(ref.q, ref.k, ref.v, &ref.out, &ref.lse);
    ref.backward(ref.out, ref.lse);
    // d/dx of sum(dout * out(x)) for every element of q, k and v.
    auto loss = [&](const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v) {
      std::vector<double> o, l;
      ref.forward(q, k, v, &o, &l);
      double s = 0;
      for (size_t i = 0; i < o.size(); ++i) s += o[i] * ref.dout[i];
      return s;
    };
    const double h = 1e-6;
    for (int which = 0; which < 3; ++which) {
      std::vector<double>* x = which == 0 ? &ref.q : which == 1 ? &ref.k : &ref.v;
      const std::vector<double>& g = which == 0 ? ref.dq : which == 1 ? ref.dk : ref.dv;
      for (size_t i = 0; i < x->size(); ++i) {
        const double keep = (*x)[i];
        (*x)[i] = keep + h;
        const double up = loss(ref.q, ref.k, ref.v);
        (*x)[i] = keep - h;
        const double down = loss(ref.q, ref.k, ref.v);
        (*x)[i] = keep;
        INFO("operand " << which << " element " << i);
        CHECK(std::fabs((up - down) / (2 * h) - g[i]) <= 1e-6);
      }
    }
  }
}

// name, N, Hq, Hk, L, S, E, Ev, causal, mask, dropout, f64, head_split, packed.
// Few head-dim pairs: each is three PoCL programs (seconds to build cold).
// L and S past 32 here: shorter ones shrink the work-groups (ops_attention.cpp
// fit), and each shrunk tiling is three programs more.
TEST_CASE("fused attention against the float64 reference: causal, masks, GQA, dropout", "[sdpa][core]") {
  const Case cases[] = {
      {"plain", 2, 3, 3, 37, 53, 16, 16},
      {"causal, head split", 2, 3, 3, 37, 53, 16, 16, true, 0, 0.0, false, true},
      {"packed qkv at offsets, mask", 2, 3, 3, 37, 37, 16, 16, false, 2, 0.0, false, true, true},
      {"causal, L > S", 1, 2, 2, 50, 34, 16, 16, true},
      {"causal, L < S, GQA", 1, 2, 1, 35, 70, 16, 16, true},
      {"full mask, a row without keys", 2, 2, 2, 35, 40, 16, 16, false, 1},
      {"GQA, broadcast mask", 2, 4, 2, 36, 45, 16, 16, false, 2},
      {"dropout", 1, 2, 2, 33, 39, 16, 16, false, 0, 0.2},
      {"dropout, causal, GQA", 2, 4, 1, 34, 34, 16, 16, true, 0, 0.3},
  };
  for (const Case& c : cases) run_case(c);
}

TEST_CASE("fused attention against the float64 reference: L = 1, head dims, float64", "[sdpa][shapes]") {
  const Case cases[] = {
      {"L = 1, Ev != E, key padding", 3, 2, 2, 1, 70, 24, 40, false, 3},
      {"E = Ev = 256, causal, GQA", 1, 4, 2, 19, 33, 256, 256, true},
      {"float64, key padding, dropout, head split", 2, 2, 1, 21, 40, 16, 16, false, 3, 0.25, true, true},
  };
  for (const Case& c : cases) run_case(c);
}

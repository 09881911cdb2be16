// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SDPA / SDPA_BACKWARD: fused scaled-dot-product attention, FlashAttention-2
// (Dao 2023), written once for every Kokkos space. The semantics (shapes,
// strides, GQA, causal, the additive mask, Philox dropout, lse, delta, rows
// with no finite score) are the ABI comment above vnn_sdpa_params
// (backend_abi.h) and docs/ops.md; decode_sdpa (common/op_params.hpp)
// checks the request.
//
// Forward: per (n, h, query tile), key / value tiles stream past with an
// online softmax (running max m and sum l per row); out = acc / l and
// lse = m + log l. Nothing of size L x S is allocated.
// Backward: scores are recomputed from lse (P = exp(s - lse)), with
// dS = P * (dP - delta), dP = dout v^T (dropout-scaled). Deterministic, no
// atomics: dk and dv by (n, hk, key tile), summed over the G query heads of
// the group and every query tile; dq by (n, hq, query tile).
//
// Two implementations:
//  - Device spaces (CUDA, HIP): TeamPolicy, one team per tile, the query
//    tile and the key / value tiles staged in team scratch (level 0 where
//    the tiles fit, else level 1); the team's threads split the score tile,
//    one thread per row for the softmax update, and the tile products.
//  - Host spaces (OpenMP, Serial): attention_host.hpp, GEMM-sized tiles
//    (128-256 queries x 512 keys) whose products go to the plugin's BLAS
//    (kernels::HostGemm: oneDNN / OpenBLAS, single-threaded inside the
//    pool's parallel region)
//    and whose softmax loops are compiled for AVX-512 / AVX2 / baseline,
//    chosen at run time; parallel over tiles on the pool. VNN_SDPA_KOKKOS=team
//    runs the team kernels on the host instead (tests, and a check of the
//    device code on a machine without a GPU; the other knobs: sdpa_knob).
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <type_traits>

#include "common/op_params.hpp"
#include "kokkos/kernels/dispatch.hpp"
#include "kokkos/kernels/entry.hpp"
#include "kokkos/kernels/random.hpp"

namespace vnn::kernels {

// A 4-D operand as the attention kernels index it: element (n, h, r, c) at
// p[n*s0 + h*s1 + r*s2 + c*s3], p already past the descriptor's offset.
// s3 is 1 for every dense operand (decode_sdpa), any stride for the mask.
template <class T>
struct SdpaOperand {
  T* p = nullptr;
  int64_t s0 = 0, s1 = 0, s2 = 0, s3 = 1;
  KOKKOS_INLINE_FUNCTION T* row(int64_t n, int64_t h, int64_t r) const { return p + n * s0 + h * s1 + r * s2; }
};

// lse / delta [N, Hq, L].
template <class T>
struct SdpaRows {
  T* p = nullptr;
  int64_t s0 = 0, s1 = 0, s2 = 0;
  KOKKOS_INLINE_FUNCTION T& operator()(int64_t n, int64_t h, int64_t i) const { return p[n * s0 + h * s1 + i * s2]; }
};

// Everything a kernel reads from the request, trivially copyable into a
// device lambda.
template <class T>
struct SdpaArgs {
  int64_t N = 0, Hq = 0, Hk = 0, G = 1, L = 0, S = 0, E = 0, Ev = 0;
  T scale = T(1);
  bool causal = false, has_mask = false, dropout = false;
  uint64_t seed = 0, offset = 0;
  uint32_t threshold = 0;
  T keep_scale = T(1);  // 1 / (1 - dropout_p)
  SdpaOperand<T> q, k, v, mask, out, dout, dq, dk, dv;
  SdpaRows<T> lse, delta;
};

template <class T>
KOKKOS_INLINE_FUNCTION T sdpa_neg_inf() {
  if constexpr (std::is_same_v<T, float>) {
    return bits_float(0xff800000u);
  } else {
    union { uint64_t u; double d; } v{0xfff0000000000000ull};
    return v.d;
  }
}

// Dropout's factor for score (n, h, i, j): keep_scale where Philox word
// e % 4 of counter offset + e / 4 has its top 24 bits >= threshold, else 0;
// e = ((n*Hq + h)*L + i)*S + j (VNN_OP_RANDOM's element numbering).
template <class T>
KOKKOS_INLINE_FUNCTION T sdpa_dropout_factor(const SdpaArgs<T>& a, int64_t n, int64_t h, int64_t i, int64_t j) {
  const int64_t e = ((n * a.Hq + h) * a.L + i) * a.S + j;
  uint32_t c[4];
  philox_block(a.seed, a.offset, e, c);
  return (c[e & 3] >> 8) >= a.threshold ? a.keep_scale : T(0);
}

template <class T>
SdpaOperand<T> sdpa_operand(const vnn_tensor_desc& d) {
  SdpaOperand<T> o;
  o.p = typed<T>(d) + d.offset;
  o.s0 = d.strides[0], o.s1 = d.strides[1], o.s2 = d.strides[2], o.s3 = d.strides[3];
  return o;
}
template <class T>
SdpaRows<T> sdpa_rows(const vnn_tensor_desc& d) {
  SdpaRows<T> r;
  r.p = typed<T>(d) + d.offset;
  r.s0 = d.strides[0], r.s1 = d.strides[1], r.s2 = d.strides[2];
  return r;
}

// The request's operands by role; decode_sdpa checked counts and shapes.
template <class T>
SdpaArgs<T> sdpa_args(const vnn_op& op, const vnn_sdpa_params& p) {
  const bool backward = op.kind == VNN_OP_SDPA_BACKWARD;
  SdpaArgs<T> a;
  const vnn_tensor_desc &q = op.inputs[0], &k = op.inputs[1], &v = op.inputs[2];
  a.N = q.sizes[0], a.Hq = q.sizes[1], a.L = q.sizes[2], a.E = q.sizes[3];
  a.Hk = k.sizes[1], a.S = k.sizes[2], a.Ev = v.sizes[3];
  a.G = a.Hk > 0 ? a.Hq / a.Hk : 1;
  a.scale = T(p.scale);
  a.causal = p.is_causal != 0;
  a.has_mask = p.has_mask != 0;
  a.dropout = p.dropout_p > 0.0;
  a.seed = uint64_t(p.dropout_seed);
  a.offset = uint64_t(p.dropout_offset);
  a.threshold = uint32_t(p.dropout_threshold);
  a.keep_scale = T(1.0 / (1.0 - p.dropout_p));
  a.q = sdpa_operand<T>(q), a.k = sdpa_operand<T>(k), a.v = sdpa_operand<T>(v);
  const int32_t dense_in = backward ? 7 : 3;
  if (a.has_mask) a.mask = sdpa_operand<T>(op.inputs[dense_in]);
  if (!backward) {
    a.out = sdpa_operand<T>(op.outputs[0]);
    a.lse = sdpa_rows<T>(op.outputs[1]);
  } else {
    a.out = sdpa_operand<T>(op.inputs[3]);
    a.dout = sdpa_operand<T>(op.inputs[4]);
    a.lse = sdpa_rows<T>(op.inputs[5]);
    a.delta = sdpa_rows<T>(op.inputs[6]);
    a.dq = sdpa_operand<T>(op.outputs[0]);
    a.dk = sdpa_operand<T>(op.outputs[1]);
    a.dv = sdpa_operand<T>(op.outputs[2]);
  }
  return a;
}

// ---------------------------------------------------------------------------
// Team kernels (device spaces; any space with VNN_SDPA_KOKKOS=team).

// Tile sizes and scratch layout of the team kernels: rows of the staged K
// and V tiles are padded by one element so that the threads of a score
// tile, which read different key rows at one column, hit different banks.
struct SdpaTeamTiles {
  int64_t bq = 0, bk = 0, nqb = 0, nkb = 0;
  int level = 0;
  int64_t count = 0;  // scratch elements per team
};

// The largest square tile in {64, 32, 16} whose scratch fits level 0;
// level 1 (global memory) with 16 when none does.
template <class T, class Policy, class Count>
SdpaTeamTiles sdpa_team_tiles(const Policy& policy, int64_t rows, int64_t cols, Count count) {
  using Scratch = Kokkos::View<T*, typename Policy::execution_space::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  SdpaTeamTiles t;
  const int64_t max0 = int64_t(policy.scratch_size_max(0));
  for (int64_t b : {int64_t(64), int64_t(32), int64_t(16)}) {
    t.bq = t.bk = b;
    t.count = count(b, b);
    t.level = int64_t(Scratch::shmem_size(size_t(t.count))) <= max0 ? 0 : 1;
    if (t.level == 0) break;
  }
  t.nqb = rows > 0 ? (rows + t.bq - 1) / t.bq : 0;
  t.nkb = cols > 0 ? (cols + t.bk - 1) / t.bk : 0;
  return t;
}

template <class Exec, class T>
void sdpa_forward_team(const Exec& exec, const SdpaArgs<T>& a) {
  using Policy = Kokkos::TeamPolicy<Exec>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<T*, typename Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  const int64_t E = a.E, Ev = a.Ev, ldk = E + 1, ldv = Ev + 1;
  auto count = [=](int64_t bq, int64_t bk) { return bq * E + bk * ldk + bk * ldv + bq * bk + bq * Ev + 3 * bq; };
  const SdpaTeamTiles t = sdpa_team_tiles<T>(Policy(exec, 1, Kokkos::AUTO), a.L, a.S, count);
  const int64_t teams = a.N * a.Hq * t.nqb;
  if (teams == 0) return;
  const int64_t Bq = t.bq, Bk = t.bk, nqb = t.nqb;
  const int level = t.level;
  const int64_t cnt = t.count;
  const size_t bytes = Scratch::shmem_size(size_t(cnt));
  Kokkos::parallel_for(
      "vnn::sdpa_forward", Policy(exec, teams, Kokkos::AUTO).set_scratch_size(level, Kokkos::PerTeam(bytes)),
      KOKKOS_LAMBDA(const Member& team) {
        const int64_t w = team.league_rank();
        const int64_t qb = w % nqb, h = (w / nqb) % a.Hq, n = w / (nqb * a.Hq), hk = h / a.G;
        const int64_t i0 = qb * Bq, bq = a.L - i0 < Bq ? a.L - i0 : Bq;
        Scratch buf(team.team_scratch(level), size_t(cnt));
        T* sQ = buf.data();
        T* sK = sQ + bq * E;
        T* sV = sK + Bk * ldk;
        T* sS = sV + Bk * ldv;
        T* sO = sS + bq * Bk;
        T* sm = sO + bq * Ev;
        T* sl = sm + bq;
        T* salpha = sl + bq;
        const T ninf = sdpa_neg_inf<T>();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bq * E), [&](int64_t x) {
          sQ[x] = a.q.row(n, h, i0 + x / E)[x % E] * a.scale;
        });
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bq * Ev), [&](int64_t x) { sO[x] = T(0); });
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bq), [&](int64_t r) {
          sm[r] = ninf;
          sl[r] = T(0);
        });
        const int64_t kend = a.causal ? (a.S < i0 + bq ? a.S : i0 + bq) : a.S;
        for (int64_t j0 = 0; j0 < kend; j0 += Bk) {
          const int64_t bk = kend - j0 < Bk ? kend - j0 : Bk;
          team.team_barrier();  // the previous tile's readers are done
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bk * E), [&](int64_t x) {
            sK[(x / E) * ldk + x % E] = a.k.row(n, hk, j0 + x / E)[x % E];
          });
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bk * Ev), [&](int64_t x) {
            sV[(x / Ev) * ldv + x % Ev] = a.v.row(n, hk, j0 + x / Ev)[x % Ev];
          });
          team.team_barrier();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bq * bk), [&](int64_t x) {
            const int64_t r = x / bk, c = x % bk, i = i0 + r, j = j0 + c;
            T s = T(0);
            const T* qr = sQ + r * E;
            const T* kr = sK + c * ldk;
            for (int64_t e = 0; e < E; ++e) s += qr[e] * kr[e];
            if (a.has_mask) s += a.mask.row(n, h, i)[j * a.mask.s3];
            if (a.causal && j > i) s = ninf;
            sS[r * Bk + c] = s;
          });
          team.team_barrier();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bq), [&](int64_t r) {
            T* sr = sS + r * Bk;
            T mx = sm[r];
            for (int64_t c = 0; c < bk; ++c) mx = sr[c] > mx ? sr[c] : mx;
            const T base = mx == ninf ? T(0) : mx;  // a row with no finite score yet: p = 0
            const T alpha = kmath::exp(sm[r] - base);
            T sum = T(0);
            for (int64_t c = 0; c < bk; ++c) {
              T pr = kmath::exp(sr[c] - base);
              sum += pr;
              if (a.dropout) pr *= sdpa_dropout_factor(a, n, h, i0 + r, j0 + c);
              sr[c] = pr;
            }
            sl[r] = sl[r] * alpha + sum;
            sm[r] = mx;
            salpha[r] = alpha;
          });
          team.team_barrier();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bq * Ev), [&](int64_t x) {
            const int64_t r = x / Ev, d = x % Ev;
            const T* pr = sS + r * Bk;
            T acc = sO[x] * salpha[r];
            for (int64_t c = 0; c < bk; ++c) acc += pr[c] * sV[c * ldv + d];
            sO[x] = acc;
          });
        }
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bq * Ev), [&](int64_t x) {
          const T l = sl[x / Ev];
          a.out.row(n, h, i0 + x / Ev)[x % Ev] = l > T(0) ? sO[x] / l : T(0);
        });
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bq), [&](int64_t r) {
          a.lse(n, h, i0 + r) = sl[r] > T(0) ? sm[r] + kmath::log(sl[r]) : ninf;
        });
      });
}

// The score tile's dS (and, for dk / dv, the dropped-out P) of query rows
// sQ (pre-scaled), sdO against key rows sK, sV: dS = P * (dP * f - delta),
// Pd = P * f with f the dropout factor (1 without dropout).
template <class T, class Member>
KOKKOS_INLINE_FUNCTION void sdpa_team_ds(const Member& team, const SdpaArgs<T>& a, int64_t n, int64_t h, int64_t i0,
                                         int64_t bq, int64_t j0, int64_t bk, int64_t Bk, const T* sQ, const T* sdO,
                                         const T* sK, int64_t ldk, const T* sV, int64_t ldv, const T* slse,
                                         const T* sdelta, T* sPd, T* sdS) {
  const T ninf = sdpa_neg_inf<T>();
  const int64_t E = a.E, Ev = a.Ev;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bq * bk), [&](int64_t x) {
    const int64_t r = x / bk, c = x % bk, i = i0 + r, j = j0 + c;
    T s = T(0), dp = T(0);
    const T* qr = sQ + r * E;
    const T* kr = sK + c * ldk;
    for (int64_t e = 0; e < E; ++e) s += qr[e] * kr[e];
    const T* gr = sdO + r * Ev;
    const T* vr = sV + c * ldv;
    for (int64_t d = 0; d < Ev; ++d) dp += gr[d] * vr[d];
    if (a.has_mask) s += a.mask.row(n, h, i)[j * a.mask.s3];
    T pr = (a.causal && j > i) || slse[r] == ninf ? T(0) : kmath::exp(s - slse[r]);
    const T f = a.dropout && pr != T(0) ? sdpa_dropout_factor(a, n, h, i, j) : T(1);
    if (sPd) sPd[r * Bk + c] = pr * f;
    sdS[r * Bk + c] = pr * (dp * f - sdelta[r]);
  });
}

template <class Exec, class T>
void sdpa_backward_team(const Exec& exec, const SdpaArgs<T>& a) {
  using Policy = Kokkos::TeamPolicy<Exec>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<T*, typename Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  const int64_t E = a.E, Ev = a.Ev, ldk = E + 1, ldv = Ev + 1;
  // Pass 1: dk, dv per (n, hk, key tile).
  {
    auto count = [=](int64_t bq, int64_t bk) {
      return bk * ldk + bk * ldv + bk * E + bk * Ev + bq * E + bq * Ev + 2 * bq * bk + 2 * bq;
    };
    const SdpaTeamTiles t = sdpa_team_tiles<T>(Policy(exec, 1, Kokkos::AUTO), a.L, a.S, count);
    const int64_t teams = a.N * a.Hk * t.nkb;
    const int64_t Bq = t.bq, Bk = t.bk, nkb = t.nkb;
    const int level = t.level;
    const int64_t cnt = t.count;
    const size_t bytes = Scratch::shmem_size(size_t(cnt));
    if (teams > 0)
      Kokkos::parallel_for(
          "vnn::sdpa_backward_kv", Policy(exec, teams, Kokkos::AUTO).set_scratch_size(level, Kokkos::PerTeam(bytes)),
          KOKKOS_LAMBDA(const Member& team) {
            const int64_t w = team.league_rank();
            const int64_t kb = w % nkb, hk = (w / nkb) % a.Hk, n = w / (nkb * a.Hk);
            const int64_t j0 = kb * Bk, bk = a.S - j0 < Bk ? a.S - j0 : Bk;
            Scratch buf(team.team_scratch(level), size_t(cnt));
            T* sK = buf.data();
            T* sV = sK + Bk * ldk;
            T* sdK = sV + Bk * ldv;
            T* sdV = sdK + Bk * E;
            T* sQ = sdV + Bk * Ev;
            T* sdO = sQ + Bq * E;
            T* sPd = sdO + Bq * Ev;
            T* sdS = sPd + Bq * Bk;
            T* slse = sdS + Bq * Bk;
            T* sdelta = slse + Bq;
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bk * E), [&](int64_t x) {
              sK[(x / E) * ldk + x % E] = a.k.row(n, hk, j0 + x / E)[x % E];
              sdK[x] = T(0);
            });
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bk * Ev), [&](int64_t x) {
              sV[(x / Ev) * ldv + x % Ev] = a.v.row(n, hk, j0 + x / Ev)[x % Ev];
              sdV[x] = T(0);
            });
            // Causal: query rows below j0 see none of these keys.
            const int64_t first = a.causal ? (j0 / Bq) * Bq : 0;
            for (int64_t g = 0; g < a.G; ++g) {
              const int64_t h = hk * a.G + g;
              for (int64_t i0 = first; i0 < a.L; i0 += Bq) {
                const int64_t bq = a.L - i0 < Bq ? a.L - i0 : Bq;
                team.team_barrier();
                Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bq * E), [&](int64_t x) {
                  sQ[x] = a.q.row(n, h, i0 + x / E)[x % E] * a.scale;
                });
                Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bq * Ev), [&](int64_t x) {
                  sdO[x] = a.dout.row(n, h, i0 + x / Ev)[x % Ev];
                });
                Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bq), [&](int64_t r) {
                  slse[r] = a.lse(n, h, i0 + r);
                  sdelta[r] = a.delta(n, h, i0 + r);
                });
                team.team_barrier();
                sdpa_team_ds(team, a, n, h, i0, bq, j0, bk, Bk, sQ, sdO, sK, ldk, sV, ldv, slse, sdelta, sPd, sdS);
                team.team_barrier();
                Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bk * Ev), [&](int64_t x) {
                  const int64_t c = x / Ev, d = x % Ev;
                  T acc = sdV[x];
                  for (int64_t r = 0; r < bq; ++r) acc += sPd[r * Bk + c] * sdO[r * Ev + d];
                  sdV[x] = acc;
                });
                // dk = scale * dS^T q: sQ holds scale * q.
                Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bk * E), [&](int64_t x) {
                  const int64_t c = x / E, e = x % E;
                  T acc = sdK[x];
                  for (int64_t r = 0; r < bq; ++r) acc += sdS[r * Bk + c] * sQ[r * E + e];
                  sdK[x] = acc;
                });
              }
            }
            team.team_barrier();
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bk * E),
                                 [&](int64_t x) { a.dk.row(n, hk, j0 + x / E)[x % E] = sdK[x]; });
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bk * Ev),
                                 [&](int64_t x) { a.dv.row(n, hk, j0 + x / Ev)[x % Ev] = sdV[x]; });
          });
  }
  // Pass 2: dq per (n, hq, query tile).
  {
    auto count = [=](int64_t bq, int64_t bk) {
      return 2 * bq * E + bq * Ev + bk * ldk + bk * ldv + bq * bk + 2 * bq;
    };
    const SdpaTeamTiles t = sdpa_team_tiles<T>(Policy(exec, 1, Kokkos::AUTO), a.L, a.S, count);
    const int64_t teams = a.N * a.Hq * t.nqb;
    const int64_t Bq = t.bq, Bk = t.bk, nqb = t.nqb;
    const int level = t.level;
    const int64_t cnt = t.count;
    const size_t bytes = Scratch::shmem_size(size_t(cnt));
    if (teams > 0)
      Kokkos::parallel_for(
          "vnn::sdpa_backward_q", Policy(exec, teams, Kokkos::AUTO).set_scratch_size(level, Kokkos::PerTeam(bytes)),
          KOKKOS_LAMBDA(const Member& team) {
            const int64_t w = team.league_rank();
            const int64_t qb = w % nqb, h = (w / nqb) % a.Hq, n = w / (nqb * a.Hq), hk = h / a.G;
            const int64_t i0 = qb * Bq, bq = a.L - i0 < Bq ? a.L - i0 : Bq;
            Scratch buf(team.team_scratch(level), size_t(cnt));
            T* sQ = buf.data();
            T* sdQ = sQ + Bq * E;
            T* sdO = sdQ + Bq * E;
            T* sK = sdO + Bq * Ev;
            T* sV = sK + Bk * ldk;
            T* sdS = sV + Bk * ldv;
            T* slse = sdS + Bq * Bk;
            T* sdelta = slse + Bq;
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bq * E), [&](int64_t x) {
              sQ[x] = a.q.row(n, h, i0 + x / E)[x % E] * a.scale;
              sdQ[x] = T(0);
            });
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bq * Ev), [&](int64_t x) {
              sdO[x] = a.dout.row(n, h, i0 + x / Ev)[x % Ev];
            });
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bq), [&](int64_t r) {
              slse[r] = a.lse(n, h, i0 + r);
              sdelta[r] = a.delta(n, h, i0 + r);
            });
            const int64_t kend = a.causal ? (a.S < i0 + bq ? a.S : i0 + bq) : a.S;
            for (int64_t j0 = 0; j0 < kend; j0 += Bk) {
              const int64_t bk = kend - j0 < Bk ? kend - j0 : Bk;
              team.team_barrier();
              Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bk * E), [&](int64_t x) {
                sK[(x / E) * ldk + x % E] = a.k.row(n, hk, j0 + x / E)[x % E];
              });
              Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bk * Ev), [&](int64_t x) {
                sV[(x / Ev) * ldv + x % Ev] = a.v.row(n, hk, j0 + x / Ev)[x % Ev];
              });
              team.team_barrier();
              sdpa_team_ds(team, a, n, h, i0, bq, j0, bk, Bk, sQ, sdO, sK, ldk, sV, ldv, slse, sdelta,
                           static_cast<T*>(nullptr), sdS);
              team.team_barrier();
              Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bq * E), [&](int64_t x) {
                const int64_t r = x / E, e = x % E;
                T acc = sdQ[x];
                for (int64_t c = 0; c < bk; ++c) acc += sdS[r * Bk + c] * sK[c * ldk + e];
                sdQ[x] = acc;
              });
            }
            team.team_barrier();
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bq * E), [&](int64_t x) {
              a.dq.row(n, h, i0 + x / E)[x % E] = sdQ[x] * a.scale;
            });
          });
  }
}

// The host implementation (attention_host.hpp), compiled in host plugins only.
template <class Exec, class T>
void sdpa_host(const Exec& exec, const SdpaArgs<T>& a, bool backward, const HostGemm* gemm);

// The checks decode_sdpa leaves to the kernels: one dtype for q, k, v, the
// mask and every dense output (lse / delta too: float32 rows for float32,
// float64 for float64); false (refuse) otherwise.
inline bool sdpa_dtypes(const vnn_op& op, bool backward) {
  const int32_t dt = op.inputs[0].dtype;
  for (int32_t i = 0; i < op.num_inputs; ++i)
    if (op.inputs[i].dtype != dt)
      return refuse("input ", i, " is ", vnn::detail::abi_dtype(op.inputs[i].dtype), ", q ",
                    vnn::detail::abi_dtype(dt), ": every operand has q's dtype (lse and delta too)");
  for (int32_t i = 0; i < op.num_outputs; ++i)
    if (op.outputs[i].dtype != dt)
      return refuse("output ", i, " is ", vnn::detail::abi_dtype(op.outputs[i].dtype), ", q ",
                    vnn::detail::abi_dtype(dt), ": every operand has q's dtype (lse too)");
  (void)backward;
  return true;
}

// The test knobs of VNN_SDPA_KOKKOS (comma-separated; read per request):
//   team    the team (device) kernels on a host space too
//   split   the host backward in two passes (dk / dv, then dq) whatever
//           the pool's size
//   avx2, base   the host loops compiled for AVX2 + FMA / the baseline ISA
//           even where the CPU has more
//   noblas  the host kernels' own product loops instead of the plugin's BLAS
inline bool sdpa_knob(const char* name) {
  const char* e = std::getenv("VNN_SDPA_KOKKOS");
  if (!e) return false;
  const size_t n = std::strlen(name);
  for (const char* p = e; *p;) {
    const char* end = std::strchr(p, ',');
    const size_t len = end ? size_t(end - p) : std::strlen(p);
    if (len == n && std::strncmp(p, name, n) == 0) return true;
    if (!end) break;
    p = end + 1;
  }
  return false;
}

template <class Exec>
bool sdpa(VNN_KOKKOS_SDPA_PARAMS(Exec)) {
  vnn_sdpa_params p;
  if (!decode_sdpa(op, &p))
    return refuse("the request does not match vnn_sdpa_params (operand counts, shapes, unit last strides, "
                  "dropout_p in [0, 1))");
  const bool backward = op.kind == VNN_OP_SDPA_BACKWARD;
  if (!sdpa_dtypes(op, backward)) return false;
  dispatch_types<FloatingTypes>(backward ? "sdpa_backward" : "sdpa", op.inputs[0].dtype, [&](auto t) {
    using T = decltype(t);
    const SdpaArgs<T> a = sdpa_args<T>(op, p);
    if constexpr (Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible) {
      if (!sdpa_knob("team")) {
        sdpa_host<Exec, T>(exec, a, backward, gemm);
        return;
      }
    }
    (void)gemm;
    if (backward) sdpa_backward_team<Exec, T>(exec, a);
    else sdpa_forward_team<Exec, T>(exec, a);
  });
  return true;
}

}  // namespace vnn::kernels

#if !defined(__CUDACC__) && !defined(__HIPCC__)
#include "kokkos/kernels/attention_host.hpp"
#endif

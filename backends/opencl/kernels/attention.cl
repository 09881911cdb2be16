// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fused scaled-dot-product attention, FlashAttention-2 (Dao, 2023): the
// contract is VNN_OP_SDPA / VNN_OP_SDPA_BACKWARD in include/vnn/backend_abi.h
// (shapes, strides, GQA, causal, additive mask, Philox dropout, lse, delta);
// host side ops_attention.cpp. Never an L x S buffer: key / value (backward:
// query / dout) tiles stream past the rows each work item keeps in private
// memory (through local memory on GPUs, in place on CPUs: Tiles below).
//
// SDPA_PASS 0, vnn_sdpa_fwd: a work-group per (query tile of NI * RQ rows,
//   n * Hq + h); item t owns rows q0 + t * RQ .. + RQ. Per key tile of TK
//   keys: the scores of its rows as vectors of VW keys (k transposed,
//   Kt[e][j], so that one vector load serves RQ rows), an online softmax
//   (running max m, sum l; acc rescaled by exp(m_old - m_new)), and acc +=
//   p v from the staged rows Vs[j][:]. out = acc / l, lse = m + log l; a row
//   with no finite score gives out 0 and lse -inf.
// SDPA_PASS 1, vnn_sdpa_dq: the same grid; scores recomputed and turned into
//   P = exp(s - lse); dP = dout . v (v staged transposed); dS = P (dP Z -
//   delta); dq = scale * sum_j dS k_j (k also staged by rows).
// SDPA_PASS 2, vnn_sdpa_dkdv: a work-group per (key tile of NI * RQ keys,
//   n * Hk + hk); item t owns keys k0 + t * RQ .. + RQ and sums over the G
//   query heads of the group and every query tile of TK queries (staged by
//   rows and transposed: lanes run over queries here): dv = sum_i P Z
//   dout_i, dk = scale * sum_i dS q_i. Deterministic: no atomics, each
//   output element is written by one item.
// Causal (key j > query i masked, top-left aligned) skips the tiles above
// the diagonal. Dropout: Z = 1 / (1 - p) where the word of
// Philox4x32-10(key = seed, counter = offset + e / 4), e = ((n * Hq + h) * L
// + i) * S + j, has (w >> 8) >= threshold, else 0 (VNN_OP_RANDOM's layout).
//
// Tiles: STAGED=1 (GPUs) copies each tile into local memory, transposed
// where the loads want it, the group's items sharing the copy between two
// barriers. STAGED=0 (CPU-like devices, where local memory is ordinary
// memory and the copy was 60% of the forward's time on PoCL) reads the
// tiles where they lie: rows straight from the operands, the transposed
// ones from scratch copies the host makes with vnn_sdpa_transpose
// (SDPA_PASS 3): [head][d][row], rows zero-padded to tp, a multiple of TK;
// no barriers, the caches share the tiles. The host runs a pass over
// chunks of key / value heads (n * Hk + hk from hb0) so that the copies
// stay a bounded buffer, not a second copy of the inputs.
//
// Defines: T (float, double), IT (int, long: T's size), SDPA_PASS, STAGED,
// E, EV (head dims), RQ (rows per item), NI (items per group), TK (tile
// rows: keys for passes 0 and 1, queries for pass 2; a multiple of VW), VW
// (lanes of the score vectors), VE and VEV (lanes of the accumulators
// along E and EV: powers of two dividing them). Run-time flags: 1 causal,
// 2 mask, 4 dropout.

#define SCAT_(a, b) a##b
#define SCAT(a, b) SCAT_(a, b)

#if SDPA_PASS == 3
// dst[b - b0][d][r] = element d of row r of head b = n * H + h of src
// (strides s_st), r < R; pad for R <= r < tp; b from b0 (a chunk of heads). fix: -inf becomes +inf (lse as the
// backward subtracts it, sdpa_lse_for_p). One item per block of 16 rows x
// 16 columns: a whole block of unit-stride rows goes as 16 row vector
// loads and 16 column vector stores through private memory (as
// vnn_gemm_pack; element by element it took 28% of a training step's
// attention time on PoCL), the edges element by element.
__kernel void vnn_sdpa_transpose(__global T* dst, __global const T* src, long s_off, long4 s_st, int H, int R, int D,
                                 long tp, T pad, int fix, int b0) {
  const long r0 = get_global_id(0) * 16;
  const int d0 = get_global_id(1) * 16, bl = get_global_id(2), b = b0 + bl;
  if (r0 >= tp || d0 >= D) return;
  const int n = b / H, h = b - n * H;
  const __global T* sb = src + s_off + n * s_st.s0 + h * s_st.s1 + d0 * s_st.s3;
  __global T* db = dst + ((long)bl * D + d0) * tp + r0;
  if (r0 + 16 <= R && d0 + 16 <= D && s_st.s3 == 1 && !fix) {
    T tile[16][16];  // [r][d]
#pragma unroll
    for (int rr = 0; rr < 16; ++rr) vstore16(vload16(0, sb + (r0 + rr) * s_st.s2), 0, &tile[rr][0]);
#pragma unroll
    for (int dd = 0; dd < 16; ++dd) {
      T col[16];
#pragma unroll
      for (int rr = 0; rr < 16; ++rr) col[rr] = tile[rr][dd];
      vstore16(vload16(0, col), 0, db + dd * tp);
    }
    return;
  }
  const int dn = min(16, D - d0), rn = (int)min(16L, tp - r0);
  for (int dd = 0; dd < dn; ++dd)
    for (int rr = 0; rr < rn; ++rr) {
      const long r = r0 + rr;
      T val = pad;
      if (r < R) {
        val = sb[r * s_st.s2 + dd * s_st.s3];
        if (fix && val == -INFINITY) val = INFINITY;
      }
      db[dd * tp + rr] = val;
    }
}
#else  // SDPA_PASS 0, 1, 2

#if VW == 1
typedef T TV;
#define LDV(p) (*(p))
#define STV(v, p) (*(p) = (v))
#else
typedef SCAT(T, VW) TV;
#define LDV(p) SCAT(vload, VW)(0, (p))
#define STV(v, p) SCAT(vstore, VW)((v), 0, (p))
#endif
// Lane indices, in the integer type select() wants beside TV (IT: int
// for float, long for double).
#if VW == 1
typedef IT TI;
#define SDPA_IOTA ((TI)0)
#elif VW == 2
typedef SCAT(IT, VW) TI;
#define SDPA_IOTA ((TI)(0, 1))
#elif VW == 4
typedef SCAT(IT, VW) TI;
#define SDPA_IOTA ((TI)(0, 1, 2, 3))
#elif VW == 8
typedef SCAT(IT, VW) TI;
#define SDPA_IOTA ((TI)(0, 1, 2, 3, 4, 5, 6, 7))
#else
typedef SCAT(IT, VW) TI;
#define SDPA_IOTA ((TI)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
#endif
// Unsigned lanes for the Philox rounds, and the conversions into the lane
// types (convert_<type> takes the type's name, not a typedef).
#if VW == 1
typedef uint TU;
typedef ulong TUL;
#define SDPA_CVT_TU(x) convert_uint(x)
#define SDPA_CVT_TUL(x) convert_ulong(x)
#define SDPA_CVT_TI(x) SCAT(convert_, IT)(x)
#else
typedef SCAT(uint, VW) TU;
typedef SCAT(ulong, VW) TUL;
#define SDPA_CVT_TU(x) SCAT(convert_uint, VW)(x)
#define SDPA_CVT_TUL(x) SCAT(convert_ulong, VW)(x)
#define SDPA_CVT_TI(x) SCAT(SCAT(convert_, IT), VW)(x)
#endif
#if VE == 1
typedef T TVE;
#define LDVE(p) (*(p))
#define STVE(v, p) (*(p) = (v))
#else
typedef SCAT(T, VE) TVE;
#define LDVE(p) SCAT(vload, VE)(0, (p))
#define STVE(v, p) SCAT(vstore, VE)((v), 0, (p))
#endif
#if VEV == 1
typedef T TVEV;
#define LDVEV(p) (*(p))
#define STVEV(v, p) (*(p) = (v))
#else
typedef SCAT(T, VEV) TVEV;
#define LDVEV(p) SCAT(vload, VEV)(0, (p))
#define STVEV(v, p) SCAT(vstore, VEV)((v), 0, (p))
#endif

#define NC (TK / VW)   // score vectors per row and tile
#define NE (E / VE)    // accumulator vectors along E
#define NEV (EV / VEV)  // accumulator vectors along EV
#define TILE (NI * RQ)  // rows of the group: queries (passes 0, 1), keys (pass 2)

#define SDPA_CAUSAL 1
#define SDPA_MASK 2
#define SDPA_DROPOUT 4

// The lanes of v folded with OP (fmax, or the sum below) by halves.
#define SDPA_ADD(a, b) ((a) + (b))
#if VW == 16
#define SDPA_FOLD(OP, v) SDPA_FOLD8(OP, OP((v).lo, (v).hi))
#define SDPA_FOLD8(OP, v) SDPA_FOLD4(OP, OP((v).lo, (v).hi))
#define SDPA_FOLD4(OP, v) SDPA_FOLD2(OP, OP((v).lo, (v).hi))
#define SDPA_FOLD2(OP, v) OP((v).lo, (v).hi)
#elif VW == 8
#define SDPA_FOLD(OP, v) SDPA_FOLD4(OP, OP((v).lo, (v).hi))
#define SDPA_FOLD4(OP, v) SDPA_FOLD2(OP, OP((v).lo, (v).hi))
#define SDPA_FOLD2(OP, v) OP((v).lo, (v).hi)
#elif VW == 4
#define SDPA_FOLD(OP, v) SDPA_FOLD2(OP, OP((v).lo, (v).hi))
#define SDPA_FOLD2(OP, v) OP((v).lo, (v).hi)
#elif VW == 2
#define SDPA_FOLD(OP, v) OP((v).lo, (v).hi)
#else
#define SDPA_FOLD(OP, v) (v)
#endif

inline T sdpa_hmax(TV v) { return SDPA_FOLD(fmax, v); }
inline T sdpa_hsum(TV v) { return SDPA_FOLD(SDPA_ADD, v); }

// Ten Philox4x32 rounds (vnn_philox_rounds, include/vnn/philox.h) on
// vectors of counter blocks (c0, c1, c2, c3) of type VT, the 32 x 32 ->
// 64-bit products as 64-bit lanes of VTL (15% ahead of mul_hi on PoCL).
#define SDPA_PHILOX(VT, VTL, CVT, CVTL, c0, c1, c2, c3, seed)                                 \
  {                                                                                          \
    uint k0_ = (uint)(seed), k1_ = (uint)((seed) >> 32);                                     \
    for (int r_ = 0; r_ < 10; ++r_) {                                                        \
      if (r_ > 0) k0_ += 0x9E3779B9u, k1_ += 0xBB67AE85u;                                    \
      const VTL p0_ = CVTL(c0) * (VTL)(0xD2511F53u), p1_ = CVTL(c2) * (VTL)(0xCD9E8D57u);    \
      c0 = CVT(p1_ >> 32) ^ c1 ^ (VT)(k0_);                                                  \
      c2 = CVT(p0_ >> 32) ^ c3 ^ (VT)(k1_);                                                  \
      c1 = CVT(p1_);                                                                         \
      c3 = CVT(p0_);                                                                         \
    }                                                                                        \
  }

// The dropout factors (1 / (1 - p) kept, 0 dropped) of elements e0 + l *
// es, lane l: word e % 4 of the block of counter offset + e / 4, one block
// per lane. Lanes of one block repeat its rounds, and still this ran ahead
// of a scalar block per 4 elements (GPT-shape forward with dropout 3.8 ->
// 2.9 ms CPU; the dk / dv pass, whose lanes are S apart, 15 -> 5.4 ms) and
// of each block drawn once on VW / 2 lanes and shuffled into place.
inline TV sdpa_keep(ulong e0, ulong es, ulong seed, ulong offset, uint threshold, T kept) {
  const TUL e = (TUL)(e0) + SDPA_CVT_TUL(SDPA_IOTA) * (TUL)(es), ctr = (TUL)(offset) + (e >> 2);
  TU c0 = SDPA_CVT_TU(ctr), c1 = SDPA_CVT_TU(ctr >> 32), c2 = (TU)(0u), c3 = (TU)(0u);
  SDPA_PHILOX(TU, TUL, SDPA_CVT_TU, SDPA_CVT_TUL, c0, c1, c2, c3, seed)
  const TU word = SDPA_CVT_TU(e & (TUL)(3));
  const TU lo = select(c0, c1, (word & (TU)(1u)) != (TU)(0u)), hi = select(c2, c3, (word & (TU)(1u)) != (TU)(0u));
  const TU w = select(lo, hi, (word & (TU)(2u)) != (TU)(0u));
  return select((TV)(0), (TV)(kept), SDPA_CVT_TI((w >> 8) >= (TU)(threshold)));
}

// lse as the backward passes subtract it: +inf for a row without a finite
// score (lse -inf), so that exp(s - lse) is 0 there instead of NaN.
inline T sdpa_lse_for_p(T v) { return v == -INFINITY ? INFINITY : v; }

// Stages rows r0 .. r0 + TK of a [rows, D] matrix (row stride rs, unit
// stride along D) into local memory: STORE, statements, puts val_ (element
// d_ of staged row r_, x_ = r_ * D + d_) transposed (SDPA_TR: dst[d_ * TK +
// r_]) and / or by rows (SDPA_ROW: dst[x_]); rows past `rows` as zeros. The
// group's items share the copy.
#define SDPA_STAGE(D, src, rs, r0, rows, STORE)                                      \
  for (int x_ = get_local_id(0); x_ < TK * (D); x_ += NI) {                          \
    const int r_ = x_ / (D), d_ = x_ - r_ * (D);                                     \
    const T val_ = (r0) + r_ < (rows) ? (src)[(long)((r0) + r_) * (rs) + d_] : (T)0; \
    STORE;                                                                           \
  }
#define SDPA_TR(dst) (dst)[d_ * TK + r_] = val_
#define SDPA_ROW(dst) (dst)[x_] = val_

// The additive term of the scores of query i against keys j0 .. j0 + VW
// (lanes): -inf past S and, causal, past i; else the mask (row mrow).
inline TV sdpa_bias_keys(int i, int j0, int S, int flags, const __global T* mrow, long ms3) {
  TV b = (TV)0;
  if (flags & SDPA_MASK) {
    if (ms3 == 1 && j0 + VW <= S) {
      b = LDV(mrow + j0);
    } else {
      T t[VW];
      for (int l = 0; l < VW; ++l) t[l] = j0 + l < S ? mrow[(long)(j0 + l) * ms3] : (T)0;
      b = LDV(t);
    }
  }
  const TI jv = (TI)(j0) + SDPA_IOTA;
  // (TI): a scalar comparison gives int, select() of double wants long.
  TI off = (TI)(jv >= (TI)(S));
  if (flags & SDPA_CAUSAL) off |= (TI)(jv > (TI)(i));
  return select(b, (TV)(-INFINITY), off);
}

// The same for key j against queries i0 .. i0 + VW (lanes; the dk / dv
// pass): causal -inf before j, else the mask (column mcol). Queries past L
// need none (their lse is +inf).
inline TV sdpa_bias_queries(int j, int i0, int L, int flags, const __global T* mcol, long ms2) {
  TV b = (TV)0;
  if (flags & SDPA_MASK) {
    if (ms2 == 1 && i0 + VW <= L) {
      b = LDV(mcol + i0);
    } else {
      T t[VW];
      for (int l = 0; l < VW; ++l) t[l] = i0 + l < L ? mcol[(long)(i0 + l) * ms2] : (T)0;
      b = LDV(t);
    }
  }
  if (flags & SDPA_CAUSAL) b = select(b, (TV)(-INFINITY), (TI)((TI)(i0) + SDPA_IOTA < (TI)(j)));
  return b;
}

#if SDPA_PASS == 0
__kernel __attribute__((reqd_work_group_size(NI, 1, 1)))
void vnn_sdpa_fwd(__global T* out, long o_off, long4 o_st, __global T* lse, long l_off, long4 l_st,
                  __global const T* q, long q_off, long4 q_st, __global const T* k, long k_off, long4 k_st,
                  __global const T* v, long v_off, long4 v_st, __global const T* mask, long m_off, long4 m_st,
                  __global const T* ktr, long tp, int hb0, int Hq, int G, int L, int S, T scale, int flags,
                  T kept, uint threshold, ulong seed, ulong offset) {
#if STAGED
  __local T Kt[E * TK];
  __local T Vs[TK * EV];
#endif
  const int t = get_local_id(0), q0 = get_group_id(0) * TILE, nh = hb0 * G + get_group_id(1);
  const int n = nh / Hq, h = nh - n * Hq, hk = h / G;
  const int i0 = q0 + t * RQ;
  const __global T* qb = q + q_off + n * q_st.s0 + h * q_st.s1;
  const __global T* kb = k + k_off + n * k_st.s0 + hk * k_st.s1;
  const __global T* vb = v + v_off + n * v_st.s0 + hk * v_st.s1;
  const __global T* mb = mask + m_off + n * m_st.s0 + h * m_st.s1;
  T qr[RQ][E];
  TVEV acc[RQ][NEV];
  T m[RQ], l[RQ];
#pragma unroll
  for (int r = 0; r < RQ; ++r) {
    const __global T* row = qb + (long)min(i0 + r, L - 1) * q_st.s2;
    for (int e = 0; e < E; ++e) qr[r][e] = row[e];
#pragma unroll
    for (int c = 0; c < NEV; ++c) acc[r][c] = (TVEV)0;
    m[r] = -INFINITY, l[r] = (T)0;
  }
  // Causal: no key past the last row's (the group's last row while the
  // items share staged tiles, else the item's own).
  const int kend = (flags & SDPA_CAUSAL) ? min(S, (STAGED ? q0 + TILE : i0 + RQ)) : S;
  for (int k0 = 0; k0 < kend; k0 += TK) {
#if STAGED
    SDPA_STAGE(E, kb, k_st.s2, k0, S, SDPA_TR(Kt))
    SDPA_STAGE(EV, vb, v_st.s2, k0, S, SDPA_ROW(Vs))
    barrier(CLK_LOCAL_MEM_FENCE);
    const __local T* kt = Kt;
    const __local T* vs = Vs;
    const long kt_ld = TK, vs_ld = EV;
#else
    const __global T* kt = ktr + (long)(n * (Hq / G) + hk - hb0) * E * tp + k0;
    const __global T* vs = vb + (long)k0 * v_st.s2;
    const long kt_ld = tp, vs_ld = v_st.s2;
#endif
    TV s[RQ][NC];
#pragma unroll
    for (int r = 0; r < RQ; ++r)
#pragma unroll
      for (int c = 0; c < NC; ++c) s[r][c] = (TV)0;
    for (int e = 0; e < E; ++e) {
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        const TV kv = LDV(&kt[e * kt_ld + c * VW]);
#pragma unroll
        for (int r = 0; r < RQ; ++r) s[r][c] += qr[r][e] * kv;
      }
    }
    // Whole tile inside the keys, below the diagonal, no mask: no bias.
    const int plain = k0 + TK <= S && !(flags & SDPA_MASK) && !((flags & SDPA_CAUSAL) && k0 + TK - 1 > i0);
    T pz[RQ][TK];
#pragma unroll
    for (int r = 0; r < RQ; ++r) {
      const int i = i0 + r, ic = min(i, L - 1);
      TV mx = (TV)(-INFINITY);
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        s[r][c] *= scale;
        if (!plain) s[r][c] += sdpa_bias_keys(i, k0 + c * VW, S, flags, mb + (long)ic * m_st.s2, m_st.s3);
        mx = fmax(mx, s[r][c]);
      }
      const T mn = fmax(m[r], sdpa_hmax(mx));
      T alpha = (T)1;
      if (mn == -INFINITY) {
        for (int j = 0; j < TK; ++j) pz[r][j] = (T)0;
      } else {
        alpha = mn == m[r] ? (T)1 : exp(m[r] - mn);
        const ulong erow = ((ulong)(n * Hq + h) * L + ic) * S + k0;
        TV ps = (TV)0;
#pragma unroll
        for (int c = 0; c < NC; ++c) {
          TV p = exp(s[r][c] - mn);
          ps += p;
          if (flags & SDPA_DROPOUT) p *= sdpa_keep(erow + c * VW, 1, seed, offset, threshold, kept);
          STV(p, &pz[r][c * VW]);
        }
        l[r] = l[r] * alpha + sdpa_hsum(ps);
        m[r] = mn;
      }
      if (alpha != (T)1)
#pragma unroll
        for (int c = 0; c < NEV; ++c) acc[r][c] *= alpha;
    }
    const int jn = min(TK, S - k0);
    for (int j = 0; j < jn; ++j) {
      TVEV vv[NEV];
#pragma unroll
      for (int c = 0; c < NEV; ++c) vv[c] = LDVEV(&vs[j * vs_ld + c * VEV]);
#pragma unroll
      for (int r = 0; r < RQ; ++r) {
        const T p = pz[r][j];
#pragma unroll
        for (int c = 0; c < NEV; ++c) acc[r][c] += p * vv[c];
      }
    }
#if STAGED
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
  }
#pragma unroll
  for (int r = 0; r < RQ; ++r) {
    const int i = i0 + r;
    if (i >= L) break;
    const T inv = l[r] > (T)0 ? (T)1 / l[r] : (T)0;
    __global T* orow = out + o_off + n * o_st.s0 + h * o_st.s1 + (long)i * o_st.s2;
#pragma unroll
    for (int c = 0; c < NEV; ++c) STVEV(acc[r][c] * inv, orow + c * VEV);
    lse[l_off + n * l_st.s0 + h * l_st.s1 + (long)i * l_st.s2] = l[r] > (T)0 ? m[r] + log(l[r]) : -INFINITY;
  }
}
#endif  // SDPA_PASS == 0

#if SDPA_PASS == 1
__kernel __attribute__((reqd_work_group_size(NI, 1, 1)))
void vnn_sdpa_dq(__global T* dq, long dq_off, long4 dq_st, __global const T* q, long q_off, long4 q_st,
                 __global const T* k, long k_off, long4 k_st, __global const T* v, long v_off, long4 v_st,
                 __global const T* dout, long do_off, long4 do_st, __global const T* lse, long l_off, long4 l_st,
                 __global const T* delta, long d_off, long4 d_st, __global const T* mask, long m_off, long4 m_st,
                 __global const T* ktr, __global const T* vtr, long tp, int hb0, int Hq, int G, int L, int S,
                 T scale, int flags, T kept, uint threshold, ulong seed, ulong offset) {
#if STAGED
  __local T Kt[E * TK];
  __local T Ks[TK * E];
  __local T Vt[EV * TK];
#endif
  const int t = get_local_id(0), q0 = get_group_id(0) * TILE, nh = hb0 * G + get_group_id(1);
  const int n = nh / Hq, h = nh - n * Hq, hk = h / G;
  const int i0 = q0 + t * RQ;
  const __global T* qb = q + q_off + n * q_st.s0 + h * q_st.s1;
  const __global T* dob = dout + do_off + n * do_st.s0 + h * do_st.s1;
  const __global T* kb = k + k_off + n * k_st.s0 + hk * k_st.s1;
  const __global T* vb = v + v_off + n * v_st.s0 + hk * v_st.s1;
  const __global T* mb = mask + m_off + n * m_st.s0 + h * m_st.s1;
  T qr[RQ][E], dor[RQ][EV], lr[RQ], dr[RQ];
  TVE acc[RQ][NE];
#pragma unroll
  for (int r = 0; r < RQ; ++r) {
    const long ic = min(i0 + r, L - 1);
    for (int e = 0; e < E; ++e) qr[r][e] = qb[ic * q_st.s2 + e];
    for (int e = 0; e < EV; ++e) dor[r][e] = dob[ic * do_st.s2 + e];
    lr[r] = sdpa_lse_for_p(lse[l_off + n * l_st.s0 + h * l_st.s1 + ic * l_st.s2]);
    dr[r] = delta[d_off + n * d_st.s0 + h * d_st.s1 + ic * d_st.s2];
#pragma unroll
    for (int c = 0; c < NE; ++c) acc[r][c] = (TVE)0;
  }
  // Causal: no key past the last row's (the group's last row while the
  // items share staged tiles, else the item's own).
  const int kend = (flags & SDPA_CAUSAL) ? min(S, (STAGED ? q0 + TILE : i0 + RQ)) : S;
  for (int k0 = 0; k0 < kend; k0 += TK) {
#if STAGED
    SDPA_STAGE(E, kb, k_st.s2, k0, S, SDPA_TR(Kt); SDPA_ROW(Ks))
    SDPA_STAGE(EV, vb, v_st.s2, k0, S, SDPA_TR(Vt))
    barrier(CLK_LOCAL_MEM_FENCE);
    const __local T* kt = Kt;
    const __local T* ks = Ks;
    const __local T* vt = Vt;
    const long t_ld = TK, ks_ld = E;
#else
    const long hb = n * (Hq / G) + hk - hb0;
    const __global T* kt = ktr + hb * E * tp + k0;
    const __global T* vt = vtr + hb * EV * tp + k0;
    const __global T* ks = kb + (long)k0 * k_st.s2;
    const long t_ld = tp, ks_ld = k_st.s2;
#endif
    TV s[RQ][NC], dp[RQ][NC];
#pragma unroll
    for (int r = 0; r < RQ; ++r)
#pragma unroll
      for (int c = 0; c < NC; ++c) s[r][c] = (TV)0, dp[r][c] = (TV)0;
    for (int e = 0; e < E; ++e) {
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        const TV kv = LDV(&kt[e * t_ld + c * VW]);
#pragma unroll
        for (int r = 0; r < RQ; ++r) s[r][c] += qr[r][e] * kv;
      }
    }
    for (int e = 0; e < EV; ++e) {
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        const TV vv = LDV(&vt[e * t_ld + c * VW]);
#pragma unroll
        for (int r = 0; r < RQ; ++r) dp[r][c] += dor[r][e] * vv;
      }
    }
    const int plain = k0 + TK <= S && !(flags & SDPA_MASK) && !((flags & SDPA_CAUSAL) && k0 + TK - 1 > i0);
    T ds[RQ][TK];
#pragma unroll
    for (int r = 0; r < RQ; ++r) {
      const int i = i0 + r, ic = min(i, L - 1);
      const ulong erow = ((ulong)(n * Hq + h) * L + ic) * S + k0;
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        TV x = s[r][c] * scale;
        if (!plain) x += sdpa_bias_keys(i, k0 + c * VW, S, flags, mb + (long)ic * m_st.s2, m_st.s3);
        const TV p = exp(x - lr[r]);
        TV g = dp[r][c];
        if (flags & SDPA_DROPOUT) g *= sdpa_keep(erow + c * VW, 1, seed, offset, threshold, kept);
        STV(p * (g - dr[r]), &ds[r][c * VW]);
      }
    }
    const int jn = min(TK, S - k0);
    for (int j = 0; j < jn; ++j) {
      TVE kv[NE];
#pragma unroll
      for (int c = 0; c < NE; ++c) kv[c] = LDVE(&ks[j * ks_ld + c * VE]);
#pragma unroll
      for (int r = 0; r < RQ; ++r) {
        const T d = ds[r][j];
#pragma unroll
        for (int c = 0; c < NE; ++c) acc[r][c] += d * kv[c];
      }
    }
#if STAGED
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
  }
#pragma unroll
  for (int r = 0; r < RQ; ++r) {
    const int i = i0 + r;
    if (i >= L) break;
    __global T* row = dq + dq_off + n * dq_st.s0 + h * dq_st.s1 + (long)i * dq_st.s2;
#pragma unroll
    for (int c = 0; c < NE; ++c) STVE(acc[r][c] * scale, row + c * VE);
  }
}
#endif  // SDPA_PASS == 1

#if SDPA_PASS == 2
__kernel __attribute__((reqd_work_group_size(NI, 1, 1)))
void vnn_sdpa_dkdv(__global T* dk, long dk_off, long4 dk_st, __global T* dv, long dv_off, long4 dv_st,
                   __global const T* q, long q_off, long4 q_st, __global const T* k, long k_off, long4 k_st,
                   __global const T* v, long v_off, long4 v_st, __global const T* dout, long do_off, long4 do_st,
                   __global const T* lse, long l_off, long4 l_st, __global const T* delta, long d_off, long4 d_st,
                   __global const T* mask, long m_off, long4 m_st, __global const T* qtr, __global const T* dtr,
                   __global const T* ltr, __global const T* deltr, long tp, int hb0, int Hq, int G, int L, int S,
                   T scale, int flags, T kept, uint threshold, ulong seed, ulong offset) {
#if STAGED
  __local T Qt[E * TK];
  __local T Qs[TK * E];
  __local T Dt[EV * TK];
  __local T Ds[TK * EV];
  __local T Ls[TK], Dl[TK];
#endif
  const int t = get_local_id(0), k0 = get_group_id(0) * TILE, nh = hb0 + get_group_id(1);
  const int Hk = Hq / G, n = nh / Hk, hk = nh - n * Hk;
  const int j0 = k0 + t * RQ;
  const __global T* kb = k + k_off + n * k_st.s0 + hk * k_st.s1;
  const __global T* vb = v + v_off + n * v_st.s0 + hk * v_st.s1;
  T kr[RQ][E], vr[RQ][EV];
  TVE gk[RQ][NE];
  TVEV gv[RQ][NEV];
#pragma unroll
  for (int r = 0; r < RQ; ++r) {
    const long jc = min(j0 + r, S - 1);
    for (int e = 0; e < E; ++e) kr[r][e] = kb[jc * k_st.s2 + e];
    for (int e = 0; e < EV; ++e) vr[r][e] = vb[jc * v_st.s2 + e];
#pragma unroll
    for (int c = 0; c < NE; ++c) gk[r][c] = (TVE)0;
#pragma unroll
    for (int c = 0; c < NEV; ++c) gv[r][c] = (TVEV)0;
  }
  // Causal: queries below the first key (the group's while the items share
  // staged tiles, else the item's own) see none of its keys; the first tile
  // starts at a multiple of TK (the scratch rows end at tp).
  const int istart = (flags & SDPA_CAUSAL) ? (STAGED ? k0 : j0) / TK * TK : 0;
  for (int g = 0; g < G; ++g) {
    const int h = hk * G + g;
    const __global T* qb = q + q_off + n * q_st.s0 + h * q_st.s1;
    const __global T* dob = dout + do_off + n * do_st.s0 + h * do_st.s1;
    const __global T* lb = lse + l_off + n * l_st.s0 + h * l_st.s1;
    const __global T* db = delta + d_off + n * d_st.s0 + h * d_st.s1;
    const __global T* mb = mask + m_off + n * m_st.s0 + h * m_st.s1;
    const ulong ebase = (ulong)(n * Hq + h) * L;
    for (int q0 = istart; q0 < L; q0 += TK) {
#if STAGED
      SDPA_STAGE(E, qb, q_st.s2, q0, L, SDPA_TR(Qt); SDPA_ROW(Qs))
      SDPA_STAGE(EV, dob, do_st.s2, q0, L, SDPA_TR(Dt); SDPA_ROW(Ds))
      for (int x = get_local_id(0); x < TK; x += NI) {
        const int i = q0 + x;
        Ls[x] = i < L ? sdpa_lse_for_p(lb[(long)i * l_st.s2]) : INFINITY;
        Dl[x] = i < L ? db[(long)i * d_st.s2] : (T)0;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      const __local T *qt = Qt, *qs = Qs, *dt = Dt, *ds_ = Ds, *ls = Ls, *dl = Dl;
      const long t_ld = TK, qs_ld = E, ds_ld = EV;
#else
      const long hb = n * Hq + h - (long)hb0 * G;
      const __global T* qt = qtr + hb * E * tp + q0;
      const __global T* dt = dtr + hb * EV * tp + q0;
      const __global T* ls = ltr + hb * tp + q0;
      const __global T* dl = deltr + hb * tp + q0;
      const __global T* qs = qb + (long)q0 * q_st.s2;
      const __global T* ds_ = dob + (long)q0 * do_st.s2;
      const long t_ld = tp, qs_ld = q_st.s2, ds_ld = do_st.s2;
#endif
      TV s[RQ][NC], dp[RQ][NC];
#pragma unroll
      for (int r = 0; r < RQ; ++r)
#pragma unroll
        for (int c = 0; c < NC; ++c) s[r][c] = (TV)0, dp[r][c] = (TV)0;
      for (int e = 0; e < E; ++e) {
#pragma unroll
        for (int c = 0; c < NC; ++c) {
          const TV qv = LDV(&qt[e * t_ld + c * VW]);
#pragma unroll
          for (int r = 0; r < RQ; ++r) s[r][c] += kr[r][e] * qv;
        }
      }
      for (int e = 0; e < EV; ++e) {
#pragma unroll
        for (int c = 0; c < NC; ++c) {
          const TV dv_ = LDV(&dt[e * t_ld + c * VW]);
#pragma unroll
          for (int r = 0; r < RQ; ++r) dp[r][c] += vr[r][e] * dv_;
        }
      }
      // Queries past L have lse +inf (P = 0); bias only for the mask and
      // the diagonal.
      const int plain = !(flags & SDPA_MASK) && !((flags & SDPA_CAUSAL) && j0 + RQ - 1 > q0);
      T pz[RQ][TK], ds[RQ][TK];
#pragma unroll
      for (int r = 0; r < RQ; ++r) {
        const int j = j0 + r, jc = min(j, S - 1);
#pragma unroll
        for (int c = 0; c < NC; ++c) {
          TV x = s[r][c] * scale;
          if (!plain) x += sdpa_bias_queries(j, q0 + c * VW, L, flags, mb + (long)jc * m_st.s3, m_st.s2);
          const TV p = exp(x - LDV(&ls[c * VW]));
          TV pk = p, gd = dp[r][c];
          if (flags & SDPA_DROPOUT) {
            const TV zv = sdpa_keep((ebase + q0 + c * VW) * S + jc, (ulong)S, seed, offset, threshold, kept);
            pk *= zv, gd *= zv;
          }
          STV(pk, &pz[r][c * VW]);
          STV(p * (gd - LDV(&dl[c * VW])), &ds[r][c * VW]);
        }
      }
      const int in_ = min(TK, L - q0);
      for (int i = 0; i < in_; ++i) {
        TVE qv[NE];
        TVEV ov[NEV];
#pragma unroll
        for (int c = 0; c < NE; ++c) qv[c] = LDVE(&qs[i * qs_ld + c * VE]);
#pragma unroll
        for (int c = 0; c < NEV; ++c) ov[c] = LDVEV(&ds_[i * ds_ld + c * VEV]);
#pragma unroll
        for (int r = 0; r < RQ; ++r) {
          const T a = pz[r][i], b = ds[r][i];
#pragma unroll
          for (int c = 0; c < NEV; ++c) gv[r][c] += a * ov[c];
#pragma unroll
          for (int c = 0; c < NE; ++c) gk[r][c] += b * qv[c];
        }
      }
#if STAGED
      barrier(CLK_LOCAL_MEM_FENCE);
#endif
    }
  }
#pragma unroll
  for (int r = 0; r < RQ; ++r) {
    const int j = j0 + r;
    if (j >= S) break;
    __global T* krow = dk + dk_off + n * dk_st.s0 + hk * dk_st.s1 + (long)j * dk_st.s2;
    __global T* vrow = dv + dv_off + n * dv_st.s0 + hk * dv_st.s1 + (long)j * dv_st.s2;
#pragma unroll
    for (int c = 0; c < NE; ++c) STVE(gk[r][c] * scale, krow + c * VE);
#pragma unroll
    for (int c = 0; c < NEV; ++c) STVEV(gv[r][c], vrow + c * VEV);
  }
}
#endif  // SDPA_PASS == 2
#endif  // SDPA_PASS 0, 1, 2

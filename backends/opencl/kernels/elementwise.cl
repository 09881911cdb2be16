// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// BINARY and UNARY elementwise ops. Defines: T / DT the inputs' storage
// type and vnn_dtype code, OT / ODT the output's (they differ only for the
// bool-valued comparisons, logical ops and LOGICAL_NOT), and either
// BINARY_FN or UNARY_FN (vnn_binary_fn / vnn_unary_fn codes). Optional:
// VW, the lanes of the dense vector kernels (float32 / float64 in and out);
// OX, AX, BX, the strided kernels' innermost stride class of out, a and b
// (1 unit, 0 broadcast, -1 any: see ops_elementwise.cpp).
//
// Arithmetic follows C++: uint8, int8, int16 and bool compute in int (so
// true + true is 2, stored as true; int8's 127 + 1 is 128, stored wrapped
// as -128), the 16-bit floats compute in float.

#if DT == VNN_FLOAT32 || DT == VNN_FLOAT64 || DT == VNN_FLOAT16 || DT == VNN_BFLOAT16
#define IS_FLOAT 1
#endif

#ifndef OX  // the 1-D kernels' builds: any stride
#define OX -1
#define AX -1
#define BX -1
#endif

#if DT == VNN_FLOAT64
#define CT double
#elif DT == VNN_INT64
#define CT long
#elif DT == VNN_FLOAT32 || DT == VNN_FLOAT16 || DT == VNN_BFLOAT16
#define CT float
#else
#define CT int
#endif

// Integer inputs to exp/log/... are computed in the widest float there is.
#ifdef HAS_FP64
#define FT double
#else
#define FT float
#endif

#if DT == VNN_FLOAT16
#define LOAD(p, i) vload_half((i), (p))
#elif DT == VNN_BFLOAT16
#define LOAD(p, i) vnn_bf16_to_float((p)[i])
#elif DT == VNN_BOOL
// bool storage is a byte: any non-zero byte is true (1), as in the Kokkos kernels.
#define LOAD(p, i) ((CT)((p)[i] != 0))
#else
#define LOAD(p, i) ((CT)(p)[i])
#endif

#if ODT == VNN_FLOAT16
#define STORE(p, i, v) vstore_half_rte((v), (i), (p))
#elif ODT == VNN_BFLOAT16
#define STORE(p, i, v) ((p)[i] = vnn_bf16_from_float(v))
#elif ODT == VNN_BOOL
#define STORE(p, i, v) ((p)[i] = (uchar)((v) != 0))
#else
#define STORE(p, i, v) ((p)[i] = (OT)(v))
#endif

// The op tables' special functions (VNN_SP(f), vnn/ops/special_functions.def)
// in the widest float, compiled only into the programs of the lines that
// use them (VNN_SPECIAL, set by the host, which runs those lines one element
// per work item). Elsewhere, and in the vector functions, VNN_SP(f)(...) is
// a zero that keeps the switch's unreachable cases compiling.
#define VNN_SP_UNREACHED(...) ((VNN_XT)0)
#if defined(IS_FLOAT) && defined(VNN_SPECIAL)
#define VNN_SPFN inline
#define VNN_SPT FT
#define VNN_F(f) f
#include "vnn/ops/special_functions.def"
#undef VNN_SPFN
#undef VNN_SPT
#undef VNN_F
#define VNN_SP_SCALAR(f) vnn_sp_##f
#else
#define VNN_SP_SCALAR(f) VNN_SP_UNREACHED
#endif
#define VNN_SP(f) VNN_SP_SCALAR(f)

#ifdef VW
// The dense kernels' vectors of VW lanes of CT (T is CT there).
#define VNN_CAT_(a, b) a##b
#define VNN_CAT(a, b) VNN_CAT_(a, b)
#define VNN_VT VNN_CAT(CT, VW)
#define VNN_VLOAD(p) VNN_CAT(vload, VW)(0, (p))
#define VNN_VSTORE(v, p) VNN_CAT(vstore, VW)((v), 0, (p))
#endif

#ifdef BINARY_FN

#ifndef IS_FLOAT
// Integer division and remainders that never trap (PoCL runs on x86): x / 0
// and x % 0 give 0, MIN / -1 wraps to MIN.
inline CT vnn_idiv(CT a, CT b) {
  if (b == 0) return 0;
  if (b == (CT)-1) return (CT)((ulong)0 - (ulong)a);
  return a / b;
}
inline CT vnn_ifmod(CT a, CT b) { return (b == 0 || b == (CT)-1) ? (CT)0 : a % b; }
inline CT vnn_imod(CT a, CT b) {  // Python's: the sign of b
  const CT r = vnn_ifmod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? (CT)(r + b) : r;
}
inline CT vnn_ifloordiv(CT a, CT b) {
  const CT q = vnn_idiv(a, b);
  return (b != 0 && vnn_ifmod(a, b) != 0 && ((a < 0) != (b < 0))) ? (CT)(q - 1) : q;
}
// Shifts as PyTorch's: a count outside [0, width of T) gives 0 (left) or
// the sign (right: 0, or -1 for a negative a); the left shift wraps when T
// is stored. VNN_TBITS: T's width (CT may be wider).
#define VNN_TBITS ((CT)(sizeof(T) * 8))
inline CT vnn_ishl(CT a, CT b) { return (b < 0 || b >= VNN_TBITS) ? (CT)0 : (CT)((ulong)a << b); }
inline CT vnn_ishr(CT a, CT b) { return (b < 0 || b >= VNN_TBITS) ? (a < 0 ? (CT)-1 : (CT)0) : (CT)(a >> b); }
// gcd and lcm of the magnitudes in ulong (|MIN| does not overflow; the lcm
// wraps when T is stored), as the Kokkos kernels'.
inline ulong vnn_imagnitude(CT a) { return a < 0 ? (ulong)0 - (ulong)a : (ulong)a; }
inline ulong vnn_igcd_magnitude(CT a, CT b) {
  ulong x = vnn_imagnitude(a), y = vnn_imagnitude(b);
  while (x != 0) {
    const ulong r = y % x;
    y = x;
    x = r;
  }
  return y;
}
inline CT vnn_igcd(CT a, CT b) { return (CT)vnn_igcd_magnitude(a, b); }
inline CT vnn_ilcm(CT a, CT b) {
  const ulong g = vnn_igcd_magnitude(a, b);
  return g == 0 ? (CT)0 : (CT)(vnn_imagnitude(a) / g * vnn_imagnitude(b));
}
// Power by squaring in wrapping unsigned arithmetic; negative exponents
// give the truncated 1 / a^-b (1, +-1 for a == -1, else 0).
inline CT vnn_ipow(CT a, CT b) {
  if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
  ulong r = 1, base = (ulong)a, e = (ulong)b;
  while (e) {
    if (e & 1) r *= base;
    base *= base;
    e >>= 1;
  }
  return (CT)r;
}
#endif

// The binary op table (vnn/ops/binary.def) in OpenCL C: VNN_XT is the type
// of a and b (CT, or a vector of VW lanes in the dense float kernels);
// floating operands take the table's float expression, integer and bool
// ones its integer expression. OpenCL's integer arithmetic wraps.
#define VNN_K(v) ((VNN_XT)(v))
#define VNN_F(f) f
#define VNN_SEL(c, x, y) ((c) ? (x) : (y))
#define VNN_WADD(x, y) ((x) + (y))
#define VNN_WMUL(x, y) ((x) * (y))
#define VNN_WNEG(x) (-(x))
#define VNN_IDIV(x, y) vnn_idiv(x, y)
#define VNN_IPOW(x, y) vnn_ipow(x, y)
#define VNN_IFMOD(x, y) vnn_ifmod(x, y)
#define VNN_IMOD(x, y) vnn_imod(x, y)
#define VNN_IFLOORDIV(x, y) vnn_ifloordiv(x, y)
#define VNN_ISHL(x, y) vnn_ishl(x, y)
#define VNN_ISHR(x, y) vnn_ishr(x, y)
#define VNN_IGCD(x, y) vnn_igcd(x, y)
#define VNN_ILCM(x, y) vnn_ilcm(x, y)
#ifdef IS_FLOAT
#define VNN_BPICK(fe, ie) fe
#else
#define VNN_BPICK(fe, ie) ie
#endif
// One case per table line; BINARY_FN is a constant, so one remains.
#define VNN_BINARY_OP(ID, NAME, SIG, RULE, DOMAIN, DOC, GA, GB, FE, IE) \
  case VNN_BINARY_##ID:                                                 \
    return VNN_BPICK(FE, IE);

#define VNN_XT CT
inline CT vnn_binary(CT a, CT b, CT alpha) {
  switch (BINARY_FN) {
#include "vnn/ops/binary.def"
  }
  return a;
}
#undef VNN_XT

#ifdef VW
// The same on VW lanes (dense float runs): b a vector, alpha a scalar.
#define VNN_XT VNN_VT
#undef VNN_SP
#define VNN_SP(f) VNN_SP_UNREACHED
inline VNN_VT vnn_binary_v(VNN_VT a, VNN_VT b, CT alpha) {
  switch (BINARY_FN) {
#include "vnn/ops/binary.def"
  }
  return a;
}
#undef VNN_XT
#undef VNN_SP
#define VNN_SP(f) VNN_SP_SCALAR(f)
#endif
#undef VNN_BINARY_OP

__kernel void vnn_binary_op(__global OT* out, long out_off, __global const T* a, long a_off,
                            __global const T* b, long b_off, CT alpha, long n, int ndim,
                            long8 sizes, long8 out_strides, long8 a_strides, long8 b_strides) {
  VNN_GRID_LOOP(i, n) {
    CT x = LOAD(a, VNN_OFFSET(i, a_off, a_strides));
    CT y = LOAD(b, VNN_OFFSET(i, b_off, b_strides));
    STORE(out, VNN_OFFSET(i, out_off, out_strides), vnn_binary(x, y, alpha));
  }
}

// Dense operands (the host merged them into one unit-stride run), b one
// value broadcast when B_SCALAR: plain indexing that the compiler can
// vectorise. Through vnn_binary_op's runtime strides PoCL kept the loop
// scalar: an add of 1.6 M floats took 3.2 ms there, a relu 0.37 ms.
__kernel void vnn_binary_dense(__global OT* out, long out_off, __global const T* a, long a_off, __global const T* b,
                               long b_off, CT alpha, long n) {
#ifdef B_SCALAR
  const CT y = LOAD(b, b_off);  // read before any store: one load, not a gather
#endif
  VNN_ITEMS(i, n) {
    CT x = LOAD(a, a_off + i);
#ifndef B_SCALAR
    CT y = LOAD(b, b_off + i);
#endif
    STORE(out, out_off + i, vnn_binary(x, y, alpha));
  }
}

// Strided operands on common.cl's 3-D grid (VNN_ND_ITEM: no division per
// element; the 1-D kernel above divides for every element, and a [2048,
// 128] * [2048, 1] took 4.6 ms there on PoCL). OX / AX / BX fix the x
// strides at compile time where they are 1 or 0.
__kernel void vnn_binary_nd(__global OT* out, long out_off, __global const T* a, long a_off, __global const T* b,
                            long b_off, CT alpha, long4 sizes, long4 out_strides, long4 a_strides, long4 b_strides) {
  VNN_ND_ITEM(sizes);
  const long o = VNN_ND_OFFSET(out_off, out_strides, OX);
  CT x = LOAD(a, VNN_ND_OFFSET(a_off, a_strides, AX));
  CT y = LOAD(b, VNN_ND_OFFSET(b_off, b_strides, BX));
  STORE(out, o, vnn_binary(x, y, alpha));
}

#ifdef VW
// Dense float runs, VW lanes per item as one vector (b one broadcast value
// when B_SCALAR), the last item taking the tail: PoCL keeps the math of a
// division or pow per lane scalar across items, not within a vector.
__kernel void vnn_binary_vec(__global OT* out, long out_off, __global const T* a, long a_off, __global const T* b,
                             long b_off, CT alpha, long n) {
#ifdef B_SCALAR
  const CT y = LOAD(b, b_off);
#endif
  VNN_ITEMS(v, (n + VW - 1) / VW) {
    const long i = v * VW;
    if (i + VW <= n) {
#ifdef B_SCALAR
      VNN_VSTORE(vnn_binary_v(VNN_VLOAD(a + a_off + i), (VNN_VT)y, alpha), out + out_off + i);
#else
      VNN_VSTORE(vnn_binary_v(VNN_VLOAD(a + a_off + i), VNN_VLOAD(b + b_off + i), alpha), out + out_off + i);
#endif
    } else {
      for (long j = i; j < n; ++j) {
#ifndef B_SCALAR
        const CT y = LOAD(b, b_off + j);
#endif
        STORE(out, out_off + j, vnn_binary(LOAD(a, a_off + j), y, alpha));
      }
    }
  }
}
#endif

#endif  // BINARY_FN

#ifdef UNARY_FN

// The helpers' names for a scalar (SUF empty) and a vector (SUF _v),
// spelled out so that a program of sibling variants (sibling_source.cpp)
// renames each copy's helpers: a name made by pasting would escape it.
#define VNN_HELPER_sigmoid vnn_sigmoid
#define VNN_HELPER_sigmoid_v vnn_sigmoid_v
#define VNN_HELPER_gelu vnn_gelu
#define VNN_HELPER_gelu_v vnn_gelu_v
#define VNN_HELPER_silu vnn_silu
#define VNN_HELPER_silu_v vnn_silu_v

// sigmoid split by sign so that exp never overflows (accurate in both
// tails instead of inf/inf), for a scalar or (SUF _v) a vector XT.
#define VNN_FLOAT_HELPERS(XT, SUF)                                                                      \
  inline XT VNN_HELPER_sigmoid##SUF(XT x) {                                                            \
    const XT e = exp(-fabs(x));                                                                        \
    return x >= (XT)0 ? (XT)1 / ((XT)1 + e) : e / ((XT)1 + e);                                         \
  }                                                                                                    \
  inline XT VNN_HELPER_gelu##SUF(XT x) { return (XT)0.5 * x * ((XT)1 + erf(x * (XT)0.70710678118654752440)); } \
  inline XT VNN_HELPER_silu##SUF(XT x) { return x * VNN_HELPER_sigmoid##SUF(x); }

#ifdef IS_FLOAT
VNN_FLOAT_HELPERS(CT, )
#ifdef VW
VNN_FLOAT_HELPERS(VNN_VT, _v)
#endif
#endif

// The op table's vocabulary (vnn/ops/unary.def) in OpenCL C. VNN_XT is the
// type of x (CT, or a vector of VW lanes) and the helpers are the scalar or
// the vector ones (named in full, not pasted, for sibling_source.cpp); a
// ternary selects per lane on vectors. Floating inputs take the table's
// float expression, integer and bool inputs its integer one.
#define VNN_K(v) ((VNN_XT)(v))
#define VNN_F(f) f
#define VNN_S0 s0
#define VNN_S1 s1
#define VNN_HAS0 has0
#define VNN_HAS1 has1
#define VNN_LO ((VNN_XT)lo)
#define VNN_HI ((VNN_XT)hi)
#define VNN_NEG(v) (-(v))
#define VNN_SEL(c, a, b) ((c) ? (a) : (b))
#ifdef IS_FLOAT
#define VNN_PICK(fe, ie) fe
// lo / hi: clamp's bounds, -inf / inf where absent.
#define VNN_CLAMP_BOUNDS const CT lo = has0 ? s0 : (CT)-INFINITY, hi = has1 ? s1 : (CT)INFINITY;
#else
#define VNN_PICK(fe, ie) ie
#define VNN_CLAMP_BOUNDS
#endif
// One case per table line; UNARY_FN is a constant, so one remains.
#define VNN_UNARY_OP(ID, NAME, SIG, RULE, DOMAIN, DOC, GRAD, FE, IE) \
  case VNN_UNARY_##ID:                                              \
    return VNN_PICK(FE, IE);

// s0 / s1: leaky_relu's slope, clamp's bounds (has0 / has1 = 0: no bound).
#define VNN_XT CT
#define VNN_SIGMOID(v) VNN_HELPER_sigmoid(v)
#define VNN_GELU(v) VNN_HELPER_gelu(v)
#define VNN_SILU(v) VNN_HELPER_silu(v)
inline CT vnn_unary(CT x, CT s0, CT s1, int has0, int has1) {
  VNN_CLAMP_BOUNDS
  switch (UNARY_FN) {
#include "vnn/ops/unary.def"
  }
  return x;
}
#undef VNN_XT
#undef VNN_SIGMOID
#undef VNN_GELU
#undef VNN_SILU

#ifdef VW
// The same on VW lanes (dense float runs).
#define VNN_XT VNN_VT
#undef VNN_SP
#define VNN_SP(f) VNN_SP_UNREACHED
#define VNN_SIGMOID(v) VNN_HELPER_sigmoid_v(v)
#define VNN_GELU(v) VNN_HELPER_gelu_v(v)
#define VNN_SILU(v) VNN_HELPER_silu_v(v)
inline VNN_VT vnn_unary_v(VNN_VT x, CT s0, CT s1, int has0, int has1) {
  VNN_CLAMP_BOUNDS
  switch (UNARY_FN) {
#include "vnn/ops/unary.def"
  }
  return x;
}
#undef VNN_XT
#undef VNN_SIGMOID
#undef VNN_GELU
#undef VNN_SILU
#undef VNN_SP
#define VNN_SP(f) VNN_SP_SCALAR(f)
#endif
#undef VNN_UNARY_OP

__kernel void vnn_unary_op(__global OT* out, long out_off, __global const T* a, long a_off,
                           long n, int ndim, long8 sizes, long8 out_strides, long8 a_strides,
                           CT s0, CT s1, int has0, int has1) {
  VNN_GRID_LOOP(i, n) {
    CT x = LOAD(a, VNN_OFFSET(i, a_off, a_strides));
    STORE(out, VNN_OFFSET(i, out_off, out_strides), vnn_unary(x, s0, s1, has0, has1));
  }
}

// Strided operands on a 3-D grid, as vnn_binary_nd.
__kernel void vnn_unary_nd(__global OT* out, long out_off, __global const T* a, long a_off, long4 sizes,
                           long4 out_strides, long4 a_strides, CT s0, CT s1, int has0, int has1) {
  VNN_ND_ITEM(sizes);
  const long o = VNN_ND_OFFSET(out_off, out_strides, OX);
  STORE(out, o, vnn_unary(LOAD(a, VNN_ND_OFFSET(a_off, a_strides, AX)), s0, s1, has0, has1));
}

#ifdef VW
// Dense float runs, VW lanes per item as one vector, the last item taking
// the tail: PoCL runs erf / exp of a vector through its vector math, but
// kept them scalar across items (a gelu of 1 M floats took 17.7 ms of CPU
// per item, 1.9 ms as float16 vectors).
__kernel void vnn_unary_vec(__global OT* out, long out_off, __global const T* a, long a_off, long n, CT s0, CT s1,
                            int has0, int has1) {
  VNN_ITEMS(v, (n + VW - 1) / VW) {
    const long i = v * VW;
    if (i + VW <= n) {
      const VNN_VT x = VNN_VLOAD(a + a_off + i);
      VNN_VSTORE(vnn_unary_v(x, s0, s1, has0, has1), out + out_off + i);
    } else {
      for (long j = i; j < n; ++j) STORE(out, out_off + j, vnn_unary(LOAD(a, a_off + j), s0, s1, has0, has1));
    }
  }
}
#endif

#endif  // UNARY_FN

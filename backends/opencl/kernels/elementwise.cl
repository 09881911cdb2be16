// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// BINARY and UNARY elementwise ops. Defines: T / DT the inputs' storage
// type and vnn_dtype code, OT / ODT the output's (they differ only for the
// bool-valued comparisons, logical ops and LOGICAL_NOT), and either
// BINARY_FN or UNARY_FN (vnn_binary_fn / vnn_unary_fn codes). Optional:
// VW, the lanes of the dense vector kernels (float32 / float64 in and out);
// OX, AX, BX, the strided kernels' innermost stride class of out, a and b
// (1 unit, 0 broadcast, -1 any: see ops_elementwise.cpp).
//
// Arithmetic follows C++: uint8 and bool compute in int (so true + true is
// 2, stored as true), the 16-bit floats compute in float.

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
inline CT vnn_maximum(CT a, CT b) { return a > b ? a : b; }
inline CT vnn_minimum(CT a, CT b) { return a < b ? a : b; }
// Truncating division with x / 0 = 0, and x / -1 as wrapping negation
// because INT_MIN / -1 traps on x86 (PoCL runs there).
inline CT vnn_divide(CT a, CT b) {
  if (b == 0) return 0;
  if (b == (CT)-1) return (CT)((ulong)0 - (ulong)a);
  return a / b;
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

#if defined(IS_FLOAT) && (BINARY_FN <= VNN_BINARY_POW || BINARY_FN == VNN_BINARY_GELU_BACKWARD)
// The float functions as one expression for a scalar or a vector of lanes
// (a ternary selects per lane on vectors; NaN-propagating max / min;
// gelu_backward: the gradient a * gelu'(b) = a * (Phi(b) + b phi(b))).
#if BINARY_FN == VNN_BINARY_ADD
#define VNN_BF(a, b, alpha) ((a) + (alpha) * (b))
#elif BINARY_FN == VNN_BINARY_SUB
#define VNN_BF(a, b, alpha) ((a) - (alpha) * (b))
#elif BINARY_FN == VNN_BINARY_MUL
#define VNN_BF(a, b, alpha) ((a) * (b))
#elif BINARY_FN == VNN_BINARY_DIV
#define VNN_BF(a, b, alpha) ((a) / (b))
#elif BINARY_FN == VNN_BINARY_MAXIMUM
#define VNN_BF(a, b, alpha) (isnan(a) ? (a) : isnan(b) ? (b) : ((a) > (b) ? (a) : (b)))
#elif BINARY_FN == VNN_BINARY_MINIMUM
#define VNN_BF(a, b, alpha) (isnan(a) ? (a) : isnan(b) ? (b) : ((a) < (b) ? (a) : (b)))
#elif BINARY_FN == VNN_BINARY_POW
#define VNN_BF(a, b, alpha) pow((a), (b))
#else
#define VNN_BF(a, b, alpha)                                                     \
  ((a) * ((CT)0.5 * ((CT)1 + erf((b) * (CT)0.70710678118654752440)) +          \
          (b) * exp((CT)-0.5 * (b) * (b)) * (CT)0.39894228040143267794))
#endif
#endif

inline CT vnn_binary(CT a, CT b, CT alpha) {
#ifdef VNN_BF
  return VNN_BF(a, b, alpha);
#elif BINARY_FN == VNN_BINARY_ADD
  return a + alpha * b;
#elif BINARY_FN == VNN_BINARY_SUB
  return a - alpha * b;
#elif BINARY_FN == VNN_BINARY_MUL
  return a * b;
#elif BINARY_FN == VNN_BINARY_DIV
  return vnn_divide(a, b);
#elif BINARY_FN == VNN_BINARY_MAXIMUM
  return vnn_maximum(a, b);
#elif BINARY_FN == VNN_BINARY_MINIMUM
  return vnn_minimum(a, b);
#elif BINARY_FN == VNN_BINARY_POW
  return vnn_ipow(a, b);
// Comparisons and logical ops give 0 / 1; NaN compares false except in NE.
#elif BINARY_FN == VNN_BINARY_EQ
  return a == b;
#elif BINARY_FN == VNN_BINARY_NE
  return a != b;
#elif BINARY_FN == VNN_BINARY_LT
  return a < b;
#elif BINARY_FN == VNN_BINARY_LE
  return a <= b;
#elif BINARY_FN == VNN_BINARY_GT
  return a > b;
#elif BINARY_FN == VNN_BINARY_GE
  return a >= b;
#elif BINARY_FN == VNN_BINARY_LOGICAL_AND
  return a != 0 && b != 0;
#elif BINARY_FN == VNN_BINARY_LOGICAL_OR
  return a != 0 || b != 0;
#elif BINARY_FN == VNN_BINARY_GELU_BACKWARD
#ifdef IS_FLOAT
  return a * ((CT)0.5 * ((CT)1 + erf(b * (CT)0.70710678118654752)) +
              b * exp((CT)-0.5 * b * b) * (CT)0.39894228040143268);
#else
  return 0;  // floating dtypes only: the core never sends integers
#endif
#elif BINARY_FN == VNN_BINARY_LOGICAL_XOR
  return (a != 0) != (b != 0);
#else
#error unknown BINARY_FN
#endif
}

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
      VNN_VSTORE(VNN_BF(VNN_VLOAD(a + a_off + i), (VNN_VT)y, alpha), out + out_off + i);
#else
      VNN_VSTORE(VNN_BF(VNN_VLOAD(a + a_off + i), VNN_VLOAD(b + b_off + i), alpha), out + out_off + i);
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

#if defined(IS_FLOAT) && UNARY_FN != VNN_UNARY_LOGICAL_NOT
VNN_FLOAT_HELPERS(CT, )
#ifdef VW
VNN_FLOAT_HELPERS(VNN_VT, _v)
#endif
// The float functions as one expression on x of type XT, a scalar or a
// vector (a ternary selects per lane on vectors; comparisons are -1 there,
// so none takes part in arithmetic). NaN stays NaN in relu, sign, clamp;
// clamp's lo > hi gives hi, as torch.clamp; rint rounds half to even.
#if UNARY_FN == VNN_UNARY_NEG
#define VNN_UF(x, XT, SUF) (-(x))
#elif UNARY_FN == VNN_UNARY_ABS
#define VNN_UF(x, XT, SUF) fabs(x)
#elif UNARY_FN == VNN_UNARY_EXP
#define VNN_UF(x, XT, SUF) exp(x)
#elif UNARY_FN == VNN_UNARY_LOG
#define VNN_UF(x, XT, SUF) log(x)
#elif UNARY_FN == VNN_UNARY_SQRT
#define VNN_UF(x, XT, SUF) sqrt(x)
#elif UNARY_FN == VNN_UNARY_RELU
#define VNN_UF(x, XT, SUF) ((x) < (XT)0 ? (XT)0 : (x))
#elif UNARY_FN == VNN_UNARY_SIGMOID
#define VNN_UF(x, XT, SUF) VNN_HELPER_sigmoid##SUF(x)
#elif UNARY_FN == VNN_UNARY_TANH
#define VNN_UF(x, XT, SUF) tanh(x)
#elif UNARY_FN == VNN_UNARY_LOG1P
#define VNN_UF(x, XT, SUF) log1p(x)
#elif UNARY_FN == VNN_UNARY_RSQRT
#define VNN_UF(x, XT, SUF) rsqrt(x)
#elif UNARY_FN == VNN_UNARY_SIN
#define VNN_UF(x, XT, SUF) sin(x)
#elif UNARY_FN == VNN_UNARY_COS
#define VNN_UF(x, XT, SUF) cos(x)
#elif UNARY_FN == VNN_UNARY_LEAKY_RELU
#define VNN_UF(x, XT, SUF) ((x) > (XT)0 ? (x) : (x) * s0)
#elif UNARY_FN == VNN_UNARY_GELU
#define VNN_UF(x, XT, SUF) VNN_HELPER_gelu##SUF(x)
#elif UNARY_FN == VNN_UNARY_SILU
#define VNN_UF(x, XT, SUF) VNN_HELPER_silu##SUF(x)
#elif UNARY_FN == VNN_UNARY_ERF
#define VNN_UF(x, XT, SUF) erf(x)
#elif UNARY_FN == VNN_UNARY_FLOOR
#define VNN_UF(x, XT, SUF) floor(x)
#elif UNARY_FN == VNN_UNARY_CEIL
#define VNN_UF(x, XT, SUF) ceil(x)
#elif UNARY_FN == VNN_UNARY_ROUND
#define VNN_UF(x, XT, SUF) rint(x)
#elif UNARY_FN == VNN_UNARY_SIGN
#define VNN_UF(x, XT, SUF) (isnan(x) ? (x) : (x) > (XT)0 ? (XT)1 : (x) < (XT)0 ? (XT)-1 : (XT)0)
#elif UNARY_FN == VNN_UNARY_CLAMP
// lo / hi: the bounds, -inf / inf where absent (VNN_CLAMP_BOUNDS).
#define VNN_UF(x, XT, SUF) (((x) < lo ? (XT)lo : (x)) > hi ? (XT)hi : ((x) < lo ? (XT)lo : (x)))
#define VNN_CLAMP_BOUNDS const CT lo = has0 ? s0 : (CT)-INFINITY, hi = has1 ? s1 : (CT)INFINITY;
#elif UNARY_FN == VNN_UNARY_RECIPROCAL
#define VNN_UF(x, XT, SUF) ((XT)1 / (x))
#else
#error unknown UNARY_FN
#endif
#ifndef VNN_CLAMP_BOUNDS
#define VNN_CLAMP_BOUNDS
#endif
#else
// Integer inputs (and LOGICAL_NOT): exp, log ... in the float type FT.
VNN_FLOAT_HELPERS(FT, )
#define VNN_FLOAT_FN(f, x) ((CT)f((FT)(x)))
#endif

// s0 / s1: leaky_relu's slope, clamp's bounds (has0 / has1 = 0: no bound).
inline CT vnn_unary(CT x, CT s0, CT s1, int has0, int has1) {
#ifdef VNN_UF
  VNN_CLAMP_BOUNDS
  return VNN_UF(x, CT, );
#elif UNARY_FN == VNN_UNARY_LOGICAL_NOT
  return x == 0;
#elif UNARY_FN == VNN_UNARY_NEG
  return -x;
#elif UNARY_FN == VNN_UNARY_ABS
  return x < 0 ? -x : x;
#elif UNARY_FN == VNN_UNARY_EXP
  return VNN_FLOAT_FN(exp, x);
#elif UNARY_FN == VNN_UNARY_LOG
  return VNN_FLOAT_FN(log, x);
#elif UNARY_FN == VNN_UNARY_SQRT
  return VNN_FLOAT_FN(sqrt, x);
#elif UNARY_FN == VNN_UNARY_RELU
  return x < 0 ? (CT)0 : x;
#elif UNARY_FN == VNN_UNARY_SIGMOID
  return VNN_FLOAT_FN(vnn_sigmoid, x);
#elif UNARY_FN == VNN_UNARY_TANH
  return VNN_FLOAT_FN(tanh, x);
#elif UNARY_FN == VNN_UNARY_LOG1P
  return VNN_FLOAT_FN(log1p, x);
#elif UNARY_FN == VNN_UNARY_RSQRT
  return VNN_FLOAT_FN(rsqrt, x);
#elif UNARY_FN == VNN_UNARY_SIN
  return VNN_FLOAT_FN(sin, x);
#elif UNARY_FN == VNN_UNARY_COS
  return VNN_FLOAT_FN(cos, x);
#elif UNARY_FN == VNN_UNARY_LEAKY_RELU
  return x > 0 ? x : x * s0;
#elif UNARY_FN == VNN_UNARY_GELU
  return VNN_FLOAT_FN(vnn_gelu, x);
#elif UNARY_FN == VNN_UNARY_SILU
  return VNN_FLOAT_FN(vnn_silu, x);
#elif UNARY_FN == VNN_UNARY_ERF
  return VNN_FLOAT_FN(erf, x);
// floor / ceil / round are the identity on integers.
#elif UNARY_FN == VNN_UNARY_FLOOR || UNARY_FN == VNN_UNARY_CEIL || UNARY_FN == VNN_UNARY_ROUND
  return x;
#elif UNARY_FN == VNN_UNARY_SIGN
  return (CT)((x > 0) - (x < 0));
#elif UNARY_FN == VNN_UNARY_CLAMP
  CT r = (has0 && x < s0) ? s0 : x;
  return (has1 && r > s1) ? s1 : r;
#elif UNARY_FN == VNN_UNARY_RECIPROCAL
  return (CT)((FT)1 / (FT)x);
#else
#error unknown UNARY_FN
#endif
}

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
  VNN_CLAMP_BOUNDS
  VNN_ITEMS(v, (n + VW - 1) / VW) {
    const long i = v * VW;
    if (i + VW <= n) {
      const VNN_VT x = VNN_VLOAD(a + a_off + i);
      VNN_VSTORE(VNN_UF(x, VNN_VT, _v), out + out_off + i);
    } else {
      for (long j = i; j < n; ++j) STORE(out, out_off + j, vnn_unary(LOAD(a, a_off + j), s0, s1, has0, has1));
    }
  }
}
#endif

#endif  // UNARY_FN

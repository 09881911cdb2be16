// BINARY and UNARY elementwise ops. Defines: T / DT the inputs' storage
// type and vnn_dtype code, OT / ODT the output's (they differ only for the
// bool-valued comparisons, logical ops and LOGICAL_NOT), and either
// BINARY_FN or UNARY_FN (vnn_binary_fn / vnn_unary_fn codes).
//
// Arithmetic follows C++: uint8 and bool compute in int (so true + true is
// 2, stored as true), the 16-bit floats compute in float.

#if DT == VNN_FLOAT32 || DT == VNN_FLOAT64 || DT == VNN_FLOAT16 || DT == VNN_BFLOAT16
#define IS_FLOAT 1
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

#ifdef BINARY_FN

#ifdef IS_FLOAT
// NaN-propagating like torch.maximum (fmax/fmin would drop the NaN).
inline CT vnn_maximum(CT a, CT b) { return isnan(a) ? a : isnan(b) ? b : (a > b ? a : b); }
inline CT vnn_minimum(CT a, CT b) { return isnan(a) ? a : isnan(b) ? b : (a < b ? a : b); }
#else
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

inline CT vnn_binary(CT a, CT b, CT alpha) {
#if BINARY_FN == VNN_BINARY_ADD
  return a + alpha * b;
#elif BINARY_FN == VNN_BINARY_SUB
  return a - alpha * b;
#elif BINARY_FN == VNN_BINARY_MUL
  return a * b;
#elif BINARY_FN == VNN_BINARY_DIV
#ifdef IS_FLOAT
  return a / b;
#else
  return vnn_divide(a, b);
#endif
#elif BINARY_FN == VNN_BINARY_MAXIMUM
  return vnn_maximum(a, b);
#elif BINARY_FN == VNN_BINARY_MINIMUM
  return vnn_minimum(a, b);
#elif BINARY_FN == VNN_BINARY_POW
#ifdef IS_FLOAT
  return pow(a, b);
#else
  return vnn_ipow(a, b);
#endif
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

// out[r, c] = a[r, c] op b[c] on dense rows (a bias added to a batch):
// item (c, r), no division.
__kernel void vnn_binary_rows(__global OT* out, long out_off, __global const T* a, long a_off, __global const T* b,
                              long b_off, CT alpha, long cols) {
  const long c = get_global_id(0), i = get_global_id(1) * cols + c;
  CT x = LOAD(a, a_off + i);
  CT y = LOAD(b, b_off + c);
  STORE(out, out_off + i, vnn_binary(x, y, alpha));
}

#endif  // BINARY_FN

#ifdef UNARY_FN

#ifdef IS_FLOAT
// Split by sign so that exp never overflows: the result stays accurate in
// both tails instead of becoming inf/inf.
inline CT vnn_sigmoid(CT x) {
  if (x >= 0) return (CT)1 / ((CT)1 + exp(-x));
  CT e = exp(x);
  return e / ((CT)1 + e);
}
inline CT vnn_gelu(CT x) { return (CT)0.5 * x * ((CT)1 + erf(x * (CT)0.70710678118654752440)); }
inline CT vnn_silu(CT x) { return x * vnn_sigmoid(x); }
#define VNN_FLOAT_FN(f, x) f(x)
#else
inline FT vnn_sigmoid(FT x) {
  if (x >= 0) return (FT)1 / ((FT)1 + exp(-x));
  FT e = exp(x);
  return e / ((FT)1 + e);
}
inline FT vnn_gelu(FT x) { return (FT)0.5 * x * ((FT)1 + erf(x * (FT)0.70710678118654752440)); }
inline FT vnn_silu(FT x) { return x * vnn_sigmoid(x); }
#define VNN_FLOAT_FN(f, x) ((CT)f((FT)(x)))
#endif

// s0 / s1: leaky_relu's slope, clamp's bounds (has0 / has1 = 0: no bound).
inline CT vnn_unary(CT x, CT s0, CT s1, int has0, int has1) {
#if UNARY_FN == VNN_UNARY_NEG
  return -x;
#elif UNARY_FN == VNN_UNARY_ABS
#ifdef IS_FLOAT
  return fabs(x);  // also clears the sign of -0.0 and NaN
#else
  return x < 0 ? -x : x;
#endif
#elif UNARY_FN == VNN_UNARY_EXP
  return VNN_FLOAT_FN(exp, x);
#elif UNARY_FN == VNN_UNARY_LOG
  return VNN_FLOAT_FN(log, x);
#elif UNARY_FN == VNN_UNARY_SQRT
  return VNN_FLOAT_FN(sqrt, x);
#elif UNARY_FN == VNN_UNARY_RELU
  return x < 0 ? (CT)0 : x;  // NaN stays NaN
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
// floor / ceil / round are the identity on integers; rint rounds half to
// even in the default rounding mode.
#elif UNARY_FN == VNN_UNARY_FLOOR
#ifdef IS_FLOAT
  return floor(x);
#else
  return x;
#endif
#elif UNARY_FN == VNN_UNARY_CEIL
#ifdef IS_FLOAT
  return ceil(x);
#else
  return x;
#endif
#elif UNARY_FN == VNN_UNARY_ROUND
#ifdef IS_FLOAT
  return rint(x);
#else
  return x;
#endif
#elif UNARY_FN == VNN_UNARY_SIGN
#ifdef IS_FLOAT
  if (isnan(x)) return x;  // sign(NaN) is NaN
#endif
  return (CT)((x > 0) - (x < 0));
#elif UNARY_FN == VNN_UNARY_LOGICAL_NOT
  return x == 0;
#elif UNARY_FN == VNN_UNARY_CLAMP
  // NaN stays NaN; lo > hi gives hi, as torch.clamp.
  CT r = (has0 && x < s0) ? s0 : x;
  return (has1 && r > s1) ? s1 : r;
#elif UNARY_FN == VNN_UNARY_RECIPROCAL
#ifdef IS_FLOAT
  return (CT)1 / x;
#else
  return (CT)((FT)1 / (FT)x);
#endif
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

#endif  // UNARY_FN

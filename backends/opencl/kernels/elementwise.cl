// BINARY and UNARY elementwise ops on one dtype (inputs and output share
// it). Defines: T storage type, DT vnn_dtype code, and either BINARY_FN or
// UNARY_FN (vnn_binary_fn / vnn_unary_fn codes).
//
// Arithmetic follows C++: uint8 and bool compute in int (so true + true is
// 2, stored as true), the 16-bit floats compute in float.

#if DT == 0 || DT == 1 || DT == 6 || DT == 7
#define IS_FLOAT 1
#endif

#if DT == 1
#define CT double
#elif DT == 3
#define CT long
#elif DT == 0 || DT == 6 || DT == 7
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

#if DT == 6
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((v), (i), (p))
#elif DT == 7
#define LOAD(p, i) vnn_bf16_to_float((p)[i])
#define STORE(p, i, v) ((p)[i] = vnn_bf16_from_float(v))
#elif DT == 5
#define LOAD(p, i) ((CT)(p)[i])
#define STORE(p, i, v) ((p)[i] = (uchar)((v) != 0))
#else
#define LOAD(p, i) ((CT)(p)[i])
#define STORE(p, i, v) ((p)[i] = (T)(v))
#endif

#ifdef BINARY_FN

#ifdef IS_FLOAT
// NaN-propagating like torch.maximum (fmax/fmin would drop the NaN).
inline CT vnn_maximum(CT a, CT b) { return isnan(a) ? a : isnan(b) ? b : (a > b ? a : b); }
inline CT vnn_minimum(CT a, CT b) { return isnan(a) ? a : isnan(b) ? b : (a < b ? a : b); }
#else
inline CT vnn_maximum(CT a, CT b) { return a > b ? a : b; }
inline CT vnn_minimum(CT a, CT b) { return a < b ? a : b; }
#endif

#ifndef IS_FLOAT
// Truncating division with x / 0 = 0, and x / -1 as wrapping negation
// because INT_MIN / -1 traps on x86 (PoCL runs there).
inline CT vnn_divide(CT a, CT b) {
  if (b == 0) return 0;
  if (b == (CT)-1) return (CT)((ulong)0 - (ulong)a);
  return a / b;
}
#endif

inline CT vnn_binary(CT a, CT b, CT alpha) {
#if BINARY_FN == 0
  return a + alpha * b;
#elif BINARY_FN == 1
  return a - alpha * b;
#elif BINARY_FN == 2
  return a * b;
#elif BINARY_FN == 3
#ifdef IS_FLOAT
  return a / b;
#else
  return vnn_divide(a, b);
#endif
#elif BINARY_FN == 4
  return vnn_maximum(a, b);
#elif BINARY_FN == 5
  return vnn_minimum(a, b);
#else
#error unknown BINARY_FN
#endif
}

__kernel void vnn_binary_op(__global T* out, long out_off, __global const T* a, long a_off,
                            __global const T* b, long b_off, CT alpha, long n, int ndim,
                            long8 sizes, long8 out_strides, long8 a_strides, long8 b_strides) {
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
    long8 idx = VNN_INDEX(i);
    CT x = LOAD(a, VNN_OFFSET(i, a_off, a_strides));
    CT y = LOAD(b, VNN_OFFSET(i, b_off, b_strides));
    STORE(out, VNN_OFFSET(i, out_off, out_strides), vnn_binary(x, y, alpha));
  }
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
#define VNN_FLOAT_FN(f, x) f(x)
#else
inline FT vnn_sigmoid(FT x) {
  if (x >= 0) return (FT)1 / ((FT)1 + exp(-x));
  FT e = exp(x);
  return e / ((FT)1 + e);
}
#define VNN_FLOAT_FN(f, x) ((CT)f((FT)(x)))
#endif

inline CT vnn_unary(CT x) {
#if UNARY_FN == 0
  return -x;
#elif UNARY_FN == 1
#ifdef IS_FLOAT
  return fabs(x);  // also clears the sign of -0.0 and NaN
#else
  return x < 0 ? -x : x;
#endif
#elif UNARY_FN == 2
  return VNN_FLOAT_FN(exp, x);
#elif UNARY_FN == 3
  return VNN_FLOAT_FN(log, x);
#elif UNARY_FN == 4
  return VNN_FLOAT_FN(sqrt, x);
#elif UNARY_FN == 5
  return x < 0 ? (CT)0 : x;  // NaN stays NaN
#elif UNARY_FN == 6
  return VNN_FLOAT_FN(vnn_sigmoid, x);
#elif UNARY_FN == 7
  return VNN_FLOAT_FN(tanh, x);
#else
#error unknown UNARY_FN
#endif
}

__kernel void vnn_unary_op(__global T* out, long out_off, __global const T* a, long a_off,
                           long n, int ndim, long8 sizes, long8 out_strides, long8 a_strides) {
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
    long8 idx = VNN_INDEX(i);
    CT x = LOAD(a, VNN_OFFSET(i, a_off, a_strides));
    STORE(out, VNN_OFFSET(i, out_off, out_strides), vnn_unary(x));
  }
}

#endif  // UNARY_FN

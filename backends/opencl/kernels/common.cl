// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Prepended to every kernel program (programs built from strings cannot
// #include). Holds the strided index math and the 16-bit float helpers.
//
// Dtype codes are vnn_dtype's: 0 float32, 1 float64, 2 int32, 3 int64,
// 4 uint8, 5 bool, 6 float16, 7 bfloat16, 8 int8, 9 int16.

#ifdef HAS_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

// Shapes travel as long8 and some tiles as float16; on an x86 CPU device
// without AVX-512 (PoCL on AVX2) clang notes at every call passing one
// that the psABI of such vectors differs from an AVX-512 build. That only
// matters when objects built for different targets are linked; a program
// here is one module built for one target, so the note says nothing about
// it. Only that group is silenced; every other diagnostic still shows.
#ifdef __clang__
#pragma clang diagnostic ignored "-Wpsabi"
#endif

// Shapes reach kernels with dimensions merged where the memory layout
// allows it and ordered innermost first, padded with zeros up to 8 dims.
// Unrolled steps with constant component names, because OpenCL vectors
// cannot be indexed by a run-time value.
#define VNN_UNRAVEL_STEP(k)                  \
  if (ndim > k) {                            \
    long q_ = rem / sizes.s##k;              \
    idx.s##k = rem - q_ * sizes.s##k;        \
    rem = q_;                                \
  }

// Indices below 2^32 (nearly every tensor) divide in 32 bits, several
// times cheaper than 64-bit division on CPUs and GPUs alike; a size past
// 2^32 then only ever gives quotient 0, which the clamp to UINT_MAX keeps.
#define VNN_UNRAVEL_STEP32(k)                                                  \
  if (ndim > k) {                                                              \
    uint s_ = sizes.s##k > (long)UINT_MAX ? UINT_MAX : (uint)sizes.s##k;       \
    uint q_ = r32 / s_;                                                        \
    idx.s##k = r32 - q_ * s_;                                                  \
    r32 = q_;                                                                  \
  }

inline long8 vnn_unravel(long i, int ndim, long8 sizes) {
  long8 idx = (long8)(0);
  if (i < (long)UINT_MAX) {
    uint r32 = (uint)i;
    VNN_UNRAVEL_STEP32(0) VNN_UNRAVEL_STEP32(1) VNN_UNRAVEL_STEP32(2) VNN_UNRAVEL_STEP32(3)
    VNN_UNRAVEL_STEP32(4) VNN_UNRAVEL_STEP32(5) VNN_UNRAVEL_STEP32(6) VNN_UNRAVEL_STEP32(7)
    return idx;
  }
  long rem = i;
  VNN_UNRAVEL_STEP(0) VNN_UNRAVEL_STEP(1) VNN_UNRAVEL_STEP(2) VNN_UNRAVEL_STEP(3)
  VNN_UNRAVEL_STEP(4) VNN_UNRAVEL_STEP(5) VNN_UNRAVEL_STEP(6) VNN_UNRAVEL_STEP(7)
  return idx;
}

inline long vnn_dot8(long8 idx, long8 strides) {
  long8 p = idx * strides;
  return p.s0 + p.s1 + p.s2 + p.s3 + p.s4 + p.s5 + p.s6 + p.s7;
}

// Element offset of linear index i (multi-index idx) in a tensor with
// these strides. With at most one dimension left after merging (every
// contiguous tensor, and broadcast scalars) the division-free fast path
// applies.
#define VNN_OFFSET(i, base, strides) \
  ((ndim <= 1) ? (base) + (i) * (strides).s0 : (base) + vnn_dot8(idx, (strides)))

// Multi-index of linear index i; unused (zero) on the fast path.
#define VNN_INDEX(i) ((ndim <= 1) ? (long8)(0) : vnn_unravel((i), ndim, sizes))

// idx + step in the mixed radix of sizes (both digit vectors in range, so
// one subtraction per digit carries); a carry out of the top digit only
// happens past the last element, which the loop never reaches.
#define VNN_ADVANCE_STEP(k)                              \
  if (ndim > k) {                                        \
    long v_ = idx.s##k + step.s##k + carry;              \
    carry = v_ >= sizes.s##k;                            \
    idx.s##k = carry ? v_ - sizes.s##k : v_;             \
  }

inline long8 vnn_advance(long8 idx, long8 step, int ndim, long8 sizes) {
  if (ndim <= 1) return idx;
  long carry = 0;
  VNN_ADVANCE_STEP(0) VNN_ADVANCE_STEP(1) VNN_ADVANCE_STEP(2) VNN_ADVANCE_STEP(3)
  VNN_ADVANCE_STEP(4) VNN_ADVANCE_STEP(5) VNN_ADVANCE_STEP(6) VNN_ADVANCE_STEP(7)
  return idx;
}

// The loop of the 1-D kernels over items i < n (kernels launched through
// launch.cpp's launch(), one statement or block following). With
// VNN_ONE_PER_ITEM (CPU devices, see launch.cpp: the grid then covers n)
// it is a bounds check: PoCL vectorises a kernel body across work items
// only when the body holds no per-item loop (2.5-5x on an add or an Adam
// step); otherwise (GPUs) a grid-stride loop over a capped grid.
#if VNN_ONE_PER_ITEM
#define VNN_ITEMS(i, n)              \
  const long i = get_global_id(0); \
  if (i < (n))
#else
#define VNN_ITEMS(i, n) for (long i = get_global_id(0); i < (n); i += get_global_size(0))
#endif

// The grid-stride loop of the elementwise kernels, i < n, with idx the
// multi-index of i: unravelled once per work item and then advanced by the
// grid size, so strided tensors cost no division per element. Needs ndim
// and sizes in scope; declares idx.
// With VNN_ONE_PER_ITEM (see VNN_ITEMS above): one item, no loop.
#if VNN_ONE_PER_ITEM
#define VNN_GRID_LOOP(i, n)                      \
  long8 idx = VNN_INDEX((long)get_global_id(0)); \
  VNN_ITEMS(i, n)
#else
#define VNN_GRID_LOOP(i, n)                                    \
  long8 idx = VNN_INDEX((long)get_global_id(0));               \
  const long8 vnn_step_ = VNN_INDEX((long)get_global_size(0)); \
  for (long i = get_global_id(0); i < (n); i += get_global_size(0), idx = vnn_advance(idx, vnn_step_, ndim, sizes))
#endif

// The strided kernels' 3-D grid (op_common.cpp plan_nd): item (x, y, z)
// sits at x * st.s0 + y * st.s1 + z * st.s2 past its tensor's base (the
// host walks any further dims, one launch each). No division, and no
// bounds check where the work-groups tile the sizes exactly: either would
// keep PoCL from vectorising across items (a [2048, 128] * [2048, 1] took
// 0.27 ms of CPU with the check, 0.025 ms without). VNN_ND_CHECK: the grid
// is rounded up past sizes.s0 / .s1. Declares vnn_x_, vnn_y_, vnn_z_.
#ifdef VNN_ND_CHECK
#define VNN_ND_ITEM(sizes)                                                                              \
  const long vnn_x_ = get_global_id(0), vnn_y_ = get_global_id(1), vnn_z_ = get_global_id(2);          \
  if (vnn_x_ >= (sizes).s0 || vnn_y_ >= (sizes).s1) return
#else
#define VNN_ND_ITEM(sizes) \
  const long vnn_x_ = get_global_id(0), vnn_y_ = get_global_id(1), vnn_z_ = get_global_id(2)
#endif

// The element offset of the item in a tensor with these grid strides; cls
// is its x stride where known at compile time (1 or 0), else -1.
#define VNN_ND_OFFSET(base, st, cls) \
  ((base) + ((cls) == 1 ? vnn_x_ : (cls) == 0 ? 0 : vnn_x_ * (st).s0) + vnn_y_ * (st).s1 + vnn_z_ * (st).s2)

// bfloat16 is the top half of a float32.
inline float vnn_bf16_to_float(ushort h) { return as_float((uint)h << 16); }

inline ushort vnn_bf16_from_float(float f) {
  uint u = as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return (ushort)(u >> 16);
}

// Wider sources are first rounded to float toward zero with the sticky
// bit kept in the last place ("round to odd"); the second rounding to
// bfloat16 is then exact-as-once, which a plain double->float->bf16 chain
// is not.
inline ushort vnn_bf16_from_long(long v) {
  float f = convert_float_rtz(v);
  if ((long)f != v) f = as_float(as_uint(f) | 1u);
  return vnn_bf16_from_float(f);
}

// Storage converters for kernels built with -DDT=<dtype code> of their
// floating storage type T: VNN_CT is the type they compute in, VNN_LD(p, i)
// reads element i as VNN_CT and VNN_ST(p, i, v) rounds v into it. 16-bit
// storage computes in float32 (vload_half / vstore_half_rte and the
// bfloat16 converters above need no cl_khr_fp16).
#if defined(DT) && DT == VNN_FLOAT16
#define VNN_CT float
#define VNN_LD(p, i) vload_half((i), (p))
#define VNN_ST(p, i, v) vstore_half_rte((v), (i), (p))
#elif defined(DT) && DT == VNN_BFLOAT16
#define VNN_CT float
#define VNN_LD(p, i) vnn_bf16_to_float((p)[i])
#define VNN_ST(p, i, v) ((p)[i] = vnn_bf16_from_float(v))
#else
#define VNN_CT T
#define VNN_LD(p, i) ((p)[i])
#define VNN_ST(p, i, v) ((p)[i] = (v))
#endif

#ifdef HAS_FP64
inline ushort vnn_bf16_from_double(double v) {
  if (isnan(v)) return vnn_bf16_from_float((float)v);
  float f = convert_float_rtz(v);
  if ((double)f != v) f = as_float(as_uint(f) | 1u);
  return vnn_bf16_from_float(f);
}
#endif

// Element offset of batch index i over nd merged batch dims (MATMUL, GEMM).
inline long vnn_strided_offset(long i, int nd, long8 sizes, long8 strides) {
  return nd <= 1 ? i * strides.s0 : vnn_dot8(vnn_unravel(i, nd, sizes), strides);
}

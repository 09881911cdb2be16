// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/* vnn backend plugin ABI (C, stable).
 *
 * A backend is a shared library exporting one symbol, VNN_BACKEND_ENTRY_NAME,
 * of type vnn_backend_entry_fn. The core dlopen()s it with
 * RTLD_NOW | RTLD_LOCAL, calls the entry point with the ABI version it was
 * built for, and reads the returned table. The core never unloads a backend.
 *
 * Rules every backend follows:
 *  - probe() must not initialise a device runtime (no Kokkos::initialize, no
 *    cudaSetDevice...). Open vendor driver libraries lazily with dlopen.
 *  - init_device() is called once before the first alloc/copy/run on a
 *    device; the heavy runtime start-up belongs there.
 *  - Every call returns a vnn_status; on failure the backend's last_error()
 *    returns a thread-local, human-readable message for the core to wrap in
 *    a typed C++ exception.
 *  - Operations are asynchronous on the given queue (NULL = the device's
 *    default in-order queue); only queue_synchronize / event_synchronize /
 *    a blocking copy to the host wait.
 *  - Device memory is opaque: pointers are handles (an OpenCL backend
 *    returns cl_mem). Offsets are therefore passed separately, never folded
 *    into the pointer.
 *
 * Tables are filled with designated initialisers and carry struct_size so
 * that fields can be appended without breaking older plugins.
 */
#ifndef VNN_BACKEND_ABI_H
#define VNN_BACKEND_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The ABI version this header describes; the core passes it to the entry point. */
#define VNN_BACKEND_ABI_VERSION 1u
/** Name of the one symbol a plugin exports, of type vnn_backend_entry_fn. */
#define VNN_BACKEND_ENTRY_NAME "vnn_backend_entry"
/** The most dims a vnn_tensor_desc describes (vnn::kMaxDims). */
#define VNN_MAX_DIMS 8

#if defined(_WIN32)
/** Marks the entry point exported from the plugin's shared library. */
#define VNN_BACKEND_EXPORT __declspec(dllexport)
#else
/** Marks the entry point exported from the plugin's shared library. */
#define VNN_BACKEND_EXPORT __attribute__((visibility("default")))
#endif

/** Result of every ABI call; on failure last_error() holds the message. */
typedef enum vnn_status {
  VNN_STATUS_OK = 0,
  VNN_STATUS_UNSUPPORTED = 1,   /* op or dtype not available on this backend */
  VNN_STATUS_OUT_OF_MEMORY = 2,
  VNN_STATUS_INVALID_ARGUMENT = 3,
  VNN_STATUS_NO_DEVICE = 4,     /* probe: driver present, zero devices */
  VNN_STATUS_DRIVER_MISSING = 5,/* probe: vendor driver library not found */
  VNN_STATUS_DEVICE_ERROR = 6,  /* runtime failure (kernel build, lost device) */
  VNN_STATUS_INTERNAL = 7,
  VNN_STATUS_NOT_READY = 8      /* event_query: the recorded work is still running */
} vnn_status;

/* Stable numbering: append only. */
/** Element types; the numbers equal vnn::DType's and only grow (append only). */
typedef enum vnn_dtype {
  VNN_FLOAT32 = 0,
  VNN_FLOAT64 = 1,
  VNN_INT32 = 2,
  VNN_INT64 = 3,
  VNN_UINT8 = 4,
  VNN_BOOL = 5,
  VNN_FLOAT16 = 6,
  VNN_BFLOAT16 = 7,
  VNN_INT8 = 8,
  VNN_INT16 = 9,
  VNN_DTYPE_COUNT_            /* number of dtypes, not a dtype */
} vnn_dtype;

/** Device kinds as a plugin reports them (vnn::DeviceType). */
typedef enum vnn_device_type {
  VNN_DEVICE_CPU = 0,
  VNN_DEVICE_GPU = 1,
  VNN_DEVICE_ACCELERATOR = 2
} vnn_device_type;

/** What device_info() fills in for one device; the caller sets struct_size first. */
typedef struct vnn_device_info {
  /** Set by the caller to sizeof(vnn_device_info). */
  size_t struct_size;          /* set by the caller to sizeof(vnn_device_info) */
  /** Device name, NUL-terminated. */
  char name[256];
  /** Vendor name, NUL-terminated. */
  char vendor[128];
  /** Driver or runtime version, NUL-terminated. */
  char driver_version[64];
  /** PCI address "0000:3b:00.0" where known, else "". */
  char pci_id[32];             /* "0000:3b:00.0" where known, else "" */
  /** Vendor UUID ("GPU-...") where known, else "". */
  char uuid[48];               /* "GPU-..." where known, else "" */
  /** Architecture: "sm_90", "gfx90a", "avx512", ... */
  char arch[64];               /* "sm_90", "gfx90a", "avx512", ... */
  /** A vnn_device_type. */
  int32_t type;                /* vnn_device_type */
  /** SMs, CUs, OpenCL compute units or threads. */
  int32_t compute_units;       /* SMs, CUs, OpenCL compute units, threads */
  /** Total device memory in bytes. */
  uint64_t total_memory;       /* bytes */
  /** Free device memory in bytes, 0 where unknown. */
  uint64_t free_memory;        /* bytes, 0 where unknown */
  /** 1 when device pointers are plain host memory. */
  int32_t host_accessible;     /* 1: device pointers are plain host memory */
  /** 0 when the device is listed but unusable (see unusable_reason). */
  int32_t usable;              /* 0: listed but unusable (see unusable_reason) */
  /** Why it is unusable, e.g. "compiled for sm_80, device is sm_50". */
  char unusable_reason[256];   /* e.g. "compiled for sm_80, device is sm_50" */
  /** Extra "key=value" lines for vnn-devices --verbose. */
  char properties[1024];       /* extra "key=value" lines for --verbose */
} vnn_device_info;

/* A strided view of device memory. Strides and offset count elements. */
/** A strided view of device memory; sizes, strides and offset count elements. */
typedef struct vnn_tensor_desc {
  /** Device allocation handle (cl_mem on OpenCL). */
  void* data;                  /* device allocation handle */
  /** Elements from the start of the allocation. */
  int64_t offset;              /* elements from the start of the allocation */
  /** A vnn_dtype. */
  int32_t dtype;               /* vnn_dtype */
  /** Number of dims, 0..VNN_MAX_DIMS (0: a scalar). */
  int32_t ndim;                /* 0..VNN_MAX_DIMS (0 = scalar) */
  /** Size of each of the first ndim dims. */
  int64_t sizes[VNN_MAX_DIMS];
  /** Stride of each of the first ndim dims, in elements (0 for broadcast dims). */
  int64_t strides[VNN_MAX_DIMS];
} vnn_tensor_desc;

/* Stable numbering: append only. A backend answers VNN_STATUS_UNSUPPORTED
 * for a kind it does not know. Semantics are documented in docs/ops.md. */
/** The ops of vnn_op::kind; numbers are stable (append only), semantics in docs/ops.md. */
typedef enum vnn_op_kind {
  VNN_OP_FILL = 1,          /* out[...] = scalars[0] */
  VNN_OP_COPY = 2,          /* out = in0 (any strides, any dtype: converts) */
  VNN_OP_BINARY = 3,        /* out = f(in0, in1), ints[0] = vnn_binary_fn */
  VNN_OP_UNARY = 4,         /* out = f(in0), ints[0] = vnn_unary_fn */
  VNN_OP_REDUCE = 5,        /* out = f over the last ints[1] dims of in0,
                               ints[0] = vnn_reduce_fn */
  VNN_OP_MATMUL = 6,        /* out = scalars[0] * in0 @ in1 + scalars[1] * out */
  VNN_OP_SOFTMAX = 7,       /* softmax over the last dim; ints[0] = 1: log */
  VNN_OP_RANDOM = 8,        /* out = Philox4x32-10 random numbers;
                               ints[0] = vnn_random_fn, ints[1] = seed,
                               ints[2] = offset (counter start) */
  VNN_OP_WHERE = 9,         /* out = in0 (bool) ? in1 : in2 */
  VNN_OP_INDEX_SELECT = 10, /* out = in0 indexed along ints[0] by in1 (int64) */
  VNN_OP_GATHER = 11,       /* out[..i..] = in0[..in1[..i..]..] along ints[0] */
  VNN_OP_SCATTER = 12,      /* out[..in1[..i..]..] (op)= in2[..i..] along ints[0]; ints[1]: vnn_scatter_mode */
  VNN_OP_INDEX_ADD = 13,    /* out.index_add_(ints[0], in1 (int64 index), in0 * scalars[0]) */
  VNN_OP_IM2COL = 14,       /* conv2d unfolding; see docs/ops.md */
  VNN_OP_COL2IM = 15,       /* conv2d folding (adjoint of IM2COL) */
  VNN_OP_POOL2D = 16,       /* max / avg pooling forward */
  VNN_OP_POOL2D_BACKWARD = 17,
  VNN_OP_OPTIMIZER_STEP = 18, /* fused update of one parameter in place;
                                 ints[0] = vnn_optimizer_fn; see docs/ops.md */
  /* Whole conv2d passes for backends with a convolution library (oneDNN
   * in the CPU plugin); optional: on VNN_STATUS_UNSUPPORTED the core runs
   * IM2COL + MATMUL instead. ints = {kh, kw, sh, sw, ph, pw, dh, dw,
   * groups}; see docs/ops.md. */
  VNN_OP_CONV2D = 19,                 /* out0 = conv(in0 x, in1 w) (+ in2 bias) */
  VNN_OP_CONV2D_BACKWARD_DATA = 20,   /* out0 = dx from in0 dy, in1 w */
  VNN_OP_CONV2D_BACKWARD_WEIGHT = 21, /* out0 = dw (out1 = dbias) from in0 dy, in1 x */
  VNN_OP_UNSCALE_CHECK = 22,  /* GradScaler: out1.. *= scalars[0] in place;
                                 out0[0] (float32) = 1 if any was inf/NaN */
  /* Fused scaled-dot-product attention (FlashAttention-2: query tiles against
   * streamed key/value tiles, online softmax, no L x S buffer). Optional: on
   * VNN_STATUS_UNSUPPORTED the core runs its math path (matmul, softmax,
   * dropout). Parameters: vnn_sdpa_params; shapes in docs/ops.md. */
  VNN_OP_SDPA = 23,           /* out0 = attention(in0 q, in1 k, in2 v [, in3 mask]),
                                 out1 = row logsumexp */
  VNN_OP_SDPA_BACKWARD = 24,  /* out0..2 = dq, dk, dv from in0 q, in1 k, in2 v,
                                 in3 out, in4 dout, in5 lse, in6 delta [, in7 mask] */
  /* Layer normalization over the last dim of in0 x [R, D] (unit last stride),
   * one floating dtype throughout. Optional: on VNN_STATUS_UNSUPPORTED the
   * core composes it from reductions and elementwise ops. ints[0]: bit 0 =
   * a weight [D] follows x, bit 1 = a bias [D] follows (forward only). */
  VNN_OP_LAYER_NORM = 25,          /* out0 y [R, D], out1 mean [R], out2 rstd [R] = 1 / sqrt(var + scalars[0]);
                                      y = (x - mean) * rstd (* w) (+ b), var biased */
  VNN_OP_LAYER_NORM_BACKWARD = 26, /* out0 dx [R, D] (with a weight also out1 dw, out2 db [D]) from
                                      in0 dy, in1 x, in2 mean, in3 rstd [, in4 w] */
  /* Reserved for the scan, sort and recurrent-cell kernels (docs/ops.md
   * gives each one's operands once its kernels land); until then every
   * backend answers VNN_STATUS_UNSUPPORTED for them. */
  VNN_OP_SCAN = 27,                /* out0 = inclusive scan of in0 along its last dim, ints[0] =
                                      vnn_scan_fn; MAX / MIN: out1 = int64 index of the running extreme */
  /* Stable sort of each row of in0 [R, N] (contiguous); out0 = the sorted
   * values [R, N] (in0's dtype), out1 = their int64 positions in the row
   * [R, N] (both contiguous). ints[0] = 1: descending. NaN is the largest
   * value (last ascending, first descending), -0.0 equals 0.0, ties keep
   * their order. float32, float64, int32, int64, uint8, bool. */
  VNN_OP_SORT = 28,
  /* For each value of in1 [R, M] (contiguous), its insertion position in
   * the row of in0 [R or 1, N] (contiguous, ascending; one row: shared by
   * every row of in1); out0 [R, M] int64 or int32. ints[0] = 1: right
   * (first position whose value is > v), else left (first >= v). in0 and
   * in1 one dtype of SORT's. */
  VNN_OP_SEARCHSORTED = 29,
  /* One recurrent cell step over a batch (LSTM, GRU, RNN tanh / relu),
   * gates in one pass; in0 xg = x @ W_ih^T and in1 hg = h @ W_hh^T are
   * GEMMs the core ran. ints[0] = vnn_rnn_cell_mode, ints[1] = 1: b_ih,
   * b_hh [G*H] follow. Every operand 2-D with unit last stride (rows any
   * stride), one floating dtype. Optional: on VNN_STATUS_UNSUPPORTED the
   * core composes the step from elementwise ops. Full table in docs/ops.md. */
  VNN_OP_RNN_CELL = 30,            /* out0 h' [B, H] from in0 xg, in1 hg [B, G*H] (G = 1, 4, 3), then
                                      LSTM: in2 c, out1 c', out2 gates i,f,g,o [B, 4H];
                                      GRU: in2 h, out1 r,z,n,(hg_n + b_hn) [B, 4H] */
  VNN_OP_RNN_CELL_BACKWARD = 31,   /* RNN: out0 d(pre) [B, H] from in0 dh', in1 h';
                                      LSTM: out0 d(gates) [B, 4H], out1 dc from in0 dh', in1 dc',
                                      in2 gates, in3 c, in4 c'; GRU: out0 dxg, out1 dhg [B, 3H],
                                      out2 dh (direct part) from in0 dh', in1 r,z,n,hn, in2 h */
  /* Spatial sampling of in0 x [N, C, H, W] (or [N, C, D, H, W]) at the
   * normalized coordinates of in1 grid [N, Ho, Wo, 2] (or [N, Do, Ho, Wo,
   * 3]; last dim x, y (, z) in [-1, 1]), PyTorch's grid_sample. ints =
   * vnn_grid_sample_params. One floating dtype (float32, float64); any
   * strides. Full contract in docs/ops.md. */
  VNN_OP_GRID_SAMPLE = 32,          /* out0 [N, C, Ho, Wo] (or [N, C, Do, Ho, Wo]) */
  VNN_OP_GRID_SAMPLE_BACKWARD = 33, /* out0 dx (added into: the caller zeroes it; atomic scatter-add),
                                       out1 dgrid (written) from in0 dout, in1 x, in2 grid */
  VNN_OP_COUNT_             /* one past the last kind, not a kind */
} vnn_op_kind;

/** The function of VNN_OP_BINARY (ints[0]): one per line of the op table
 * vnn/ops/binary.def, numbered by position (append-only). ADD and SUB read
 * scalars[0] (alpha: in0 + alpha * in1); the COMPARE and LOGICAL ops write
 * bool. */
typedef enum vnn_binary_fn {
#ifndef VNN_DOXYGEN /* one enumerator per table line */
#define VNN_BINARY_OP(ID, ...) VNN_BINARY_##ID,
#include "vnn/ops/binary.def"
#undef VNN_BINARY_OP
#endif
  VNN_BINARY_COUNT_         /* number of binary functions, not a function */
} vnn_binary_fn;

/* Reductions (VNN_OP_REDUCE). in0 arrives permuted so that the reduced
 * dims are its last k = ints[1] dims; out has in0's leading ndim - k sizes. */
/** The function of VNN_OP_REDUCE (ints[0]) over the last ints[1] dims of the (permuted) input. */
typedef enum vnn_reduce_fn {
  VNN_REDUCE_SUM = 0,
  VNN_REDUCE_MEAN = 1,
  VNN_REDUCE_PROD = 2,
  VNN_REDUCE_MAX = 3,
  VNN_REDUCE_MIN = 4,
  VNN_REDUCE_ARGMAX = 5,    /* out int64, k == 1 */
  VNN_REDUCE_ARGMIN = 6,    /* out int64, k == 1 */
  VNN_REDUCE_COUNT_         /* number of reductions, not a reduction */
} vnn_reduce_fn;

/* Scans (VNN_OP_SCAN). in0 arrives permuted so that the scanned dim is its
 * last; out0 (and out1) have in0's sizes, any strides; element j of a row
 * combines elements 0..j in order. out0 is float32, float64, int32 or
 * int64, computed in out0's dtype (float32 sums and products accumulate in
 * float64); in0 has out0's dtype, or for SUM / PROD is bool, uint8 or int32
 * with out0 int64. NaN propagates; MAX / MIN take the latest index among
 * equal values and of the latest NaN, as PyTorch's cummax / cummin. */
/** The function of VNN_OP_SCAN (ints[0]): an inclusive scan along the last dim of in0. */
typedef enum vnn_scan_fn {
  VNN_SCAN_SUM = 0,
  VNN_SCAN_PROD = 1,
  VNN_SCAN_MAX = 2,         /* out1 int64: index of the running maximum */
  VNN_SCAN_MIN = 3,         /* out1 int64: index of the running minimum */
  VNN_SCAN_LOGSUMEXP = 4,   /* log(sum(exp)), floating dtypes only */
  VNN_SCAN_COUNT_           /* number of scans, not a scan */
} vnn_scan_fn;

/** How VNN_OP_SCATTER (ints[1]) combines each source element with its
 * destination. SET leaves one unspecified writer per element; the others
 * are atomic (float32, float64, int32, int64; MAX / MIN propagate NaN). */
typedef enum vnn_scatter_mode {
  VNN_SCATTER_SET = 0,
  VNN_SCATTER_ADD = 1,
  VNN_SCATTER_MUL = 2,
  VNN_SCATTER_MAX = 3,
  VNN_SCATTER_MIN = 4,
  VNN_SCATTER_MODE_COUNT_  /* number of modes, not a mode */
} vnn_scatter_mode;

/* Random numbers (VNN_OP_RANDOM). Element i (row-major number) of out uses
 * Philox4x32-10 with key = seed (k0 low, k1 high word) and counter
 * (offset + i / 4) in c0 (low) / c1 (high), c2 = c3 = 0, and takes word
 * i % 4: its value depends only on (seed, offset, i). */
/** The distribution of VNN_OP_RANDOM (ints[0]); element i depends only on (seed, offset, i). */
typedef enum vnn_random_fn {
  VNN_RANDOM_UNIFORM = 0,   /* [scalars[0], scalars[1]); float32, float64 */
  VNN_RANDOM_NORMAL = 1,    /* mean scalars[0], std scalars[1] (Box-Muller) */
  VNN_RANDOM_BITS = 2,      /* integer in [scalars[0], scalars[1]); int32, int64 */
  VNN_RANDOM_COUNT_         /* number of distributions, not a distribution */
} vnn_random_fn;

/** The function of VNN_OP_UNARY (ints[0]): one per line of the op table
 * vnn/ops/unary.def, numbered by position (the table is append-only).
 * LEAKY_RELU reads scalars[0] (the negative slope), CLAMP scalars[0] and
 * scalars[1] (min and max, NaN: no bound); LOGICAL_NOT and the BOOLOUT
 * ops write bool. */
typedef enum vnn_unary_fn {
#ifndef VNN_DOXYGEN /* one enumerator per table line */
#define VNN_UNARY_OP(ID, ...) VNN_UNARY_##ID,
#include "vnn/ops/unary.def"
#undef VNN_UNARY_OP
#endif
  VNN_UNARY_COUNT_           /* number of unary functions, not a function */
} vnn_unary_fn;

/** The update rule of VNN_OP_OPTIMIZER_STEP (ints[0]). */
typedef enum vnn_optimizer_fn {
  VNN_OPTIM_SGD = 0,
  VNN_OPTIM_ADAM = 1,     /* ints[1] = 1: AdamW (decoupled weight decay) */
  VNN_OPTIM_RMSPROP = 2,
  VNN_OPTIM_ADAGRAD = 3,
  VNN_OPTIM_COUNT_        /* number of optimizers, not an optimizer */
} vnn_optimizer_fn;

/** Modes of VNN_OP_POOL2D / VNN_OP_POOL2D_BACKWARD (ints[0]; docs/ops.md). */
typedef enum vnn_pool_mode {
  VNN_POOL_MAX = 0,
  VNN_POOL_AVG = 1,
  VNN_POOL_ADAPTIVE_AVG = 2,
  VNN_POOL_ADAPTIVE_MAX = 3,
  VNN_POOL_COUNT_         /* number of modes, not a mode */
} vnn_pool_mode;

/** The cell of VNN_OP_RNN_CELL / VNN_OP_RNN_CELL_BACKWARD (ints[0]); gate orders are PyTorch's. */
typedef enum vnn_rnn_cell_mode {
  VNN_RNN_TANH = 0,      /* h' = tanh(xg + b_ih + hg + b_hh) */
  VNN_RNN_RELU = 1,      /* h' = relu(xg + b_ih + hg + b_hh) */
  VNN_RNN_LSTM = 2,      /* gates i, f, g, o; c' = f c + i g, h' = o tanh(c') */
  VNN_RNN_GRU = 3,       /* gates r, z, n; n = tanh(x_n + b_in + r (h_n + b_hn)), h' = (1 - z) n + z h */
  VNN_RNN_CELL_COUNT_    /* number of cells, not a cell */
} vnn_rnn_cell_mode;

/** The interpolation of VNN_OP_GRID_SAMPLE (vnn_grid_sample_params::mode), PyTorch's order. */
typedef enum vnn_grid_sample_mode {
  VNN_GRID_BILINEAR = 0,  /* bilinear on 4-D input, trilinear on 5-D */
  VNN_GRID_NEAREST = 1,   /* the nearest pixel, ties to even */
  VNN_GRID_BICUBIC = 2,   /* 4-D only: 4 x 4 taps, cubic convolution A = -0.75 */
  VNN_GRID_MODE_COUNT_    /* number of modes, not a mode */
} vnn_grid_sample_mode;

/** Where VNN_OP_GRID_SAMPLE reads outside the input (vnn_grid_sample_params::padding_mode). */
typedef enum vnn_grid_padding_mode {
  VNN_GRID_PAD_ZEROS = 0,       /* outside taps read 0 */
  VNN_GRID_PAD_BORDER = 1,      /* coordinates clipped to the border */
  VNN_GRID_PAD_REFLECTION = 2,  /* coordinates reflected at the border, then clipped */
  VNN_GRID_PAD_COUNT_           /* number of padding modes, not a mode */
} vnn_grid_padding_mode;

/** Whether a vnn_pool_mode takes the maximum (and so has an indices tensor). */
static inline int vnn_pool_is_max(int64_t mode) { return mode == VNN_POOL_MAX || mode == VNN_POOL_ADAPTIVE_MAX; }
/** Whether a vnn_pool_mode takes its windows from the output size. */
static inline int vnn_pool_is_adaptive(int64_t mode) {
  return mode == VNN_POOL_ADAPTIVE_AVG || mode == VNN_POOL_ADAPTIVE_MAX;
}

/* Named parameters of the ops whose ints[] / scalars[] hold several values.
 * On the wire they are the positional arrays of ABI 1, in field order, so
 * older plugins and cores still read them; the core fills them with
 * vnn_*_pack and plugins read them with vnn_*_unpack (which checks the
 * counts only; range checks live in backends/common/op_params.hpp). */

/** The geometry of VNN_OP_POOL2D / VNN_OP_POOL2D_BACKWARD: ints[0..10] in field order. */
typedef struct vnn_pool2d_params {
  /** A vnn_pool_mode. */
  int64_t mode;
  /** kernel_h: window height and width (fixed modes). */
  int64_t kernel_h;
  /** kernel_w: window height and width (fixed modes). */
  int64_t kernel_w;
  /** stride_h: window step (fixed modes). */
  int64_t stride_h;
  /** stride_w: window step (fixed modes). */
  int64_t stride_w;
  /** pad_h: implicit padding on each side (fixed modes). */
  int64_t pad_h;
  /** pad_w: implicit padding on each side (fixed modes). */
  int64_t pad_w;
  /** dilation_h: spacing of window taps (fixed modes). */
  int64_t dilation_h;
  /** dilation_w: spacing of window taps (fixed modes). */
  int64_t dilation_w;
  /** avg: 1 when padded positions count in the divisor. */
  int64_t count_include_pad;
  /** avg: the divisor of every window when > 0; 0: none. */
  int64_t divisor_override;
} vnn_pool2d_params;
/** The number of ints of VNN_OP_POOL2D / VNN_OP_POOL2D_BACKWARD. */
#define VNN_POOL2D_NUM_INTS 11

/** The geometry of VNN_OP_IM2COL / VNN_OP_COL2IM (ints[0..7]) and the CONV2D kinds (ints[0..8], with groups). */
typedef struct vnn_conv2d_params {
  /** kernel_h: kernel height and width. */
  int64_t kernel_h;
  /** kernel_w: kernel height and width. */
  int64_t kernel_w;
  /** stride_h: stride. */
  int64_t stride_h;
  /** stride_w: stride. */
  int64_t stride_w;
  /** pad_h: zero padding on each side. */
  int64_t pad_h;
  /** pad_w: zero padding on each side. */
  int64_t pad_w;
  /** dilation_h: dilation. */
  int64_t dilation_h;
  /** dilation_w: dilation. */
  int64_t dilation_w;
  /** Channel groups (CONV2D kinds only; 1 for IM2COL / COL2IM). */
  int64_t groups;
} vnn_conv2d_params;
/** The number of ints of VNN_OP_IM2COL / VNN_OP_COL2IM (no groups). */
#define VNN_IM2COL_NUM_INTS 8
/** The number of ints of VNN_OP_CONV2D and its backward kinds. */
#define VNN_CONV2D_NUM_INTS 9

/** VNN_OPTIM_SGD: scalars {lr, momentum, dampening, weight_decay}, ints[1..4] {nesterov, maximize, has_buffer, first}. */
typedef struct vnn_sgd_params {
  /** lr: learning rate, momentum, dampening and L2 weight decay. */
  double lr;
  /** momentum: learning rate, momentum, dampening and L2 weight decay. */
  double momentum;
  /** dampening: learning rate, momentum, dampening and L2 weight decay. */
  double dampening;
  /** weight_decay: learning rate, momentum, dampening and L2 weight decay. */
  double weight_decay;
  /** nesterov: 1: Nesterov momentum; 1: maximise the objective. */
  int64_t nesterov;
  /** maximize: 1: Nesterov momentum; 1: maximise the objective. */
  int64_t maximize;
  /** has_buffer: 1: out1 is the momentum buffer; 1: its first step (buffer := d). */
  int64_t has_buffer;
  /** first: 1: out1 is the momentum buffer; 1: its first step (buffer := d). */
  int64_t first;
} vnn_sgd_params;

/** VNN_OPTIM_ADAM: scalars {lr, beta1, beta2, eps, weight_decay, step_size, bias_correction2_sqrt}, ints[1..3] {decoupled, amsgrad, maximize}. */
typedef struct vnn_adam_params {
  /** lr: learning rate, moment decays, epsilon and weight decay. */
  double lr;
  /** beta1: learning rate, moment decays, epsilon and weight decay. */
  double beta1;
  /** beta2: learning rate, moment decays, epsilon and weight decay. */
  double beta2;
  /** eps: learning rate, moment decays, epsilon and weight decay. */
  double eps;
  /** weight_decay: learning rate, moment decays, epsilon and weight decay. */
  double weight_decay;
  /** step_size: lr / (1 - beta1^t) and sqrt(1 - beta2^t), computed by the host for step t. */
  double step_size;
  /** bias_correction2_sqrt: lr / (1 - beta1^t) and sqrt(1 - beta2^t), computed by the host for step t. */
  double bias_correction2_sqrt;
  /** decoupled: 1: AdamW's decoupled weight decay; 1: out3 is max_exp_avg_sq; 1: maximise. */
  int64_t decoupled;
  /** amsgrad: 1: AdamW's decoupled weight decay; 1: out3 is max_exp_avg_sq; 1: maximise. */
  int64_t amsgrad;
  /** maximize: 1: AdamW's decoupled weight decay; 1: out3 is max_exp_avg_sq; 1: maximise. */
  int64_t maximize;
} vnn_adam_params;

/** VNN_OPTIM_RMSPROP: scalars {lr, alpha, eps, weight_decay, momentum}, ints[1..3] {centered, maximize, has_buffer}. */
typedef struct vnn_rmsprop_params {
  /** lr: learning rate, smoothing constant, epsilon, weight decay and momentum. */
  double lr;
  /** alpha: learning rate, smoothing constant, epsilon, weight decay and momentum. */
  double alpha;
  /** eps: learning rate, smoothing constant, epsilon, weight decay and momentum. */
  double eps;
  /** weight_decay: learning rate, smoothing constant, epsilon, weight decay and momentum. */
  double weight_decay;
  /** momentum: learning rate, smoothing constant, epsilon, weight decay and momentum. */
  double momentum;
  /** centered: 1: centred (out3 = grad_avg); 1: maximise; 1: out2 is the momentum buffer. */
  int64_t centered;
  /** maximize: 1: centred (out3 = grad_avg); 1: maximise; 1: out2 is the momentum buffer. */
  int64_t maximize;
  /** has_buffer: 1: centred (out3 = grad_avg); 1: maximise; 1: out2 is the momentum buffer. */
  int64_t has_buffer;
} vnn_rmsprop_params;

/** VNN_OPTIM_ADAGRAD: scalars {clr, eps, weight_decay}, ints[1] {maximize}. */
typedef struct vnn_adagrad_params {
  /** clr: lr / (1 + (t - 1) lr_decay) from the host, epsilon and weight decay. */
  double clr;
  /** eps: lr / (1 + (t - 1) lr_decay) from the host, epsilon and weight decay. */
  double eps;
  /** weight_decay: lr / (1 + (t - 1) lr_decay) from the host, epsilon and weight decay. */
  double weight_decay;
  /** 1: maximise. */
  int64_t maximize;
} vnn_adagrad_params;

/** The parameters of VNN_OP_OPTIMIZER_STEP: the rule (ints[0]) and that rule's values. */
typedef struct vnn_optimizer_params {
  /** A vnn_optimizer_fn: which member of the union holds the values. */
  int64_t fn;
  /** The rule's values. */
  union {
    /** fn == VNN_OPTIM_SGD. */
    vnn_sgd_params sgd;
    /** fn == VNN_OPTIM_ADAM. */
    vnn_adam_params adam;
    /** fn == VNN_OPTIM_RMSPROP. */
    vnn_rmsprop_params rmsprop;
    /** fn == VNN_OPTIM_ADAGRAD. */
    vnn_adagrad_params adagrad;
  } u;
} vnn_optimizer_params;
/** The most scalars any optimizer rule carries (Adam's 7). */
#define VNN_OPTIM_MAX_SCALARS 7
/** The most ints any optimizer rule carries, fn included (SGD's 5). */
#define VNN_OPTIM_MAX_INTS 5

/* Fused attention (VNN_OP_SDPA, VNN_OP_SDPA_BACKWARD; docs/ops.md).
 * q [N, Hq, L, E], k [N, Hk, S, E], v [N, Hk, S, Ev], out [N, Hq, L, Ev]:
 * any strides except a unit stride on the last dim of q, k, v, out, dout,
 * dq, dk, dv (the core copies otherwise). Hq = Hk * G: query head h reads
 * key/value head h / G (grouped-query attention). The optional mask
 * [N, Hq, L, S] is additive, of q's dtype, any strides (0 on broadcast
 * dims). lse and delta [N, Hq, L] are float32 (float64 for float64 q).
 * Scores s_ij = scale * q_i . k_j + mask_ij; -inf where is_causal and
 * j > i (top-left aligned, as PyTorch). P = softmax over j; a row with no
 * finite score gives out 0 and lse -inf. Dropout keeps P_ij when
 * (w >> 8) >= dropout_threshold, w = word e % 4 of Philox4x32-10(key =
 * dropout_seed, counter = dropout_offset + e / 4) for e = ((n*Hq + h)*L +
 * i)*S + j (VNN_OP_RANDOM's layout: the core's rand() of [N, Hq, L, S]),
 * and scales kept values by 1 / (1 - dropout_p). Backward (FlashAttention-2):
 * delta = rowsum(dout * out) (the core computes it); dk and dv sum over the
 * G query heads of a group; every output is overwritten. */
/** The parameters of VNN_OP_SDPA / VNN_OP_SDPA_BACKWARD: scalars {scale, dropout_p}, ints in field order from is_causal. */
typedef struct vnn_sdpa_params {
  /** Multiplies q . k (PyTorch's default 1/sqrt(E)). */
  double scale;
  /** Probability of dropping an attention weight; 0: no dropout. */
  double dropout_p;
  /** 1: key j > query i is masked (top-left aligned). */
  int64_t is_causal;
  /** 1: the inputs end with an additive mask. */
  int64_t has_mask;
  /** Dropout: the Philox key (the generator's seed). */
  int64_t dropout_seed;
  /** Dropout: the first Philox counter (the generator's offset). */
  int64_t dropout_offset;
  /** Dropout: keep when the word's top 24 bits >= this (ceil(p * 2^24)). */
  int64_t dropout_threshold;
} vnn_sdpa_params;
/** The number of scalars of the SDPA kinds. */
#define VNN_SDPA_NUM_SCALARS 2
/** The number of ints of the SDPA kinds. */
#define VNN_SDPA_NUM_INTS 5

/** Writes p into scalars[0..VNN_SDPA_NUM_SCALARS) and ints[0..VNN_SDPA_NUM_INTS). */
static inline void vnn_sdpa_pack(const vnn_sdpa_params* p, double* scalars, int64_t* ints) {
  scalars[0] = p->scale, scalars[1] = p->dropout_p;
  ints[0] = p->is_causal, ints[1] = p->has_mask, ints[2] = p->dropout_seed;
  ints[3] = p->dropout_offset, ints[4] = p->dropout_threshold;
}

/** Reads p from an op's scalars and ints; 0 (p untouched) when there are too few. */
static inline int vnn_sdpa_unpack(const double* scalars, int32_t num_scalars, const int64_t* ints, int32_t num_ints,
                                  vnn_sdpa_params* p) {
  if (!scalars || !ints || num_scalars < VNN_SDPA_NUM_SCALARS || num_ints < VNN_SDPA_NUM_INTS) return 0;
  p->scale = scalars[0], p->dropout_p = scalars[1];
  p->is_causal = ints[0], p->has_mask = ints[1], p->dropout_seed = ints[2];
  p->dropout_offset = ints[3], p->dropout_threshold = ints[4];
  return 1;
}

/** Writes p into ints[0..VNN_POOL2D_NUM_INTS). */
static inline void vnn_pool2d_pack(const vnn_pool2d_params* p, int64_t* ints) {
  ints[0] = p->mode;
  ints[1] = p->kernel_h, ints[2] = p->kernel_w;
  ints[3] = p->stride_h, ints[4] = p->stride_w;
  ints[5] = p->pad_h, ints[6] = p->pad_w;
  ints[7] = p->dilation_h, ints[8] = p->dilation_w;
  ints[9] = p->count_include_pad, ints[10] = p->divisor_override;
}

/** Reads p from an op's ints; 0 (p untouched) when there are too few. */
static inline int vnn_pool2d_unpack(const int64_t* ints, int32_t num_ints, vnn_pool2d_params* p) {
  if (!ints || num_ints < VNN_POOL2D_NUM_INTS) return 0;
  p->mode = ints[0];
  p->kernel_h = ints[1], p->kernel_w = ints[2];
  p->stride_h = ints[3], p->stride_w = ints[4];
  p->pad_h = ints[5], p->pad_w = ints[6];
  p->dilation_h = ints[7], p->dilation_w = ints[8];
  p->count_include_pad = ints[9], p->divisor_override = ints[10];
  return 1;
}

/** Writes p into ints[0..VNN_CONV2D_NUM_INTS); IM2COL / COL2IM send the first VNN_IM2COL_NUM_INTS. */
static inline void vnn_conv2d_pack(const vnn_conv2d_params* p, int64_t* ints) {
  ints[0] = p->kernel_h, ints[1] = p->kernel_w;
  ints[2] = p->stride_h, ints[3] = p->stride_w;
  ints[4] = p->pad_h, ints[5] = p->pad_w;
  ints[6] = p->dilation_h, ints[7] = p->dilation_w;
  ints[8] = p->groups;
}

/** Reads p from an op's ints (groups 1 when absent); 0 (p untouched) when there are fewer than VNN_IM2COL_NUM_INTS. */
static inline int vnn_conv2d_unpack(const int64_t* ints, int32_t num_ints, vnn_conv2d_params* p) {
  if (!ints || num_ints < VNN_IM2COL_NUM_INTS) return 0;
  p->kernel_h = ints[0], p->kernel_w = ints[1];
  p->stride_h = ints[2], p->stride_w = ints[3];
  p->pad_h = ints[4], p->pad_w = ints[5];
  p->dilation_h = ints[6], p->dilation_w = ints[7];
  p->groups = num_ints > VNN_IM2COL_NUM_INTS ? ints[8] : 1;
  return 1;
}

/** The arguments of VNN_OP_GRID_SAMPLE / VNN_OP_GRID_SAMPLE_BACKWARD: ints[0..2] in field order. */
typedef struct vnn_grid_sample_params {
  /** A vnn_grid_sample_mode. */
  int64_t mode;
  /** A vnn_grid_padding_mode. */
  int64_t padding_mode;
  /** 1: -1 and 1 are the centres of the corner pixels; 0: their outer edges. */
  int64_t align_corners;
} vnn_grid_sample_params;
/** The number of ints of VNN_OP_GRID_SAMPLE and its backward. */
#define VNN_GRID_SAMPLE_NUM_INTS 3

/** Writes p into ints[0..VNN_GRID_SAMPLE_NUM_INTS). */
static inline void vnn_grid_sample_pack(const vnn_grid_sample_params* p, int64_t* ints) {
  ints[0] = p->mode, ints[1] = p->padding_mode, ints[2] = p->align_corners;
}

/** Reads p from an op's ints; 0 (p untouched) when there are too few. */
static inline int vnn_grid_sample_unpack(const int64_t* ints, int32_t num_ints, vnn_grid_sample_params* p) {
  if (!ints || num_ints < VNN_GRID_SAMPLE_NUM_INTS) return 0;
  p->mode = ints[0], p->padding_mode = ints[1], p->align_corners = ints[2];
  return 1;
}

/** Writes p into scalars[0..VNN_OPTIM_MAX_SCALARS) and ints[0..VNN_OPTIM_MAX_INTS), setting the counts used; 0 for an unknown fn. */
static inline int vnn_optimizer_pack(const vnn_optimizer_params* p, double* scalars, int32_t* num_scalars,
                                     int64_t* ints, int32_t* num_ints) {
  ints[0] = p->fn;
  switch (p->fn) {
    case VNN_OPTIM_SGD: {
      const vnn_sgd_params* q = &p->u.sgd;
      scalars[0] = q->lr, scalars[1] = q->momentum, scalars[2] = q->dampening, scalars[3] = q->weight_decay;
      ints[1] = q->nesterov, ints[2] = q->maximize, ints[3] = q->has_buffer, ints[4] = q->first;
      *num_scalars = 4, *num_ints = 5;
      return 1;
    }
    case VNN_OPTIM_ADAM: {
      const vnn_adam_params* q = &p->u.adam;
      scalars[0] = q->lr, scalars[1] = q->beta1, scalars[2] = q->beta2, scalars[3] = q->eps;
      scalars[4] = q->weight_decay, scalars[5] = q->step_size, scalars[6] = q->bias_correction2_sqrt;
      ints[1] = q->decoupled, ints[2] = q->amsgrad, ints[3] = q->maximize;
      *num_scalars = 7, *num_ints = 4;
      return 1;
    }
    case VNN_OPTIM_RMSPROP: {
      const vnn_rmsprop_params* q = &p->u.rmsprop;
      scalars[0] = q->lr, scalars[1] = q->alpha, scalars[2] = q->eps, scalars[3] = q->weight_decay;
      scalars[4] = q->momentum;
      ints[1] = q->centered, ints[2] = q->maximize, ints[3] = q->has_buffer;
      *num_scalars = 5, *num_ints = 4;
      return 1;
    }
    case VNN_OPTIM_ADAGRAD: {
      const vnn_adagrad_params* q = &p->u.adagrad;
      scalars[0] = q->clr, scalars[1] = q->eps, scalars[2] = q->weight_decay;
      ints[1] = q->maximize;
      *num_scalars = 3, *num_ints = 2;
      return 1;
    }
    default: *num_scalars = 0, *num_ints = 1; return 0;
  }
}

/** Reads p from an op's scalars and ints; 0 for an unknown fn or too few values. */
static inline int vnn_optimizer_unpack(const double* scalars, int32_t num_scalars, const int64_t* ints,
                                       int32_t num_ints, vnn_optimizer_params* p) {
  if (!ints || num_ints < 1) return 0;
  const double* s = scalars;
  const int64_t* i = ints;
  p->fn = i[0];
  switch (p->fn) {
    case VNN_OPTIM_SGD: {
      if (!s || num_scalars < 4 || num_ints < 5) return 0;
      vnn_sgd_params q = {s[0], s[1], s[2], s[3], i[1], i[2], i[3], i[4]};
      p->u.sgd = q;
      return 1;
    }
    case VNN_OPTIM_ADAM: {
      if (!s || num_scalars < 7 || num_ints < 4) return 0;
      vnn_adam_params q = {s[0], s[1], s[2], s[3], s[4], s[5], s[6], i[1], i[2], i[3]};
      p->u.adam = q;
      return 1;
    }
    case VNN_OPTIM_RMSPROP: {
      if (!s || num_scalars < 5 || num_ints < 4) return 0;
      vnn_rmsprop_params q = {s[0], s[1], s[2], s[3], s[4], i[1], i[2], i[3]};
      p->u.rmsprop = q;
      return 1;
    }
    case VNN_OPTIM_ADAGRAD: {
      if (!s || num_scalars < 3 || num_ints < 2) return 0;
      vnn_adagrad_params q = {s[0], s[1], s[2], i[1]};
      p->u.adagrad = q;
      return 1;
    }
    default: return 0;
  }
}

/** The state buffers (outputs after out0 = param) the rule of p reads and writes. */
static inline int32_t vnn_optimizer_num_state(const vnn_optimizer_params* p) {
  switch (p->fn) {
    case VNN_OPTIM_SGD: return p->u.sgd.has_buffer ? 1 : 0;
    case VNN_OPTIM_ADAM: return p->u.adam.amsgrad ? 3 : 2;
    case VNN_OPTIM_RMSPROP: return 3; /* fixed slots; an unused one repeats out1 */
    case VNN_OPTIM_ADAGRAD: return 1;
    default: return 0;
  }
}

/* One op request. Inputs and outputs have already been validated by the
 * core: shapes agree (broadcast inputs carry stride 0), dtypes are those the
 * op's documentation asks for, all tensors live on this device. A plugin
 * still re-checks every descriptor (sizes >= 0, element count and extent
 * within int64, the extent inside the allocation where it knows its size)
 * and answers VNN_STATUS_INVALID_ARGUMENT instead of touching memory out of
 * bounds; vnn's plugins share backends/common/desc_check.hpp for that. */
/** One op request passed to run(): kind, tensor descriptors, scalar and integer arguments, queue. */
typedef struct vnn_op {
  /** Set by the core to sizeof(vnn_op). */
  size_t struct_size;
  /** A vnn_op_kind. */
  int32_t kind;                 /* vnn_op_kind */
  /** Number of input descriptors. */
  int32_t num_inputs;
  /** Number of output descriptors. */
  int32_t num_outputs;
  /** Number of double arguments. */
  int32_t num_scalars;
  /** Number of int64 arguments. */
  int32_t num_ints;
  /** Zero; keeps the layout 8-byte aligned for future use. */
  int32_t reserved;
  /** The input descriptors (num_inputs of them). */
  const vnn_tensor_desc* inputs;
  /** The output descriptors (num_outputs of them). */
  const vnn_tensor_desc* outputs;
  /** The double arguments (num_scalars of them). */
  const double* scalars;
  /** The int64 arguments (num_ints of them). */
  const int64_t* ints;
  /** The queue to enqueue on (NULL: the device's default queue). */
  void* queue;                  /* NULL = the device's default queue */
} vnn_op;

/* Allocation callbacks into the core's caching allocator, which the core
 * hands a plugin (set_core_allocator below) for the temporary memory a
 * host library of the plugin asks for (oneDNN's scratchpads in the CPU
 * plugin; docs/onednn-scratchpad.md). Blocks come from, and go back to, the
 * device's cache: memory_stats counts them, empty_cache returns them. */
/** The core's caching allocator as a plugin sees it (set_core_allocator). */
typedef struct vnn_core_allocator {
  /** sizeof(vnn_core_allocator) the core was built with. */
  size_t struct_size;
  /** The core's context; passed back to alloc and free. */
  void* ctx;
  /** A block of at least `bytes` (a handle the plugin's own alloc returned) from the device's cache; NULL when the device is out of memory after the cache was emptied. Never throws; thread-safe; may call the plugin's alloc. */
  void* (*alloc)(void* ctx, size_t bytes);
  /** Gives a block from alloc back to the cache, with the same `bytes`, once no work queued on the device still uses it. */
  void (*free)(void* ctx, void* block, size_t bytes);
} vnn_core_allocator;

/** The table a plugin's entry point returns: identity, then function pointers (later fields optional by struct_size). */
typedef struct vnn_backend {
  /** VNN_BACKEND_ABI_VERSION the plugin was built with. */
  uint32_t abi_version;         /* VNN_BACKEND_ABI_VERSION it was built with */
  /** Zero. */
  uint32_t reserved;
  /** sizeof(vnn_backend) the plugin was built with (optional fields are read only when covered). */
  size_t struct_size;           /* sizeof(vnn_backend) it was built with */
  /** Backend name: "openmp", "cuda", "hip", "opencl". */
  const char* name;             /* "openmp", "cuda", "hip", "opencl" */
  /** One-line description, "Kokkos 3.4.1 OpenMP+Serial, OpenBLAS". */
  const char* description;      /* "Kokkos 3.4.1 OpenMP+Serial, OpenBLAS" */
  /** Tie-breaker among devices of the same type (higher first). */
  int32_t priority;             /* tie-breaker among equal device types */
  /** Zero. */
  int32_t reserved2;

  /* Discovery, without starting a runtime. On failure *count is 0 and
   * last_error() says why (driver missing, no device...). */
  /** Counts devices without starting a runtime; on failure *count is 0 and last_error() says why. */
  vnn_status (*probe)(int32_t* count);
  /** Fills `info` for one device (without starting a runtime). */
  vnn_status (*device_info)(int32_t device, vnn_device_info* info);

  /* Runtime start-up for one device; idempotent. */
  /** Starts the runtime for one device, before its first alloc, copy or run; idempotent. */
  vnn_status (*init_device)(int32_t device);

  /* Memory. alloc of 0 bytes returns a valid, unique handle. */
  /** Allocates `bytes` of device memory; 0 bytes gives a valid, unique handle. */
  vnn_status (*alloc)(int32_t device, size_t bytes, void** handle);
  /** Frees a handle from alloc. */
  vnn_status (*free)(int32_t device, void* handle);
  /* Host memory the device can DMA from / to (page-locked or mapped). */
  /** Allocates host memory the device can DMA from / to (page-locked or mapped). */
  vnn_status (*host_alloc)(int32_t device, size_t bytes, void** host_ptr);
  /** Frees memory from host_alloc. */
  vnn_status (*host_free)(int32_t device, void* host_ptr);

  /* Copies. Offsets are in bytes. blocking != 0: return after completion;
   * otherwise enqueue on queue (host memory must then stay alive until the
   * queue is synchronised; pinned host memory makes the copy truly async). */
  /** Copies host `src` to `dst` + dst_offset bytes; blocking or enqueued on `queue`. */
  vnn_status (*copy_to_device)(int32_t device, void* dst, size_t dst_offset,
                               const void* src, size_t bytes, void* queue,
                               int32_t blocking);
  /** Copies `src` + src_offset bytes to host `dst`; blocking or enqueued on `queue`. */
  vnn_status (*copy_to_host)(int32_t device, void* dst, const void* src,
                             size_t src_offset, size_t bytes, void* queue,
                             int32_t blocking);
  /** Copies between two allocations of the device, enqueued on `queue`. */
  vnn_status (*copy_on_device)(int32_t device, void* dst, size_t dst_offset,
                               const void* src, size_t src_offset,
                               size_t bytes, void* queue);

  /* Queues (in-order) and events. */
  /** Creates an in-order queue. */
  vnn_status (*queue_create)(int32_t device, void** queue);
  /** Destroys a queue from queue_create. */
  vnn_status (*queue_destroy)(int32_t device, void* queue);
  /** Waits until all work on `queue` (NULL: default) is done. */
  vnn_status (*queue_synchronize)(int32_t device, void* queue);
  /** Creates an event. */
  vnn_status (*event_create)(int32_t device, void** event);
  /** Destroys an event. */
  vnn_status (*event_destroy)(int32_t device, void* event);
  /** Records `event` behind the work enqueued on `queue` so far. */
  vnn_status (*event_record)(int32_t device, void* event, void* queue);
  /** Waits until the recorded work of `event` is done. */
  vnn_status (*event_synchronize)(int32_t device, void* event);
  /* Milliseconds between two recorded, completed events. */
  /** Milliseconds between two recorded, completed events. */
  vnn_status (*event_elapsed)(int32_t device, void* start, void* end,
                              double* milliseconds);

  /* The one generic op entry. */
  /** The one generic op entry: validates the descriptors and enqueues `op` on op->queue. */
  vnn_status (*run)(int32_t device, const vnn_op* op);

  /* Thread-local text of the last failure on this thread. Never NULL. */
  /** Thread-local text of the last failure on this thread; never NULL. */
  const char* (*last_error)(void);

  /* Optional, appended (read only when struct_size covers them and the
   * pointer is non-NULL; older plugins lack them). Profiling support: */
  /* The implementation the latest run() on this thread chose where an op
   * has several ("openblas", "kokkos", "clblast", "tiled"); NULL or ""
   * where there was no choice. Static text, valid for the process. */
  /** The implementation the latest run() on this thread chose ("openblas", "kokkos", "clblast", "tiled"); optional. */
  const char* (*last_path)(int32_t device);
  /* Vendor tool ranges (NVTX on CUDA, roctx on HIP) so that Nsight Systems
   * and rocprof show vnn's op and user range names. Nested per thread. */
  /** Pushes a vendor tool range (NVTX, roctx), nested per thread; optional. */
  void (*range_push)(const char* name);
  /** Pops the innermost vendor tool range; optional. */
  void (*range_pop)(void);

  /* Optional, appended: streams (docs/streams.md). A core finding either
   * missing falls back to event_synchronize (query: wait, then "complete";
   * wait: the host waits for the event before enqueueing more). */
  /* VNN_STATUS_OK when every command before the event's latest record has
   * completed (or it was never recorded), VNN_STATUS_NOT_READY otherwise.
   * Never blocks. */
  /** VNN_STATUS_OK when the event's recorded work is done (or it was never recorded), VNN_STATUS_NOT_READY otherwise; never blocks; optional. */
  vnn_status (*event_query)(int32_t device, void* event);
  /* Work enqueued on queue (NULL = default) after this call starts only
   * once the event's recorded work completed; the host does not wait. */
  /** Makes later work on `queue` wait on the device for `event`; the host does not wait; optional. */
  vnn_status (*queue_wait_event)(int32_t device, void* queue, void* event);

  /* Optional, appended: collectives of a backend with a communication
   * library of its own (NCCL in the CUDA plugin; docs/distributed.md). A
   * core finding them NULL (or struct_size too small: older plugins) stages
   * that device's tensors through host memory for its own engine. Buffers
   * are contiguous device allocations at a byte offset; `count` counts
   * elements of `dtype`; work is queued on `queue` (NULL = default) and the
   * core waits on it like on any op. `reduce` is a vnn_reduce_fn: SUM,
   * PROD, MAX, MIN or MEAN (the average over ranks). */
  /* One rank makes the id (at most VNN_COMM_ID_BYTES, *size set); the core
   * hands it to every rank through the process group's store. */
  /** Makes a communicator id (at most VNN_COMM_ID_BYTES, *size set) that the core sends to every rank; optional. */
  vnn_status (*comm_unique_id)(int32_t device, void* id, size_t* size);
  /* Collective over all ranks (each calls it with the same id). */
  /** Creates this rank's communicator from the shared id (a collective: every rank calls it). */
  vnn_status (*comm_create)(int32_t device, const void* id, size_t size, int32_t rank, int32_t world_size,
                            void** comm);
  /** Destroys a communicator. */
  vnn_status (*comm_destroy)(int32_t device, void* comm);
  /** All-reduce of `count` elements of `dtype` at `offset` bytes in `data`, in place; `reduce` a vnn_reduce_fn. */
  vnn_status (*comm_allreduce)(int32_t device, void* comm, void* data, size_t offset, size_t count,
                               int32_t dtype, int32_t reduce, void* queue);
  /** Broadcast of `count` elements from rank `root`, in place. */
  vnn_status (*comm_broadcast)(int32_t device, void* comm, void* data, size_t offset, size_t count,
                               int32_t dtype, int32_t root, void* queue);
  /* out (offset out_offset) receives world_size * count elements, rank r's at r * count. */
  /** All-gather: `out` receives world_size * count elements, rank r's at r * count. */
  vnn_status (*comm_allgather)(int32_t device, void* comm, const void* in, size_t in_offset, void* out,
                               size_t out_offset, size_t count, int32_t dtype, void* queue);
  /* in holds world_size * count elements; out gets the reduction of piece `rank`. */
  /** Reduce-scatter: `in` holds world_size * count elements; `out` gets the reduction of piece `rank`. */
  vnn_status (*comm_reduce_scatter)(int32_t device, void* comm, const void* in, size_t in_offset, void* out,
                                    size_t out_offset, size_t count, int32_t dtype, int32_t reduce, void* queue);

  /* Optional, appended: a copy between two devices of this plugin (the CUDA
   * plugin on Kokkos >= 4.3: cudaMemcpyPeerAsync), enqueued on `queue` of
   * src_device (NULL = its default queue); offsets in bytes. A core finding
   * it NULL, or getting VNN_STATUS_UNSUPPORTED (no peer access between the
   * two), stages the bytes through pinned host memory. */
  /** Copies `bytes` from src_device's `src` + src_offset to dst_device's `dst` + dst_offset on src_device's `queue`; UNSUPPORTED: no direct path; optional. */
  vnn_status (*copy_peer)(int32_t dst_device, void* dst, size_t dst_offset, int32_t src_device, const void* src,
                          size_t src_offset, size_t bytes, void* queue);
  /* Optional, appended: the core's allocator for the plugin's temporaries.
   * The core calls it once per device after init_device; the table stays
   * valid for the process. NULL turns it off again (the plugin then uses
   * memory of its own). A plugin without the entry never gets it. */
  /** Hands the plugin the core's caching allocator of `device` (NULL: none) for its temporaries; optional. */
  void (*set_core_allocator)(int32_t device, const vnn_core_allocator* allocator);
} vnn_backend;

/** Most bytes of a communicator id from comm_unique_id. */
#define VNN_COMM_ID_BYTES 128

/** Whether table `b` (a const vnn_backend*) is long enough to hold `field`, an appended entry. */
#define VNN_BACKEND_COVERS(b, field) \
  ((b)->struct_size >= offsetof(vnn_backend, field) + sizeof((b)->field))
/** Whether table `b` holds the optional entry `field` and the plugin filled it in (not NULL). */
#define VNN_BACKEND_HAS(b, field) (VNN_BACKEND_COVERS(b, field) && (b)->field != NULL)

/* The entry point. Returns NULL if the plugin cannot serve host_abi_version
 * (it may then still return a table whose abi_version tells the core what it
 * was built for). */
/** The type of the entry point: the table for host_abi_version, or NULL when the plugin cannot serve it. */
typedef const vnn_backend* (*vnn_backend_entry_fn)(uint32_t host_abi_version);

#ifdef __cplusplus
}
#endif

#endif /* VNN_BACKEND_ABI_H */

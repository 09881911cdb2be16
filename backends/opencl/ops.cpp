// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ops.hpp"

#include "launch.hpp"

#include <CL/cl.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "device.hpp"
#include "dtype.hpp"
#include "errors.hpp"
#include "ops_attention.hpp"
#include "ops_conv.hpp"
#include "ops_conv_direct.hpp"
#include "ops_elementwise.hpp"
#include "ops_indexing.hpp"
#include "ops_optimizer.hpp"
#include "ops_grid_sample.hpp"
#include "ops_rnn_cell.hpp"
#include "ops_scan.hpp"
#include "ops_sort.hpp"
#include "op_common.hpp"
#include "common/desc_check.hpp"
#include "common/gemm_plan.hpp"
#include "ops_gemm.hpp"
#include "program_cache.hpp"
#include "scratch.hpp"
#include "tuning.hpp"
#include "vnn/checked_size.h"
#include "vnn/op_names.h"

#ifdef VNN_OPENCL_HAVE_CLBLAST
#include <clblast.h>
#endif

namespace vnn_opencl {
namespace {

// "add", or "fn=99" for a code this ABI version lacks (vnn/op_names.h).
template <size_t N>
std::string fn_name(const char* const (&table)[N], int64_t fn) {
  const char* n = VNN_NAME(table, fn);
  return n ? n : "fn=" + std::to_string(fn);
}

vnn_status run_fill(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what) {
  const vnn_tensor_desc& out = op.outputs[0];
  if (op.num_scalars < 1) return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": needs scalars[0]");
  const DtypeInfo* info = dtype_info(out.dtype);
  uint64_t bits = scalar_bits(op.scalars[0], out.dtype);
  Layout l = make_layout(out, {&out});
  if (l.n == 0) return VNN_STATUS_OK;
  Kernel* k = nullptr;
  cl_mem m = mem(out);
  cl_long off = out.offset, n = l.n;
  if (contiguous(l, 0) && d.one_per_item && l.n >= 4096) {  // a kernel PoCL vectorises (fill.cl)
    if (vnn_status st = get_kernel(d, "fill", "vnn_fill_dense", std::string("-DT=") + info->bits_storage, &k))
      return st;
    return launch(d, *k, q, l.n, what, {arg(m), arg(off), {info->size, &bits}, arg(n)});
  }
  if (contiguous(l, 0)) {
    cl_int err = clEnqueueFillBuffer(q, mem(out), &bits, info->size,
                                     static_cast<size_t>(out.offset) * info->size,
                                     static_cast<size_t>(l.n) * info->size, 0, nullptr, nullptr);
    if (err != CL_SUCCESS) return fail_cl(err, what, ": clEnqueueFillBuffer failed");
    return VNN_STATUS_OK;
  }
  if (vnn_status st = get_kernel(d, "fill", "vnn_fill", std::string("-DT=") + info->bits_storage, &k))
    return st;
  return launch(d, *k, q, l.n, what,
                {arg(m), arg(off), {info->size, &bits}, arg(n), arg(l.ndim), arg(l.sizes), arg(l.strides[0])});
}

vnn_status run_copy(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what) {
  const vnn_tensor_desc& out = op.outputs[0];
  const vnn_tensor_desc& in = op.inputs[0];
  Layout l = make_layout(out, {&out, &in});
  if (l.n == 0) return VNN_STATUS_OK;
  const DtypeInfo* oi = dtype_info(out.dtype);
  if (in.dtype == out.dtype && contiguous(l, 0) && contiguous(l, 1)) {
    size_t bytes = static_cast<size_t>(l.n) * oi->size;
    size_t src = static_cast<size_t>(in.offset) * oi->size, dst = static_cast<size_t>(out.offset) * oi->size;
    if (in.data == out.data && src == dst) return VNN_STATUS_OK;
    // clEnqueueCopyBuffer rejects overlapping ranges; the kernel takes those.
    bool overlap = in.data == out.data && src < dst + bytes && dst < src + bytes;
    if (!overlap) {
      cl_int err = clEnqueueCopyBuffer(q, mem(in), mem(out), src, dst, bytes, 0, nullptr, nullptr);
      if (err != CL_SUCCESS) return fail_cl(err, what, ": clEnqueueCopyBuffer failed");
      return VNN_STATUS_OK;
    }
  }
  return copy_kernel(d, q, out, in, l, what);
}

// Largest power of two <= min(device max, kernel max, cap).
size_t pow2_wg(size_t a, size_t b, size_t cap) {
  size_t m = std::min({a, b, cap});
  size_t p = 1;
  while (p * 2 <= m) p *= 2;
  return p;
}

// A kernel whose -DWG= local array size is the work-group size it runs
// with: chosen from the device's maximum, lowered once if the compiled
// kernel allows fewer items.
vnn_status get_wg_kernel(Device& d, const char* file, const char* name, const std::string& defs,
                         const Siblings& siblings, Kernel** k, size_t* wg) {
  size_t w = pow2_wg(d.max_work_group_size, d.max_work_group_size, 256);
  if (vnn_status st = get_kernel(d, file, name, defs + " -DWG=" + std::to_string(w), siblings, k)) return st;
  if ((*k)->work_group_size < w) {
    w = pow2_wg((*k)->work_group_size, w, 256);
    if (vnn_status st = get_kernel(d, file, name, defs + " -DWG=" + std::to_string(w), siblings, k)) return st;
  }
  *wg = w;
  return VNN_STATUS_OK;
}

vnn_status enqueue(Kernel& k, cl_command_queue q, cl_uint dims, const size_t* global, const size_t* local,
                   const std::string& what, std::initializer_list<Arg> args) {
  return enqueue_nd(k, q, dims, global, local, what, args);
}

// The first `nd` dims of t as a descriptor of their own.
vnn_tensor_desc leading(const vnn_tensor_desc& t, int nd) {
  vnn_tensor_desc d = t;
  d.ndim = nd;
  return d;
}

bool compute_dtype(int32_t dt) { return dt == VNN_FLOAT32 || dt == VNN_FLOAT64 || dt == VNN_INT32 || dt == VNN_INT64; }

// How run_reduce spreads `outer` rows of `inner` elements: parts 0, one
// work item per row (rows up to kShortRow long, and on devices whose items
// run as loops on CPU threads any row while there are rows enough for the
// compute units: there a group per row pays its barrier tree per row,
// 2048 rows of 784 took 4 ms on PoCL); 1, one work-group of wg items per
// row; > 1, each row cut into `parts` chunks of `chunk` elements (a
// multiple of wg), one work-group per chunk, when there are too few rows
// to give every compute unit several groups and the rows are long.
struct ReducePlan {
  int64_t parts = 1, chunk = 0;
};
constexpr int64_t kShortRow = 128;
ReducePlan plan_reduce(const Device& d, int64_t outer, int64_t inner, size_t wg) {
  ReducePlan p;
  const int64_t want = 4 * std::max<int64_t>(2, d.compute_units);  // groups to fill the device
  if (inner <= kShortRow || (d.one_per_item && outer >= want)) {
    p.parts = 0;
    return p;
  }
  const int64_t w = static_cast<int64_t>(wg);
  const int64_t min_chunk = 4 * w;  // each item sums at least 4 elements
  if (outer >= want || inner < 2 * min_chunk) return p;
  int64_t parts = std::min<int64_t>((want + outer - 1) / outer, inner / min_chunk);
  int64_t chunk = (inner + parts - 1) / parts;
  chunk = (chunk + w - 1) / w * w;
  p.parts = (inner + chunk - 1) / chunk;
  p.chunk = chunk;
  if (p.parts < 2) p = ReducePlan{};
  return p;
}

// The reductions one program holds (see Siblings): the float ones of one
// output dtype, or argmax with argmin; none (empty) for the others. Built
// once: every reduction's host path asks.
const Siblings& reduce_siblings(int64_t fn, bool float_same_dtype) {
  static const auto make = [](std::initializer_list<int64_t> fns) {
    std::vector<Siblings> by_fn(VNN_REDUCE_COUNT_);
    for (int64_t f : fns) {
      Siblings& s = by_fn[size_t(f)];
      for (int64_t g : fns) {
        if (g == f) s.index = s.variants.size();
        s.variants.push_back("-DFN=" + std::to_string(g));
      }
    }
    return by_fn;
  };
  static const std::vector<Siblings> floats =
      make({VNN_REDUCE_SUM, VNN_REDUCE_MEAN, VNN_REDUCE_PROD, VNN_REDUCE_MAX, VNN_REDUCE_MIN});
  static const std::vector<Siblings> args = make({VNN_REDUCE_ARGMAX, VNN_REDUCE_ARGMIN});
  static const Siblings none;
  if (fn < 0 || fn >= VNN_REDUCE_COUNT_) return none;
  if (fn == VNN_REDUCE_ARGMAX || fn == VNN_REDUCE_ARGMIN) return args[size_t(fn)];
  return float_same_dtype ? floats[size_t(fn)] : none;
}

// Input float32/float64/int32/int64 (as the Kokkos backends); ARGMAX/ARGMIN
// write int64, MEAN takes floats only; SUM/PROD of int32 write int64 or
// int32; otherwise the output has one of those four dtypes too.
vnn_status run_reduce(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what) {
  const vnn_tensor_desc& out = op.outputs[0];
  const vnn_tensor_desc& in = op.inputs[0];
  int64_t fn = op.ints[0], k = op.ints[1];
  if (k < 0 || k > in.ndim || out.ndim != in.ndim - k)
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": k=", k, " does not match in0 (ndim ", in.ndim, ") and out (ndim ",
                out.ndim, ")");
  bool in_float = in.dtype == VNN_FLOAT32 || in.dtype == VNN_FLOAT64;
  bool arg_fn = fn == VNN_REDUCE_ARGMAX || fn == VNN_REDUCE_ARGMIN;
  if (!compute_dtype(in.dtype) || !compute_dtype(out.dtype) || (arg_fn && out.dtype != VNN_INT64) ||
      (fn == VNN_REDUCE_MEAN && !in_float))
    return fail(VNN_STATUS_UNSUPPORTED, what, ": input ", dtype_info(in.dtype)->name, " to output ",
                dtype_info(out.dtype)->name, " is not supported by the opencl backend");
  const int nl = in.ndim - static_cast<int>(k);
  vnn_tensor_desc ol = leading(out, nl), il = leading(in, nl);
  Layout lead = make_layout(ol, {&ol, &il});
  vnn_tensor_desc tr{};
  for (int i = nl; i < in.ndim; ++i) {
    tr.sizes[tr.ndim] = in.sizes[i];
    tr.strides[tr.ndim] = in.strides[i];
    ++tr.ndim;
  }
  Layout trail = make_layout(tr, {&tr});
  if (lead.n == 0) return VNN_STATUS_OK;
  const Siblings& fns = reduce_siblings(fn, in_float && out.dtype == in.dtype);
  std::string defs = "-DT=" + std::string(dtype_info(in.dtype)->storage) + " -DDT=" + std::to_string(in.dtype) +
                     " -DO=" + dtype_info(out.dtype)->storage;
  if (fns.variants.empty()) defs += " -DFN=" + std::to_string(fn);
  cl_mem mo = mem(out), mi = mem(in);
  cl_long oo = out.offset, io = in.offset, outer = lead.n, inner = trail.n;
  std::vector<Arg> args = {arg(mo), arg(oo), arg(mi), arg(io), arg(outer), arg(inner), arg(lead.ndim),
                           arg(lead.sizes), arg(lead.strides[0]), arg(lead.strides[1]), arg(trail.ndim),
                           arg(trail.sizes), arg(trail.strides[0])};
  Kernel* kern = nullptr;
  // Rows side by side at unit stride (a column sum): vnn_reduce_cols, the
  // accumulators as vectors of the device's 8-byte lanes.
  const int vw = preferred_vector_width(d, VNN_FLOAT64);
  if (lead.ndim == 1 && trail.ndim == 1 && lead.n > 1 && lead.strides[0].s[0] == 1 && lead.strides[1].s[0] == 1 &&
      (fn == VNN_REDUCE_SUM || fn == VNN_REDUCE_MEAN || fn == VNN_REDUCE_PROD) && in_float &&
      out.dtype == in.dtype && vw > 1) {
    const std::string cols_defs = defs + " -DWG=1 -DVW=" + std::to_string(vw);
    if (vnn_status st = get_kernel(d, "reduction", "vnn_reduce_cols", cols_defs, fns, &kern)) return st;
    const size_t items = size_t((lead.n + vw - 1) / vw), local = local_filling(d, items, 64);
    const size_t global = (items + local - 1) / local * local;
    cl_long ts = trail.strides[0].s[0];
    return enqueue_nd(*kern, q, 1, &global, &local, what,
                      {arg(mo), arg(oo), arg(mi), arg(io), arg(outer), arg(inner), arg(ts)});
  }
  size_t wg = 1;
  if (vnn_status st = get_wg_kernel(d, "reduction", "vnn_reduce", defs, fns, &kern, &wg)) return st;
  ReducePlan plan = plan_reduce(d, lead.n, trail.n, wg);
  if (plan.parts == 0) {  // short rows: one work item per row
    if (vnn_status st =
            get_kernel(d, "reduction", "vnn_reduce_items", defs + " -DWG=" + std::to_string(wg), fns, &kern))
      return st;
    return launch(d, *kern, q, lead.n, what, args);
  }
  if (plan.parts == 1) {
    size_t global = static_cast<size_t>(std::min<int64_t>(lead.n, 8192)) * wg;
    return enqueue_nd(*kern, q, 1, &global, &wg, what, args.data(), args.size());
  }
  // Few long rows: partials of every chunk in a scratch buffer (8 bytes
  // each, the widest accumulator or index; scratch.hpp), then one merge per
  // row.
  int64_t count = 0, bytes = 0;
  if (!vnn::checked::mul(lead.n, plan.parts, &count) || !vnn::checked::bytes(count, 8, &bytes))
    return fail(VNN_STATUS_OUT_OF_MEMORY, what, ": ", lead.n, " x ", plan.parts, " partials overflow");
  Scratch partials;
  if (vnn_status st = Scratch::make(d, q, static_cast<size_t>(bytes), what + " (partials)", &partials)) return st;
  cl_mem part = partials.mem();
  cl_long parts = plan.parts, chunk = plan.chunk;
  args.insert(args.end(), {arg(parts), arg(chunk), arg(part)});
  Kernel *kp = nullptr, *km = nullptr;
  const std::string wg_defs = defs + " -DWG=" + std::to_string(wg);
  vnn_status st = get_kernel(d, "reduction", "vnn_reduce_part", wg_defs, fns, &kp);
  if (st == VNN_STATUS_OK) st = get_kernel(d, "reduction", "vnn_reduce_merge", wg_defs, fns, &km);
  if (st == VNN_STATUS_OK && kp->work_group_size < wg) {  // cannot run wg items: one group per row instead
    args.resize(args.size() - 3);
    size_t global = static_cast<size_t>(std::min<int64_t>(lead.n, 8192)) * wg;
    return enqueue_nd(*kern, q, 1, &global, &wg, what, args.data(), args.size());
  }
  if (st == VNN_STATUS_OK) {
    size_t global = static_cast<size_t>(std::min<int64_t>(count, 8192)) * wg;
    st = enqueue_nd(*kp, q, 1, &global, &wg, what, args.data(), args.size());
  }
  if (st == VNN_STATUS_OK) st = launch(d, *km, q, lead.n, what, args);
  return st;
}

// float32 and float64; out and in0 have the same sizes, any strides.
vnn_status run_softmax(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what) {
  const vnn_tensor_desc& out = op.outputs[0];
  const vnn_tensor_desc& in = op.inputs[0];
  bool log_out = op.num_ints > 0 && op.ints && op.ints[0] == 1;
  const bool floating = out.dtype == VNN_FLOAT32 || out.dtype == VNN_FLOAT64 || out.dtype == VNN_FLOAT16 ||
                        out.dtype == VNN_BFLOAT16;  // 16-bit storage computes in float32
  if (!floating || in.dtype != out.dtype || in.ndim != out.ndim)
    return fail(VNN_STATUS_UNSUPPORTED, what,
                ": only float32, float64, float16 and bfloat16 with matching input are supported");
  const int nd = in.ndim;
  cl_long n = nd > 0 ? in.sizes[nd - 1] : 1;
  cl_long in_s = nd > 0 ? in.strides[nd - 1] : 0, out_s = nd > 0 ? out.strides[nd - 1] : 0;
  vnn_tensor_desc ol = leading(out, nd > 0 ? nd - 1 : 0), il = leading(in, nd > 0 ? nd - 1 : 0);
  Layout lead = make_layout(ol, {&ol, &il});
  if (lead.n == 0 || n == 0) return VNN_STATUS_OK;
  std::string defs = std::string("-DT=") + dtype_info(out.dtype)->storage + " -DDT=" + std::to_string(out.dtype) +
                     " -DLOG_OUT=" + (log_out ? "1" : "0");
  Kernel* kern = nullptr;
  size_t wg = 1;
  if (vnn_status st = get_wg_kernel(d, "softmax", "vnn_softmax", defs, Siblings{}, &kern, &wg)) return st;
  cl_mem mo = mem(out), mi = mem(in);
  cl_long oo = out.offset, io = in.offset, rows = lead.n;
  const std::initializer_list<Arg> args = {arg(mo), arg(oo), arg(mi), arg(io), arg(rows), arg(n), arg(out_s),
                                           arg(in_s), arg(lead.ndim), arg(lead.sizes), arg(lead.strides[0]),
                                           arg(lead.strides[1])};
  if (n <= kShortRow) {  // short rows: one work item per row
    if (vnn_status st = get_kernel(d, "softmax", "vnn_softmax_items", defs + " -DWG=" + std::to_string(wg), &kern))
      return st;
    return launch(d, *kern, q, lead.n, what, args);
  }
  size_t global = static_cast<size_t>(std::min<int64_t>(lead.n, 8192)) * wg;
  return enqueue(*kern, q, 1, &global, &wg, what, args);
}

// UNIFORM/NORMAL: float32, float64; BITS: int32, int64 (see random.cl).
vnn_status run_random(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what) {
  const vnn_tensor_desc& out = op.outputs[0];
  if (op.num_ints < 3 || !op.ints || op.num_scalars < 2 || !op.scalars)
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": needs ints[0..2] (fn, seed, offset) and scalars[0..1]");
  const int64_t fn = op.ints[0];
  const bool floats = fn == VNN_RANDOM_UNIFORM || fn == VNN_RANDOM_NORMAL;
  const bool ok = floats ? (out.dtype == VNN_FLOAT32 || out.dtype == VNN_FLOAT64)
                         : fn == VNN_RANDOM_BITS && (out.dtype == VNN_INT32 || out.dtype == VNN_INT64) &&
                               op.scalars[1] > op.scalars[0];
  if (!ok) return fail(VNN_STATUS_UNSUPPORTED, what, " is not supported by the opencl backend");
  Layout l = make_layout(out, {&out});
  if (l.n == 0) return VNN_STATUS_OK;
  const bool f64 = out.dtype == VNN_FLOAT64;
  const char* st = !floats ? "long" : (f64 || (fn == VNN_RANDOM_NORMAL && d.fp64)) ? "double" : "float";
  std::string defs = std::string("-DT=") + dtype_info(out.dtype)->storage + " -DDT=" + std::to_string(out.dtype) +
                     " -DFN=" + std::to_string(fn) + " -DST=" + st + " -DNT=" + (d.fp64 ? "double" : "float");
  Kernel* k = nullptr;
  if (vnn_status s = get_kernel(d, "random", "vnn_random", defs, &k)) return s;
  cl_mem m = mem(out);
  cl_long off = out.offset, n = l.n;
  cl_ulong seed = static_cast<cl_ulong>(op.ints[1]), start = static_cast<cl_ulong>(op.ints[2]);
  cl_float fa = static_cast<cl_float>(op.scalars[0]), fb = static_cast<cl_float>(op.scalars[1]);
  cl_double da = op.scalars[0], db = op.scalars[1];
  cl_long la = static_cast<cl_long>(op.scalars[0]), lb = static_cast<cl_long>(op.scalars[1]);
  Arg aa = !floats ? arg(la) : st[0] == 'd' ? arg(da) : arg(fa);
  Arg ba = !floats ? arg(lb) : st[0] == 'd' ? arg(db) : arg(fb);
  return launch(d, *k, q, l.n, what,
                {arg(m), arg(off), arg(n), arg(l.ndim), arg(l.sizes), arg(l.strides[0]), arg(seed), arg(start), aa,
                 ba});
}

struct MatmulShape {
  int64_t m = 0, n = 0, k = 0;
  int64_t a_rs = 0, a_cs = 0, b_rs = 0, b_cs = 0, o_rs = 0, o_cs = 0;
  Layout batch;  // strides: out, a, b
};

#ifdef VNN_OPENCL_HAVE_CLBLAST
// CLBlast for float32/float64 operands whose matrices each have a unit
// stride (the mapping is common/gemm_plan.hpp's, shared with the Kokkos
// plugins); out is contiguous. Returns false (nothing enqueued) where it
// does not apply or CLBlast refused the first call.
template <typename T>
bool try_clblast(cl_command_queue q, const vnn_op& op, double alpha, double beta, std::string* why) {
  const vnn_tensor_desc &out = op.outputs[0], &a = op.inputs[0], &b = op.inputs[1];
  vnn::kernels::GemmPlan p;
  if (!vnn::kernels::plan_gemm(out, a, b, &p) || p.k == 0 || !p.a.ok || !p.b.ok) return false;
  using clblast::Transpose;
  const clblast::Layout row_major = clblast::Layout::kRowMajor;
  Transpose ta = p.a.trans ? Transpose::kYes : Transpose::kNo, tb = p.b.trans ? Transpose::kYes : Transpose::kNo;
  const size_t m = size_t(p.m), n = size_t(p.n), k = size_t(p.k);
  const size_t lda = size_t(p.a.ld), ldb = size_t(p.b.ld), ldc = size_t(p.ldc);
  cl_mem ma = mem(a), mb = mem(b), mo = mem(out);
  clblast::StatusCode st;
  // One gemm, or one strided-batched call (CLBlast wants non-zero strides:
  // broadcast batches go one call per batch below).
  if (p.batch == 1 || (p.uniform && p.stride_a > 0 && p.stride_b > 0)) {
    if (p.batch == 1)
      st = clblast::Gemm<T>(row_major, ta, tb, m, n, k, T(alpha), ma, size_t(a.offset), lda, mb, size_t(b.offset), ldb,
                            T(beta), mo, size_t(out.offset), ldc, &q, nullptr);
    else
      st = clblast::GemmStridedBatched<T>(row_major, ta, tb, m, n, k, T(alpha), ma, size_t(a.offset), lda,
                                          size_t(p.stride_a), mb, size_t(b.offset), ldb, size_t(p.stride_b), T(beta),
                                          mo, size_t(out.offset), ldc, size_t(p.stride_c), size_t(p.batch), &q,
                                          nullptr);
    if (st != clblast::StatusCode::kSuccess) {
      *why = "CLBlast status " + std::to_string(static_cast<int>(st));
      return false;
    }
    return true;
  }
  for (int64_t bi = 0; bi < p.batch; ++bi) {
    const size_t oa = size_t(vnn::kernels::batch_offset(a, bi)), ob = size_t(vnn::kernels::batch_offset(b, bi));
    st = clblast::Gemm<T>(row_major, ta, tb, m, n, k, T(alpha), ma, oa, lda, mb, ob, ldb, T(beta), mo,
                          size_t(out.offset + bi * p.stride_c), ldc, &q, nullptr);
    if (st != clblast::StatusCode::kSuccess) {
      *why = "CLBlast status " + std::to_string(static_cast<int>(st));
      if (bi == 0) return false;
      throw std::runtime_error(*why);
    }
  }
  return true;
}
#endif

// The MATMUL path (a GemmPath: CLBlast, the simple kernel of matmul.cl,
// vnn_gemm `variant`, vnn_gemm_longk, vnn_gemm_widen): forced by the
// tuner's run, else VNN_OPENCL_GEMM (clblast | tiled | simple | longk |
// widen) and
// VNN_OPENCL_GEMM_VARIANT, else the device's tuning for this shape.
void choose_gemm_path(Device& d, const MatmulShape& s, int32_t dtype, int* path, int* variant) {
  const GemmForce& force = gemm_force();
  if (force.path) {
    *path = force.path;
    *variant = force.variant;
    return;
  }
  TunedRates t = tuned_rates(d);
  *variant = pick_gemm_variant(t.gflops, s.m, s.n, s.k);
  if (const char* v = std::getenv("VNN_OPENCL_GEMM_VARIANT"); v && *v) *variant = std::atoi(v);
  const char* env = std::getenv("VNN_OPENCL_GEMM");
  if (env && std::strcmp(env, "simple") == 0) *path = kGemmSimple;
  else if (env && std::strcmp(env, "tiled") == 0) *path = kGemmTiled;
  else if (env && std::strcmp(env, "clblast") == 0) *path = kGemmClblast;
  else if (env && std::strcmp(env, "longk") == 0) *path = kGemmLongk;
  else if (env && std::strcmp(env, "widen") == 0) *path = kGemmWiden;
  else {
    *path = t.class_path[static_cast<int>(classify_gemm(s.m, s.n, s.k))];
    // Float32 shapes laid out as the tuner times them (unit-stride
    // operands, one batch) get their own measured answer.
    const bool a_unit = s.a_cs == 1 || s.a_rs == 1, b_unit = s.b_cs == 1 || s.b_rs == 1;
    if (dtype == VNN_FLOAT32 && s.batch.n == 1 && a_unit && b_unit && s.o_cs == 1)
      *path = shape_gemm_path(d, s.m, s.n, s.k, s.a_cs != 1, s.b_cs != 1);
  }
  if (*path == kGemmTiled && *variant < 0) *path = kGemmSimple;
}

// float32, float64, int32, int64. a is [B..., M, K], b [B..., K, N], out
// [B..., M, N], all with any strides; scalars[0] = alpha (1), scalars[1] =
// beta (0).
vnn_status run_matmul(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what) {
  const vnn_tensor_desc &out = op.outputs[0], &a = op.inputs[0], &b = op.inputs[1];
  const int nd = a.ndim;
  if (nd < 2 || b.ndim != nd || out.ndim != nd || a.sizes[nd - 1] != b.sizes[nd - 2] ||
      out.sizes[nd - 2] != a.sizes[nd - 2] || out.sizes[nd - 1] != b.sizes[nd - 1])
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": operand shapes do not agree");
  if (!compute_dtype(out.dtype) || a.dtype != out.dtype || b.dtype != out.dtype)
    return fail(VNN_STATUS_UNSUPPORTED, what, ": dtype ", vnn::detail::abi_dtype(out.dtype), " (inputs ",
                vnn::detail::abi_dtype(a.dtype), ", ", vnn::detail::abi_dtype(b.dtype),
                ") is not supported by the opencl backend");
  double alpha = op.num_scalars > 0 ? op.scalars[0] : 1.0, beta = op.num_scalars > 1 ? op.scalars[1] : 0.0;
  MatmulShape s;
  s.m = a.sizes[nd - 2];
  s.k = a.sizes[nd - 1];
  s.n = b.sizes[nd - 1];
  s.a_rs = a.strides[nd - 2], s.a_cs = a.strides[nd - 1];
  s.b_rs = b.strides[nd - 2], s.b_cs = b.strides[nd - 1];
  s.o_rs = out.strides[nd - 2], s.o_cs = out.strides[nd - 1];
  vnn_tensor_desc ob = leading(out, nd - 2), ab = leading(a, nd - 2), bb = leading(b, nd - 2);
  s.batch = make_layout(ob, {&ob, &ab, &bb});
  if (s.batch.n == 0 || s.m == 0 || s.n == 0) return VNN_STATUS_OK;

  int path = 0, variant = -1;
  choose_gemm_path(d, s, out.dtype, &path, &variant);
#ifdef VNN_OPENCL_HAVE_CLBLAST
  if (path == kGemmClblast && (out.dtype == VNN_FLOAT32 || out.dtype == VNN_FLOAT64)) {
    std::string why;
    bool done = false;
    try {
      done = out.dtype == VNN_FLOAT32 ? try_clblast<float>(q, op, alpha, beta, &why)
                                      : try_clblast<double>(q, op, alpha, beta, &why);
    } catch (const std::exception& e) {
      return fail(VNN_STATUS_DEVICE_ERROR, what, ": CLBlast failed part-way: ", e.what());
    }
    if (done) {
      d.last_gemm.store(1, std::memory_order_relaxed);
      return VNN_STATUS_OK;
    }
  }
#endif
  if (path == kGemmClblast) path = variant >= 0 ? kGemmTiled : kGemmSimple;  // CLBlast absent or not applicable
  if (path == kGemmTiled || path == kGemmLongk || path == kGemmWiden) {
    GemmProblem p;
    p.out = mem(out), p.a = mem(a), p.b = mem(b);
    p.out_off = out.offset, p.a_off = a.offset, p.b_off = b.offset;
    p.dtype = out.dtype, p.alpha = alpha, p.beta = beta;
    p.m = s.m, p.n = s.n, p.k = s.k;
    p.a_rs = s.a_rs, p.a_cs = s.a_cs, p.b_rs = s.b_rs, p.b_cs = s.b_cs, p.o_rs = s.o_rs, p.o_cs = s.o_cs;
    p.batch = s.batch.n, p.batch_ndim = s.batch.ndim, p.batch_sizes = s.batch.sizes;
    p.o_bs = s.batch.strides[0], p.a_bs = s.batch.strides[1], p.b_bs = s.batch.strides[2];
    if (path == kGemmLongk || path == kGemmWiden) {
      vnn_status st = path == kGemmLongk ? run_gemm_longk(d, q, p, what) : run_gemm_widen(d, q, p, what);
      if (st == VNN_STATUS_OK) d.last_gemm.store(path == kGemmLongk ? 4 : 5, std::memory_order_relaxed);
      // A device too small for it (VNN_STATUS_UNSUPPORTED) takes vnn_gemm,
      // else the simple kernel.
      if (st != VNN_STATUS_UNSUPPORTED) return st;
    }
    if (variant >= 0) {
      vnn_status st = run_gemm_variant(d, q, p, variant, what);
      if (st == VNN_STATUS_OK) d.last_gemm.store(2, std::memory_order_relaxed);
      return st;
    }
  }

  size_t ts = d.max_work_group_size >= 256 ? 16 : 8;
  std::string defs = std::string("-DT=") + dtype_info(out.dtype)->storage;
  Kernel* kern = nullptr;
  if (vnn_status st = get_kernel(d, "matmul", "vnn_matmul", defs + " -DTS=" + std::to_string(ts), &kern)) return st;
  if (kern->work_group_size < ts * ts) {
    ts = kern->work_group_size >= 64 ? 8 : 4;
    if (vnn_status st = get_kernel(d, "matmul", "vnn_matmul", defs + " -DTS=" + std::to_string(ts), &kern))
      return st;
  }
  size_t local[3] = {ts, ts, 1};
  size_t global[3] = {size_t((s.n + int64_t(ts) - 1) / int64_t(ts)) * ts,
                      size_t((s.m + int64_t(ts) - 1) / int64_t(ts)) * ts, size_t(s.batch.n)};
  cl_mem mo = mem(out), ma = mem(a), mb = mem(b);
  cl_long oo = out.offset, ao = a.offset, bo = b.offset, m = s.m, n = s.n, k = s.k;
  cl_long ars = s.a_rs, acs = s.a_cs, brs = s.b_rs, bcs = s.b_cs, ors = s.o_rs, ocs = s.o_cs;
  cl_int use_beta = beta != 0.0;
  const Scalar as(alpha), bs(beta);
  Arg aa = as.as(out.dtype), ba = bs.as(out.dtype);
  vnn_status st = enqueue(*kern, q, 3, global, local, what,
                          {arg(mo), arg(oo), arg(ma), arg(ao), arg(mb), arg(bo), aa, ba, arg(use_beta), arg(m),
                           arg(n), arg(k), arg(ars), arg(acs), arg(brs), arg(bcs), arg(ors), arg(ocs),
                           arg(s.batch.ndim), arg(s.batch.sizes), arg(s.batch.strides[1]), arg(s.batch.strides[2]),
                           arg(s.batch.strides[0])});
  if (st == VNN_STATUS_OK) d.last_gemm.store(3, std::memory_order_relaxed);
  return st;
}

// Text naming the op for error messages: "opencl:0: REDUCE sum on float32".
std::string describe(const Device& d, const vnn_op& op) {
  // The ABI's names (vnn/op_names.h), as the Kokkos plugins spell them.
  std::string s = op_label(d, op.kind);
  int64_t fn = op.num_ints > 0 ? op.ints[0] : -1;
  switch (op.kind) {
    case VNN_OP_BINARY:
      s += " " + fn_name(vnn_binary_names, fn);
      break;
    case VNN_OP_UNARY:
      s += " " + fn_name(vnn_unary_names, fn);
      break;
    case VNN_OP_REDUCE:
      s += " " + fn_name(vnn_reduce_names, fn);
      break;
    case VNN_OP_SOFTMAX:
      s += fn == 1 ? " log" : "";
      break;
    case VNN_OP_RANDOM:
      s += " " + fn_name(vnn_random_names, fn);
      break;
    default:
      break;
  }
  const vnn_tensor_desc* t = op.num_outputs > 0 ? op.outputs : nullptr;
  const DtypeInfo* info = t ? dtype_info(t->dtype) : nullptr;
  if ((op.kind == VNN_OP_COPY || op.kind == VNN_OP_REDUCE) && op.num_inputs > 0 && dtype_info(op.inputs[0].dtype))
    s += std::string(" from ") + dtype_info(op.inputs[0].dtype)->name + " to";
  if (info) s += std::string(" on ") + info->name;
  return s;
}

// Structural checks only (the core validated shapes and dtypes); they keep
// a malformed request from reading out of bounds.
vnn_status check(const Device& d, const vnn_op& op, const std::string& what) {
  int need_in = (op.kind == VNN_OP_FILL || op.kind == VNN_OP_RANDOM) ? 0 : op.kind == VNN_OP_MATMUL ? 2 : 1;
  if (op.num_outputs < 1 || !op.outputs || op.num_inputs < need_in || (need_in && !op.inputs))
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": needs ", need_in, " input(s) and 1 output");
  if (op.kind == VNN_OP_REDUCE && (op.num_ints < 2 || !op.ints))
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": needs ints[0] (the function) and ints[1] (k)");
  if (op.kind == VNN_OP_REDUCE && (op.ints[0] < 0 || op.ints[0] > VNN_REDUCE_ARGMIN))
    return fail(VNN_STATUS_UNSUPPORTED, what, " is not supported by the opencl backend");
  for (int i = 0; i < need_in + 1; ++i)
    if (vnn_status st = check_operand(d, i < need_in ? op.inputs[i] : op.outputs[0], what)) return st;
  return VNN_STATUS_OK;
}

}  // namespace

vnn_status run(int32_t device, const vnn_op* op) {
  Device* d = nullptr;
  if (vnn_status st = ready_device(device, &d)) return st;
  if (!op || op->struct_size < sizeof(vnn_op))
    return fail(VNN_STATUS_INVALID_ARGUMENT, d->label, ": run: op is NULL or its struct_size is too small");
  // Every descriptor re-checked before a kernel sees it; the size of a
  // buffer is its cl_mem's CL_MEM_SIZE.
  std::string why;
  if (!vnn::kernels::check_op_descs(*op, [](const void* h) -> int64_t {
        size_t size = 0;
        if (!h || clGetMemObjectInfo(static_cast<cl_mem>(const_cast<void*>(h)), CL_MEM_SIZE, sizeof size, &size,
                                     nullptr) != CL_SUCCESS)
          return -1;
        return static_cast<int64_t>(size);
      }, &why))
    return fail(VNN_STATUS_INVALID_ARGUMENT, d->label, ": ", vnn::detail::abi_op_kind(op->kind), ": ", why);
  if (is_indexing_kind(op->kind)) return run_indexing(*d, queue_or_default(*d, op->queue), *op);
  if (is_optimizer_kind(op->kind)) return run_optimizer(*d, queue_or_default(*d, op->queue), *op);
  if (is_rnn_cell_kind(op->kind)) return run_rnn_cell(*d, queue_or_default(*d, op->queue), *op);
  if (is_grid_sample_kind(op->kind)) return run_grid_sample(*d, queue_or_default(*d, op->queue), *op);
  if (op->kind == VNN_OP_SCAN) return run_scan(*d, queue_or_default(*d, op->queue), *op);
  if (is_sort_kind(op->kind)) return run_sort(*d, queue_or_default(*d, op->queue), *op);
  if (is_elementwise_kind(op->kind)) return run_elementwise_op(*d, queue_or_default(*d, op->queue), *op);
  std::string what = describe(*d, *op);
  if (is_conv_family(op->kind)) return run_conv_family(*d, queue_or_default(*d, op->queue), *op, what);
  if (is_conv_whole_kind(op->kind)) return run_conv_whole(*d, queue_or_default(*d, op->queue), *op, what);
  if (is_attention_kind(op->kind)) return run_attention(*d, queue_or_default(*d, op->queue), *op, what);
  if (op->kind < VNN_OP_FILL || op->kind > VNN_OP_RANDOM)
    return fail(VNN_STATUS_UNSUPPORTED, what, " is not supported by the opencl backend");
  if (vnn_status st = check(*d, *op, what)) return st;
  cl_command_queue q = queue_or_default(*d, op->queue);
  switch (op->kind) {
    case VNN_OP_FILL: return run_fill(*d, q, *op, what);
    case VNN_OP_COPY: return run_copy(*d, q, *op, what);
    case VNN_OP_REDUCE: return run_reduce(*d, q, *op, what);
    case VNN_OP_MATMUL: return run_matmul(*d, q, *op, what);
    case VNN_OP_SOFTMAX: return run_softmax(*d, q, *op, what);
    case VNN_OP_RANDOM: return run_random(*d, q, *op, what);
    default:
      return fail(VNN_STATUS_UNSUPPORTED, what, " is not supported by the opencl backend");
  }
}

}  // namespace vnn_opencl

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Host side of SCAN (kernels/scan.cl): one work item per row when rows are
// short or many enough to fill the device, otherwise the blocked scan
// (block totals, carries per row, blocks scanned from their carries), so a
// single long row keeps every compute unit busy.
#include "ops_scan.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "errors.hpp"
#include "launch.hpp"
#include "op_common.hpp"
#include "program_cache.hpp"
#include "scratch.hpp"
#include "vnn/checked_size.h"
#include "vnn/op_names.h"

namespace vnn_opencl {
namespace {

bool scan_dtype(int32_t dt) { return dt == VNN_FLOAT32 || dt == VNN_FLOAT64 || dt == VNN_INT32 || dt == VNN_INT64; }

// in0's dtype may differ from out0's only as the ABI allows: SUM / PROD of
// bool, uint8 or int32 into int64.
bool dtypes_ok(int64_t fn, int32_t in, int32_t out) {
  if (!scan_dtype(out)) return false;
  if (fn == VNN_SCAN_LOGSUMEXP && out != VNN_FLOAT32 && out != VNN_FLOAT64) return false;
  if (in == out) return true;
  return (fn == VNN_SCAN_SUM || fn == VNN_SCAN_PROD) && out == VNN_INT64 &&
         (in == VNN_BOOL || in == VNN_UINT8 || in == VNN_INT32);
}

bool same_sizes(const vnn_tensor_desc& a, const vnn_tensor_desc& b) {
  if (a.ndim != b.ndim) return false;
  for (int i = 0; i < a.ndim; ++i)
    if (a.sizes[i] != b.sizes[i]) return false;
  return true;
}

// The first `nd` dims of t as a descriptor of their own.
vnn_tensor_desc leading_dims(const vnn_tensor_desc& t, int nd) {
  vnn_tensor_desc d = t;
  d.ndim = nd;
  return d;
}

// The scans one program holds (see Siblings): every function for a
// floating output, all but LOGSUMEXP for an integer one. Built once.
const Siblings& scan_siblings(int64_t fn, bool floating) {
  static const auto make = [](int64_t count) {
    std::vector<Siblings> by_fn(static_cast<size_t>(count), Siblings{});
    for (int64_t f = 0; f < count; ++f) {
      by_fn[size_t(f)].index = size_t(f);
      for (int64_t g = 0; g < count; ++g) by_fn[size_t(f)].variants.push_back("-DFN=" + std::to_string(g));
    }
    return by_fn;
  };
  static const std::vector<Siblings> floats = make(VNN_SCAN_COUNT_), ints = make(VNN_SCAN_LOGSUMEXP);
  return floating ? floats[size_t(fn)] : ints[size_t(fn)];
}

// Block totals and their indices for `count` blocks (8 bytes each: the
// widest compute type), from the queue's scratch pool.
vnn_status carry_scratch(const Device& d, cl_command_queue q, const std::string& what, int64_t rows,
                         int64_t blocks, Scratch* values, Scratch* indices) {
  int64_t count = 0, bytes = 0;
  if (!vnn::checked::mul(rows, blocks, &count) || !vnn::checked::bytes(count, 8, &bytes))
    return fail(VNN_STATUS_OUT_OF_MEMORY, what, ": ", rows, " x ", blocks, " block totals overflow");
  if (vnn_status st = Scratch::make(d, q, size_t(bytes), what + " (block totals)", values)) return st;
  return Scratch::make(d, q, size_t(bytes), what + " (block indices)", indices);
}

// The CPU devices' scan: each row cut into `chunks` pieces, one work item
// per piece (kernels/scan.cl vnn_scan_chunk_totals / vnn_scan_chunks).
vnn_status scan_chunks(Device& d, cl_command_queue q, const std::string& what, const std::string& defs,
                       const Siblings& fns, std::vector<Arg> args, cl_long rows, cl_long n, int64_t chunks) {
  Scratch values, indices;
  if (vnn_status st = carry_scratch(d, q, what, rows, chunks, &values, &indices)) return st;
  Kernel *kt = nullptr, *kc = nullptr, *ks = nullptr;
  if (vnn_status st = get_kernel(d, "scan", "vnn_scan_chunk_totals", defs, fns, &kt)) return st;
  if (vnn_status st = get_kernel(d, "scan", "vnn_scan_carries", defs, fns, &kc)) return st;
  if (vnn_status st = get_kernel(d, "scan", "vnn_scan_chunks", defs, fns, &ks)) return st;
  cl_mem tv = values.mem(), ti = indices.mem();
  const cl_long nchunks = chunks, chunk = (n + chunks - 1) / chunks;
  args.insert(args.end(), {arg(nchunks), arg(chunk), arg(tv), arg(ti)});
  const int64_t items = rows * chunks;
  if (vnn_status st = launch(d, *kt, q, items, what, args)) return st;
  if (vnn_status st = launch(d, *kc, q, rows, what, {arg(rows), arg(nchunks), arg(tv), arg(ti)})) return st;
  return launch(d, *ks, q, items, what, args);
}

// Largest power of two <= min(a, cap).
size_t pow2_at_most(size_t a, size_t cap) {
  size_t p = 1;
  while (p * 2 <= std::min(a, cap)) p *= 2;
  return p;
}

}  // namespace

vnn_status run_scan(Device& d, cl_command_queue q, const vnn_op& op) {
  std::string what = op_label(d, op.kind);
  if (op.num_inputs < 1 || !op.inputs || op.num_outputs < 1 || !op.outputs || op.num_ints < 1 || !op.ints)
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": needs in0, out0 and ints[0] (the function)");
  const int64_t fn = op.ints[0];
  const char* fn_name = VNN_NAME(vnn_scan_names, fn);
  if (!fn_name) return fail(VNN_STATUS_UNSUPPORTED, what, ": function ", fn, " is not a vnn_scan_fn");
  what += std::string(" ") + fn_name;
  const bool indexed = fn == VNN_SCAN_MAX || fn == VNN_SCAN_MIN;
  const vnn_tensor_desc &in = op.inputs[0], &out = op.outputs[0];
  if (indexed && op.num_outputs < 2)
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": needs out1 for the int64 indices");
  const vnn_tensor_desc& index = indexed ? op.outputs[1] : out;
  if (!valid_desc(in) || !valid_desc(out) || !same_sizes(in, out) ||
      (indexed && (!valid_desc(index) || !same_sizes(in, index) || index.dtype != VNN_INT64)))
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": out0 (and out1, int64) must have in0's sizes");
  if (!dtypes_ok(fn, in.dtype, out.dtype))
    return fail(VNN_STATUS_UNSUPPORTED, what, ": input ", vnn::detail::abi_dtype(in.dtype), " to output ",
                vnn::detail::abi_dtype(out.dtype), " is not supported by the opencl backend");
  for (const vnn_tensor_desc* t : {&in, &out})
    if (vnn_status st = check_operand(d, *t, what)) return st;

  const int nd = in.ndim;
  const cl_long n = nd > 0 ? in.sizes[nd - 1] : 1;
  const int lead_nd = nd > 0 ? nd - 1 : 0;
  vnn_tensor_desc lo = leading_dims(out, lead_nd), li = leading_dims(index, lead_nd), lx = leading_dims(in, lead_nd);
  Layout lead = make_layout(lo, {&lo, &li, &lx});
  if (lead.n == 0 || n == 0) return VNN_STATUS_OK;
  cl_mem mo = mem(out), mi = mem(index), mx = mem(in);
  cl_long oo = out.offset, io = index.offset, xo = in.offset, rows = lead.n;
  cl_long os = nd > 0 ? out.strides[nd - 1] : 1, is = nd > 0 ? index.strides[nd - 1] : 1;
  cl_long xs = nd > 0 ? in.strides[nd - 1] : 1;
  std::vector<Arg> args = {arg(mo), arg(oo), arg(mi), arg(io), arg(mx), arg(xo), arg(rows), arg(n),
                           arg(os), arg(is), arg(xs), arg(lead.ndim), arg(lead.sizes), arg(lead.strides[0]),
                           arg(lead.strides[1]), arg(lead.strides[2])};

  const int per = 8;
  std::string defs = std::string("-DTI=") + dtype_info(in.dtype)->storage + " -DDTI=" + std::to_string(in.dtype) +
                     " -DTO=" + dtype_info(out.dtype)->storage + " -DDT=" + std::to_string(out.dtype) +
                     " -DPER=" + std::to_string(per);
  const Siblings& fns = scan_siblings(fn, out.dtype == VNN_FLOAT32 || out.dtype == VNN_FLOAT64);
  size_t wg = pow2_at_most(d.max_work_group_size, 256);
  defs += " -DWG=" + std::to_string(wg);
  Kernel* k = nullptr;
  if (d.one_per_item) {
    // A CPU device: a row per work item while rows fill its cores, else
    // chunks of a row per work item (the Kokkos plugins' blocked scan).
    const int64_t target = 4 * std::max<int64_t>(2, d.compute_units), min_chunk = 16384;
    const int64_t chunks = rows >= target || n < 2 * min_chunk
                               ? 1
                               : std::min<int64_t>((target + rows - 1) / rows, n / min_chunk);
    if (chunks > 1) return scan_chunks(d, q, what, defs, fns, args, rows, n, chunks);
  }
  // A GPU: a row per work item for short rows or rows enough to fill it.
  const int64_t want = 4 * std::max<int64_t>(2, d.compute_units) * 64;
  if (d.one_per_item || n <= 128 || rows >= want) {
    if (vnn_status st = get_kernel(d, "scan", "vnn_scan_rows", defs, fns, &k)) return st;
    return launch(d, *k, q, rows, what, args);
  }
  if (vnn_status st = get_kernel(d, "scan", "vnn_scan_blocks", defs, fns, &k)) return st;
  std::string wg_defs = defs;
  if (k->work_group_size < wg) {  // the compiled kernel takes fewer items
    const size_t fewer = pow2_at_most(k->work_group_size, wg);
    wg_defs = defs.substr(0, defs.rfind(" -DWG=")) + " -DWG=" + std::to_string(fewer);
    wg = fewer;
    if (vnn_status st = get_kernel(d, "scan", "vnn_scan_blocks", wg_defs, fns, &k)) return st;
  }
  const int64_t block = int64_t(wg) * per;
  const cl_long nblocks = (n + block - 1) / block;
  Scratch values, indices;
  if (vnn_status st = carry_scratch(d, q, what, rows, nblocks, &values, &indices)) return st;
  const int64_t groups = rows * nblocks;  // checked by carry_scratch
  cl_mem tv = values.mem(), ti = indices.mem();
  const cl_int has_carry = nblocks > 1;
  const size_t global = size_t(groups) * wg;
  if (has_carry) {
    Kernel *kt = nullptr, *kc = nullptr;
    if (vnn_status st = get_kernel(d, "scan", "vnn_scan_totals", wg_defs, fns, &kt)) return st;
    if (vnn_status st = get_kernel(d, "scan", "vnn_scan_carries", wg_defs, fns, &kc)) return st;
    if (kt->work_group_size < wg)
      return fail(VNN_STATUS_UNSUPPORTED, what, ": the block totals kernel runs at most ", kt->work_group_size,
                  " items per group, fewer than the scan's ", wg);
    std::vector<Arg> totals = args;
    totals.insert(totals.end(), {arg(nblocks), arg(tv), arg(ti)});
    if (vnn_status st = enqueue_nd(*kt, q, 1, &global, &wg, what, totals.data(), totals.size())) return st;
    if (vnn_status st = launch(d, *kc, q, rows, what, {arg(rows), arg(nblocks), arg(tv), arg(ti)})) return st;
  }
  args.insert(args.end(), {arg(nblocks), arg(tv), arg(ti), arg(has_carry)});
  return enqueue_nd(*k, q, 1, &global, &wg, what, args.data(), args.size());
}

}  // namespace vnn_opencl

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Host side of kernels/sort.cl: the sort's passes (blocks, log2(N / block)
// merges, finish) over two scratch buffers of pairs, and the searches.
#include "ops_sort.hpp"

#include <string>
#include <utility>

#include "common/op_params.hpp"
#include "dtype.hpp"
#include "errors.hpp"
#include "launch.hpp"
#include "op_common.hpp"
#include "program_cache.hpp"
#include "scratch.hpp"
#include "vnn/checked_size.h"

namespace vnn_opencl {
namespace {

// Pairs sorted by insertion before the first merge (a power of two, as
// backends/kokkos/kernels/sort.hpp's kBlock).
constexpr cl_long kBlock = 32;

bool sortable(int32_t dtype) {
  return dtype == VNN_FLOAT32 || dtype == VNN_FLOAT64 || dtype == VNN_INT32 || dtype == VNN_INT64 ||
         dtype == VNN_UINT8 || dtype == VNN_BOOL;
}

std::string type_defines(int32_t dtype, bool wide) {
  return std::string("-DT=") + dtype_info(dtype)->storage + " -DDT=" + std::to_string(dtype) +
         " -DWIDE=" + (wide ? "1" : "0");
}

// Rows at least this long sort by radix on CPU devices (radix_passes);
// rows from kRowRadix, when there are enough to fill the compute units, by
// radix one row per item (vnn_sort_radix_rows).
constexpr cl_long kRadixRow = 65536;
constexpr cl_long kRowRadix = 256;

// The radix passes of kernels/sort.cl over rows of pairs in *src (every
// pass runs: an even count, so the result is back in *src).
vnn_status radix_passes(Device& d, cl_command_queue q, const std::string& defs, cl_long rows, cl_long n,
                        int key_bits, cl_mem* src, cl_mem* dst, const std::string& what) {
  Kernel *count_k = nullptr, *offsets_k = nullptr, *scatter_k = nullptr;
  if (vnn_status st = get_kernel(d, "sort", "vnn_sort_radix_count", defs, &count_k)) return st;
  if (vnn_status st = get_kernel(d, "sort", "vnn_sort_radix_offsets", defs, &offsets_k)) return st;
  if (vnn_status st = get_kernel(d, "sort", "vnn_sort_radix_scatter", defs, &scatter_k)) return st;
  cl_long chunks = 4 * cl_long(d.compute_units > 0 ? d.compute_units : 1);
  int64_t slots = 0, bytes = 0;
  if (!vnn::checked::mul(rows, chunks * 256, &slots) || !vnn::checked::bytes(slots, 8, &bytes))
    return fail(VNN_STATUS_OUT_OF_MEMORY, what, ": radix counts of ", rows, " rows overflow");
  Scratch counts;
  if (vnn_status st = Scratch::make(d, q, size_t(bytes), what + " (radix counts)", &counts)) return st;
  cl_mem cm = counts.mem();
  for (cl_int shift = 0; shift < key_bits; shift += 8) {
    if (vnn_status st = launch(d, *count_k, q, rows * chunks, what,
                               {arg(*src), arg(cm), arg(rows), arg(n), arg(chunks), arg(shift)}))
      return st;
    if (vnn_status st = launch(d, *offsets_k, q, rows, what, {arg(cm), arg(rows), arg(chunks)})) return st;
    if (vnn_status st = launch(d, *scatter_k, q, rows * chunks, what,
                               {arg(*src), arg(*dst), arg(cm), arg(rows), arg(n), arg(chunks), arg(shift)}))
      return st;
    std::swap(*src, *dst);
  }
  return VNN_STATUS_OK;
}

vnn_status run_sort_rows(Device& d, cl_command_queue q, const vnn_op& op, const vnn::kernels::SortRows& s,
                         const std::string& what) {
  const vnn_tensor_desc &in = op.inputs[0], &vals = op.outputs[0], &pos = op.outputs[1];
  const bool key64 = dtype_info(in.dtype)->size == 8;
  const bool wide = key64 || s.n > cl_long(0xffffffffu);
  int64_t total = 0, bytes = 0;
  if (!vnn::checked::mul(s.rows, s.n, &total) || !vnn::checked::bytes(total, wide ? 16 : 8, &bytes))
    return fail(VNN_STATUS_OUT_OF_MEMORY, what, ": ", s.rows, " rows of ", s.n, " pairs overflow");
  if (total == 0) return VNN_STATUS_OK;
  const std::string defs = type_defines(in.dtype, wide);
  Kernel *blocks_k = nullptr, *merge_k = nullptr, *finish_k = nullptr;
  if (vnn_status st = get_kernel(d, "sort", "vnn_sort_blocks", defs, &blocks_k)) return st;
  if (vnn_status st = get_kernel(d, "sort", "vnn_sort_merge", defs, &merge_k)) return st;
  if (vnn_status st = get_kernel(d, "sort", "vnn_sort_finish", defs, &finish_k)) return st;
  Scratch a, b;
  if (vnn_status st = Scratch::make(d, q, size_t(bytes), what + " (pairs)", &a)) return st;
  if (s.n > kBlock)
    if (vnn_status st = Scratch::make(d, q, size_t(bytes), what + " (merged pairs)", &b)) return st;
  cl_mem src = a.mem(), dst = b.mem(), in_m = mem(in);
  const bool gpu = (d.cl_type & CL_DEVICE_TYPE_GPU) != 0;
  // CPU devices sort long rows by radix (from the pairs in position order:
  // blocks of 1), GPUs by the merges below.
  const bool long_radix = !gpu && s.n >= kRadixRow;
  const bool row_radix = !gpu && !long_radix && s.n >= kRowRadix &&
                         s.rows >= 2 * cl_long(d.compute_units > 0 ? d.compute_units : 1);
  const bool radix = long_radix || row_radix;
  cl_long rows = s.rows, n = s.n, block = radix ? 1 : kBlock, in_off = in.offset, count = total;
  cl_int descending = s.descending ? 1 : 0;
  if (vnn_status st = launch(d, *blocks_k, q, rows * ((n + block - 1) / block), what,
                             {arg(src), arg(in_m), arg(in_off), arg(rows), arg(n), arg(block), arg(descending)}))
    return st;
  if (long_radix)
    if (vnn_status st = radix_passes(d, q, defs, rows, n, key64 ? 64 : 32, &src, &dst, what)) return st;
  if (row_radix) {
    Kernel* rows_k = nullptr;
    if (vnn_status st = get_kernel(d, "sort", "vnn_sort_radix_rows", defs, &rows_k)) return st;
    cl_int key_bits = key64 ? 64 : 32;
    if (vnn_status st = launch(d, *rows_k, q, rows, what, {arg(src), arg(dst), arg(rows), arg(n), arg(key_bits)}))
      return st;
  }
  // Outputs per merge item: long sequential runs on CPU devices, short ones
  // on GPUs (a power of two, so an item never spans two merges).
  const cl_long chunk = gpu ? 256 : 4096;
  for (cl_long w = radix ? n : kBlock; w < n; w *= 2) {
    cl_long span = chunk < 2 * w ? chunk : 2 * w;
    if (vnn_status st = launch(d, *merge_k, q, rows * ((n + span - 1) / span), what,
                               {arg(src), arg(dst), arg(rows), arg(n), arg(w), arg(span)}))
      return st;
    std::swap(src, dst);
  }
  cl_mem v_m = mem(vals), p_m = mem(pos);
  cl_long v_off = vals.offset, p_off = pos.offset;
  return launch(d, *finish_k, q, total, what,
                {arg(src), arg(in_m), arg(in_off), arg(v_m), arg(v_off), arg(p_m), arg(p_off), arg(count), arg(n),
                 arg(descending)});
}

vnn_status run_search(Device& d, cl_command_queue q, const vnn_op& op, const vnn::kernels::SearchRows& s,
                      const std::string& what) {
  const vnn_tensor_desc &seq = op.inputs[0], &v = op.inputs[1], &out = op.outputs[0];
  int64_t total = 0;
  if (!vnn::checked::mul(s.rows, s.m, &total) || total == 0) return VNN_STATUS_OK;
  const std::string defs =
      type_defines(seq.dtype, false) + " -DOUT_T=" + (out.dtype == VNN_INT64 ? "long" : "int");
  Kernel* k = nullptr;
  if (vnn_status st = get_kernel(d, "sort", "vnn_searchsorted", defs, &k)) return st;
  cl_mem s_m = mem(seq), v_m = mem(v), o_m = mem(out);
  cl_long s_off = seq.offset, seq_rows = s.seq_rows, n = s.n, v_off = v.offset, o_off = out.offset, rows = s.rows,
          m = s.m;
  cl_int right = s.right ? 1 : 0;
  return launch(d, *k, q, total, what,
                {arg(s_m), arg(s_off), arg(seq_rows), arg(n), arg(v_m), arg(v_off), arg(o_m), arg(o_off), arg(rows),
                 arg(m), arg(right)});
}

}  // namespace

vnn_status run_sort(Device& d, cl_command_queue q, const vnn_op& op) {
  std::string what = op_label(d, op.kind);
  const char* why = nullptr;
  if (op.num_inputs < 1 || !op.inputs) return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": needs in0");
  const int32_t dtype = op.inputs[0].dtype;
  if (!sortable(dtype))
    return fail(VNN_STATUS_UNSUPPORTED, what, ": ", vnn::detail::abi_dtype(dtype),
                " is not supported (float32, float64, int32, int64, uint8, bool are)");
  what += std::string(" on ") + dtype_info(dtype)->name;
  for (int32_t i = 0; i < op.num_inputs; ++i)
    if (vnn_status st = check_operand(d, op.inputs[i], what)) return st;
  if (op.kind == VNN_OP_SORT) {
    vnn::kernels::SortRows s;
    if (!vnn::kernels::decode_sort(op, &s, &why)) return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": ", why);
    return run_sort_rows(d, q, op, s, what);
  }
  vnn::kernels::SearchRows s;
  if (!vnn::kernels::decode_searchsorted(op, &s, &why)) return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": ", why);
  return run_search(d, q, op, s, what);
}

}  // namespace vnn_opencl

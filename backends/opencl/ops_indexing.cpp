// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Host side of the indexing kernels: builds the walk (iteration shape,
// direct / indexed / index strides, innermost first) that indexing.cl reads.
#include "ops_indexing.hpp"

#include <algorithm>
#include <initializer_list>
#include <mutex>

#include "dtype.hpp"
#include "errors.hpp"
#include "launch.hpp"
#include "op_common.hpp"
#include "vnn/checked_size.h"
#include "program_cache.hpp"

namespace vnn_opencl {
namespace {

const char* kind_name(int32_t kind) {
  switch (kind) {
    case VNN_OP_INDEX_SELECT: return "INDEX_SELECT";
    case VNN_OP_GATHER: return "GATHER";
    case VNN_OP_SCATTER: return "SCATTER";
    default: return "INDEX_ADD";
  }
}

}  // namespace

vnn_status run_indexing(Device& d, cl_command_queue q, const vnn_op& op) {
  const int32_t kind = op.kind;
  const vnn_tensor_desc* out = op.num_outputs > 0 ? op.outputs : nullptr;
  std::string what = d.label + ": " + kind_name(kind);
  if (out && dtype_info(out->dtype)) what += std::string(" on ") + dtype_info(out->dtype)->name;
  const int need = kind == VNN_OP_SCATTER ? 3 : 2;
  if (!out || op.num_inputs < need || !op.inputs || op.num_ints < 1 || !op.ints)
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": needs ", need, " inputs, 1 output and ints[0] (dim)");
  const vnn_tensor_desc& index = op.inputs[1];
  const vnn_tensor_desc& src = op.inputs[kind == VNN_OP_SCATTER ? 2 : 0];
  const int64_t dim = op.ints[0];
  const bool full = kind == VNN_OP_GATHER || kind == VNN_OP_SCATTER;
  if (!valid_desc(*out) || !valid_desc(index) || !valid_desc(src) || index.dtype != VNN_INT64 ||
      src.dtype != out->dtype || src.ndim != out->ndim || dim < 0 || dim >= out->ndim ||
      (full && index.ndim != out->ndim) || (!full && index.ndim > 1))
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": malformed request (dtypes, ranks or dim ", dim, ")");
  const bool scatter = kind == VNN_OP_SCATTER || kind == VNN_OP_INDEX_ADD;
  int64_t mode = VNN_SCATTER_SET;
  if (kind == VNN_OP_INDEX_ADD) mode = VNN_SCATTER_ADD;
  else if (kind == VNN_OP_SCATTER && op.num_ints > 1) mode = op.ints[1];
  if (mode < 0 || mode >= VNN_SCATTER_MODE_COUNT_)
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": unknown scatter mode ", mode);
  const bool add = mode == VNN_SCATTER_ADD;
  const bool combine = mode == VNN_SCATTER_MUL || mode == VNN_SCATTER_MAX || mode == VNN_SCATTER_MIN;
  const vnn_tensor_desc& iter = kind == VNN_OP_SCATTER ? index : kind == VNN_OP_INDEX_ADD ? src : *out;
  const vnn_tensor_desc& direct = scatter ? src : *out;
  const vnn_tensor_desc& indexed = scatter ? *out : src;
  const int64_t n = numel(iter);
  if (n == 0) return VNN_STATUS_OK;

  const DtypeInfo* info = dtype_info(out->dtype);
  std::string defs;
  if (add || combine) {
    const int32_t dt = out->dtype;
    if (dt != VNN_FLOAT32 && dt != VNN_FLOAT64 && dt != VNN_INT32 && dt != VNN_INT64)
      return fail(VNN_STATUS_UNSUPPORTED, what, ": adding and combining scatters take float32, float64, int32 or int64");
    if (dt == VNN_FLOAT64 && !d.fp64) return fail(VNN_STATUS_UNSUPPORTED, what, ": device lacks cl_khr_fp64");
    if ((dt == VNN_FLOAT64 || dt == VNN_INT64) && !d.has_extension("cl_khr_int64_base_atomics"))
      return fail(VNN_STATUS_UNSUPPORTED, what, ": device lacks cl_khr_int64_base_atomics");
    defs = std::string("-DMODE=") + (add ? "2" : "3") + " -DT=" + info->storage + " -DDT=" + std::to_string(dt);
    if (combine) defs += " -DCOMBINE=" + std::to_string(mode);
  } else {
    // Moves without arithmetic copy bits, so every dtype shares one kernel
    // per element size.
    defs = std::string("-DMODE=") + (scatter ? "1" : "0") + " -DT=" + info->bits_storage;
  }

  // Innermost first, as vnn_unravel expects. A dim other than `dim` that
  // continues the one inside it in all three tensors merges into it (a
  // batch of [1, 28, 28] images is one run of 784): fewer divisions per
  // element.
  cl_int ndim = 0, dim_pos = -1;
  cl_long8 sizes{}, ds{}, xs{}, ks{};
  bool prev_is_dim = true;
  for (int k = iter.ndim - 1; k >= 0; --k) {
    const int64_t size = iter.sizes[k];
    const int64_t d_s = direct.strides[k], x_s = k == dim ? 0 : indexed.strides[k];
    const int64_t k_s = full ? index.strides[k] : (k == dim && index.ndim == 1 ? index.strides[0] : 0);
    if (k != dim && size == 1) continue;  // moves nothing
    if (k != dim && !prev_is_dim) {
      const int r = ndim - 1;
      int64_t want_d = 0, want_x = 0, want_k = 0;
      if (vnn::checked::mul(ds.s[r], sizes.s[r], &want_d) && vnn::checked::mul(xs.s[r], sizes.s[r], &want_x) &&
          vnn::checked::mul(ks.s[r], sizes.s[r], &want_k) && d_s == want_d && x_s == want_x && k_s == want_k) {
        sizes.s[r] *= size;
        continue;
      }
    }
    sizes.s[ndim] = size, ds.s[ndim] = d_s, xs.s[ndim] = x_s, ks.s[ndim] = k_s;
    if (k == dim) dim_pos = ndim;
    ++ndim;
    prev_is_dim = k == dim;
  }
  cl_long dim_stride = indexed.strides[dim], bound = indexed.sizes[dim];
  cl_long d_off = direct.offset, x_off = indexed.offset, k_off = index.offset, count = n;
  cl_mem dm = mem(direct), xm = mem(indexed), km = mem(index);

  // alpha travels in the kernel's element type (unused by MODE 0 and 1,
  // which still declare it: zero bytes of the element's size).
  const Scalar alpha(kind == VNN_OP_INDEX_ADD && op.num_scalars > 0 ? op.scalars[0] : 1.0);
  const unsigned char zero[8] = {};
  const Arg alpha_arg = add ? alpha.as(out->dtype) : Arg{info->size, zero};

  Kernel* k = nullptr;
  // index_select of unit-stride rows (a batch of images picked out of a
  // dataset): item (column, row), no division per element; through
  // vnn_unravel's 64-bit divisions 64 rows of 784 floats took ~280 us on PoCL.
  if (kind == VNN_OP_INDEX_SELECT && ndim == 2 && dim_pos == 1 && ds.s[0] == 1 && xs.s[0] == 1) {
    if (vnn_status st = get_kernel(d, "indexing", "vnn_index_select_rows", defs, &k)) return st;
    const cl_long cols = sizes.s[0], d_rs = ds.s[1], k_s = ks.s[1];
    const size_t global[2] = {size_t(cols), size_t(sizes.s[1])};
    size_t local[2];
    return enqueue_nd(*k, q, 2, global, driver_local(d, 2, global, 1024, local), what,
                      {arg(dm), arg(d_off), arg(d_rs), arg(xm), arg(x_off), arg(dim_stride), arg(km), arg(k_off),
                       arg(k_s), arg(bound)});
  }
  if (vnn_status st = get_kernel(d, "indexing", "vnn_indexing", defs, &k)) return st;
  const std::initializer_list<Arg> params = {
      {sizeof dm, &dm},       {sizeof d_off, &d_off}, {sizeof xm, &xm},     {sizeof x_off, &x_off},
      {sizeof km, &km},       {sizeof k_off, &k_off}, {sizeof count, &count}, {sizeof ndim, &ndim},
      {sizeof sizes, &sizes}, {sizeof ds, &ds},       {sizeof xs, &xs},     {sizeof ks, &ks},
      {sizeof dim_stride, &dim_stride}, {sizeof bound, &bound}, alpha_arg};
  return launch(d, *k, q, n, what, params);
}

}  // namespace vnn_opencl

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Host side of the fused optimizer kernels: checks the operands the core
// promised (contiguous, one float dtype, equal sizes) so that a malformed
// request can never index out of bounds, then sets the arguments in the
// order kernels/optimizer.cl declares them.
#include "ops_optimizer.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "errors.hpp"
#include "common/op_params.hpp"
#include "launch.hpp"
#include "op_common.hpp"
#include "program_cache.hpp"
#include "vnn/op_names.h"

namespace vnn_opencl {
namespace {

// The ABI's name table (vnn/op_names.h); nullptr for an unknown rule.
const char* fn_name(int64_t fn) { return VNN_NAME(vnn_optimizer_names, fn); }

// -D defines of kernels/optimizer.cl for a parameter and gradient dtype.
std::string defines(int32_t pt, int32_t gt) {
  return std::string("-DPT=") + dtype_info(pt)->storage + " -DPDT=" + std::to_string(pt) +
         " -DGT=" + dtype_info(gt)->storage + " -DGDT=" + std::to_string(gt) +
         " -DCT=" + (pt == VNN_FLOAT64 ? "double" : "float");
}

// UNSCALE_CHECK: out0 the float32 flag, out1.. the gradients (at most 63,
// the ABI's operand bound); one launch of kernels/amp.cl over a table of
// chunks for all of them, whatever their dtypes (docs/ops.md).
vnn_status run_unscale(Device& d, cl_command_queue q, const vnn_op& op) {
  std::string what = d.label + ": UNSCALE_CHECK";
  constexpr int kSlots = 64;  // buffer arguments of vnn_amp_unscale_fused
  if (op.num_outputs < 1 || !op.outputs || op.num_scalars < 1 || !op.scalars)
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": needs a flag output and scalars[0] = 1 / scale");
  if (op.num_outputs - 1 > kSlots)
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": ", op.num_outputs - 1, " gradients in one op, at most ", kSlots);
  const vnn_tensor_desc& f = op.outputs[0];
  if (f.dtype != VNN_FLOAT32 || numel(f) != 1 || !f.data || f.offset < 0)
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": out0 must be one float32 element");
  // Chunks short enough to spread a few large gradients over the device.
  constexpr cl_long kChunk = 16384;
  std::vector<cl_long> table;  // 4 per chunk: argument slot, first element, count, dtype
  std::vector<cl_mem> slots(kSlots, static_cast<cl_mem>(f.data));
  for (int k = 1; k < op.num_outputs; ++k) {
    const vnn_tensor_desc& t = op.outputs[k];
    const int32_t dt = t.dtype;
    if (dt != VNN_FLOAT32 && dt != VNN_FLOAT64 && dt != VNN_FLOAT16 && dt != VNN_BFLOAT16)
      return fail(VNN_STATUS_UNSUPPORTED, what, ": gradient ", k - 1, " is not a float dtype");
    if (dt == VNN_FLOAT64 && !d.fp64)
      return fail(VNN_STATUS_UNSUPPORTED, what, ": float64 is not supported on ", d.label, " (device lacks cl_khr_fp64)");
    if (t.ndim < 0 || t.ndim > VNN_MAX_DIMS || t.offset < 0 || !dense(t) || (numel(t) > 0 && !t.data))
      return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": gradient ", k - 1, " must be contiguous");
    const cl_long count = numel(t);
    if (count == 0) continue;
    slots[size_t(k - 1)] = static_cast<cl_mem>(t.data);
    for (cl_long b = 0; b < count; b += kChunk)
      table.insert(table.end(), {cl_long(k - 1), t.offset + b, std::min(kChunk, count - b), cl_long(dt)});
  }
  if (table.empty()) return VNN_STATUS_OK;
  Kernel* kern = nullptr;
  if (vnn_status err = get_kernel(d, "amp", "vnn_amp_unscale_fused", "", &kern)) return err;
  cl_int cl_err = CL_SUCCESS;
  // Read by the kernel only; released at once, which OpenCL defers until
  // the kernel that uses it has finished.
  cl_mem chunks = clCreateBuffer(d.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, table.size() * sizeof(cl_long),
                                 table.data(), &cl_err);
  if (cl_err != CL_SUCCESS) return fail_cl(cl_err, what, ": the chunk table: clCreateBuffer failed");
  const cl_long n_chunks = cl_long(table.size() / 4), flag_off = f.offset;
  const cl_float inv_f = cl_float(op.scalars[0]);
  cl_long inv_bits;
  static_assert(sizeof inv_bits == sizeof op.scalars[0], "the float64 scale travels as its bits");
  std::memcpy(&inv_bits, &op.scalars[0], sizeof inv_bits);
  cl_mem flag = static_cast<cl_mem>(f.data);
  std::vector<Arg> args = {arg(chunks), arg(n_chunks), arg(inv_f), arg(inv_bits), arg(flag), arg(flag_off)};
  for (const cl_mem& m : slots) args.push_back(arg(m));
  // One work-group per chunk: the grid is the chunk count times the group.
  const size_t local = std::min<size_t>({kern->work_group_size, d.max_work_group_size, 256});
  const size_t global = size_t(std::min<cl_long>(n_chunks, 4096)) * local;
  vnn_status st = enqueue_nd(*kern, q, 1, &global, &local, what, args.data(), args.size());
  clReleaseMemObject(chunks);
  return st;
}

}  // namespace

vnn_status run_optimizer(Device& d, cl_command_queue q, const vnn_op& op) {
  if (op.kind == VNN_OP_UNSCALE_CHECK) return run_unscale(d, q, op);
  std::string what = d.label + ": OPTIMIZER_STEP";
  if (op.num_outputs < 1 || !op.outputs || op.num_inputs < 1 || !op.inputs || op.num_ints < 1 || !op.ints ||
      !op.scalars)
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": needs a parameter, a gradient, ints and scalars");
  const int64_t fn = op.ints[0];
  const char* name = fn_name(fn);
  if (!name) return fail(VNN_STATUS_UNSUPPORTED, what, ": optimizer fn ", fn, " is unknown");
  what += std::string(" ") + name;
  vnn_optimizer_params prm;
  if (!vnn::kernels::decode_optimizer(op, &prm))
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": too few scalars, ints or state outputs for the rule");
  // The kernel takes the rule's scalars and flags in the ABI's field order:
  // packed again from the decoded values, not copied from the request.
  double sv[VNN_OPTIM_MAX_SCALARS];
  int64_t iv[VNN_OPTIM_MAX_INTS];
  int32_t need_s = 0, need_i = 0;
  vnn_optimizer_pack(&prm, sv, &need_s, iv, &need_i);
  const int need_o = 1 + vnn_optimizer_num_state(&prm);
  const vnn_tensor_desc& p = op.outputs[0];
  const vnn_tensor_desc& g = op.inputs[0];
  const int32_t pt = p.dtype, gt = g.dtype;
  // param and grad of one float dtype, or float32 master weights with a
  // 16-bit gradient; state in float64 for float64 parameters, else float32.
  const bool same = pt == gt && (pt == VNN_FLOAT32 || pt == VNN_FLOAT64 || pt == VNN_FLOAT16 || pt == VNN_BFLOAT16);
  const bool master = pt == VNN_FLOAT32 && (gt == VNN_FLOAT16 || gt == VNN_BFLOAT16);
  if (!same && !master)
    return fail(
        VNN_STATUS_UNSUPPORTED, what,
        ": parameter and gradient must be one float dtype, or a float32 parameter with a float16/bfloat16 gradient");
  if (pt == VNN_FLOAT64 && !d.fp64)
    return fail(VNN_STATUS_UNSUPPORTED, what, ": float64 is not supported on ", d.label, " (device lacks cl_khr_fp64)");
  const bool f64 = pt == VNN_FLOAT64;
  const int32_t st = f64 ? VNN_FLOAT64 : VNN_FLOAT32;
  const int64_t n = numel(p);
  std::vector<const vnn_tensor_desc*> all = {&op.inputs[0]};
  for (int k = 0; k < need_o; ++k) all.push_back(&op.outputs[k]);
  for (size_t k = 0; k < all.size(); ++k) {
    const vnn_tensor_desc* t = all[k];
    const int32_t want = k == 0 ? gt : k == 1 ? pt : st;
    if (t->ndim < 0 || t->ndim > VNN_MAX_DIMS || !t->data || t->offset < 0 || t->dtype != want || numel(*t) != n ||
        !dense(*t))
      return fail(VNN_STATUS_INVALID_ARGUMENT, what,
                  ": operands must be contiguous with the parameter's element count; state in ", f64 ? "float64" : "float32");
  }
  if (n == 0) return VNN_STATUS_OK;

  Kernel* k = nullptr;
  std::string kname = std::string("vnn_optim_") + name;
  if (vnn_status err = get_kernel(d, "optimizer", kname.c_str(), defines(pt, gt), &k)) return err;

  // Scalars travel in the kernel's compute type.
  std::vector<cl_float> sf(static_cast<size_t>(need_s));
  std::vector<cl_double> sd(static_cast<size_t>(need_s));
  for (int i = 0; i < need_s; ++i) {
    sf[size_t(i)] = cl_float(sv[i]);
    sd[size_t(i)] = sv[i];
  }
  std::vector<cl_int> ints(static_cast<size_t>(need_i));
  for (int i = 0; i < need_i; ++i) ints[size_t(i)] = cl_int(iv[i]);
  std::vector<cl_mem> mems;
  std::vector<cl_long> offs;
  for (const vnn_tensor_desc* t : all) {
    mems.push_back(mem(*t));
    offs.push_back(t->offset);
  }
  // Buffers in kernel order: p, g, then the state slots the kernel declares.
  const int slots = fn == VNN_OPTIM_SGD || fn == VNN_OPTIM_ADAGRAD ? 1 : 3;
  std::vector<Arg> args;
  args.push_back({sizeof(cl_mem), &mems[1]});
  args.push_back({sizeof(cl_long), &offs[1]});
  args.push_back({sizeof(cl_mem), &mems[0]});
  args.push_back({sizeof(cl_long), &offs[0]});
  for (int s = 0; s < slots; ++s) {
    // An absent slot (SGD without momentum, Adam without amsgrad) aliases
    // the parameter; the kernel's flags keep it untouched.
    size_t idx = size_t(2 + s) < mems.size() ? size_t(2 + s) : 1;
    args.push_back({sizeof(cl_mem), &mems[idx]});
    args.push_back({sizeof(cl_long), &offs[idx]});
  }
  cl_long count = n;
  args.push_back({sizeof count, &count});
  for (int i = 0; i < need_s; ++i)
    args.push_back(f64 ? Arg{sizeof(cl_double), &sd[size_t(i)]} : Arg{sizeof(cl_float), &sf[size_t(i)]});
  // ints[0] is the fn itself, not a kernel argument.
  for (int i = 1; i < need_i; ++i) args.push_back({sizeof(cl_int), &ints[size_t(i)]});

  return launch(d, *k, q, n, what, args);
}

}  // namespace vnn_opencl

// Host side of the fused optimizer kernels: checks the operands the core
// promised (contiguous, one float dtype, equal sizes) so that a malformed
// request can never index out of bounds, then sets the arguments in the
// order kernels/optimizer.cl declares them.
#include "ops_optimizer.hpp"

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "errors.hpp"
#include "launch.hpp"
#include "program_cache.hpp"
#include "vnn/op_names.h"

namespace vnn_opencl {
namespace {

// The ABI's name table (vnn/op_names.h); nullptr for an unknown rule.
const char* fn_name(int64_t fn) { return VNN_NAME(vnn_optimizer_names, fn); }

int64_t numel(const vnn_tensor_desc& t) {
  int64_t n = 1;
  for (int k = 0; k < t.ndim; ++k) n *= t.sizes[k];
  return n;
}

bool contiguous(const vnn_tensor_desc& t) {
  int64_t expected = 1;
  for (int k = t.ndim - 1; k >= 0; --k) {
    if (t.sizes[k] != 1 && t.strides[k] != expected) return false;
    expected *= t.sizes[k];
  }
  return true;
}

}  // namespace

vnn_status run_optimizer(Device& d, cl_command_queue q, const vnn_op& op) {
  std::string what = d.label + ": OPTIMIZER_STEP";
  if (op.num_outputs < 1 || !op.outputs || op.num_inputs < 1 || !op.inputs || op.num_ints < 1 || !op.ints ||
      !op.scalars)
    return fail(VNN_STATUS_INVALID_ARGUMENT, "%s: needs a parameter, a gradient, ints and scalars", what.c_str());
  const int64_t fn = op.ints[0];
  const char* name = fn_name(fn);
  if (!name) return fail(VNN_STATUS_UNSUPPORTED, "%s: optimizer fn %lld is unknown", what.c_str(), (long long)fn);
  what += std::string(" ") + name;
  // Counts each fn needs: scalars, ints, outputs (param + state slots).
  int need_s = 0, need_i = 0, need_o = 0;
  switch (fn) {
    case VNN_OPTIM_SGD: need_s = 4; need_i = 5; need_o = op.num_ints > 3 && op.ints[3] ? 2 : 1; break;
    case VNN_OPTIM_ADAM: need_s = 7; need_i = 4; need_o = op.num_ints > 2 && op.ints[2] ? 4 : 3; break;
    case VNN_OPTIM_RMSPROP: need_s = 5; need_i = 4; need_o = 4; break;
    default: need_s = 3; need_i = 2; need_o = 2; break;
  }
  if (op.num_scalars < need_s || op.num_ints < need_i || op.num_outputs < need_o)
    return fail(VNN_STATUS_INVALID_ARGUMENT, "%s: needs %d scalars, %d ints and %d outputs", what.c_str(), need_s,
                need_i, need_o);
  const vnn_tensor_desc& p = op.outputs[0];
  const int32_t dt = p.dtype;
  if (dt != VNN_FLOAT32 && dt != VNN_FLOAT64)
    return fail(VNN_STATUS_UNSUPPORTED, "%s: parameters must be float32 or float64", what.c_str());
  if (dt == VNN_FLOAT64 && !d.fp64)
    return fail(VNN_STATUS_UNSUPPORTED, "%s: float64 is not supported on %s (device lacks cl_khr_fp64)",
                what.c_str(), d.label.c_str());
  const int64_t n = numel(p);
  std::vector<const vnn_tensor_desc*> all = {&op.inputs[0]};
  for (int k = 0; k < need_o; ++k) all.push_back(&op.outputs[k]);
  for (const vnn_tensor_desc* t : all)
    if (t->ndim < 0 || t->ndim > VNN_MAX_DIMS || !t->data || t->offset < 0 || t->dtype != dt || numel(*t) != n ||
        !contiguous(*t))
      return fail(VNN_STATUS_INVALID_ARGUMENT,
                  "%s: operands must be contiguous, of the parameter's dtype and element count", what.c_str());
  if (n == 0) return VNN_STATUS_OK;

  Kernel* k = nullptr;
  const DtypeInfo* info = dtype_info(dt);
  std::string kname = std::string("vnn_optim_") + name;
  if (vnn_status st = get_kernel(d, "optimizer", kname.c_str(), std::string("-DT=") + info->storage, &k)) return st;

  // Scalars travel in the kernel's element type.
  const bool f64 = dt == VNN_FLOAT64;
  std::vector<cl_float> sf(static_cast<size_t>(need_s));
  std::vector<cl_double> sd(static_cast<size_t>(need_s));
  for (int i = 0; i < need_s; ++i) {
    sf[size_t(i)] = cl_float(op.scalars[i]);
    sd[size_t(i)] = op.scalars[i];
  }
  std::vector<cl_int> ints(static_cast<size_t>(need_i));
  for (int i = 0; i < need_i; ++i) ints[size_t(i)] = cl_int(op.ints[i]);
  std::vector<cl_mem> mems;
  std::vector<cl_long> offs;
  for (const vnn_tensor_desc* t : all) {
    mems.push_back(static_cast<cl_mem>(t->data));
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

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ops_elementwise.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <mutex>
#include <string>

#include "dtype.hpp"
#include "errors.hpp"
#include "launch.hpp"
#include "op_common.hpp"
#include "program_cache.hpp"
#include "vnn/op_names.h"

namespace vnn_opencl {
namespace {

bool bool_out(const vnn_op& op) {
  return (op.kind == VNN_OP_BINARY && op.ints[0] >= 0 && op.ints[0] < VNN_BINARY_COUNT_ &&
          (vnn_binary_rules[op.ints[0]] == VNN_BRULE_COMPARE || vnn_binary_rules[op.ints[0]] == VNN_BRULE_LOGICAL)) ||
         (op.kind == VNN_OP_UNARY && op.ints[0] >= 0 && op.ints[0] < VNN_UNARY_COUNT_ &&
          vnn_unary_rules[op.ints[0]] == VNN_RULE_BOOLOUT);
}

// "opencl:0: BINARY pow on float32".
std::string describe(const Device& d, const vnn_op& op) {
  // Names from the ABI's table (vnn/op_names.h), as ops.cpp's describe().
  std::string s = op_label(d, op.kind);
  int64_t fn = op.num_ints > 0 && op.ints ? op.ints[0] : -1;
  if (op.kind != VNN_OP_WHERE) {
    const char* name = op.kind == VNN_OP_BINARY ? VNN_NAME(vnn_binary_names, fn) : VNN_NAME(vnn_unary_names, fn);
    s += name ? " " : " fn=";
    s += name ? name : std::to_string(fn);
  }
  const vnn_tensor_desc* t = op.num_outputs > 0 && op.outputs ? op.outputs : nullptr;
  if (t && dtype_info(t->dtype)) {
    s += " on ";
    s += dtype_info(t->dtype)->name;
  }
  return s;
}

// Structural checks only (the core validated shapes and dtypes); they keep
// a malformed request from reading out of bounds.
vnn_status check(const Device& d, const vnn_op& op, const std::string& what) {
  int need_in = op.kind == VNN_OP_WHERE ? 3 : op.kind == VNN_OP_BINARY ? 2 : 1;
  if (op.num_outputs < 1 || !op.outputs || op.num_inputs < need_in || !op.inputs)
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": needs ", need_in, " input(s) and 1 output");
  if (op.kind != VNN_OP_WHERE) {
    if (op.num_ints < 1 || !op.ints)
      return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": needs ints[0] (the function)");
    int64_t limit = op.kind == VNN_OP_BINARY ? int64_t(VNN_BINARY_COUNT_) : int64_t(VNN_UNARY_COUNT_);
    if (op.ints[0] < 0 || op.ints[0] >= limit)
      return fail(VNN_STATUS_UNSUPPORTED, what, " is not supported by the opencl backend");
  }
  for (int i = 0; i <= need_in; ++i)
    if (vnn_status st = check_operand(d, i < need_in ? op.inputs[i] : op.outputs[0], what)) return st;
  // Operand dtypes as the kernels assume them.
  const vnn_tensor_desc& out = op.outputs[0];
  bool ok;
  if (op.kind == VNN_OP_WHERE)
    ok = op.inputs[0].dtype == VNN_BOOL && op.inputs[1].dtype == out.dtype && op.inputs[2].dtype == out.dtype;
  else
    ok = (op.kind == VNN_OP_UNARY || op.inputs[1].dtype == op.inputs[0].dtype) &&
         out.dtype == (bool_out(op) ? int32_t(VNN_BOOL) : op.inputs[0].dtype);
  const bool floating = out.dtype == VNN_FLOAT32 || out.dtype == VNN_FLOAT64 || out.dtype == VNN_FLOAT16 ||
                        out.dtype == VNN_BFLOAT16;
  if (ok && op.kind == VNN_OP_BINARY) {  // the binary op table's rule, as the Kokkos kernels
    const int rule = vnn_binary_rules[op.ints[0]];
    const bool in_float = op.inputs[0].dtype == VNN_FLOAT32 || op.inputs[0].dtype == VNN_FLOAT64 ||
                          op.inputs[0].dtype == VNN_FLOAT16 || op.inputs[0].dtype == VNN_BFLOAT16;
    if ((rule == VNN_BRULE_FLOATONLY || rule == VNN_BRULE_FLOATING) && !(floating && in_float))
      return fail(VNN_STATUS_UNSUPPORTED, what, ": takes floating dtypes only, not ", vnn::detail::abi_dtype(out.dtype));
    if (rule == VNN_BRULE_INTEGRAL && in_float)
      return fail(VNN_STATUS_UNSUPPORTED, what, ": takes integer and bool dtypes only, not ",
                  vnn::detail::abi_dtype(op.inputs[0].dtype));
  }
  if (ok && op.kind == VNN_OP_UNARY) {  // the op table's integer rule, as the Kokkos kernels
    const int32_t in_dt = op.inputs[0].dtype;
    const bool in_float = in_dt == VNN_FLOAT32 || in_dt == VNN_FLOAT64 || in_dt == VNN_FLOAT16 || in_dt == VNN_BFLOAT16;
    const int rule = vnn_unary_rules[op.ints[0]];
    const bool takes = rule == VNN_RULE_KEEP || rule == VNN_RULE_BOOLOUT ? true
                       : rule == VNN_RULE_INTEGRAL                     ? !in_float
                                                                       : in_float;
    if (!takes)
      return fail(VNN_STATUS_UNSUPPORTED, what, ": takes ", rule == VNN_RULE_INTEGRAL ? "integer and bool" : "floating",
                  " dtypes only, not ", vnn::detail::abi_dtype(in_dt));
  }
  if (!ok) {
    std::string in;
    for (int i = 0; i < need_in; ++i)
      in += vnn::detail::str_cat(i ? ", " : "", vnn::detail::abi_dtype(op.inputs[i].dtype));
    return fail(VNN_STATUS_UNSUPPORTED, what, ": operand dtypes do not match (inputs ", in, ", out ",
                vnn::detail::abi_dtype(out.dtype), ")");
  }
  return VNN_STATUS_OK;
}

vnn_status run_where(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what) {
  const vnn_tensor_desc &out = op.outputs[0], &c = op.inputs[0], &a = op.inputs[1], &b = op.inputs[2];
  Layout l = make_layout(out, {&out, &c, &a, &b});
  if (l.n == 0) return VNN_STATUS_OK;
  // Elements move as bits (an unsigned type of their size): half needs no
  // cl_khr_fp16 that way.
  Kernel* k = nullptr;
  const std::string defs = std::string("-DT=") + dtype_info(out.dtype)->bits_storage;
  cl_mem mo = mem(out), mc = mem(c), ma = mem(a), mb = mem(b);
  cl_long oo = out.offset, co = c.offset, ao = a.offset, bo = b.offset, n = l.n;
  if (contiguous(l, 0) && contiguous(l, 1) && contiguous(l, 2) && contiguous(l, 3)) {
    if (vnn_status st = get_kernel(d, "where", "vnn_where_dense", defs, &k)) return st;
    return launch(d, *k, q, l.n, what,
                  {arg(mo), arg(oo), arg(mc), arg(co), arg(ma), arg(ao), arg(mb), arg(bo), arg(n)});
  }
  if (vnn_status st = get_kernel(d, "where", "vnn_where", defs, &k)) return st;
  return launch(d, *k, q, l.n, what,
                {arg(mo), arg(oo), arg(mc), arg(co), arg(ma), arg(ao), arg(mb), arg(bo), arg(n), arg(l.ndim),
                 arg(l.sizes), arg(l.strides[0]), arg(l.strides[1]), arg(l.strides[2]), arg(l.strides[3])});
}

// Which kernel of elementwise.cl an op takes.
enum Form : int {
  kStrided = 0,      // vnn_binary_op / vnn_unary_op: 1-D, any strides (where plan_nd declines)
  kDense = 1,        // vnn_binary_dense: one unit-stride run
  kDenseScalar = 2,  // the same, b one broadcast value
  kVec = 3,          // vnn_binary_vec / vnn_unary_vec: dense float runs as vectors
  kVecScalar = 4,    // vnn_binary_vec, b one broadcast value
  kNd = 8,           // vnn_binary_nd / vnn_unary_nd: 8 + 9 (ox + 1) + 3 (ax + 1) + (bx + 1) (+ 27 rounded grid)
};

// Whether a table line's float expression calls a special function
// (VNN_SP, vnn/ops/special_functions.def): its program then compiles them
// (-DVNN_SPECIAL) and it runs one element per work item (they are scalar).
constexpr bool calls_special(const char* expr) {
  for (const char* p = expr; *p; ++p)
    if (p[0] == 'V' && p[1] == 'N' && p[2] == 'N' && p[3] == '_' && p[4] == 'S' && p[5] == 'P' && p[6] == '(') return true;
  return false;
}
constexpr bool kUnarySpecial[] = {
#define VNN_UNARY_OP(ID, NAME, SIG, RULE, DOMAIN, DOC, GRAD, FE, IE) calls_special(#FE),
#include "vnn/ops/unary.def"
#undef VNN_UNARY_OP
};
constexpr bool kBinarySpecial[] = {
#define VNN_BINARY_OP(ID, NAME, SIG, RULE, DOMAIN, DOC, GA, GB, FE, IE) calls_special(#FE),
#include "vnn/ops/binary.def"
#undef VNN_BINARY_OP
};
bool is_special(bool binary, int64_t fn) {
  return binary ? fn >= 0 && fn < VNN_BINARY_COUNT_ && kBinarySpecial[fn] : fn >= 0 && fn < VNN_UNARY_COUNT_ && kUnarySpecial[fn];
}

// " -DBINARY_FN=2 -DB_SCALAR=1" and the like.
std::string fn_defines(bool binary, int64_t fn, bool b_scalar) {
  return (binary ? " -DBINARY_FN=" : " -DUNARY_FN=") + std::to_string(fn) + (b_scalar ? " -DB_SCALAR=1" : "") +
         (is_special(binary, fn) ? " -DVNN_SPECIAL=1" : "");
}

// The functions that one program holds for each kind of operands (see
// Siblings): those a model's steps use together. Every one compiles for
// such operands (the op sweep tests build each alone).
constexpr int64_t kArithFloat[] = {VNN_BINARY_ADD,     VNN_BINARY_SUB,     VNN_BINARY_MUL, VNN_BINARY_DIV,
                                   VNN_BINARY_MAXIMUM, VNN_BINARY_MINIMUM, VNN_BINARY_POW, VNN_BINARY_GELU_BACKWARD};
constexpr int64_t kArithInt[] = {VNN_BINARY_ADD, VNN_BINARY_SUB, VNN_BINARY_MUL, VNN_BINARY_DIV};
constexpr int64_t kCompare[] = {VNN_BINARY_EQ, VNN_BINARY_NE, VNN_BINARY_LT,
                                VNN_BINARY_LE, VNN_BINARY_GT, VNN_BINARY_GE};
constexpr int64_t kUnaryFloat[] = {VNN_UNARY_NEG,  VNN_UNARY_ABS,     VNN_UNARY_EXP,   VNN_UNARY_LOG,
                                   VNN_UNARY_SQRT, VNN_UNARY_RELU,    VNN_UNARY_SIGMOID, VNN_UNARY_TANH,
                                   VNN_UNARY_RSQRT, VNN_UNARY_GELU,   VNN_UNARY_SILU,  VNN_UNARY_CLAMP,
                                   VNN_UNARY_RECIPROCAL};

// The siblings of (binary, fn) in a program for these operands and form:
// the vector kernels hold the float binary functions (b dense or one
// value) and the float unary ones; the others one list for their dtypes.
// None (empty) where fn is in no list: it builds alone.
Siblings elementwise_siblings(bool binary, int64_t fn, int32_t dt, int32_t odt, int form) {
  const bool floating = dt == VNN_FLOAT32 || dt == VNN_FLOAT64 || dt == VNN_FLOAT16 || dt == VNN_BFLOAT16;
  const bool integral = dt == VNN_INT32 || dt == VNN_INT64;
  const bool scalar_forms = form == kVec || form == kVecScalar || form == kDense || form == kDenseScalar;
  const bool b_scalar = form == kVecScalar || form == kDenseScalar;
  const std::string wanted = fn_defines(binary, fn, b_scalar).substr(1);
  Siblings s;
  auto add = [&](const auto& fns, bool is_binary) {
    for (int64_t f : fns)
      for (int scalar = 0; scalar <= (is_binary && scalar_forms ? 1 : 0); ++scalar) {
        s.variants.push_back(fn_defines(is_binary, f, scalar).substr(1));
        if (s.variants.back() == wanted) s.index = s.variants.size() - 1;
      }
  };
  if (form == kVec || form == kVecScalar) {
    add(kArithFloat, true);
    add(kUnaryFloat, false);
  } else if (binary && odt == dt && floating) {
    add(kArithFloat, true);
  } else if (binary && odt == dt && integral) {
    add(kArithInt, true);
  } else if (binary && odt == VNN_BOOL && dt != VNN_BOOL) {
    add(kCompare, true);
  } else if (!binary && odt == dt && floating) {
    add(kUnaryFloat, false);
  }
  if (s.index >= s.variants.size() || s.variants[s.index] != wanted) return Siblings{};
  return s;
}

// The BINARY / UNARY kernel for (binary, fn, input dtype, output dtype,
// form) on d through a KernelSlots cache (perf: building the option string
// and hashing it was ~8 % of a 64-float add's host time).
vnn_status elementwise_kernel(Device& d, bool binary, int64_t fn, int32_t dt, int32_t odt, int form, Kernel** k) {
  thread_local KernelSlots<6> slots;
  const uint64_t key = uint64_t(binary) | uint64_t(uint32_t(fn)) << 1 | uint64_t(uint8_t(dt)) << 40 |
                       uint64_t(uint8_t(odt)) << 48 | uint64_t(form) << 56;
  if (Kernel* hit = slots.find(d, key)) return *k = hit, VNN_STATUS_OK;
  std::string defs = std::string("-DT=") + dtype_info(dt)->storage + " -DDT=" + std::to_string(dt) +
                     " -DOT=" + dtype_info(odt)->storage + " -DODT=" + std::to_string(odt);
  const Siblings siblings = elementwise_siblings(binary, fn, dt, odt, form);
  if (siblings.variants.empty())
    defs += fn_defines(binary, fn, form == kDenseScalar || form == kVecScalar);
  if (form == kVec || form == kVecScalar) defs += " -DVW=" + std::to_string(preferred_vector_width(d, dt));
  if (form >= kNd) {
    const int c = (form - kNd) % 27;
    defs += " -DOX=" + std::to_string(c / 9 - 1) + " -DAX=" + std::to_string(c / 3 % 3 - 1) +
            " -DBX=" + std::to_string(c % 3 - 1) + (form - kNd >= 27 ? " -DVNN_ND_CHECK=1" : "");
  }
  const char* name = form >= kNd                                 ? (binary ? "vnn_binary_nd" : "vnn_unary_nd")
                     : form == kVec || form == kVecScalar        ? (binary ? "vnn_binary_vec" : "vnn_unary_vec")
                     : form == kDense || form == kDenseScalar    ? "vnn_binary_dense"
                     : binary                                    ? "vnn_binary_op"
                                                                 : "vnn_unary_op";
  if (vnn_status st = get_kernel(d, "elementwise", name, defs, siblings, k)) return st;
  slots.put(d, key, *k);
  return VNN_STATUS_OK;
}

// The form of an op over layout l (t = 0 out, 1 a, 2 b), p planned for kNd.
// vector_safe: false where the device's vector math is known to be wrong,
// so the op runs one lane per item.
int choose_form(const Device& d, bool binary, const Layout& l, int32_t dt, int32_t odt, bool vector_safe,
                NdPlan* p) {
  const bool dense_oa = contiguous(l, 0) && contiguous(l, 1);
  const bool b_dense = !binary || contiguous(l, 2);
  const bool b_scalar = binary && !b_dense && l.ndim == 1 && l.strides[2].s[0] == 0;
  const bool vec = vector_safe && dt == odt && (dt == VNN_FLOAT32 || dt == VNN_FLOAT64) &&
                   preferred_vector_width(d, dt) > 1;
  if (dense_oa && (b_dense || b_scalar)) {
    if (vec) return b_scalar ? kVecScalar : kVec;
    if (binary) return b_scalar ? kDenseScalar : kDense;
  }
  if (!plan_nd(d, l, binary ? 3 : 2, p)) return kStrided;
  return kNd + 27 * p->check + 9 * (x_class(l, 0) + 1) + 3 * (x_class(l, 1) + 1) + (binary ? x_class(l, 2) + 1 : 2);
}

vnn_status run_binary_unary(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what) {
  const bool binary = op.kind == VNN_OP_BINARY;
  const vnn_tensor_desc& out = op.outputs[0];
  const vnn_tensor_desc& a = op.inputs[0];
  const vnn_tensor_desc& b = binary ? op.inputs[1] : op.inputs[0];
  Layout l = binary ? make_layout(out, {&out, &a, &b}) : make_layout(out, {&out, &a});
  if (l.n == 0) return VNN_STATUS_OK;
  NdPlan p;
  // PoCL's double vector pow gets a lane wrong when another lane's base is 0
  // (pow(2, 9) gave 2^-9 in lane 3 of [6 8 2 2 8 2 0 4]; found by test_opdb's
  // float_power): float64 pow runs a lane per item.
  const bool vector_safe =
      !(binary && op.ints[0] == VNN_BINARY_POW && a.dtype == VNN_FLOAT64) && !is_special(binary, op.ints[0]);
  int form = choose_form(d, binary, l, a.dtype, out.dtype, vector_safe, &p);
  Kernel* k = nullptr;
  if (vnn_status st = elementwise_kernel(d, binary, op.ints[0], a.dtype, out.dtype, form, &k)) return st;
  if (form >= kNd && k->work_group_size < p.local[0] * p.local[1] * p.local[2]) {
    form = kStrided;
    if (vnn_status st = elementwise_kernel(d, binary, op.ints[0], a.dtype, out.dtype, form, &k)) return st;
  }
  cl_mem mo = mem(out), ma = mem(a), mb = mem(b);
  cl_long oo = out.offset, ao = a.offset, bo = b.offset, n = l.n;
  const cl_long base[3] = {oo, ao, bo};
  const bool vec = form == kVec || form == kVecScalar;
  const int64_t vw = preferred_vector_width(d, a.dtype), items = vec ? (l.n + vw - 1) / vw : l.n;
  if (binary) {
    // alpha travels in the kernel's compute type.
    Scalar alpha(op.num_scalars > 0 && op.scalars ? op.scalars[0] : 1.0);
    if (form >= kNd)
      return each_nd_launch(p, base, 3, [&](const cl_long* offs) {
        return enqueue_nd(*k, q, 3, p.global, p.local, what,
                          {arg(mo), arg(offs[0]), arg(ma), arg(offs[1]), arg(mb), arg(offs[2]), alpha.as(a.dtype),
                           arg(p.sizes), arg(p.strides[0]), arg(p.strides[1]), arg(p.strides[2])});
      });
    if (form != kStrided)
      return launch(d, *k, q, items, what,
                    {arg(mo), arg(oo), arg(ma), arg(ao), arg(mb), arg(bo), alpha.as(a.dtype), arg(n)});
    return launch(d, *k, q, l.n, what,
                  {arg(mo), arg(oo), arg(ma), arg(ao), arg(mb), arg(bo), alpha.as(a.dtype), arg(n), arg(l.ndim),
                   arg(l.sizes), arg(l.strides[0]), arg(l.strides[1]), arg(l.strides[2])});
  }
  // A NaN scalar is an absent clamp bound.
  double v0 = op.num_scalars > 0 && op.scalars ? op.scalars[0] : NAN;
  double v1 = op.num_scalars > 1 && op.scalars ? op.scalars[1] : NAN;
  Scalar s0(std::isnan(v0) ? 0.0 : v0), s1(std::isnan(v1) ? 0.0 : v1);
  cl_int h0 = !std::isnan(v0), h1 = !std::isnan(v1);
  if (form >= kNd)
    return each_nd_launch(p, base, 2, [&](const cl_long* offs) {
      return enqueue_nd(*k, q, 3, p.global, p.local, what,
                        {arg(mo), arg(offs[0]), arg(ma), arg(offs[1]), arg(p.sizes), arg(p.strides[0]),
                         arg(p.strides[1]), s0.as(a.dtype), s1.as(a.dtype), arg(h0), arg(h1)});
    });
  if (vec)
    return launch(d, *k, q, items, what,
                  {arg(mo), arg(oo), arg(ma), arg(ao), arg(n), s0.as(a.dtype), s1.as(a.dtype), arg(h0), arg(h1)});
  return launch(d, *k, q, l.n, what,
                {arg(mo), arg(oo), arg(ma), arg(ao), arg(n), arg(l.ndim), arg(l.sizes), arg(l.strides[0]),
                 arg(l.strides[1]), s0.as(a.dtype), s1.as(a.dtype), arg(h0), arg(h1)});
}

}  // namespace

vnn_status run_elementwise_op(Device& d, cl_command_queue q, const vnn_op& op) {
  std::string what = describe(d, op);
  if (vnn_status st = check(d, op, what)) return st;
  return op.kind == VNN_OP_WHERE ? run_where(d, q, op, what) : run_binary_unary(d, q, op, what);
}

}  // namespace vnn_opencl

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Elementwise ops: validation, broadcasting and type promotion happen here
// once; the backend receives same-shape operands of the dtypes docs/ops.md
// lists (inputs share one dtype; comparisons and logical ops write bool).
#include <cmath>

#include "amp/autocast.hpp"
#include "autograd/elementwise_grad.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/op_names.h"

namespace vnn {

namespace {

// The ABI's name table (vnn/op_names.h).
const char* binary_name(vnn_binary_fn fn) {
  const char* n = VNN_NAME(vnn_binary_names, fn);
  return n ? n : "binary";
}

bool is_compare(vnn_binary_fn fn) { return vnn_binary_rules[fn] == VNN_BRULE_COMPARE; }
bool is_logical(vnn_binary_fn fn) { return vnn_binary_rules[fn] == VNN_BRULE_LOGICAL; }
bool is_storage_only(DType t) { return t == kFloat16 || t == kBFloat16; }

// torch.result_type of two tensor operands (docs/dtypes.md rule 7).
DType result_type(const Tensor& a, const Tensor& b) {
  // A 0-dim operand widens the result only from a higher category
  // (bool < integer < floating): bfloat16 [3] + float32 [] is bfloat16.
  auto category = [](DType t) { return t == kBool ? 0 : is_integral(t) ? 1 : 2; };
  if ((a.dim() == 0) != (b.dim() == 0)) {
    const Tensor& dimmed = a.dim() == 0 ? b : a;
    const Tensor& scalar = a.dim() == 0 ? a : b;
    if (category(scalar.dtype()) <= category(dimmed.dtype())) return dimmed.dtype();
  }
  return promote_types(a.dtype(), b.dtype());
}

// The dtype a binary fn of a and b returns (comparisons and logical ops
// return bool; this is the dtype their operands are compared in).
DType binary_result_type(const Tensor& a, const Tensor& b, vnn_binary_fn fn) {
  if (is_logical(fn)) return kBool;  // operands reduce to "nonzero" first
  DType t = result_type(a, b);
  const int rule = vnn_binary_rules[fn];
  // true division, and the functions integers have no meaning for, in float32
  if ((rule == VNN_BRULE_TRUEDIV || rule == VNN_BRULE_FLOATING) && !is_floating(t)) t = kFloat32;
  VNN_CHECK(DTypeError, rule != VNN_BRULE_FLOATONLY || is_floating(t), binary_name(fn),
            ": needs floating tensors, got ", name(a.dtype()), " and ", name(b.dtype()),
            "; convert first, e.g. t.to(vnn::kFloat32)");
  VNN_CHECK(DTypeError, rule != VNN_BRULE_INTEGRAL || !is_floating(t), binary_name(fn),
            ": needs integer or bool tensors, got ", name(a.dtype()), " and ", name(b.dtype()),
            "; convert first, e.g. t.to(vnn::kInt64)");
  // nextafter steps in the result's own precision; the kernels compute
  // float16 and bfloat16 in float32, whose neighbour rounds back to a.
  VNN_CHECK(DTypeError, fn != VNN_BINARY_NEXTAFTER || !is_storage_only(t), binary_name(fn),
            ": float16 and bfloat16 are not supported, got ", name(a.dtype()), " and ", name(b.dtype()),
            "; use float32 or float64");
  return t;
}

// The dtype the kernel runs in for result type t: two float16 (bfloat16)
// operands run on 16-bit storage (every kernel computes in float32 and
// rounds once); mixed operands (bfloat16 with a float32 scalar, float16
// with int64) are computed in float32 and the result rounded once, so a
// scalar is not rounded to 16 bits first (PyTorch's "opmath").
DType binary_kernel_type(const Tensor& a, const Tensor& b, DType t) {
  if (is_storage_only(t) && (a.dtype() != t || b.dtype() != t)) return kFloat32;
  return t;
}

void enqueue_binary(const Tensor& out, const Tensor& a, const Tensor& b, vnn_binary_fn fn, double alpha) {
  detail::enqueue(VNN_OP_BINARY, binary_name(fn), {&a, &b}, out, {alpha}, {int64_t(fn)});
}

Tensor binary(const Tensor& a, const Tensor& b, vnn_binary_fn fn, double alpha = 1.0) {
  const char* op = binary_name(fn);
  VNN_CHECK(ValueError, a.defined() && b.defined(), op, ": argument '", a.defined() ? "other" : "input",
            "' is an undefined tensor");
  detail::check_same_device(a, b, op, "other");
  Shape shape = broadcast_shapes(a.sizes(), b.sizes(), op);
  const DType t = binary_result_type(a, b, fn), k = binary_kernel_type(a, b, t);
  const bool bool_out = is_compare(fn) || is_logical(fn);
  Tensor out = detail::make_empty(a.impl()->ctx(), shape, bool_out ? kBool : k, op);
  Tensor x = a.to(k).expand(shape), y = b.to(k).expand(shape);
  enqueue_binary(out, x, y, fn, alpha);
  if (detail::needs_grad({&x, &y}) && is_floating(out.dtype())) {
    detail::SavedOutput saved_out(out);
    if (auto backward = detail::binary_backward(fn, x, y, saved_out, alpha)) {
      detail::record(op, out, {&x, &y}, std::move(backward), {&x, &y}, /*twice_differentiable=*/true);
      saved_out.bind(out);
    }
  }
  return bool_out || k == t ? out : out.to(t);
}

bool integral_value(double v) { return std::isfinite(v) && v == std::trunc(v); }

// A 0-dim tensor for a scalar operand (docs/dtypes.md rule 5): a float
// tensor's dtype (float32 for the 16-bit types, so the scalar is not rounded
// to 16 bits; being 0-dim it does not widen the result), an integer
// tensor's dtype for integral values, otherwise int64 (bool tensors) or
// float32.
Tensor scalar_like(const Tensor& a, double v) {
  DType t = a.dtype();
  if (is_storage_only(t)) t = kFloat32;
  else if (!is_floating(t) && !integral_value(v)) t = kFloat32;
  else if (t == kBool) t = kInt64;
  return full({}, v, TensorOptions(a.device()).with(t));
}

[[noreturn]] void cannot_cast(const char* op, DType result, DType self) {
  VNN_THROW(DTypeError, op, "_: result type ", name(result), " can't be cast to the desired output type ", name(self),
            "; use the out-of-place ", op, " or convert self first");
}

void check_inplace_type(const Tensor& self, DType t, const char* op) {
  if (t != self.dtype() && !(is_floating(self.dtype()) && is_floating(t))) cannot_cast(op, t, self.dtype());
}

Tensor& inplace_binary(Tensor& self, const Tensor& other, vnn_binary_fn fn, double alpha) {
  const char* op = binary_name(fn);
  if (detail::needs_grad({&self, &other})) {
    check_inplace_type(self, binary_result_type(self, other, fn), op);
    return detail::inplace_with_grad(self, op, [&](const Tensor& old) { return binary(old, other, fn, alpha); });
  }
  detail::check_same_device(self, other, op, "other");
  check_inplace_type(self, binary_result_type(self, other, fn), op);
  Shape shape = broadcast_shapes(self.sizes(), other.sizes(), op);
  VNN_CHECK(ShapeError, shape == self.sizes(), op, "_: other of shape ", other.sizes(),
            " does not broadcast to self's shape ", self.sizes());
  if (is_storage_only(self.dtype())) {  // computed in float32, stored back
    self.copy_(binary(self, other, fn, alpha));
    return self;
  }
  Tensor rhs = other.to(self.dtype()).expand(self.sizes());
  detail::mark_modified(self, op);
  enqueue_binary(self, self, rhs, fn, alpha);
  return self;
}

void record_unary(const char* op, vnn_unary_fn fn, const Tensor& in, Tensor& out,
                  std::initializer_list<double> scalars) {
  if (!detail::needs_grad({&in}) || !is_floating(out.dtype())) return;
  const double* s = scalars.begin();
  double s0 = scalars.size() > 0 ? s[0] : 0.0, s1 = scalars.size() > 1 ? s[1] : 0.0;
  detail::SavedOutput saved_out(out);
  if (auto backward = detail::unary_backward(fn, in, saved_out, s0, s1)) {
    detail::record(op, out, {&in}, std::move(backward), {&in, &out}, /*twice_differentiable=*/true);
    saved_out.bind(out);
  }
}

const char* unary_name(vnn_unary_fn fn) { return vnn_unary_names[fn]; }

// The dtype a unary op of the table gives for input dtype t (the table's
// integer rule); DTypeError where the rule refuses t.
DType unary_result_type(DType t, vnn_unary_fn fn) {
  const char* op = unary_name(fn);
  const int rule = vnn_unary_rules[fn];
  if (rule == VNN_RULE_BOOLOUT) return kBool;
  if (is_floating(t)) {
    VNN_CHECK(DTypeError, rule != VNN_RULE_INTEGRAL, op, ": needs an integer or bool tensor, got ", name(t),
              "; convert with .to(vnn::kInt32) first");
    return t;
  }
  switch (rule) {
    case VNN_RULE_PROMOTE: return kFloat32;
    case VNN_RULE_REJECT:
      VNN_THROW(DTypeError, op, ": needs a floating-point tensor, got ", name(t),
                "; convert with .to(vnn::kFloat32) first");
    case VNN_RULE_KEEP:
      VNN_CHECK(DTypeError, t != kBool, op, ": not defined for bool tensors; convert with .to(vnn::kInt32) first");
      return t;
    default: return t;  // IDENTITY, INTEGRAL
  }
}

// A unary op of the table (vnn/ops/unary.def) out of place.
Tensor unary(const Tensor& a, vnn_unary_fn fn, std::initializer_list<double> scalars = {}) {
  VNN_CHECK(ValueError, a.defined(), unary_name(fn), ": argument 'input' is an undefined tensor");
  if (fn == VNN_UNARY_BITWISE_NOT && a.dtype() == kBool) return unary(a, VNN_UNARY_LOGICAL_NOT);
  const DType out_t = unary_result_type(a.dtype(), fn);
  if (vnn_unary_rules[fn] == VNN_RULE_IDENTITY && !is_floating(a.dtype())) return a.clone();
  // float16 / bfloat16 run on 16-bit storage: the kernels compute in float32.
  Tensor in = out_t == kBool ? a : a.to(out_t);
  Tensor out = detail::make_empty(a.impl()->ctx(), a.sizes(), out_t);
  detail::enqueue(VNN_OP_UNARY, unary_name(fn), {&in}, out, scalars, {int64_t(fn)});
  record_unary(unary_name(fn), fn, in, out, scalars);
  return out;
}

// The same in place: self keeps its dtype.
Tensor& inplace_unary(Tensor& self, vnn_unary_fn fn) {
  const char* op = unary_name(fn);
  VNN_CHECK(ValueError, self.defined(), op, "_: self is an undefined tensor");
  if (fn == VNN_UNARY_BITWISE_NOT && self.dtype() == kBool) return inplace_unary(self, VNN_UNARY_LOGICAL_NOT);
  const DType t = unary_result_type(self.dtype(), fn);
  if (t != self.dtype()) cannot_cast(op, t, self.dtype());
  if (detail::needs_grad({&self}))
    return detail::inplace_with_grad(self, op, [fn](const Tensor& old) { return unary(old, fn); });
  detail::mark_modified(self, op);
  if (vnn_unary_rules[fn] == VNN_RULE_IDENTITY && !is_floating(t)) return self;
  if (is_storage_only(t)) return self.copy_(unary(self, fn));
  detail::enqueue(VNN_OP_UNARY, op, {&self}, self, {}, {int64_t(fn)});
  return self;
}

// Bounds with an integer tensor: fractional bounds need float32.
DType clamp_type(const Tensor& a, double lo, double hi) {
  DType t = a.dtype();
  VNN_CHECK(DTypeError, t != kBool, "clamp: not defined for bool tensors; convert with .to(vnn::kInt32) first");
  bool lo_int = std::isnan(lo) || integral_value(lo) || std::isinf(lo);
  bool hi_int = std::isnan(hi) || integral_value(hi) || std::isinf(hi);
  if (!is_floating(t) && !(lo_int && hi_int)) t = kFloat32;
  return t;
}

void check_int_pow(const Tensor& a, double e) {
  if (!is_floating(a.dtype()) && integral_value(e) && e < 0)
    VNN_THROW(ValueError, "pow: integers to negative integer powers are not allowed (", name(a.dtype()),
              " tensor, exponent ", int64_t(e), "); convert the tensor to float first");
}

void check_bool_cond(const Tensor& cond, const char* op, const char* arg) {
  VNN_CHECK(DTypeError, cond.dtype() == kBool, op, ": ", arg, " must be a bool tensor, got ", name(cond.dtype()),
            "; compare it (e.g. t != 0) first");
}

}  // namespace

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  int n = std::max(a.size(), b.size());
  Shape out;
  out.resize(n);
  for (int i = 0; i < n; ++i) {
    int ia = i - (n - a.size()), ib = i - (n - b.size());
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1)
      VNN_THROW(ShapeError, op, ": shapes ", a.str(), " and ", b.str(), " cannot be broadcast together (size ", da,
                " vs ", db, " at dimension ", i, ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Tensor add(const Tensor& a, const Tensor& b, double alpha) { return binary(a, b, VNN_BINARY_ADD, alpha); }
Tensor sub(const Tensor& a, const Tensor& b, double alpha) { return binary(a, b, VNN_BINARY_SUB, alpha); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(a, b, VNN_BINARY_MUL); }
Tensor div(const Tensor& a, const Tensor& b) { return binary(a, b, VNN_BINARY_DIV); }
Tensor maximum(const Tensor& a, const Tensor& b) { return binary(a, b, VNN_BINARY_MAXIMUM); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary(a, b, VNN_BINARY_MINIMUM); }
Tensor pow(const Tensor& a, const Tensor& e) {
  if (autocast::detail::OpScope s{autocast::detail::Policy::fp32, {&a, &e}}) return pow(s[0], s[1]);
  return binary(a, e, VNN_BINARY_POW);
}
Tensor add(const Tensor& a, double b) { return add(a, scalar_like(a, b)); }
Tensor sub(const Tensor& a, double b) { return sub(a, scalar_like(a, b)); }
Tensor mul(const Tensor& a, double b) { return mul(a, scalar_like(a, b)); }
Tensor div(const Tensor& a, double b) { return div(a, scalar_like(a, b)); }
Tensor rsub(const Tensor& a, double b) { return sub(scalar_like(a, b), a); }
Tensor div(const Tensor& a, const Tensor& b, const std::string& rounding_mode) {
  // Both modes keep the promoted dtype (integers stay integers), as torch.div.
  if (rounding_mode == "trunc") return binary(a, b, VNN_BINARY_DIV_TRUNC);
  if (rounding_mode == "floor") return binary(a, b, VNN_BINARY_FLOOR_DIVIDE);
  VNN_THROW(ValueError, "div: expected rounding_mode to be one of \"trunc\" or \"floor\" but found \"", rounding_mode,
            "\"; for true division call div(a, b) without it");
}
Tensor div(const Tensor& a, double b, const std::string& rounding_mode) {
  return div(a, scalar_like(a, b), rounding_mode);
}
Tensor rdiv(const Tensor& a, double b) { return div(scalar_like(a, b), a); }
Tensor round(const Tensor& a, int64_t decimals) {
  if (decimals == 0) return round(a);
  VNN_CHECK(ValueError, a.defined(), "round: argument 'input' is an undefined tensor");
  VNN_CHECK(DTypeError, is_floating(a.dtype()), "round: decimals=", decimals, " takes a floating tensor, got ",
            a.dtype(), "; round(t) without decimals is the identity on integers");
  // PyTorch's formula, 10^|decimals| in a's dtype: rint(a * p) / p, or rint(a / p) * p for negative decimals.
  const double p = std::pow(10.0, double(decimals < 0 ? -decimals : decimals));
  return decimals > 0 ? div(round(mul(a, p)), p) : mul(round(div(a, p)), p);
}
Tensor pow(const Tensor& a, double e) {
  check_int_pow(a, e);
  return pow(a, scalar_like(a, e));
}

Tensor eq(const Tensor& a, const Tensor& b) { return binary(a, b, VNN_BINARY_EQ); }
Tensor ne(const Tensor& a, const Tensor& b) { return binary(a, b, VNN_BINARY_NE); }
Tensor lt(const Tensor& a, const Tensor& b) { return binary(a, b, VNN_BINARY_LT); }
Tensor le(const Tensor& a, const Tensor& b) { return binary(a, b, VNN_BINARY_LE); }
Tensor gt(const Tensor& a, const Tensor& b) { return binary(a, b, VNN_BINARY_GT); }
Tensor ge(const Tensor& a, const Tensor& b) { return binary(a, b, VNN_BINARY_GE); }
Tensor eq(const Tensor& a, double b) { return eq(a, scalar_like(a, b)); }
Tensor ne(const Tensor& a, double b) { return ne(a, scalar_like(a, b)); }
Tensor lt(const Tensor& a, double b) { return lt(a, scalar_like(a, b)); }
Tensor le(const Tensor& a, double b) { return le(a, scalar_like(a, b)); }
Tensor gt(const Tensor& a, double b) { return gt(a, scalar_like(a, b)); }
Tensor ge(const Tensor& a, double b) { return ge(a, scalar_like(a, b)); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return binary(a, b, VNN_BINARY_LOGICAL_AND); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return binary(a, b, VNN_BINARY_LOGICAL_OR); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return binary(a, b, VNN_BINARY_LOGICAL_XOR); }

Tensor& Tensor::add_(const Tensor& other, double alpha) { return inplace_binary(*this, other, VNN_BINARY_ADD, alpha); }
Tensor& Tensor::add_(double other) { return inplace_binary(*this, scalar_like(*this, other), VNN_BINARY_ADD, 1.0); }
Tensor& Tensor::sub_(const Tensor& other, double alpha) { return inplace_binary(*this, other, VNN_BINARY_SUB, alpha); }
Tensor& Tensor::sub_(double other) { return inplace_binary(*this, scalar_like(*this, other), VNN_BINARY_SUB, 1.0); }
Tensor& Tensor::mul_(const Tensor& other) { return inplace_binary(*this, other, VNN_BINARY_MUL, 1.0); }
Tensor& Tensor::mul_(double other) { return inplace_binary(*this, scalar_like(*this, other), VNN_BINARY_MUL, 1.0); }
Tensor& Tensor::div_(const Tensor& other) { return inplace_binary(*this, other, VNN_BINARY_DIV, 1.0); }
Tensor& Tensor::div_(double other) { return inplace_binary(*this, scalar_like(*this, other), VNN_BINARY_DIV, 1.0); }
Tensor& Tensor::pow_(const Tensor& e) { return inplace_binary(*this, e, VNN_BINARY_POW, 1.0); }
Tensor& Tensor::pow_(double e) {
  check_int_pow(*this, e);
  return inplace_binary(*this, scalar_like(*this, e), VNN_BINARY_POW, 1.0);
}

Tensor leaky_relu(const Tensor& a, double slope) { return unary(a, VNN_UNARY_LEAKY_RELU, {slope}); }
Tensor gelu(const Tensor& a) { return unary(a, VNN_UNARY_GELU); }
Tensor gelu(const Tensor& a, const std::string& approximate) {
  if (approximate == "none") return gelu(a);
  VNN_CHECK(ValueError, approximate == "tanh", "gelu: approximate must be \"none\" or \"tanh\", got \"",
            approximate, "\"");
  VNN_CHECK(ValueError, a.defined(), "gelu: argument 'input' is an undefined tensor");
  VNN_CHECK(DTypeError, is_floating(a.dtype()), "gelu: needs a floating dtype, got ", name(a.dtype()),
            "; convert first, e.g. t.to(vnn::kFloat32)");
  // PyTorch's formula: x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))).
  const double k = 0.7978845608028654;  // sqrt(2 / pi)
  Tensor inner = mul(add(a, mul(mul(mul(a, a), a), 0.044715)), k);
  return mul(mul(a, add(tanh(inner), 1.0)), 0.5);
}
std::tuple<Tensor, Tensor> frexp(const Tensor& a) {
  VNN_CHECK(ValueError, a.defined(), "frexp: argument 'input' is an undefined tensor");
  VNN_CHECK(DTypeError, is_floating(a.dtype()), "frexp: only supports floating-point dtypes, got ", name(a.dtype()),
            "; convert first, e.g. t.to(vnn::kFloat32)");
  // Two table lines (one output each); the exponent has no gradient.
  Tensor exponent = unary(a.detach(), VNN_UNARY_FREXP_EXPONENT).to(kInt32);
  return {unary(a, VNN_UNARY_FREXP_MANTISSA), exponent};
}

Tensor gelu_backward(const Tensor& grad, const Tensor& a) {
  VNN_CHECK(ValueError, grad.defined() && a.defined(), "gelu_backward: grad and input must be defined tensors");
  VNN_CHECK(DTypeError, is_floating(grad.dtype()) && is_floating(a.dtype()),
            "gelu_backward: needs floating tensors, got grad ", name(grad.dtype()), " and input ", name(a.dtype()),
            "; convert first, e.g. t.to(vnn::kFloat32)");
  return binary(grad, a, VNN_BINARY_GELU_BACKWARD);
}

Tensor clamp(const Tensor& a, double lo, double hi) {
  DType t = clamp_type(a, lo, hi);
  Tensor in = a.to(t);
  Tensor out = detail::make_empty(a.impl()->ctx(), a.sizes(), t);
  detail::enqueue(VNN_OP_UNARY, "clamp", {&in}, out, {lo, hi}, {int64_t(VNN_UNARY_CLAMP)});
  record_unary("clamp", VNN_UNARY_CLAMP, in, out, {lo, hi});
  return out;
}
Tensor clamp_min(const Tensor& a, double lo) { return clamp(a, lo, NAN); }
Tensor clamp_max(const Tensor& a, double hi) { return clamp(a, NAN, hi); }

Tensor& Tensor::clamp_(double lo, double hi) {
  DType t = clamp_type(*this, lo, hi);
  check_inplace_type(*this, t, "clamp");
  if (detail::needs_grad({this}))
    return detail::inplace_with_grad(*this, "clamp_", [&](const Tensor& old) { return vnn::clamp(old, lo, hi); });
  detail::mark_modified(*this, "clamp_");
  if (is_storage_only(dtype())) return copy_(vnn::clamp(*this, lo, hi));
  detail::enqueue(VNN_OP_UNARY, "clamp_", {this}, *this, {lo, hi}, {int64_t(VNN_UNARY_CLAMP)});
  return *this;
}
Tensor& Tensor::clamp_min_(double lo) { return clamp_(lo, NAN); }
Tensor& Tensor::clamp_max_(double hi) { return clamp_(NAN, hi); }

// The op table's plain ops (vnn/ops/unary.def): the free function, the
// method and the in-place method of each; FP32 ones run in float32 under
// autocast, as PyTorch's fp32 list.
#define VNN_UNARY_DEFINE_PLAIN(ID, NAME)                                             \
  Tensor NAME(const Tensor& a) { return unary(a, VNN_UNARY_##ID); }                  \
  Tensor Tensor::NAME() const { return vnn::NAME(*this); }                           \
  Tensor& Tensor::NAME##_() { return inplace_unary(*this, VNN_UNARY_##ID); }
#define VNN_UNARY_DEFINE_FP32(ID, NAME)                                                                  \
  Tensor NAME(const Tensor& a) {                                                                         \
    if (autocast::detail::OpScope s{autocast::detail::Policy::fp32, {&a}}) return NAME(s[0]);           \
    return unary(a, VNN_UNARY_##ID);                                                                     \
  }                                                                                                      \
  Tensor Tensor::NAME() const { return vnn::NAME(*this); }                                               \
  Tensor& Tensor::NAME##_() { return inplace_unary(*this, VNN_UNARY_##ID); }
#define VNN_UNARY_DEFINE_CUSTOM(ID, NAME)
#define VNN_UNARY_OP(ID, NAME, SIG, ...) VNN_UNARY_DEFINE_##SIG(ID, NAME)
#include "vnn/ops/unary.def"
#undef VNN_UNARY_OP

// The binary op table's plain ops (vnn/ops/binary.def): tensor and scalar
// operands, the methods and the in-place forms.
#define VNN_BINARY_DEFINE_PLAIN(ID, NAME)                                                                     \
  Tensor NAME(const Tensor& a, const Tensor& b) { return binary(a, b, VNN_BINARY_##ID); }                     \
  Tensor NAME(const Tensor& a, double b) { return binary(a, scalar_like(a, b), VNN_BINARY_##ID); }            \
  Tensor Tensor::NAME(const Tensor& other) const { return vnn::NAME(*this, other); }                          \
  Tensor Tensor::NAME(double other) const { return vnn::NAME(*this, other); }                                 \
  Tensor& Tensor::NAME##_(const Tensor& other) { return inplace_binary(*this, other, VNN_BINARY_##ID, 1.0); } \
  Tensor& Tensor::NAME##_(double other) {                                                                     \
    return inplace_binary(*this, scalar_like(*this, other), VNN_BINARY_##ID, 1.0);                           \
  }
#define VNN_BINARY_DEFINE_CUSTOM(ID, NAME)
#define VNN_BINARY_OP(ID, NAME, SIG, ...) VNN_BINARY_DEFINE_##SIG(ID, NAME)
#include "vnn/ops/binary.def"
#undef VNN_BINARY_OP

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  detail::check_same_device(cond, a, "where", "input");
  detail::check_same_device(cond, b, "where", "other");
  check_bool_cond(cond, "where", "condition");
  Shape shape = broadcast_shapes(broadcast_shapes(cond.sizes(), a.sizes(), "where"), b.sizes(), "where");
  DType t = result_type(a, b);
  Tensor out = detail::make_empty(a.impl()->ctx(), shape, t);
  Tensor c = cond.expand(shape), x = a.to(t).expand(shape), y = b.to(t).expand(shape);
  detail::enqueue(VNN_OP_WHERE, "where", {&c, &x, &y}, out);
  if (detail::needs_grad({&x, &y}) && is_floating(t))
    detail::record("where", out, {&c, &x, &y}, detail::where_backward(c), {&c}, /*twice_differentiable=*/true);
  return out;
}
Tensor where(const Tensor& cond, const Tensor& a, double b) { return where(cond, a, scalar_like(a, b)); }
Tensor where(const Tensor& cond, double a, const Tensor& b) { return where(cond, scalar_like(b, a), b); }
Tensor where(const Tensor& cond, double a, double b) {
  VNN_CHECK(ValueError, cond.defined(), "where: argument 'condition' is an undefined tensor");
  const TensorOptions o = TensorOptions(cond.device()).dtype(kFloat32);
  return where(cond, full({}, a, o), full({}, b, o));
}

Tensor masked_fill(const Tensor& t, const Tensor& mask, double value) {
  Tensor out = t.clone();
  out.masked_fill_(mask, value);
  return out;
}

namespace {

// t where (j - i) compares with diagonal as `keep` says over the last two dims, else zero.
Tensor triangle(const Tensor& t, int64_t diagonal, bool lower, const char* op) {
  VNN_CHECK(ValueError, t.defined(), op, ": argument 'input' is an undefined tensor");
  VNN_CHECK(ShapeError, t.dim() >= 2, op, ": input must have at least 2 dims (a matrix or a batch of them), got shape ",
            t.sizes());
  const int64_t rows = t.size(-2), cols = t.size(-1);
  TensorOptions idx = TensorOptions(t.device()).with(kInt64);
  Tensor offset = sub(arange(int64_t(0), cols, int64_t(1), idx).view({1, cols}),
                      arange(int64_t(0), rows, int64_t(1), idx).view({rows, 1}));  // j - i
  Tensor keep = lower ? le(offset, double(diagonal)) : ge(offset, double(diagonal));
  return where(keep, t, zeros({}, TensorOptions(t.device()).with(t.dtype())));
}

}  // namespace

Tensor tril(const Tensor& t, int64_t diagonal) { return triangle(t, diagonal, true, "tril"); }
Tensor triu(const Tensor& t, int64_t diagonal) { return triangle(t, diagonal, false, "triu"); }

Tensor& Tensor::masked_fill_(const Tensor& mask, double value) {
  detail::check_same_device(*this, mask, "masked_fill", "mask");
  check_bool_cond(mask, "masked_fill", "mask");
  Shape shape = broadcast_shapes(sizes(), mask.sizes(), "masked_fill");
  VNN_CHECK(ShapeError, shape == sizes(), "masked_fill_: mask of shape ", mask.sizes(),
            " does not broadcast to self's shape ", sizes());
  if (detail::needs_grad({this})) {
    Tensor m = mask.expand(sizes());
    return detail::inplace_with_grad(*this, "masked_fill_", [&](const Tensor& old) {
      return vnn::where(m, full({}, value, TensorOptions(device()).with(dtype())), old);
    });
  }
  detail::mark_modified(*this, "masked_fill_");
  // The value converts to self's dtype as a C cast would (FILL's rule).
  Tensor v = full({}, value, TensorOptions(device()).with(dtype()));
  Tensor m = mask.expand(sizes()), fill = v.expand(sizes());
  detail::enqueue(VNN_OP_WHERE, "masked_fill_", {&m, &fill, this}, *this);
  return *this;
}

}  // namespace vnn

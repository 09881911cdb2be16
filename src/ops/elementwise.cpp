// Elementwise ops: validation, broadcasting and type promotion happen here
// once; the backend receives same-shape, same-dtype operands.
#include "tensor/tensor_impl.hpp"
#include "vnn/error.h"

namespace vnn {

namespace {

const char* binary_name(vnn_binary_fn fn) {
  switch (fn) {
    case VNN_BINARY_ADD: return "add";
    case VNN_BINARY_SUB: return "sub";
    case VNN_BINARY_MUL: return "mul";
    case VNN_BINARY_DIV: return "div";
    case VNN_BINARY_MAXIMUM: return "maximum";
    case VNN_BINARY_MINIMUM: return "minimum";
  }
  return "binary";
}

void enqueue_binary(const Tensor& out, const Tensor& a, const Tensor& b, vnn_binary_fn fn, double alpha) {
  detail::enqueue(VNN_OP_BINARY, binary_name(fn), {&a, &b}, out, {alpha}, {int64_t(fn)});
}

Tensor binary(const Tensor& a, const Tensor& b, vnn_binary_fn fn, double alpha) {
  const char* op = binary_name(fn);
  detail::check_same_device(a, b, op, "other");
  Shape shape = broadcast_shapes(a.sizes(), b.sizes(), op);
  DType t = promote_types(a.dtype(), b.dtype());
  if (fn == VNN_BINARY_DIV && !is_floating(t)) t = kFloat32;  // true division
  if (t == kFloat16 || t == kBFloat16) t = kFloat32;           // storage-only types
  Tensor out = detail::make_empty(a.impl()->ctx(), shape, t);
  enqueue_binary(out, a.to(t).expand(shape), b.to(t).expand(shape), fn, alpha);
  return out;
}

Tensor scalar_like(const Tensor& a, double v) {
  DType t = is_floating(a.dtype()) ? a.dtype() : (v == double(int64_t(v)) ? a.dtype() : kFloat32);
  if (t == kBool) t = v == double(int64_t(v)) ? kInt64 : kFloat32;
  return full({}, v, TensorOptions(a.device()).with(t));
}

Tensor& inplace_binary(Tensor& self, const Tensor& other, vnn_binary_fn fn, double alpha) {
  const char* op = binary_name(fn);
  detail::check_same_device(self, other, op, "other");
  DType t = promote_types(self.dtype(), other.dtype());
  if (t != self.dtype() && !(is_floating(self.dtype()) && is_floating(t)))
    throw DTypeError(std::string(op) + "_: result type " + name(t) + " can't be cast to the desired output type " +
                     name(self.dtype()) + "; use the out-of-place " + op + " or convert self first");
  Tensor rhs = other.to(self.dtype()).expand(self.sizes());
  enqueue_binary(self, self, rhs, fn, alpha);
  return self;
}

Tensor unary(const Tensor& a, vnn_unary_fn fn, const char* op, bool needs_float) {
  DType t = a.dtype();
  if ((needs_float && !is_floating(t)) || t == kFloat16 || t == kBFloat16) t = kFloat32;
  if (t == kBool && !needs_float)
    throw DTypeError(std::string(op) + ": not defined for bool tensors; convert with .to(vnn::kInt32) first");
  Tensor in = a.to(t);
  Tensor out = detail::make_empty(a.impl()->ctx(), a.sizes(), t);
  detail::enqueue(VNN_OP_UNARY, op, {&in}, out, {}, {int64_t(fn)});
  return out;
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
      throw ShapeError(std::string(op) + ": shapes " + a.str() + " and " + b.str() +
                       " cannot be broadcast together (size " + std::to_string(da) + " vs " +
                       std::to_string(db) + " at dimension " + std::to_string(i) + ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Tensor add(const Tensor& a, const Tensor& b, double alpha) { return binary(a, b, VNN_BINARY_ADD, alpha); }
Tensor sub(const Tensor& a, const Tensor& b, double alpha) { return binary(a, b, VNN_BINARY_SUB, alpha); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(a, b, VNN_BINARY_MUL, 1.0); }
Tensor div(const Tensor& a, const Tensor& b) { return binary(a, b, VNN_BINARY_DIV, 1.0); }
Tensor maximum(const Tensor& a, const Tensor& b) { return binary(a, b, VNN_BINARY_MAXIMUM, 1.0); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary(a, b, VNN_BINARY_MINIMUM, 1.0); }
Tensor add(const Tensor& a, double b) { return add(a, scalar_like(a, b)); }
Tensor mul(const Tensor& a, double b) { return mul(a, scalar_like(a, b)); }

Tensor& Tensor::add_(const Tensor& other, double alpha) { return inplace_binary(*this, other, VNN_BINARY_ADD, alpha); }
Tensor& Tensor::add_(double other) { return inplace_binary(*this, scalar_like(*this, other), VNN_BINARY_ADD, 1.0); }
Tensor& Tensor::mul_(const Tensor& other) { return inplace_binary(*this, other, VNN_BINARY_MUL, 1.0); }
Tensor& Tensor::mul_(double other) { return inplace_binary(*this, scalar_like(*this, other), VNN_BINARY_MUL, 1.0); }

Tensor neg(const Tensor& a) { return unary(a, VNN_UNARY_NEG, "neg", false); }
Tensor abs(const Tensor& a) { return unary(a, VNN_UNARY_ABS, "abs", false); }
Tensor relu(const Tensor& a) { return unary(a, VNN_UNARY_RELU, "relu", false); }
Tensor exp(const Tensor& a) { return unary(a, VNN_UNARY_EXP, "exp", true); }
Tensor log(const Tensor& a) { return unary(a, VNN_UNARY_LOG, "log", true); }
Tensor sqrt(const Tensor& a) { return unary(a, VNN_UNARY_SQRT, "sqrt", true); }
Tensor sigmoid(const Tensor& a) { return unary(a, VNN_UNARY_SIGMOID, "sigmoid", true); }
Tensor tanh(const Tensor& a) { return unary(a, VNN_UNARY_TANH, "tanh", true); }

}  // namespace vnn

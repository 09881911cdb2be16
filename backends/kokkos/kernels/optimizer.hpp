// OPTIMIZER_STEP: one fused update of a parameter and its optimizer state,
// in place (see docs/ops.md for the operand and scalar layout). The core
// hands over contiguous operands (dtypes: optimizer_step below), so each element is
// independent and the kernel is a flat loop; the per-element math lives in
// KOKKOS_INLINE_FUNCTION helpers so that flags are plain run-time ifs (no
// if constexpr inside the lambdas, which nvcc rejects).
#pragma once
#include <Kokkos_Core.hpp>

#include "common/op_params.hpp"
#include "kokkos/kernels/types.hpp"

namespace vnn::kernels {

// Pointers to element 0 of each operand (nullptr where absent). P is the
// parameter's storage type, G the gradient's: equal, or float32 master
// weights with 16-bit gradients. State is always in the compute type C
// (float for float16/bfloat16 parameters: 16-bit state would lose the small
// updates), and so is the math.
template <class P, class G>
struct OptimPtrs {
  using C = compute_t<P>;
  P* p = nullptr;
  const G* g = nullptr;
  C* s0 = nullptr;
  C* s1 = nullptr;
  C* s2 = nullptr;
  KOKKOS_INLINE_FUNCTION C param(int64_t i) const { return load(p[i]); }
  KOKKOS_INLINE_FUNCTION C grad(int64_t i, int maximize) const {
    C g0 = C(load(g[i]));
    return maximize ? -g0 : g0;
  }
  KOKKOS_INLINE_FUNCTION void set_param(int64_t i, C v) const { p[i] = store<P>(v); }
};

// SGD, PyTorch's rule: d = g (+ wd p); buf = first ? d : m buf + (1 - damp) d;
// d = nesterov ? d + m buf : buf; p -= lr d.
template <class A, class C = typename A::C>
KOKKOS_INLINE_FUNCTION void sgd_elem(const A& a, int64_t i, C lr, C momentum, C dampening, C wd, int nesterov,
                                     int maximize, int has_buf, int first) {
  C g = a.grad(i, maximize);
  C p = a.param(i);
  if (wd != C(0)) g = g + wd * p;
  if (has_buf) {
    C buf = first ? g : momentum * a.s0[i] + (C(1) - dampening) * g;
    a.s0[i] = buf;
    g = nesterov ? g + momentum * buf : buf;
  }
  a.set_param(i, p - lr * g);
}

// Adam / AdamW. step_size = lr / (1 - beta1^t) and bc2_sqrt =
// sqrt(1 - beta2^t) come from the host.
template <class A, class C = typename A::C>
KOKKOS_INLINE_FUNCTION void adam_elem(const A& a, int64_t i, C lr, C beta1, C beta2, C eps, C wd, C step_size,
                                      C bc2_sqrt, int decoupled, int amsgrad, int maximize) {
  C g = a.grad(i, maximize);
  C p = a.param(i);
  if (wd != C(0)) {
    if (decoupled)
      p = p * (C(1) - lr * wd);
    else
      g = g + wd * p;
  }
  C m = a.s0[i];
  m = m + (C(1) - beta1) * (g - m);  // lerp, as torch's exp_avg.lerp_
  C v = beta2 * a.s1[i] + (C(1) - beta2) * g * g;
  a.s0[i] = m;
  a.s1[i] = v;
  if (amsgrad) {
    C vm = a.s2[i];
    vm = vm > v ? vm : v;
    a.s2[i] = vm;
    v = vm;
  }
  C denom = kmath::sqrt(v) / bc2_sqrt + eps;
  a.set_param(i, p - step_size * (m / denom));
}

// RMSprop: s0 = square_avg, s1 = momentum buffer, s2 = grad_avg (centered).
template <class A, class C = typename A::C>
KOKKOS_INLINE_FUNCTION void rmsprop_elem(const A& a, int64_t i, C lr, C alpha, C eps, C wd, C momentum,
                                         int centered, int maximize, int has_buf) {
  C g = a.grad(i, maximize);
  C p = a.param(i);
  if (wd != C(0)) g = g + wd * p;
  C sq = alpha * a.s0[i] + (C(1) - alpha) * g * g;
  a.s0[i] = sq;
  C avg;
  if (centered) {
    C ga = a.s2[i];
    ga = ga + (C(1) - alpha) * (g - ga);
    a.s2[i] = ga;
    avg = kmath::sqrt(sq - ga * ga);
  } else {
    avg = kmath::sqrt(sq);
  }
  avg = avg + eps;
  if (has_buf) {
    C buf = momentum * a.s1[i] + g / avg;
    a.s1[i] = buf;
    a.set_param(i, p - lr * buf);
  } else {
    a.set_param(i, p - lr * (g / avg));
  }
}

// Adagrad: clr = lr / (1 + (t - 1) lr_decay) from the host; s0 = sum.
template <class A, class C = typename A::C>
KOKKOS_INLINE_FUNCTION void adagrad_elem(const A& a, int64_t i, C clr, C eps, C wd, int maximize) {
  C g = a.grad(i, maximize);
  C p = a.param(i);
  if (wd != C(0)) g = g + wd * p;
  C s = a.s0[i] + g * g;
  a.s0[i] = s;
  a.set_param(i, p - clr * (g / (kmath::sqrt(s) + eps)));
}

template <class Exec, class P, class G>
void optimizer_typed(const Exec& exec, const vnn_op& op, const vnn_optimizer_params& prm) {
  using C = compute_t<P>;
  const int64_t n = numel(op.outputs[0]);
  OptimPtrs<P, G> a;
  a.p = typed<P>(op.outputs[0]) + op.outputs[0].offset;
  a.g = typed<G>(op.inputs[0]) + op.inputs[0].offset;
  C* s[3] = {nullptr, nullptr, nullptr};
  for (int k = 1; k < op.num_outputs && k <= 3; ++k) s[k - 1] = typed<C>(op.outputs[k]) + op.outputs[k].offset;
  a.s0 = s[0];
  a.s1 = s[1];
  a.s2 = s[2];
  Range<Exec> range(exec, 0, n);
  switch (prm.fn) {
    case VNN_OPTIM_SGD: {
      const vnn_sgd_params& q = prm.u.sgd;
      const C lr = C(q.lr), mom = C(q.momentum), damp = C(q.dampening), wd = C(q.weight_decay);
      const int nesterov = int(q.nesterov), maximize = int(q.maximize), has_buf = int(q.has_buffer),
                first = int(q.first);
      Kokkos::parallel_for("vnn::optim_sgd", range, KOKKOS_LAMBDA(int64_t i) {
        sgd_elem(a, i, lr, mom, damp, wd, nesterov, maximize, has_buf, first);
      });
      return;
    }
    case VNN_OPTIM_ADAM: {
      const vnn_adam_params& q = prm.u.adam;
      const C lr = C(q.lr), b1 = C(q.beta1), b2 = C(q.beta2), eps = C(q.eps), wd = C(q.weight_decay);
      const C step_size = C(q.step_size), bc2 = C(q.bias_correction2_sqrt);
      const int decoupled = int(q.decoupled), amsgrad = int(q.amsgrad), maximize = int(q.maximize);
      Kokkos::parallel_for("vnn::optim_adam", range, KOKKOS_LAMBDA(int64_t i) {
        adam_elem(a, i, lr, b1, b2, eps, wd, step_size, bc2, decoupled, amsgrad, maximize);
      });
      return;
    }
    case VNN_OPTIM_RMSPROP: {
      const vnn_rmsprop_params& q = prm.u.rmsprop;
      const C lr = C(q.lr), alpha = C(q.alpha), eps = C(q.eps), wd = C(q.weight_decay), mom = C(q.momentum);
      const int centered = int(q.centered), maximize = int(q.maximize), has_buf = int(q.has_buffer);
      Kokkos::parallel_for("vnn::optim_rmsprop", range, KOKKOS_LAMBDA(int64_t i) {
        rmsprop_elem(a, i, lr, alpha, eps, wd, mom, centered, maximize, has_buf);
      });
      return;
    }
    default: {  // VNN_OPTIM_ADAGRAD (decode_optimizer knows no other)
      const vnn_adagrad_params& q = prm.u.adagrad;
      const C clr = C(q.clr), eps = C(q.eps), wd = C(q.weight_decay);
      const int maximize = int(q.maximize);
      Kokkos::parallel_for("vnn::optim_adagrad", range, KOKKOS_LAMBDA(int64_t i) {
        adagrad_elem(a, i, clr, eps, wd, maximize);
      });
      return;
    }
  }
}

// The operand dtypes OPTIMIZER_STEP takes (docs/ops.md): param and grad of
// one float dtype, or a float32 (master) param with a float16/bfloat16
// grad; state float64 for float64 params, else float32.
template <class Exec>
bool optimizer_step(const Exec& exec, const vnn_op& op) {
  vnn_optimizer_params prm;
  if (op.num_inputs < 1 || !decode_optimizer(op, &prm)) return false;
  const int32_t pt = op.outputs[0].dtype, gt = op.inputs[0].dtype;
  const int32_t st = pt == VNN_FLOAT64 ? VNN_FLOAT64 : VNN_FLOAT32;
  for (int k = 1; k < op.num_outputs; ++k)
    if (op.outputs[k].dtype != st) return false;
  if (pt == gt) {
    if (pt == VNN_FLOAT32) return optimizer_typed<Exec, float, float>(exec, op, prm), true;
    if (pt == VNN_FLOAT64) return optimizer_typed<Exec, double, double>(exec, op, prm), true;
    if (pt == VNN_FLOAT16) return optimizer_typed<Exec, Half, Half>(exec, op, prm), true;
    if (pt == VNN_BFLOAT16) return optimizer_typed<Exec, BFloat16, BFloat16>(exec, op, prm), true;
    return false;
  }
  if (pt == VNN_FLOAT32 && gt == VNN_FLOAT16) return optimizer_typed<Exec, float, Half>(exec, op, prm), true;
  if (pt == VNN_FLOAT32 && gt == VNN_BFLOAT16) return optimizer_typed<Exec, float, BFloat16>(exec, op, prm), true;
  return false;
}

// UNSCALE_CHECK (GradScaler): every gradient out1.. is multiplied in place
// by scalars[0] (1 / scale) and out0[0] (float32) becomes 1 when any
// element was inf or NaN. One op per parameter group, so the host reads
// back one flag per step instead of one value per tensor.
template <class Exec, class T>
void unscale_typed(const Exec& exec, const vnn_tensor_desc& d, double inv_scale, float* found) {
  using C = compute_t<T>;
  T* g = typed<T>(d) + d.offset;
  const C inv = C(inv_scale);
  Kokkos::parallel_for("vnn::amp_unscale", Range<Exec>(exec, 0, numel(d)), KOKKOS_LAMBDA(int64_t i) {
    const C v = load(g[i]);
    // x - x is 0 for every finite x, NaN for inf and NaN.
    if (!(v - v == C(0))) Kokkos::atomic_exchange(found, 1.0f);
    g[i] = store<T>(v * inv);
  });
}

template <class Exec>
bool unscale_check(const Exec& exec, const vnn_op& op) {
  if (op.num_outputs < 1 || op.num_scalars < 1 || op.outputs[0].dtype != VNN_FLOAT32 || numel(op.outputs[0]) != 1)
    return false;
  for (int k = 1; k < op.num_outputs; ++k) {
    const int32_t dt = op.outputs[k].dtype;
    if (dt != VNN_FLOAT32 && dt != VNN_FLOAT64 && dt != VNN_FLOAT16 && dt != VNN_BFLOAT16) return false;
  }
  float* found = typed<float>(op.outputs[0]) + op.outputs[0].offset;
  for (int k = 1; k < op.num_outputs; ++k) {
    const vnn_tensor_desc& d = op.outputs[k];
    if (numel(d) == 0) continue;
    switch (d.dtype) {
      case VNN_FLOAT32: unscale_typed<Exec, float>(exec, d, op.scalars[0], found); break;
      case VNN_FLOAT64: unscale_typed<Exec, double>(exec, d, op.scalars[0], found); break;
      case VNN_FLOAT16: unscale_typed<Exec, Half>(exec, d, op.scalars[0], found); break;
      default: unscale_typed<Exec, BFloat16>(exec, d, op.scalars[0], found); break;
    }
  }
  return true;
}

}  // namespace vnn::kernels

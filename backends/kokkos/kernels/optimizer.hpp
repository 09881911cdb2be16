// OPTIMIZER_STEP: one fused update of a parameter and its optimizer state,
// in place (see docs/ops.md for the operand and scalar layout). The core
// hands over contiguous operands of one float dtype, so each element is
// independent and the kernel is a flat loop; the per-element math lives in
// KOKKOS_INLINE_FUNCTION helpers so that flags are plain run-time ifs (no
// if constexpr inside the lambdas, which nvcc rejects).
#pragma once
#include <Kokkos_Core.hpp>

#include "kokkos/kernels/types.hpp"

namespace vnn::kernels {

// Pointers to element 0 of each operand (nullptr where absent).
template <class T>
struct OptimPtrs {
  T* p = nullptr;
  const T* g = nullptr;
  T* s0 = nullptr;
  T* s1 = nullptr;
  T* s2 = nullptr;
};

// SGD, PyTorch's rule: d = g (+ wd p); buf = first ? d : m buf + (1 - damp) d;
// d = nesterov ? d + m buf : buf; p -= lr d.
template <class T>
KOKKOS_INLINE_FUNCTION void sgd_elem(const OptimPtrs<T>& a, int64_t i, T lr, T momentum, T dampening, T wd,
                                     int nesterov, int maximize, int has_buf, int first) {
  T g = maximize ? -a.g[i] : a.g[i];
  T p = a.p[i];
  if (wd != T(0)) g = g + wd * p;
  if (has_buf) {
    T buf = first ? g : momentum * a.s0[i] + (T(1) - dampening) * g;
    a.s0[i] = buf;
    g = nesterov ? g + momentum * buf : buf;
  }
  a.p[i] = p - lr * g;
}

// Adam / AdamW. step_size = lr / (1 - beta1^t) and bc2_sqrt =
// sqrt(1 - beta2^t) come from the host.
template <class T>
KOKKOS_INLINE_FUNCTION void adam_elem(const OptimPtrs<T>& a, int64_t i, T lr, T beta1, T beta2, T eps, T wd,
                                      T step_size, T bc2_sqrt, int decoupled, int amsgrad, int maximize) {
  T g = maximize ? -a.g[i] : a.g[i];
  T p = a.p[i];
  if (wd != T(0)) {
    if (decoupled)
      p = p * (T(1) - lr * wd);
    else
      g = g + wd * p;
  }
  T m = a.s0[i];
  m = m + (T(1) - beta1) * (g - m);  // lerp, as torch's exp_avg.lerp_
  T v = beta2 * a.s1[i] + (T(1) - beta2) * g * g;
  a.s0[i] = m;
  a.s1[i] = v;
  if (amsgrad) {
    T vm = a.s2[i];
    vm = vm > v ? vm : v;
    a.s2[i] = vm;
    v = vm;
  }
  T denom = kmath::sqrt(v) / bc2_sqrt + eps;
  a.p[i] = p - step_size * (m / denom);
}

// RMSprop: s0 = square_avg, s1 = momentum buffer, s2 = grad_avg (centered).
template <class T>
KOKKOS_INLINE_FUNCTION void rmsprop_elem(const OptimPtrs<T>& a, int64_t i, T lr, T alpha, T eps, T wd, T momentum,
                                         int centered, int maximize, int has_buf) {
  T g = maximize ? -a.g[i] : a.g[i];
  T p = a.p[i];
  if (wd != T(0)) g = g + wd * p;
  T sq = alpha * a.s0[i] + (T(1) - alpha) * g * g;
  a.s0[i] = sq;
  T avg;
  if (centered) {
    T ga = a.s2[i];
    ga = ga + (T(1) - alpha) * (g - ga);
    a.s2[i] = ga;
    avg = kmath::sqrt(sq - ga * ga);
  } else {
    avg = kmath::sqrt(sq);
  }
  avg = avg + eps;
  if (has_buf) {
    T buf = momentum * a.s1[i] + g / avg;
    a.s1[i] = buf;
    a.p[i] = p - lr * buf;
  } else {
    a.p[i] = p - lr * (g / avg);
  }
}

// Adagrad: clr = lr / (1 + (t - 1) lr_decay) from the host; s0 = sum.
template <class T>
KOKKOS_INLINE_FUNCTION void adagrad_elem(const OptimPtrs<T>& a, int64_t i, T clr, T eps, T wd, int maximize) {
  T g = maximize ? -a.g[i] : a.g[i];
  T p = a.p[i];
  if (wd != T(0)) g = g + wd * p;
  T s = a.s0[i] + g * g;
  a.s0[i] = s;
  a.p[i] = p - clr * (g / (kmath::sqrt(s) + eps));
}

template <class Exec, class T>
bool optimizer_typed(const Exec& exec, const vnn_op& op) {
  const int64_t fn = op.ints[0];
  const int64_t n = numel(op.outputs[0]);
  OptimPtrs<T> a;
  a.p = typed<T>(op.outputs[0]) + op.outputs[0].offset;
  a.g = typed<T>(op.inputs[0]) + op.inputs[0].offset;
  T* s[3] = {nullptr, nullptr, nullptr};
  for (int k = 1; k < op.num_outputs && k <= 3; ++k) s[k - 1] = typed<T>(op.outputs[k]) + op.outputs[k].offset;
  a.s0 = s[0];
  a.s1 = s[1];
  a.s2 = s[2];
  auto I = [&](int k) { return k < op.num_ints ? int(op.ints[k]) : 0; };
  auto S = [&](int k) { return T(op.scalars[k]); };
  Range<Exec> range(exec, 0, n);
  if (fn == VNN_OPTIM_SGD) {
    if (op.num_scalars < 4 || op.num_ints < 5 || (op.ints[3] && op.num_outputs < 2)) return false;
    const T lr = S(0), mom = S(1), damp = S(2), wd = S(3);
    const int nesterov = I(1), maximize = I(2), has_buf = I(3), first = I(4);
    Kokkos::parallel_for("vnn::optim_sgd", range, KOKKOS_LAMBDA(int64_t i) {
      sgd_elem(a, i, lr, mom, damp, wd, nesterov, maximize, has_buf, first);
    });
    return true;
  }
  if (fn == VNN_OPTIM_ADAM) {
    if (op.num_scalars < 7 || op.num_ints < 4 || op.num_outputs < (op.ints[2] ? 4 : 3)) return false;
    const T lr = S(0), b1 = S(1), b2 = S(2), eps = S(3), wd = S(4), step_size = S(5), bc2 = S(6);
    const int decoupled = I(1), amsgrad = I(2), maximize = I(3);
    Kokkos::parallel_for("vnn::optim_adam", range, KOKKOS_LAMBDA(int64_t i) {
      adam_elem(a, i, lr, b1, b2, eps, wd, step_size, bc2, decoupled, amsgrad, maximize);
    });
    return true;
  }
  if (fn == VNN_OPTIM_RMSPROP) {
    if (op.num_scalars < 5 || op.num_ints < 4 || op.num_outputs < 4) return false;
    const T lr = S(0), alpha = S(1), eps = S(2), wd = S(3), mom = S(4);
    const int centered = I(1), maximize = I(2), has_buf = I(3);
    Kokkos::parallel_for("vnn::optim_rmsprop", range, KOKKOS_LAMBDA(int64_t i) {
      rmsprop_elem(a, i, lr, alpha, eps, wd, mom, centered, maximize, has_buf);
    });
    return true;
  }
  if (fn == VNN_OPTIM_ADAGRAD) {
    if (op.num_scalars < 3 || op.num_ints < 2 || op.num_outputs < 2) return false;
    const T clr = S(0), eps = S(1), wd = S(2);
    const int maximize = I(1);
    Kokkos::parallel_for("vnn::optim_adagrad", range, KOKKOS_LAMBDA(int64_t i) {
      adagrad_elem(a, i, clr, eps, wd, maximize);
    });
    return true;
  }
  return false;
}

template <class Exec>
bool optimizer_step(const Exec& exec, const vnn_op& op) {
  if (op.num_outputs < 1 || op.num_inputs < 1 || op.num_ints < 1) return false;
  const int32_t dt = op.outputs[0].dtype;
  for (int k = 0; k < op.num_outputs; ++k)
    if (op.outputs[k].dtype != dt) return false;
  if (op.inputs[0].dtype != dt) return false;
  if (dt == VNN_FLOAT32) return optimizer_typed<Exec, float>(exec, op);
  if (dt == VNN_FLOAT64) return optimizer_typed<Exec, double>(exec, op);
  return false;
}

}  // namespace vnn::kernels

// OPTIMIZER_STEP: one fused update of a parameter and its optimizer state,
// in place (see docs/ops.md for the operand and scalar layout). The core
// hands over contiguous operands (dtypes: optimizer_step below), so each element is
// independent and the kernel is a flat loop; the per-element math lives in
// KOKKOS_INLINE_FUNCTION helpers so that flags are plain run-time ifs (no
// if constexpr inside the lambdas, which nvcc rejects).
#pragma once
#include <Kokkos_Core.hpp>
#include <vector>

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
bool optimizer_typed(const Exec& exec, const vnn_op& op) {
  using C = compute_t<P>;
  const int64_t fn = op.ints[0];
  const int64_t n = numel(op.outputs[0]);
  OptimPtrs<P, G> a;
  a.p = typed<P>(op.outputs[0]) + op.outputs[0].offset;
  a.g = typed<G>(op.inputs[0]) + op.inputs[0].offset;
  C* s[3] = {nullptr, nullptr, nullptr};
  for (int k = 1; k < op.num_outputs && k <= 3; ++k) s[k - 1] = typed<C>(op.outputs[k]) + op.outputs[k].offset;
  a.s0 = s[0];
  a.s1 = s[1];
  a.s2 = s[2];
  auto I = [&](int k) { return k < op.num_ints ? int(op.ints[k]) : 0; };
  auto S = [&](int k) { return C(op.scalars[k]); };
  Range<Exec> range(exec, 0, n);
  if (fn == VNN_OPTIM_SGD) {
    if (op.num_scalars < 4 || op.num_ints < 5 || (op.ints[3] && op.num_outputs < 2)) return false;
    const C lr = S(0), mom = S(1), damp = S(2), wd = S(3);
    const int nesterov = I(1), maximize = I(2), has_buf = I(3), first = I(4);
    Kokkos::parallel_for("vnn::optim_sgd", range, KOKKOS_LAMBDA(int64_t i) {
      sgd_elem(a, i, lr, mom, damp, wd, nesterov, maximize, has_buf, first);
    });
    return true;
  }
  if (fn == VNN_OPTIM_ADAM) {
    if (op.num_scalars < 7 || op.num_ints < 4 || op.num_outputs < (op.ints[2] ? 4 : 3)) return false;
    const C lr = S(0), b1 = S(1), b2 = S(2), eps = S(3), wd = S(4), step_size = S(5), bc2 = S(6);
    const int decoupled = I(1), amsgrad = I(2), maximize = I(3);
    Kokkos::parallel_for("vnn::optim_adam", range, KOKKOS_LAMBDA(int64_t i) {
      adam_elem(a, i, lr, b1, b2, eps, wd, step_size, bc2, decoupled, amsgrad, maximize);
    });
    return true;
  }
  if (fn == VNN_OPTIM_RMSPROP) {
    if (op.num_scalars < 5 || op.num_ints < 4 || op.num_outputs < 4) return false;
    const C lr = S(0), alpha = S(1), eps = S(2), wd = S(3), mom = S(4);
    const int centered = I(1), maximize = I(2), has_buf = I(3);
    Kokkos::parallel_for("vnn::optim_rmsprop", range, KOKKOS_LAMBDA(int64_t i) {
      rmsprop_elem(a, i, lr, alpha, eps, wd, mom, centered, maximize, has_buf);
    });
    return true;
  }
  if (fn == VNN_OPTIM_ADAGRAD) {
    if (op.num_scalars < 3 || op.num_ints < 2 || op.num_outputs < 2) return false;
    const C clr = S(0), eps = S(1), wd = S(2);
    const int maximize = I(1);
    Kokkos::parallel_for("vnn::optim_adagrad", range, KOKKOS_LAMBDA(int64_t i) {
      adagrad_elem(a, i, clr, eps, wd, maximize);
    });
    return true;
  }
  return false;
}

// The operand dtypes OPTIMIZER_STEP takes (docs/ops.md): param and grad of
// one float dtype, or a float32 (master) param with a float16/bfloat16
// grad; state float64 for float64 params, else float32.
template <class Exec>
bool optimizer_step(const Exec& exec, const vnn_op& op) {
  if (op.num_outputs < 1 || op.num_inputs < 1 || op.num_ints < 1) return false;
  const int32_t pt = op.outputs[0].dtype, gt = op.inputs[0].dtype;
  const int32_t st = pt == VNN_FLOAT64 ? VNN_FLOAT64 : VNN_FLOAT32;
  for (int k = 1; k < op.num_outputs; ++k)
    if (op.outputs[k].dtype != st) return false;
  if (pt == gt) {
    if (pt == VNN_FLOAT32) return optimizer_typed<Exec, float, float>(exec, op);
    if (pt == VNN_FLOAT64) return optimizer_typed<Exec, double, double>(exec, op);
    if (pt == VNN_FLOAT16) return optimizer_typed<Exec, Half, Half>(exec, op);
    if (pt == VNN_BFLOAT16) return optimizer_typed<Exec, BFloat16, BFloat16>(exec, op);
    return false;
  }
  if (pt == VNN_FLOAT32 && gt == VNN_FLOAT16) return optimizer_typed<Exec, float, Half>(exec, op);
  if (pt == VNN_FLOAT32 && gt == VNN_BFLOAT16) return optimizer_typed<Exec, float, BFloat16>(exec, op);
  return false;
}

// UNSCALE_CHECK (GradScaler): every gradient out1.. is multiplied in place
// by scalars[0] (1 / scale) and out0[0] (float32) becomes 1 when any
// element was inf or NaN. One op per parameter group, and one kernel for
// the whole op: a table of chunks (gradient, first element, count, dtype)
// in the queue's memory, one team per chunk walking its elements, so a
// group of any number of gradients and dtypes is one launch and the host
// reads back one flag per step.
struct UnscaleChunk {
  void* data;
  int64_t begin, count;
  int32_t dtype;
};

template <class T, class Team>
KOKKOS_INLINE_FUNCTION void unscale_chunk(const Team& team, const UnscaleChunk& c, double inv_scale, float* found) {
  using C = compute_t<T>;
  T* g = static_cast<T*>(c.data) + c.begin;
  const C inv = C(inv_scale);
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, c.count), [&](int64_t i) {
    const C v = load(g[i]);
    // x - x is 0 for every finite x, NaN for inf and NaN.
    if (!(v - v == C(0))) Kokkos::atomic_exchange(found, 1.0f);
    g[i] = store<T>(v * inv);
  });
}

// The one launch: team c walks chunk c of `table` (a view of UnscaleChunk
// the queue can read).
template <class Exec, class Table>
void unscale_launch(const Exec& exec, const Table& table, int64_t n, double inv, float* found) {
  using Policy = Kokkos::TeamPolicy<Exec>;
  Kokkos::parallel_for("vnn::amp_unscale", Policy(exec, n, Kokkos::AUTO),
                       KOKKOS_LAMBDA(const typename Policy::member_type& team) {
                         const UnscaleChunk c = table(team.league_rank());
                         switch (c.dtype) {
                           case VNN_FLOAT32: unscale_chunk<float>(team, c, inv, found); break;
                           case VNN_FLOAT64: unscale_chunk<double>(team, c, inv, found); break;
                           case VNN_FLOAT16: unscale_chunk<Half>(team, c, inv, found); break;
                           default: unscale_chunk<BFloat16>(team, c, inv, found); break;
                         }
                       });
}

template <class Exec>
bool unscale_check(const Exec& exec, const vnn_op& op) {
  if (op.num_outputs < 1 || op.num_scalars < 1 || op.outputs[0].dtype != VNN_FLOAT32 || numel(op.outputs[0]) != 1)
    return false;
  // Chunks short enough to spread a few large gradients over all threads.
  constexpr int64_t kChunk = 16384;
  std::vector<UnscaleChunk> chunks;
  for (int k = 1; k < op.num_outputs; ++k) {
    const vnn_tensor_desc& d = op.outputs[k];
    const int32_t dt = d.dtype;
    if (dt != VNN_FLOAT32 && dt != VNN_FLOAT64 && dt != VNN_FLOAT16 && dt != VNN_BFLOAT16) return false;
    const int64_t n = numel(d);
    for (int64_t b = 0; b < n; b += kChunk)
      chunks.push_back(UnscaleChunk{d.data, d.offset + b, n - b < kChunk ? n - b : kChunk, dt});
  }
  if (chunks.empty()) return true;
  float* found = typed<float>(op.outputs[0]) + op.outputs[0].offset;
  const double inv = op.scalars[0];
  const int64_t n = int64_t(chunks.size());
  using Host = Kokkos::View<const UnscaleChunk*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
  if constexpr (Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible) {
    // Host spaces (OpenMP, Serial) run the kernel before returning: it
    // reads the vector in place.
    unscale_launch(exec, Host(chunks.data(), chunks.size()), n, inv, found);
  } else {
    // Freed at return while the kernel may still be queued: safe, since
    // freeing device memory (cudaFree / hipFree under Kokkos) waits for the
    // device, as in matmul_device_blas.
    Kokkos::View<UnscaleChunk*, typename Exec::memory_space> table(
        Kokkos::ViewAllocateWithoutInitializing("vnn::amp_unscale_table"), chunks.size());
    Kokkos::deep_copy(exec, table, Host(chunks.data(), chunks.size()));
    unscale_launch(exec, table, n, inv, found);
  }
  return true;
}

}  // namespace vnn::kernels

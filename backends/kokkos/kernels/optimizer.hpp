// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// OPTIMIZER_STEP: one fused update of a parameter and its optimizer state,
// in place (see docs/ops.md for the operand and scalar layout). The core
// hands over contiguous operands (dtypes: optimizer_step below), so each element is
// independent and the kernel is a flat loop; the per-element math lives in
// KOKKOS_INLINE_FUNCTION helpers so that flags are plain run-time ifs (no
// if constexpr inside the lambdas, which nvcc rejects).
#pragma once
#include <Kokkos_Core.hpp>
#include <vector>

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
  KOKKOS_INLINE_FUNCTION C grad(int64_t i) const { return C(load(g[i])); }
  KOKKOS_INLINE_FUNCTION void set_param(int64_t i, C v) const { p[i] = store<P>(v); }
};

// Work items of an optimizer kernel. On the host one item is a block of
// elements run by the plain loops of the *_block functions below: the
// compiler vectorises them (the per-element divisions and square roots
// dominate, and a loop over the element lambda was scalar: the lambda's
// float captures may alias the float stores, so each element reloaded them
// and nothing vectorised). On a GPU one item is one element.
template <class Exec>
struct OptimBlocks {
  static constexpr int64_t size = Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible ? 2048 : 1;
  int64_t n = 0;
  int64_t count() const { return (n + size - 1) / size; }
  KOKKOS_INLINE_FUNCTION int64_t lo(int64_t b) const { return b * size; }
  KOKKOS_INLINE_FUNCTION int64_t hi(int64_t b) const { return n - b * size < size ? n : b * size + size; }
};

// SGD, PyTorch's rule: d = g (+ wd p); buf = first ? d : m buf + (1 - damp) d;
// d = nesterov ? d + m buf : buf; p -= lr d.
template <class C>
struct SgdArgs {
  C lr, momentum, dampening, wd, sign;  // sign: -1 to maximize, else 1
};
template <class A, class C = typename A::C>
KOKKOS_INLINE_FUNCTION void sgd_elem(const A& a, int64_t i, const SgdArgs<C>& s, int l2, int has_buf, int first,
                                     int nesterov) {
  C g = a.grad(i) * s.sign;
  C p = a.param(i);
  if (l2) g = g + s.wd * p;
  if (has_buf) {
    C buf = first ? g : s.momentum * a.s0[i] + (C(1) - s.dampening) * g;
    a.s0[i] = buf;
    g = nesterov ? g + s.momentum * buf : buf;
  }
  a.set_param(i, p - s.lr * g);
}
// The flags are template arguments here so that each loop is branch-free
// (FP selects are not if-converted under the default -ftrapping-math).
template <int L2, int HasBuf, int First, int Nesterov, class A, class C = typename A::C>
KOKKOS_INLINE_FUNCTION void sgd_block(const A& a0, int64_t lo, int64_t hi, SgdArgs<C> s) {
  const A a = a0;  // a local copy, held in registers across the loop
  for (int64_t i = lo; i < hi; ++i) sgd_elem(a, i, s, L2, HasBuf, First, Nesterov);
}
template <class A, class C = typename A::C>
KOKKOS_INLINE_FUNCTION void sgd_block(const A& a, int64_t lo, int64_t hi, const SgdArgs<C>& s, int l2,
                                      int has_buf, int first, int nesterov) {
  if (!has_buf) {
    if (l2) sgd_block<1, 0, 0, 0>(a, lo, hi, s);
    else sgd_block<0, 0, 0, 0>(a, lo, hi, s);
  } else if (first) {  // buf = d, so nesterov's d + m buf needs no load either
    if (l2) nesterov ? sgd_block<1, 1, 1, 1>(a, lo, hi, s) : sgd_block<1, 1, 1, 0>(a, lo, hi, s);
    else nesterov ? sgd_block<0, 1, 1, 1>(a, lo, hi, s) : sgd_block<0, 1, 1, 0>(a, lo, hi, s);
  } else {
    if (l2) nesterov ? sgd_block<1, 1, 0, 1>(a, lo, hi, s) : sgd_block<1, 1, 0, 0>(a, lo, hi, s);
    else nesterov ? sgd_block<0, 1, 0, 1>(a, lo, hi, s) : sgd_block<0, 1, 0, 0>(a, lo, hi, s);
  }
}

// Adam / AdamW. step_size = lr / (1 - beta1^t) and bc2_sqrt =
// sqrt(1 - beta2^t) come from the host; so does decay, AdamW's 1 - lr wd
// (1 for Adam or wd 0: p * 1 is p exactly).
template <class C>
struct AdamArgs {
  C beta1, beta2, eps, wd, step_size, bc2_sqrt, decay, sign;
};
template <class A, class C = typename A::C>
KOKKOS_INLINE_FUNCTION void adam_elem(const A& a, int64_t i, const AdamArgs<C>& s, int l2, int amsgrad) {
  C g = a.grad(i) * s.sign;
  C p = a.param(i) * s.decay;
  if (l2) g = g + s.wd * p;
  C m = a.s0[i];
  m = m + (C(1) - s.beta1) * (g - m);  // lerp, as torch's exp_avg.lerp_
  C v = s.beta2 * a.s1[i] + (C(1) - s.beta2) * g * g;
  a.s0[i] = m;
  a.s1[i] = v;
  if (amsgrad) {
    C vm = a.s2[i];
    vm = vm > v ? vm : v;
    a.s2[i] = vm;
    v = vm;
  }
  C denom = kmath::sqrt(v) / s.bc2_sqrt + s.eps;
  a.set_param(i, p - s.step_size * (m / denom));
}
template <int L2, int Amsgrad, class A, class C = typename A::C>
KOKKOS_INLINE_FUNCTION void adam_block(const A& a0, int64_t lo, int64_t hi, AdamArgs<C> s) {
  const A a = a0;
  for (int64_t i = lo; i < hi; ++i) adam_elem(a, i, s, L2, Amsgrad);
}
template <class A, class C = typename A::C>
KOKKOS_INLINE_FUNCTION void adam_block(const A& a, int64_t lo, int64_t hi, const AdamArgs<C>& s, int l2,
                                       int amsgrad) {
  if (amsgrad) l2 ? adam_block<1, 1>(a, lo, hi, s) : adam_block<0, 1>(a, lo, hi, s);
  else l2 ? adam_block<1, 0>(a, lo, hi, s) : adam_block<0, 0>(a, lo, hi, s);
}

// RMSprop: s0 = square_avg, s1 = momentum buffer, s2 = grad_avg (centered).
template <class C>
struct RmspropArgs {
  C lr, alpha, eps, wd, momentum, sign;
};
template <class A, class C = typename A::C>
KOKKOS_INLINE_FUNCTION void rmsprop_elem(const A& a, int64_t i, const RmspropArgs<C>& s, int l2, int centered,
                                         int has_buf) {
  C g = a.grad(i) * s.sign;
  C p = a.param(i);
  if (l2) g = g + s.wd * p;
  C sq = s.alpha * a.s0[i] + (C(1) - s.alpha) * g * g;
  a.s0[i] = sq;
  C avg;
  if (centered) {
    C ga = a.s2[i];
    ga = ga + (C(1) - s.alpha) * (g - ga);
    a.s2[i] = ga;
    avg = kmath::sqrt(sq - ga * ga);
  } else {
    avg = kmath::sqrt(sq);
  }
  avg = avg + s.eps;
  if (has_buf) {
    C buf = s.momentum * a.s1[i] + g / avg;
    a.s1[i] = buf;
    a.set_param(i, p - s.lr * buf);
  } else {
    a.set_param(i, p - s.lr * (g / avg));
  }
}
template <int L2, int Centered, int HasBuf, class A, class C = typename A::C>
KOKKOS_INLINE_FUNCTION void rmsprop_block(const A& a0, int64_t lo, int64_t hi, RmspropArgs<C> s) {
  const A a = a0;
  for (int64_t i = lo; i < hi; ++i) rmsprop_elem(a, i, s, L2, Centered, HasBuf);
}
template <class A, class C = typename A::C>
KOKKOS_INLINE_FUNCTION void rmsprop_block(const A& a, int64_t lo, int64_t hi, const RmspropArgs<C>& s, int l2,
                                          int centered, int has_buf) {
  if (l2) {
    if (centered) has_buf ? rmsprop_block<1, 1, 1>(a, lo, hi, s) : rmsprop_block<1, 1, 0>(a, lo, hi, s);
    else has_buf ? rmsprop_block<1, 0, 1>(a, lo, hi, s) : rmsprop_block<1, 0, 0>(a, lo, hi, s);
  } else {
    if (centered) has_buf ? rmsprop_block<0, 1, 1>(a, lo, hi, s) : rmsprop_block<0, 1, 0>(a, lo, hi, s);
    else has_buf ? rmsprop_block<0, 0, 1>(a, lo, hi, s) : rmsprop_block<0, 0, 0>(a, lo, hi, s);
  }
}

// Adagrad: clr = lr / (1 + (t - 1) lr_decay) from the host; s0 = sum.
template <class C>
struct AdagradArgs {
  C clr, eps, wd, sign;
};
template <class A, class C = typename A::C>
KOKKOS_INLINE_FUNCTION void adagrad_elem(const A& a, int64_t i, const AdagradArgs<C>& s, int l2) {
  C g = a.grad(i) * s.sign;
  C p = a.param(i);
  if (l2) g = g + s.wd * p;
  C sum = a.s0[i] + g * g;
  a.s0[i] = sum;
  a.set_param(i, p - s.clr * (g / (kmath::sqrt(sum) + s.eps)));
}
template <int L2, class A, class C = typename A::C>
KOKKOS_INLINE_FUNCTION void adagrad_block(const A& a0, int64_t lo, int64_t hi, AdagradArgs<C> s) {
  const A a = a0;
  for (int64_t i = lo; i < hi; ++i) adagrad_elem(a, i, s, L2);
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
  // Host work items are blocks of elements (OptimBlocks), so the loops
  // vectorise; the flags are template arguments of the block functions.
  const OptimBlocks<Exec> blk{n};
  Range<Exec> range(exec, 0, blk.count());
  switch (prm.fn) {
    case VNN_OPTIM_SGD: {
      const vnn_sgd_params& q = prm.u.sgd;
      const C wd = C(q.weight_decay);
      const SgdArgs<C> sa{C(q.lr), C(q.momentum), C(q.dampening), wd, q.maximize ? C(-1) : C(1)};
      const int l2 = wd != C(0), has_buf = int(q.has_buffer), first = int(q.first), nesterov = int(q.nesterov);
      Kokkos::parallel_for("vnn::optim_sgd", range, KOKKOS_LAMBDA(int64_t b) {
        sgd_block(a, blk.lo(b), blk.hi(b), sa, l2, has_buf, first, nesterov);
      });
      return;
    }
    case VNN_OPTIM_ADAM: {
      const vnn_adam_params& q = prm.u.adam;
      const C lr = C(q.lr), wd = C(q.weight_decay);
      const int decoupled = int(q.decoupled), amsgrad = int(q.amsgrad);
      const int l2 = wd != C(0) && !decoupled;
      const C decay = wd != C(0) && decoupled ? C(1) - lr * wd : C(1);
      const AdamArgs<C> sa{C(q.beta1), C(q.beta2), C(q.eps), wd, C(q.step_size), C(q.bias_correction2_sqrt), decay,
                           q.maximize ? C(-1) : C(1)};
      Kokkos::parallel_for("vnn::optim_adam", range, KOKKOS_LAMBDA(int64_t b) {
        adam_block(a, blk.lo(b), blk.hi(b), sa, l2, amsgrad);
      });
      return;
    }
    case VNN_OPTIM_RMSPROP: {
      const vnn_rmsprop_params& q = prm.u.rmsprop;
      const C wd = C(q.weight_decay);
      const RmspropArgs<C> sa{C(q.lr), C(q.alpha), C(q.eps), wd, C(q.momentum), q.maximize ? C(-1) : C(1)};
      const int l2 = wd != C(0), centered = int(q.centered), has_buf = int(q.has_buffer);
      Kokkos::parallel_for("vnn::optim_rmsprop", range, KOKKOS_LAMBDA(int64_t b) {
        rmsprop_block(a, blk.lo(b), blk.hi(b), sa, l2, centered, has_buf);
      });
      return;
    }
    default: {  // VNN_OPTIM_ADAGRAD (decode_optimizer knows no other)
      const vnn_adagrad_params& q = prm.u.adagrad;
      const C wd = C(q.weight_decay);
      const AdagradArgs<C> sa{C(q.clr), C(q.eps), wd, q.maximize ? C(-1) : C(1)};
      const int l2 = wd != C(0);
      Kokkos::parallel_for("vnn::optim_adagrad", range, KOKKOS_LAMBDA(int64_t b) {
        if (l2) adagrad_block<1>(a, blk.lo(b), blk.hi(b), sa);
        else adagrad_block<0>(a, blk.lo(b), blk.hi(b), sa);
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
        Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string("vnn::amp_unscale_table")), chunks.size());
    Kokkos::deep_copy(exec, table, Host(chunks.data(), chunks.size()));
    unscale_launch(exec, table, n, inv, found);
  }
  return true;
}

}  // namespace vnn::kernels

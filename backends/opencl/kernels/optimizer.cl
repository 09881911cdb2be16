// OPTIMIZER_STEP: one fused update of a parameter and its optimizer state,
// in place. Defines: T, the float type of every operand (float or double).
// The core passes contiguous operands, so each is a buffer plus an element
// offset; s0..s2 are the state buffers of docs/ops.md (an unused one
// aliases another operand and is never touched). The formulas match
// backends/kokkos/kernels/optimizer.hpp term for term, and contraction stays
// off so that both backends round the same way.
#pragma OPENCL FP_CONTRACT OFF

__kernel void vnn_optim_sgd(__global T* p, long p_off, __global const T* g, long g_off, __global T* s0, long s0_off,
                            long n, T lr, T momentum, T dampening, T wd, int nesterov, int maximize, int has_buf,
                            int first) {
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
    T gi = g[g_off + i];
    if (maximize) gi = -gi;
    T pi = p[p_off + i];
    if (wd != (T)0) gi = gi + wd * pi;
    if (has_buf) {
      T buf = first ? gi : momentum * s0[s0_off + i] + ((T)1 - dampening) * gi;
      s0[s0_off + i] = buf;
      gi = nesterov ? gi + momentum * buf : buf;
    }
    p[p_off + i] = pi - lr * gi;
  }
}

// Adam / AdamW: s0 = exp_avg, s1 = exp_avg_sq, s2 = max_exp_avg_sq.
__kernel void vnn_optim_adam(__global T* p, long p_off, __global const T* g, long g_off, __global T* s0, long s0_off,
                             __global T* s1, long s1_off, __global T* s2, long s2_off, long n, T lr, T beta1,
                             T beta2, T eps, T wd, T step_size, T bc2_sqrt, int decoupled, int amsgrad,
                             int maximize) {
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
    T gi = g[g_off + i];
    if (maximize) gi = -gi;
    T pi = p[p_off + i];
    if (wd != (T)0) {
      if (decoupled)
        pi = pi * ((T)1 - lr * wd);
      else
        gi = gi + wd * pi;
    }
    T m = s0[s0_off + i];
    m = m + ((T)1 - beta1) * (gi - m);
    T v = beta2 * s1[s1_off + i] + ((T)1 - beta2) * gi * gi;
    s0[s0_off + i] = m;
    s1[s1_off + i] = v;
    if (amsgrad) {
      T vm = s2[s2_off + i];
      vm = vm > v ? vm : v;
      s2[s2_off + i] = vm;
      v = vm;
    }
    T denom = sqrt(v) / bc2_sqrt + eps;
    p[p_off + i] = pi - step_size * (m / denom);
  }
}

// RMSprop: s0 = square_avg, s1 = momentum buffer, s2 = grad_avg.
__kernel void vnn_optim_rmsprop(__global T* p, long p_off, __global const T* g, long g_off, __global T* s0,
                                long s0_off, __global T* s1, long s1_off, __global T* s2, long s2_off, long n, T lr,
                                T alpha, T eps, T wd, T momentum, int centered, int maximize, int has_buf) {
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
    T gi = g[g_off + i];
    if (maximize) gi = -gi;
    T pi = p[p_off + i];
    if (wd != (T)0) gi = gi + wd * pi;
    T sq = alpha * s0[s0_off + i] + ((T)1 - alpha) * gi * gi;
    s0[s0_off + i] = sq;
    T avg;
    if (centered) {
      T ga = s2[s2_off + i];
      ga = ga + ((T)1 - alpha) * (gi - ga);
      s2[s2_off + i] = ga;
      avg = sqrt(sq - ga * ga);
    } else {
      avg = sqrt(sq);
    }
    avg = avg + eps;
    if (has_buf) {
      T buf = momentum * s1[s1_off + i] + gi / avg;
      s1[s1_off + i] = buf;
      p[p_off + i] = pi - lr * buf;
    } else {
      p[p_off + i] = pi - lr * (gi / avg);
    }
  }
}

// Adagrad: s0 = sum of squared gradients; clr already holds lr_decay.
__kernel void vnn_optim_adagrad(__global T* p, long p_off, __global const T* g, long g_off, __global T* s0,
                                long s0_off, long n, T clr, T eps, T wd, int maximize) {
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
    T gi = g[g_off + i];
    if (maximize) gi = -gi;
    T pi = p[p_off + i];
    if (wd != (T)0) gi = gi + wd * pi;
    T s = s0[s0_off + i] + gi * gi;
    s0[s0_off + i] = s;
    p[p_off + i] = pi - clr * (gi / (sqrt(s) + eps));
  }
}

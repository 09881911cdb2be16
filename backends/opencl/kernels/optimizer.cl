// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// OPTIMIZER_STEP: one fused update of a parameter and its optimizer state,
// in place. Defines: PT / PDT, the parameter's storage type and vnn_dtype
// code; GT / GDT, the gradient's (equal, or float32 master weights with a
// float16/bfloat16 gradient); CT, the type of the state and of the math
// (double for float64 parameters, else float: 16-bit parameters keep
// float32 state). The core passes contiguous operands, so each is a buffer
// plus an element offset; s0..s2 are the state buffers of docs/ops.md (an
// unused one aliases another operand and is never touched). The formulas
// match backends/kokkos/kernels/optimizer.hpp term for term, and
// contraction stays off so that both backends round the same way.
#pragma OPENCL FP_CONTRACT OFF

#if PDT == VNN_FLOAT16
#define LOAD_P(i) vload_half((i), p)
#define STORE_P(i, v) vstore_half_rte((v), (i), p)
#elif PDT == VNN_BFLOAT16
#define LOAD_P(i) vnn_bf16_to_float(p[i])
#define STORE_P(i, v) (p[i] = vnn_bf16_from_float(v))
#else
#define LOAD_P(i) ((CT)p[i])
#define STORE_P(i, v) (p[i] = (PT)(v))
#endif

#if GDT == VNN_FLOAT16
#define LOAD_G(i) ((CT)vload_half((i), g))
#elif GDT == VNN_BFLOAT16
#define LOAD_G(i) ((CT)vnn_bf16_to_float(g[i]))
#else
#define LOAD_G(i) ((CT)g[i])
#endif

__kernel void vnn_optim_sgd(__global PT* p, long p_off, __global const GT* g, long g_off, __global CT* s0,
                            long s0_off, long n, CT lr, CT momentum, CT dampening, CT wd, int nesterov, int maximize,
                            int has_buf, int first) {
  VNN_ITEMS(i, n) {
    CT gi = LOAD_G(g_off + i);
    if (maximize) gi = -gi;
    CT pi = LOAD_P(p_off + i);
    if (wd != (CT)0) gi = gi + wd * pi;
    if (has_buf) {
      CT buf = first ? gi : momentum * s0[s0_off + i] + ((CT)1 - dampening) * gi;
      s0[s0_off + i] = buf;
      gi = nesterov ? gi + momentum * buf : buf;
    }
    STORE_P(p_off + i, pi - lr * gi);
  }
}

// Adam / AdamW: s0 = exp_avg, s1 = exp_avg_sq, s2 = max_exp_avg_sq.
__kernel void vnn_optim_adam(__global PT* p, long p_off, __global const GT* g, long g_off, __global CT* s0,
                             long s0_off, __global CT* s1, long s1_off, __global CT* s2, long s2_off, long n, CT lr,
                             CT beta1, CT beta2, CT eps, CT wd, CT step_size, CT bc2_sqrt, int decoupled, int amsgrad,
                             int maximize) {
  VNN_ITEMS(i, n) {
    CT gi = LOAD_G(g_off + i);
    if (maximize) gi = -gi;
    CT pi = LOAD_P(p_off + i);
    if (wd != (CT)0) {
      if (decoupled)
        pi = pi * ((CT)1 - lr * wd);
      else
        gi = gi + wd * pi;
    }
    CT m = s0[s0_off + i];
    m = m + ((CT)1 - beta1) * (gi - m);
    CT v = beta2 * s1[s1_off + i] + ((CT)1 - beta2) * gi * gi;
    s0[s0_off + i] = m;
    s1[s1_off + i] = v;
    if (amsgrad) {
      CT vm = s2[s2_off + i];
      vm = vm > v ? vm : v;
      s2[s2_off + i] = vm;
      v = vm;
    }
    CT denom = sqrt(v) / bc2_sqrt + eps;
    STORE_P(p_off + i, pi - step_size * (m / denom));
  }
}

// RMSprop: s0 = square_avg, s1 = momentum buffer, s2 = grad_avg.
__kernel void vnn_optim_rmsprop(__global PT* p, long p_off, __global const GT* g, long g_off, __global CT* s0,
                                long s0_off, __global CT* s1, long s1_off, __global CT* s2, long s2_off, long n,
                                CT lr, CT alpha, CT eps, CT wd, CT momentum, int centered, int maximize,
                                int has_buf) {
  VNN_ITEMS(i, n) {
    CT gi = LOAD_G(g_off + i);
    if (maximize) gi = -gi;
    CT pi = LOAD_P(p_off + i);
    if (wd != (CT)0) gi = gi + wd * pi;
    CT sq = alpha * s0[s0_off + i] + ((CT)1 - alpha) * gi * gi;
    s0[s0_off + i] = sq;
    CT avg;
    if (centered) {
      CT ga = s2[s2_off + i];
      ga = ga + ((CT)1 - alpha) * (gi - ga);
      s2[s2_off + i] = ga;
      avg = sqrt(sq - ga * ga);
    } else {
      avg = sqrt(sq);
    }
    avg = avg + eps;
    if (has_buf) {
      CT buf = momentum * s1[s1_off + i] + gi / avg;
      s1[s1_off + i] = buf;
      STORE_P(p_off + i, pi - lr * buf);
    } else {
      STORE_P(p_off + i, pi - lr * (gi / avg));
    }
  }
}

// Adagrad: s0 = sum of squared gradients; clr already holds lr_decay.
__kernel void vnn_optim_adagrad(__global PT* p, long p_off, __global const GT* g, long g_off, __global CT* s0,
                                long s0_off, long n, CT clr, CT eps, CT wd, int maximize) {
  VNN_ITEMS(i, n) {
    CT gi = LOAD_G(g_off + i);
    if (maximize) gi = -gi;
    CT pi = LOAD_P(p_off + i);
    if (wd != (CT)0) gi = gi + wd * pi;
    CT s = s0[s0_off + i] + gi * gi;
    s0[s0_off + i] = s;
    STORE_P(p_off + i, pi - clr * (gi / (sqrt(s) + eps)));
  }
}

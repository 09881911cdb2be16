// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RNN_CELL / RNN_CELL_BACKWARD: one recurrent step of a batch in one pass
// over [B, H] (backend_abi.h, docs/ops.md), term for term the Kokkos kernel
// backends/kokkos/kernels/rnn_cell.hpp: the biases added, the gates
// activated (PyTorch's orders: LSTM i, f, g, o; GRU r, z, n) and the state
// updated per element. Define: RT, the element type (float or double).
// Each matrix operand is a buffer, an element offset and a row stride (unit
// last stride); an operand the mode lacks aliases another and is not read.
typedef RT T;

T vnn_rnn_sigmoid(T x) {
  const T e = exp(-fabs(x));
  return x >= (T)0 ? (T)1 / ((T)1 + e) : e / ((T)1 + e);
}

#define AT(p, o, ld, b, j) p[(o) + (b) * (ld) + (j)]

__kernel void vnn_rnn_cell_fwd(int mode, long B, long H, int bias, __global const T* xg, long xo, long xl,
                               __global const T* hg, long ho, long hl, __global const T* st, long so, long sl,
                               __global const T* bi, long bio, __global const T* bh, long bho, __global T* o0,
                               long o0o, long o0l, __global T* o1, long o1o, long o1l, __global T* o2, long o2o,
                               long o2l) {
  VNN_ITEMS(e, B * H) {
    const long b = e / H, j = e % H;
#define PRE(k) \
  (AT(xg, xo, xl, b, (k) * H + j) + AT(hg, ho, hl, b, (k) * H + j) + (bias ? bi[bio + (k) * H + j] + bh[bho + (k) * H + j] : (T)0))
    if (mode == VNN_RNN_TANH || mode == VNN_RNN_RELU) {
      const T v = PRE(0);
      AT(o0, o0o, o0l, b, j) = mode == VNN_RNN_TANH ? tanh(v) : (v > (T)0 ? v : (v == v ? (T)0 : v));
    } else if (mode == VNN_RNN_LSTM) {
      const T i = vnn_rnn_sigmoid(PRE(0)), f = vnn_rnn_sigmoid(PRE(1));
      const T g = tanh(PRE(2)), o = vnn_rnn_sigmoid(PRE(3));
      const T c = f * AT(st, so, sl, b, j) + i * g;
      AT(o0, o0o, o0l, b, j) = o * tanh(c);
      AT(o1, o1o, o1l, b, j) = c;
      AT(o2, o2o, o2l, b, j) = i;
      AT(o2, o2o, o2l, b, H + j) = f;
      AT(o2, o2o, o2l, b, 2 * H + j) = g;
      AT(o2, o2o, o2l, b, 3 * H + j) = o;
    } else {
      const T r = vnn_rnn_sigmoid(PRE(0)), z = vnn_rnn_sigmoid(PRE(1));
      T hn = AT(hg, ho, hl, b, 2 * H + j), xn = AT(xg, xo, xl, b, 2 * H + j);
      if (bias) {
        hn += bh[bho + 2 * H + j];
        xn += bi[bio + 2 * H + j];
      }
      const T n = tanh(xn + r * hn);
      AT(o0, o0o, o0l, b, j) = ((T)1 - z) * n + z * AT(st, so, sl, b, j);
      AT(o1, o1o, o1l, b, j) = r;
      AT(o1, o1o, o1l, b, H + j) = z;
      AT(o1, o1o, o1l, b, 2 * H + j) = n;
      AT(o1, o1o, o1l, b, 3 * H + j) = hn;
    }
#undef PRE
  }
}

// Inputs i0..i4 and outputs o0..o2 in the ABI's order for the mode.
__kernel void vnn_rnn_cell_bwd(int mode, long B, long H, __global const T* i0, long i0o, long i0l,
                               __global const T* i1, long i1o, long i1l, __global const T* i2, long i2o, long i2l,
                               __global const T* i3, long i3o, long i3l, __global const T* i4, long i4o, long i4l,
                               __global T* o0, long o0o, long o0l, __global T* o1, long o1o, long o1l, __global T* o2,
                               long o2o, long o2l) {
  VNN_ITEMS(e, B * H) {
    const long b = e / H, j = e % H;
    const T dh = AT(i0, i0o, i0l, b, j);
    if (mode == VNN_RNN_TANH) {
      const T h = AT(i1, i1o, i1l, b, j);
      AT(o0, o0o, o0l, b, j) = dh * ((T)1 - h * h);
    } else if (mode == VNN_RNN_RELU) {
      AT(o0, o0o, o0l, b, j) = AT(i1, i1o, i1l, b, j) > (T)0 ? dh : (T)0;
    } else if (mode == VNN_RNN_LSTM) {
      const T i = AT(i2, i2o, i2l, b, j), f = AT(i2, i2o, i2l, b, H + j);
      const T g = AT(i2, i2o, i2l, b, 2 * H + j), o = AT(i2, i2o, i2l, b, 3 * H + j);
      const T tc = tanh(AT(i4, i4o, i4l, b, j));
      const T dct = AT(i1, i1o, i1l, b, j) + dh * o * ((T)1 - tc * tc);
      AT(o0, o0o, o0l, b, j) = dct * g * i * ((T)1 - i);
      AT(o0, o0o, o0l, b, H + j) = dct * AT(i3, i3o, i3l, b, j) * f * ((T)1 - f);
      AT(o0, o0o, o0l, b, 2 * H + j) = dct * i * ((T)1 - g * g);
      AT(o0, o0o, o0l, b, 3 * H + j) = dh * tc * o * ((T)1 - o);
      AT(o1, o1o, o1l, b, j) = dct * f;
    } else {
      const T r = AT(i1, i1o, i1l, b, j), z = AT(i1, i1o, i1l, b, H + j);
      const T n = AT(i1, i1o, i1l, b, 2 * H + j), hn = AT(i1, i1o, i1l, b, 3 * H + j);
      const T h = AT(i2, i2o, i2l, b, j);
      const T dn = dh * ((T)1 - z) * ((T)1 - n * n);
      const T dz = dh * (h - n) * z * ((T)1 - z);
      const T dr = dn * hn * r * ((T)1 - r);
      AT(o0, o0o, o0l, b, j) = dr;
      AT(o0, o0o, o0l, b, H + j) = dz;
      AT(o0, o0o, o0l, b, 2 * H + j) = dn;
      AT(o1, o1o, o1l, b, j) = dr;
      AT(o1, o1o, o1l, b, H + j) = dz;
      AT(o1, o1o, o1l, b, 2 * H + j) = dn * r;
      AT(o2, o2o, o2l, b, j) = dh * z;
    }
  }
}

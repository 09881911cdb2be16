// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Max and average pooling (POOL2D / POOL2D_BACKWARD, docs/ops.md) through
// oneDNN's pooling_v2 primitives, float32, with vnn's exact semantics:
//
//  - max forward (with or without indices; only under VNN_ONEDNN_POOL=all,
//    see the rule below): oneDNN writes the values and its workspace (per output,
//    the tap a * kw + b of the window holding the maximum); one pass over
//    the outputs turns that into vnn's int64 plane index h * W + w. Both
//    scan a window row by row and keep the first maximum (strict >), so
//    ties pick the same element (tests/ops/pooling_onednn.cpp checks it).
//    oneDNN starts from -FLT_MAX and never takes NaN, where vnn's rule is
//    "NaN wins" and a window of -inf yields -inf at its first tap: an input
//    holding any value not above -FLT_MAX (NaN, -inf, -FLT_MAX) is found by
//    a scan in the same parallel region as the index pass, and the op is
//    then declined: vnn's kernel rewrites its outputs.
//  - max backward stays on vnn's kernel: oneDNN's would need its workspace
//    back from the int64 indices (one validating pass over the outputs: an
//    index outside its window routes nothing in vnn), and measured, that
//    pass plus oneDNN's backward took 1.7x the CPU time of vnn's scatter
//    kernel on the CNN's shapes (docs/benchmarks/cpu-training.md).
//  - avg forward / backward: count_include_pad = 1 is oneDNN's
//    avg_include_padding (divisor kh * kw: with vnn's floor output sizes
//    every window ends inside the padded input, so vnn's clipped divisor is
//    kh * kw too), 0 is avg_exclude_padding (the taps inside the input).
//    divisor_override and dilated avg windows stay on vnn's kernel.
//
// Declined to vnn's kernels (selected()): float64 (oneDNN 2.6 has no f64
// pooling on CPU) and 16-bit storage, adaptive modes, non-contiguous
// operands, output sizes other than the floor formula, a window without a
// tap inside the input, oneDNN's reference implementations (e.g. dilated
// max windows), avg inputs below kMinElemsAvg elements and, by default, max
// forward (measured, below). VNN_ONEDNN_POOL=all takes every size and max
// forward, =off none (for measuring the rule; conv2d and matmul keep
// theirs); ctest runs the pooling tests under =all too.
#include <omp.h>

#include <cfloat>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common/op_params.hpp"
#include "openmp/onednn_common.hpp"
#include "openmp/onednn_runtime.hpp"
#include "vnn/checked_size.h"

namespace vnn::openmp_backend::onednn {
namespace {

using dnnl::memory;

// Avg pooling runs through oneDNN from kMinElemsAvg input elements
// (onednn_ops_bench (c), 2 threads, shared machine; docs/benchmarks/cpu-training.md
// "oneDNN pooling in the CPU plugin"): below that vnn's kernel, inline on
// the calling thread under the Kokkos inline grain, is as fast; at 4096
// elements (3x3 / 2, padded) oneDNN's forward took 7-9 us against 23.5 and
// its backward 7-15 against 450; they tie at 1024.
// Max forward runs through oneDNN only under VNN_ONEDNN_POOL=all: alone it
// took 0.65-0.8x vnn's CPU time on one thread, but in the CNN training step
// at 2 threads (train_bench, same binary, VNN_ONEDNN_POOL=off against on)
// the step ran at 311 against 229 and 466 against 230 samples/s, with the
// extra time spinning in libgomp: a loss, so not the default.
constexpr int64_t kMinElemsAvg = int64_t(1) << 12;

// VNN_ONEDNN_POOL=all: oneDNN at every size; =off: never (conv2d and
// matmul keep theirs); unset: the rule. For measuring the rule.
enum class Force { rule, all, off };
Force force() {
  static const Force f = [] {
    const char* v = std::getenv("VNN_ONEDNN_POOL");
    if (v && std::strcmp(v, "all") == 0) return Force::all;
    if (v && std::strcmp(v, "off") == 0) return Force::off;
    return Force::rule;
  }();
  return f;
}

bool dense4(const vnn_tensor_desc& d) {
  if (d.ndim != 4) return false;
  int64_t st[4];
  if (!checked::contiguous_strides(d.sizes, 4, st)) return false;
  for (int i = 0; i < 4; ++i)
    if (d.sizes[i] > 1 && d.strides[i] != st[i]) return false;
  return true;
}

bool index_desc(const vnn_tensor_desc& d, const vnn_tensor_desc& like) {
  if (d.dtype != VNN_INT64 || d.ndim != 4) return false;
  for (int i = 0; i < 4; ++i)
    if (d.sizes[i] != like.sizes[i]) return false;
  return true;
}

// Some tap o * s - p + a * d (a < k) lies in [0, I) for every output o < O
// (the first tap at or after 0 is the only candidate).
bool every_window_has_a_tap(int64_t O, int64_t I, int64_t k, int64_t s, int64_t p, int64_t d) {
  for (int64_t o = 0; o < O; ++o) {
    const int64_t t = o * s - p, a = t >= 0 ? 0 : (-t + d - 1) / d;
    if (a >= k || t + a * d >= I) return false;
  }
  return true;
}

struct Shapes {
  const vnn_tensor_desc *big = nullptr, *small = nullptr, *idx = nullptr;  // [N,C,H,W], [N,C,OH,OW], indices
};

// The rule and every check oneDNN's primitive needs; false: vnn's kernel.
bool selected(const vnn_op& op, const vnn_pool2d_params& g, Shapes* s) {
  const bool fwd = op.kind == VNN_OP_POOL2D, is_max = g.mode == VNN_POOL_MAX;
  if (g.mode != VNN_POOL_MAX && g.mode != VNN_POOL_AVG) return false;
  if (op.num_inputs < 1 || op.num_outputs < 1) return false;
  s->big = fwd ? &op.inputs[0] : &op.outputs[0];
  s->small = fwd ? &op.outputs[0] : &op.inputs[0];
  if (is_max) {
    // Max backward stays on vnn's kernel (measured: turning the int64
    // indices back into oneDNN's workspace costs more than oneDNN saves).
    if (!fwd) return false;
    if (op.num_outputs >= 2) s->idx = &op.outputs[1];
    if (s->idx && !index_desc(*s->idx, *s->small)) return false;
  } else if (g.divisor_override > 0 || g.dilation_h != 1 || g.dilation_w != 1) {
    return false;
  }
  const vnn_tensor_desc &b = *s->big, &o = *s->small;
  if (b.dtype != VNN_FLOAT32 || o.dtype != VNN_FLOAT32 || !dense4(b) || !dense4(o)) return false;
  if (b.sizes[0] != o.sizes[0] || b.sizes[1] != o.sizes[1]) return false;
  int64_t n;
  if (!checked::numel(b.sizes, 4, &n) || n == 0 || o.sizes[2] == 0 || o.sizes[3] == 0) return false;
  if (force() != Force::all && (is_max || n < kMinElemsAvg)) return false;
  // vnn's floor output size (int64-safe: sizes and geometry came through the
  // descriptor check, and the products below are bounded by the input's).
  const int64_t H = b.sizes[2], W = b.sizes[3];
  int64_t eh, ew;
  if (!checked::mul(g.dilation_h, g.kernel_h - 1, &eh) || !checked::mul(g.dilation_w, g.kernel_w - 1, &ew) ||
      g.pad_h > H || g.pad_w > W)
    return false;
  const int64_t span_h = H + 2 * g.pad_h - eh - 1, span_w = W + 2 * g.pad_w - ew - 1;
  if (span_h < 0 || span_w < 0 || o.sizes[2] != span_h / g.stride_h + 1 || o.sizes[3] != span_w / g.stride_w + 1)
    return false;
  if (!every_window_has_a_tap(o.sizes[2], H, g.kernel_h, g.stride_h, g.pad_h, g.dilation_h) ||
      !every_window_has_a_tap(o.sizes[3], W, g.kernel_w, g.stride_w, g.pad_w, g.dilation_w))
    return false;
  return true;
}

struct Entry {
  bool usable = false;  // false: oneDNN offered only a reference kernel (remembered)
  dnnl::primitive prim;
  memory::desc big, small, ws, scratch;
  size_t ws_offset = 0, bytes = 0;  // scratch plan: scratchpad, then the workspace
};

Entry build(const vnn_op& op, const vnn_pool2d_params& g, const Shapes& s) {
  Entry e;
  dnnl::engine& eng = engine();
  const vnn_tensor_desc &b = *s.big, &o = *s.small;
  e.big = memory::desc({b.sizes[0], b.sizes[1], b.sizes[2], b.sizes[3]}, memory::data_type::f32,
                       memory::format_tag::nchw);
  e.small = memory::desc({o.sizes[0], o.sizes[1], o.sizes[2], o.sizes[3]}, memory::data_type::f32,
                         memory::format_tag::nchw);
  const bool is_max = g.mode == VNN_POOL_MAX;
  const auto alg = is_max                  ? dnnl::algorithm::pooling_max
                   : g.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                           : dnnl::algorithm::pooling_avg_exclude_padding;
  const memory::dims strides{g.stride_h, g.stride_w}, kernel{g.kernel_h, g.kernel_w},
      dil{g.dilation_h - 1, g.dilation_w - 1}, pad{g.pad_h, g.pad_w};
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  using fwd = dnnl::pooling_v2_forward;
  using bwd = dnnl::pooling_v2_backward;
  // Max forward without indices (inference) needs no workspace.
  const bool training = op.kind == VNN_OP_POOL2D_BACKWARD || (is_max && s.idx);
  const auto prop = training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
  try {
    fwd::primitive_desc fpd(fwd::desc(prop, alg, e.big, e.small, strides, kernel, dil, pad, pad), attr, eng);
    std::string impl;
    if (op.kind == VNN_OP_POOL2D) {
      impl = fpd.impl_info_str();
      e.scratch = fpd.scratchpad_desc();
      e.ws = fpd.workspace_desc();
      e.prim = fwd(fpd);
    } else {
      bwd::primitive_desc bpd(bwd::desc(alg, e.big, e.small, strides, kernel, dil, pad, pad), attr, eng, fpd);
      impl = bpd.impl_info_str();
      e.scratch = bpd.scratchpad_desc();
      e.ws = bpd.workspace_desc();
      e.prim = bwd(bpd);
    }
    if (impl.rfind("ref", 0) == 0) return Entry();  // vnn's kernel is faster than oneDNN's reference one
    if (is_max && s.idx) {
      // The index pass reads the workspace as one u8 / s32 per output in [N, C, OH, OW] order.
      const auto wt = e.ws.data_type();
      if ((wt != memory::data_type::u8 && wt != memory::data_type::s32) ||
          e.ws != memory::desc(e.small.dims(), wt, memory::format_tag::nchw))
        return Entry();
    }
  } catch (const dnnl::error&) {
    return Entry();  // no implementation for this case: vnn's kernel runs it
  }
  e.ws_offset = align64(e.scratch.get_size());
  e.bytes = e.ws_offset + align64(e.ws.get_size());
  e.usable = true;
  return e;
}

// Per tap t = a * kw + b of a window, its plane offset a * dh * W + b * dw.
std::vector<int64_t> tap_offsets(const vnn_pool2d_params& g, int64_t W) {
  std::vector<int64_t> t;
  for (int64_t a = 0; a < g.kernel_h; ++a)
    for (int64_t b = 0; b < g.kernel_w; ++b) t.push_back(a * g.dilation_h * W + b * g.dilation_w);
  return t;
}

// After oneDNN's max forward, in one parallel region (each region costs a
// wake-up and a barrier of the pool, which on a busy machine is what a
// call costs): (1) whether every input value lies above -FLT_MAX (no NaN,
// -inf, -FLT_MAX), the condition under which oneDNN's max, which starts
// from -FLT_MAX and skips NaN, agrees with vnn's rule; (2) where there are
// indices, oneDNN's workspace (tap per output) into vnn's int64 plane
// indices, any index strides. False: the caller declines the op and vnn's
// kernel rewrites every output. The geometry lives in locals: the int64
// stores may alias the members of g, which would be reloaded after each.
template <class WS>
bool check_and_index(const float* x, int64_t n, const WS* ws, const vnn_tensor_desc* idx, const vnn_pool2d_params& g,
                     int64_t W, const std::vector<int64_t>& taps) {
  constexpr int64_t kChunk = 1 << 14;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  const int64_t C = idx ? idx->sizes[1] : 0, OH = idx ? idx->sizes[2] : 0, OW = idx ? idx->sizes[3] : 0;
  const int64_t rows = idx ? idx->sizes[0] * C * OH : 0;
  const int64_t s0 = idx ? idx->strides[0] : 0, s1 = idx ? idx->strides[1] : 0, s2 = idx ? idx->strides[2] : 0,
                s3 = idx ? idx->strides[3] : 0;
  const int64_t sh = g.stride_h, ph = g.pad_h, sw = g.stride_w, pw = g.pad_w;
  int64_t* base = idx ? static_cast<int64_t*>(idx->data) + idx->offset : nullptr;
  const int64_t* plane = taps.data();
  int bad = 0;
#pragma omp parallel reduction(| : bad)
  {
#pragma omp for schedule(static) nowait
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t lo = c * kChunk, hi = lo + kChunk < n ? lo + kChunk : n;
      int local = 0;
#pragma omp simd reduction(| : local)
      for (int64_t i = lo; i < hi; ++i) local |= !(x[i] > -FLT_MAX);
      bad |= local;
    }
#pragma omp for schedule(static) nowait
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t oh = r % OH, nc = r / OH, c = nc % C, b = nc / C;
      const WS* w = ws + r * OW;
      int64_t* out = base + b * s0 + c * s1 + oh * s2;
      const int64_t row0 = (oh * sh - ph) * W - pw;
      if (s3 == 1) {
        for (int64_t ow = 0; ow < OW; ++ow) out[ow] = row0 + ow * sw + plane[int64_t(w[ow])];
      } else {
        for (int64_t ow = 0; ow < OW; ++ow) out[ow * s3] = row0 + ow * sw + plane[int64_t(w[ow])];
      }
    }
  }
  return bad == 0;
}

PrimitiveCache<Entry, 256>& cache() {
  static auto* c = new PrimitiveCache<Entry, 256>();
  return *c;
}

}  // namespace

Outcome run_pool(const vnn_op& op) {
  vnn_pool2d_params g;
  Shapes s;
  if (!switched_on() || force() == Force::off || !kernels::decode_pool2d(op, &g) || !selected(op, g, &s))
    return Outcome::declined;
  const bool fwd = op.kind == VNN_OP_POOL2D, is_max = g.mode == VNN_POOL_MAX;
  const int64_t W = s.big->sizes[3];
  std::lock_guard<std::mutex> lock(cache().mutex());
  const Entry& e = cache().get(op_key(op, 0), [&] { return build(op, g, s); });
  if (!e.usable) return Outcome::declined;
  Scratch scratch(e.bytes);  // held until the index pass below is done
  char* base = scratch.get();
  void* ws = base + e.ws_offset;
  const bool u8 = e.ws.data_type() == memory::data_type::u8;
  const std::vector<int64_t> taps = is_max && s.idx ? tap_offsets(g, W) : std::vector<int64_t>();
  dnnl::engine& eng = engine();
  dnnl::stream& strm = stream();
  memory big(e.big, eng, element0(*s.big)), small(e.small, eng, element0(*s.small));
  std::unordered_map<int, memory> args{{DNNL_ARG_SCRATCHPAD, memory(e.scratch, eng, base)}};
  if (fwd) args.emplace(DNNL_ARG_SRC, big), args.emplace(DNNL_ARG_DST, small);
  else args.emplace(DNNL_ARG_DIFF_SRC, big), args.emplace(DNNL_ARG_DIFF_DST, small);
  if (e.ws.get_size() > 0) args.emplace(DNNL_ARG_WORKSPACE, memory(e.ws, eng, ws));
  e.prim.execute(strm, args);
  strm.wait();
  if (is_max) {  // forward: the backward is vnn's (selected())
    int64_t n = 0;
    checked::numel(s.big->sizes, 4, &n);
    const float* x = static_cast<const float*>(element0(*s.big));
    const bool ok = u8 ? check_and_index(x, n, static_cast<const uint8_t*>(ws), s.idx, g, W, taps)
                       : check_and_index(x, n, static_cast<const int32_t*>(ws), s.idx, g, W, taps);
    if (!ok) return Outcome::declined;  // NaN / -inf in the input: vnn's kernel redoes the op
  }
  return Outcome::taken;
}

}  // namespace vnn::openmp_backend::onednn

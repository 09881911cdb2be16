// Max and average pooling (POOL2D / POOL2D_BACKWARD, docs/ops.md) through
// oneDNN's pooling_v2 primitives, float32, with vnn's exact semantics:
//
//  - max forward: oneDNN writes the values and its workspace (per output,
//    the tap a * kw + b of the window holding the maximum); one pass over
//    the outputs turns that into vnn's int64 plane index h * W + w. Both
//    scan a window row by row and keep the first maximum (strict >), so
//    ties pick the same element (tests/ops/pooling_onednn.cpp checks it).
//    oneDNN starts from -FLT_MAX and never takes NaN, where vnn's rule is
//    "NaN wins" and a window of -inf yields -inf at its first tap: an input
//    holding any value not above -FLT_MAX (NaN, -inf, -FLT_MAX) is declined
//    to vnn's kernel after one parallel scan (cheaper than the pooling).
//  - max backward: the int64 indices become oneDNN's workspace again in one
//    pass over the outputs; an index that names no tap of its own window
//    (vnn's rule: it routes nothing) declines the op to vnn's kernel.
//  - avg forward / backward: count_include_pad = 1 is oneDNN's
//    avg_include_padding (divisor kh * kw: with vnn's floor output sizes
//    every window ends inside the padded input, so vnn's clipped divisor is
//    kh * kw too), 0 is avg_exclude_padding (the taps inside the input).
//    divisor_override and dilated avg windows stay on vnn's kernel.
//
// Declined to vnn's kernels (pool_rule): float64 (oneDNN 2.6 has no f64
// pooling on CPU) and 16-bit storage, adaptive modes, non-contiguous
// operands, output sizes other than the floor formula, a window without a
// tap inside the input, reference implementations, and inputs below
// kMinElems elements (measured: docs/benchmarks.md, "oneDNN pooling in the
// CPU plugin"). VNN_ONEDNN_POOL=all takes every size (to measure the rule).
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

// Input elements below which vnn's kernel (inline on the calling thread
// under the Kokkos inline grain, one parallel region above) beats oneDNN's
// primitive plus the scan / index passes (each a parallel region).
constexpr int64_t kMinElems = int64_t(1) << 14;
// Max backward searches the window's taps for each index: small kernels only.
constexpr int64_t kMaxBackwardTaps = 25;

bool force_all() {
  static const bool all = [] {
    const char* v = std::getenv("VNN_ONEDNN_POOL");
    return v && std::strcmp(v, "all") == 0;
  }();
  return all;
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
    if (fwd ? op.num_outputs >= 2 : op.num_inputs >= 2) s->idx = fwd ? &op.outputs[1] : &op.inputs[1];
    if (!fwd && !s->idx) return false;
    if (s->idx && !index_desc(*s->idx, *s->small)) return false;
  } else if (g.divisor_override > 0 || g.dilation_h != 1 || g.dilation_w != 1) {
    return false;
  }
  const vnn_tensor_desc &b = *s->big, &o = *s->small;
  if (b.dtype != VNN_FLOAT32 || o.dtype != VNN_FLOAT32 || !dense4(b) || !dense4(o)) return false;
  if (b.sizes[0] != o.sizes[0] || b.sizes[1] != o.sizes[1]) return false;
  int64_t n;
  if (!checked::numel(b.sizes, 4, &n) || n == 0 || o.sizes[2] == 0 || o.sizes[3] == 0) return false;
  if (n < kMinElems && !force_all()) return false;
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
  if (is_max && !fwd && g.kernel_h * g.kernel_w > kMaxBackwardTaps) return false;
  return true;
}

struct Entry {
  bool usable = false;  // false: oneDNN offered only a reference kernel (remembered)
  dnnl::primitive prim;
  memory::desc big, small, ws, scratch;
  size_t ws_offset = 0, bytes = 0;  // arena plan: scratchpad, then the workspace
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
      // The index passes read the workspace as one u8 / s32 per output in [N, C, OH, OW] order.
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

// Every input value lies above -FLT_MAX (no NaN, no -inf, no -FLT_MAX):
// then oneDNN's max, which starts from -FLT_MAX and skips NaN, agrees with
// vnn's rule.
bool above_lowest(const float* x, int64_t n) {
  constexpr int64_t kChunk = 1 << 14;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t lo = c * kChunk, hi = lo + kChunk < n ? lo + kChunk : n;
    int local = 0;
#pragma omp simd reduction(| : local)
    for (int64_t i = lo; i < hi; ++i) local |= !(x[i] > -FLT_MAX);
    bad |= local;
  }
  return bad == 0;
}

// The geometry of the index passes: per tap t = a * kw + b of a window,
// the plane offset a * dh * W + b * dw and the tap's row / column offsets.
struct Taps {
  std::vector<int64_t> plane, row, col;
};
Taps taps_of(const vnn_pool2d_params& g, int64_t W) {
  Taps t;
  for (int64_t a = 0; a < g.kernel_h; ++a)
    for (int64_t b = 0; b < g.kernel_w; ++b) {
      t.row.push_back(a * g.dilation_h);
      t.col.push_back(b * g.dilation_w);
      t.plane.push_back(a * g.dilation_h * W + b * g.dilation_w);
    }
  return t;
}

// Workspace (tap per output) -> vnn's int64 plane indices, any index strides.
template <class WS>
void ws_to_indices(const WS* ws, const vnn_tensor_desc& idx, const vnn_pool2d_params& g, int64_t W, const Taps& t) {
  const int64_t C = idx.sizes[1], OH = idx.sizes[2], OW = idx.sizes[3], rows = idx.sizes[0] * C * OH;
  const int64_t *st = idx.strides, sw = g.stride_w, pw = g.pad_w;
  int64_t* base = static_cast<int64_t*>(idx.data) + idx.offset;
  const int64_t* plane = t.plane.data();
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t oh = r % OH, nc = r / OH, c = nc % C, n = nc / C;
    const WS* w = ws + r * OW;
    int64_t* out = base + n * st[0] + c * st[1] + oh * st[2];
    const int64_t row0 = (oh * g.stride_h - g.pad_h) * W - pw;
    for (int64_t ow = 0; ow < OW; ++ow) out[ow * st[3]] = row0 + ow * sw + plane[int64_t(w[ow])];
  }
}

// vnn's int64 indices -> workspace; false when some index names no tap of
// its own window that lies inside the input (vnn's kernel then routes
// nothing for it, which oneDNN's workspace cannot say).
template <class WS>
bool indices_to_ws(const vnn_tensor_desc& idx, WS* ws, const vnn_pool2d_params& g, int64_t H, int64_t W,
                   const Taps& t) {
  const int64_t C = idx.sizes[1], OH = idx.sizes[2], OW = idx.sizes[3], rows = idx.sizes[0] * C * OH;
  const int64_t* st = idx.strides;
  const int64_t* base = static_cast<const int64_t*>(idx.data) + idx.offset;
  const int64_t ntaps = int64_t(t.plane.size());
  const int64_t *plane = t.plane.data(), *trow = t.row.data(), *tcol = t.col.data();
  int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t oh = r % OH, nc = r / OH, c = nc % C, n = nc / C;
    const int64_t* in = base + n * st[0] + c * st[1] + oh * st[2];
    WS* w = ws + r * OW;
    const int64_t hs = oh * g.stride_h - g.pad_h;
    for (int64_t ow = 0; ow < OW; ++ow) {
      const int64_t ws0 = ow * g.stride_w - g.pad_w, rel = in[ow * st[3]] - (hs * W + ws0);
      int64_t hit = -1;
      for (int64_t k = 0; k < ntaps && hit < 0; ++k)
        if (plane[k] == rel) {
          const int64_t h = hs + trow[k], x = ws0 + tcol[k];
          if (h >= 0 && h < H && x >= 0 && x < W) hit = k;
        }
      bad |= hit < 0;
      w[ow] = WS(hit < 0 ? 0 : hit);
    }
  }
  return bad == 0;
}

struct Cache {
  std::mutex mutex;
  std::unordered_map<std::string, Entry> entries;
};
Cache& cache() {
  static Cache* c = new Cache();
  return *c;
}
constexpr size_t kMaxEntries = 256;  // a shape-changing workload must not grow it forever

}  // namespace

Outcome run_pool(const vnn_op& op) {
  vnn_pool2d_params g;
  Shapes s;
  if (!switched_on() || !kernels::decode_pool2d(op, &g) || !selected(op, g, &s)) return Outcome::declined;
  const bool fwd = op.kind == VNN_OP_POOL2D, is_max = g.mode == VNN_POOL_MAX;
  const int64_t H = s.big->sizes[2], W = s.big->sizes[3];
  if (is_max && fwd) {
    int64_t n;
    checked::numel(s.big->sizes, 4, &n);
    if (!above_lowest(static_cast<const float*>(element0(*s.big)), n)) return Outcome::declined;
  }
  std::lock_guard<std::mutex> lock(cache().mutex);
  auto& entries = cache().entries;
  const std::string key = op_key(op, 0);
  auto it = entries.find(key);
  if (it == entries.end()) {
    if (entries.size() >= kMaxEntries) entries.clear();
    it = entries.emplace(key, build(op, g, s)).first;
  }
  const Entry& e = it->second;
  if (!e.usable) return Outcome::declined;
  char* base = arena(e.bytes);
  void* ws = base + e.ws_offset;
  const bool u8 = e.ws.data_type() == memory::data_type::u8;
  const Taps taps = is_max && s.idx ? taps_of(g, W) : Taps();
  if (is_max && !fwd) {
    const bool ok = u8 ? indices_to_ws(*s.idx, static_cast<uint8_t*>(ws), g, H, W, taps)
                       : indices_to_ws(*s.idx, static_cast<int32_t*>(ws), g, H, W, taps);
    if (!ok) return Outcome::declined;
  }
  dnnl::engine& eng = engine();
  dnnl::stream& strm = stream();
  memory big(e.big, eng, element0(*s.big)), small(e.small, eng, element0(*s.small));
  std::unordered_map<int, memory> args{{DNNL_ARG_SCRATCHPAD, memory(e.scratch, eng, base)}};
  if (fwd) args.emplace(DNNL_ARG_SRC, big), args.emplace(DNNL_ARG_DST, small);
  else args.emplace(DNNL_ARG_DIFF_SRC, big), args.emplace(DNNL_ARG_DIFF_DST, small);
  if (e.ws.get_size() > 0) args.emplace(DNNL_ARG_WORKSPACE, memory(e.ws, eng, ws));
  e.prim.execute(strm, args);
  strm.wait();
  if (is_max && fwd && s.idx) {
    if (u8) ws_to_indices(static_cast<const uint8_t*>(ws), *s.idx, g, W, taps);
    else ws_to_indices(static_cast<const int32_t*>(ws), *s.idx, g, W, taps);
  }
  return Outcome::taken;
}

}  // namespace vnn::openmp_backend::onednn

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// conv2d forward, backward-data and backward-weights (+ bias gradient)
// through oneDNN, float32. The operand layouts stay vnn's (plain NCHW /
// OIHW, any strides: oneDNN memory descriptors carry them); whether the
// primitive computes in plain or blocked (nChw16c) layouts, with reorders
// around it, is the selection rule's call (conv_rule below).
//
// Primitives are cached by kind, shapes, strides and geometry; the
// scratchpad (user mode) and the blocked temporaries come from the core's
// caching allocator (onednn_runtime.hpp's Scratch: counted in memory_stats;
// a warm step reuses cached blocks, no system allocation).
//
// Threads: Debian's oneDNN 2.6 is built with DNNL_CPU_RUNTIME=OMP and links
// libgomp (ldd libdnnl.so.2), the runtime Kokkos OpenMP and OpenBLAS's
// OpenMP build use. oneDNN runs only on the thread that owns the Kokkos
// pool (plugin.hpp's HostOps contract), so its parallel regions reuse that
// thread's libgomp team: one pool. Seen with OMP_DISPLAY_ENV=true and
// /proc/self/task during a CNN training step: one OpenMP environment
// block, and as many threads as OMP_NUM_THREADS plus the process's own
// helpers (docs/benchmarks/cpu-training.md, "oneDNN").
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "openmp/onednn_common.hpp"
#include "openmp/onednn_runtime.hpp"
#include "vnn/checked_size.h"

namespace vnn::openmp_backend::onednn {
namespace {

using dnnl::memory;
using dims = memory::dims;

struct Geom {
  int64_t N, C, H, W, O, Cg, kh, kw, sh, sw, ph, pw, dh, dw, groups, OH, OW;
};

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  int64_t span = in + 2 * p - d * (k - 1) - 1;
  return span < 0 ? 0 : span / s + 1;
}

// The image (x / dx), weight (w / dw) and output (y / dy) operands of each
// kind, per docs/ops.md.
struct Operands {
  const vnn_tensor_desc *img = nullptr, *wei = nullptr, *out = nullptr, *bias = nullptr;
};

bool operands(const vnn_op& op, Operands* o, std::string* why) {
  const int need_in = 2, need_out = 1;
  if (op.num_inputs < need_in || op.num_outputs < need_out || op.num_ints < 9) {
    *why = "needs 2 inputs, 1 output and 9 ints (kh, kw, sh, sw, ph, pw, dh, dw, groups); got " +
           std::to_string(op.num_inputs) + ", " + std::to_string(op.num_outputs) + " and " +
           std::to_string(op.num_ints);
    return false;
  }
  switch (op.kind) {
    case VNN_OP_CONV2D:
      *o = {&op.inputs[0], &op.inputs[1], &op.outputs[0], op.num_inputs > 2 ? &op.inputs[2] : nullptr};
      return true;
    case VNN_OP_CONV2D_BACKWARD_DATA: *o = {&op.outputs[0], &op.inputs[1], &op.inputs[0], nullptr}; return true;
    case VNN_OP_CONV2D_BACKWARD_WEIGHT:
      *o = {&op.inputs[1], &op.outputs[0], &op.inputs[0], op.num_outputs > 1 ? &op.outputs[1] : nullptr};
      return true;
    default: *why = "not a conv2d kind"; return false;
  }
}

// Shapes against the geometry: a malformed request is refused, never run.
bool geometry(const vnn_op& op, const Operands& o, Geom* g, std::string* why) {
  const int64_t* k = op.ints;
  const vnn_tensor_desc &x = *o.img, &w = *o.wei, &y = *o.out;
  if (x.ndim != 4 || w.ndim != 4 || y.ndim != 4) {
    *why = "image, weight and output must be 4-D";
    return false;
  }
  *g = Geom{x.sizes[0], x.sizes[1], x.sizes[2], x.sizes[3], w.sizes[0], w.sizes[1], k[0], k[1], k[2], k[3],
            k[4],       k[5],       k[6],       k[7],       k[8],       0,          0};
  if (g->kh <= 0 || g->kw <= 0 || g->sh <= 0 || g->sw <= 0 || g->ph < 0 || g->pw < 0 || g->dh <= 0 || g->dw <= 0 ||
      g->groups <= 0) {
    *why = "kernel, stride and dilation must be positive, padding non-negative, groups positive";
    return false;
  }
  int64_t cg_total;
  if (!checked::mul(g->Cg, g->groups, &cg_total) || cg_total != g->C || g->O % g->groups != 0 ||
      w.sizes[2] != g->kh || w.sizes[3] != g->kw) {
    *why = "weight [" + std::to_string(w.sizes[0]) + ", " + std::to_string(w.sizes[1]) + ", " +
           std::to_string(w.sizes[2]) + ", " + std::to_string(w.sizes[3]) + "] does not fit " +
           std::to_string(g->C) + " input channels in " + std::to_string(g->groups) + " groups with a " +
           std::to_string(g->kh) + "x" + std::to_string(g->kw) + " kernel";
    return false;
  }
  int64_t eh, ew, ph2, pw2;  // the output-size arithmetic, overflow-checked
  if (!checked::mul(g->dh, g->kh - 1, &eh) || !checked::mul(g->dw, g->kw - 1, &ew) ||
      !checked::add(g->H, 2 * g->ph, &ph2) || !checked::add(g->W, 2 * g->pw, &pw2) || g->ph > (INT64_MAX / 4) ||
      g->pw > (INT64_MAX / 4)) {
    *why = "the padded input or the dilated kernel overflows int64";
    return false;
  }
  g->OH = out_size(g->H, g->kh, g->sh, g->ph, g->dh);
  g->OW = out_size(g->W, g->kw, g->sw, g->pw, g->dw);
  if (y.sizes[0] != g->N || y.sizes[1] != g->O || y.sizes[2] != g->OH || y.sizes[3] != g->OW) {
    *why = "output [" + std::to_string(y.sizes[0]) + ", " + std::to_string(y.sizes[1]) + ", " +
           std::to_string(y.sizes[2]) + ", " + std::to_string(y.sizes[3]) + "] is not [" + std::to_string(g->N) +
           ", " + std::to_string(g->O) + ", " + std::to_string(g->OH) + ", " + std::to_string(g->OW) + "]";
    return false;
  }
  if (o.bias && (o.bias->ndim != 1 || o.bias->sizes[0] != g->O)) {
    *why = "bias must be [" + std::to_string(g->O) + "]";
    return false;
  }
  for (const vnn_tensor_desc* d : {o.img, o.wei, o.out, o.bias})
    if (d && d->dtype != x.dtype) {
      *why = "all operands must share one dtype";
      return false;
    }
  return true;
}

enum class Layout { none, plain, blocked };

// The selection rule (measured: docs/benchmarks/cpu-training.md, "oneDNN"), float32:
//  - oneDNN for every conv2d whose MACs reach kMinMacs; below that the
//    IM2COL + GEMM path, run inline on the calling thread without opening
//    a parallel region, is cheaper than a oneDNN call (each primitive and
//    reorder is a parallel region: 0.1 ms and more on a busy machine,
//    against 10-60 us for the whole inline path at a few thousand MACs).
//  - Layout, per pass, from DNNL_VERBOSE timings of both CNN layers:
//    with at least kBlockedMinChannels input channels per group, blocked
//    (nChw16c, oneDNN's direct jit:avx512_core kernels; the reorders
//    around them cost under 5% of the primitive); with fewer (the first
//    layer, C = 1; depthwise), plain NCHW for forward and backward-data
//    (oneDNN's gemm:jit; blocking pads C = 1 to 16 channels and the
//    reorders cost more than the primitive) but blocked for
//    backward-weights (gemm:jit took 35-40 ms there against 10 ms).
//  VNN_ONEDNN_CONV_LAYOUT=plain|blocked forces that layout on every float32
//  conv2d, the small ones included (for measuring the rule).
constexpr int64_t kMinMacs = 1 << 16;
constexpr int64_t kBlockedMinChannels = 8;

Layout layout_override() {
  static const Layout l = [] {
    const char* v = std::getenv("VNN_ONEDNN_CONV_LAYOUT");
    if (v && std::strcmp(v, "plain") == 0) return Layout::plain;
    if (v && std::strcmp(v, "blocked") == 0) return Layout::blocked;
    return Layout::none;
  }();
  return l;
}

Layout conv_rule(int32_t kind, const Geom& g) {
  int64_t macs = 1;
  for (int64_t f : {g.N, g.O, g.OH, g.OW, g.Cg, g.kh, g.kw})
    if (!checked::mul(macs, f, &macs)) return Layout::none;  // int64-overflowing sizes: leave them to the core
  if (layout_override() != Layout::none) return layout_override();
  if (macs < kMinMacs) return Layout::none;
  if (g.Cg >= kBlockedMinChannels || kind == VNN_OP_CONV2D_BACKWARD_WEIGHT) return Layout::blocked;
  return Layout::plain;
}

memory::desc user_md(const vnn_tensor_desc& d) {
  dims sz(d.sizes, d.sizes + d.ndim), st(d.strides, d.strides + d.ndim);
  return memory::desc(sz, memory::data_type::f32, st);
}

// A [O, C/g, kh, kw] weight as oneDNN's grouped [g, O/g, C/g, kh, kw].
memory::desc weight_md(const vnn_tensor_desc& d, int64_t groups) {
  if (groups == 1) return user_md(d);
  const int64_t og = d.sizes[0] / groups;
  dims sz{groups, og, d.sizes[1], d.sizes[2], d.sizes[3]};
  dims st{og * d.strides[0], d.strides[0], d.strides[1], d.strides[2], d.strides[3]};
  return memory::desc(sz, memory::data_type::f32, st);
}

memory::desc any_like(const memory::desc& md) {
  return memory::desc(md.dims(), memory::data_type::f32, memory::format_tag::any);
}

// One operand of a primitive: where it comes from in the vnn_op, its user
// layout, the layout the primitive wants, and the reorder between them.
struct Arg {
  int id;          // DNNL_ARG_*
  bool input;      // read (reordered in before) or written (reordered out after)
  int index;       // into op.inputs / op.outputs
  memory::desc user, inner;
  bool reorder = false;
  dnnl::reorder re;
  size_t offset = 0;  // of the inner buffer in the scratch block
};

struct Entry {
  bool usable = false;  // false: declined once, remembered (no retry per call)
  dnnl::primitive prim;
  std::vector<Arg> args;
  memory::desc scratch;
  size_t bytes = 0;  // scratch bytes: scratchpad, then the inner buffers
};

// Fills e from a primitive descriptor: each argument's inner layout and
// reorder, the scratch plan. Declines (usable stays false) a reference
// implementation: the core's IM2COL + GEMM path is faster than oneDNN's
// ref kernels.
template <class Prim, class PD>
void finish(Entry* e, const PD& pd, std::vector<Arg> args) {
  if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0) return;
  e->scratch = pd.scratchpad_desc();
  size_t off = align64(e->scratch.get_size());
  auto& eng = engine();
  for (Arg& a : args) {
    a.inner = pd.query_md(dnnl::query::exec_arg_md, a.id);
    a.reorder = a.inner != a.user;
    if (a.reorder) {
      a.re = a.input ? dnnl::reorder(dnnl::reorder::primitive_desc(eng, a.user, eng, a.inner))
                     : dnnl::reorder(dnnl::reorder::primitive_desc(eng, a.inner, eng, a.user));
      a.offset = off;
      off += align64(a.inner.get_size());
    }
  }
  e->args = std::move(args);
  e->bytes = off;
  e->prim = Prim(pd);
  e->usable = true;
}

Entry build_with(const vnn_op& op, const Operands& o, const Geom& g, Layout layout, dnnl::algorithm algo);

// Winograd F(4x4, 3x3) (oneDNN's jit_wino_4x3, AVX-512 only) for 3x3,
// stride 1, undilated, ungrouped convolutions in the blocked layout with
// at least kBlockedMinChannels input channels. On the CNN's second layer (64x32x14x14 -> 64, tensor_bench (d), 2 threads,
// two rounds alternated with the direct kernel in one window) forward
// 2.11-2.33 ms against 2.80-3.36, forward + both gradients 7.29-7.61
// against 9.18-10.68 (LibTorch: 3.26-3.46 and 9.84-12.93). Rounding
// differs from direct convolution by a few float32 ulps of the sums.
// On the first layer (C = 1, whose weight gradient runs blocked) it made
// forward + gradients 2x slower (4.72-5.73 against 2.44-3.25 ms).
// Where oneDNN has no Winograd kernel (no AVX-512, other shapes), the
// direct one runs. VNN_ONEDNN_CONV_ALGO=direct turns it off (measuring).
bool winograd_shape(const Geom& g, Layout layout) {
  static const bool off = [] {
    const char* v = std::getenv("VNN_ONEDNN_CONV_ALGO");
    return v && std::strcmp(v, "direct") == 0;
  }();
  return !off && layout == Layout::blocked && g.Cg >= kBlockedMinChannels && g.groups == 1 && g.kh == 3 && g.kw == 3 &&
         g.sh == 1 && g.sw == 1 && g.dh == 1 && g.dw == 1;
}

Entry build(const vnn_op& op, const Operands& o, const Geom& g, Layout layout) {
  if (winograd_shape(g, layout)) {
    Entry w = build_with(op, o, g, layout, dnnl::algorithm::convolution_winograd);
    if (w.usable) return w;
  }
  return build_with(op, o, g, layout, dnnl::algorithm::convolution_direct);
}

Entry build_with(const vnn_op& op, const Operands& o, const Geom& g, Layout layout, dnnl::algorithm algo) {
  Entry e;
  auto& eng = engine();
  const memory::desc img = user_md(*o.img), wei = weight_md(*o.wei, g.groups), out = user_md(*o.out);
  const bool blocked = layout == Layout::blocked;
  const memory::desc img_p = blocked ? any_like(img) : img, wei_p = blocked ? any_like(wei) : wei,
                     out_p = blocked ? any_like(out) : out;
  const memory::desc bias = o.bias ? user_md(*o.bias) : memory::desc();
  const dims strides{g.sh, g.sw}, dil{g.dh - 1, g.dw - 1}, pad{g.ph, g.pw};
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  using fwd = dnnl::convolution_forward;
  const auto train = dnnl::prop_kind::forward_training;
  try {
    switch (op.kind) {
      case VNN_OP_CONV2D: {
        fwd::primitive_desc pd(fwd::desc(train, algo, img_p, wei_p, bias, out_p, strides, dil, pad, pad), attr, eng);
        std::vector<Arg> args{{DNNL_ARG_SRC, true, 0, img, {}}, {DNNL_ARG_WEIGHTS, true, 1, wei, {}},
                              {DNNL_ARG_DST, false, 0, out, {}}};
        if (o.bias) args.push_back({DNNL_ARG_BIAS, true, 2, bias, {}});
        finish<fwd>(&e, pd, std::move(args));
        break;
      }
      case VNN_OP_CONV2D_BACKWARD_DATA: {
        fwd::primitive_desc hint(fwd::desc(train, algo, img_p, wei_p, out_p, strides, dil, pad, pad), eng);
        using bwd = dnnl::convolution_backward_data;
        bwd::primitive_desc pd(bwd::desc(algo, img_p, wei_p, out_p, strides, dil, pad, pad), attr, eng, hint);
        finish<bwd>(&e, pd,
                    {{DNNL_ARG_DIFF_DST, true, 0, out, {}}, {DNNL_ARG_WEIGHTS, true, 1, wei, {}},
                {DNNL_ARG_DIFF_SRC, false, 0, img, {}}});
        break;
      }
      case VNN_OP_CONV2D_BACKWARD_WEIGHT: {
        fwd::primitive_desc hint(fwd::desc(train, algo, img_p, wei_p, bias, out_p, strides, dil, pad, pad), eng);
        using bwd = dnnl::convolution_backward_weights;
        bwd::primitive_desc pd(bwd::desc(algo, img_p, wei_p, bias, out_p, strides, dil, pad, pad), attr, eng, hint);
        std::vector<Arg> args{{DNNL_ARG_DIFF_DST, true, 0, out, {}}, {DNNL_ARG_SRC, true, 1, img, {}},
                              {DNNL_ARG_DIFF_WEIGHTS, false, 0, wei, {}}};
        if (o.bias) args.push_back({DNNL_ARG_DIFF_BIAS, false, 1, bias, {}});
        finish<bwd>(&e, pd, std::move(args));
        break;
      }
      default: break;
    }
  } catch (const dnnl::error&) {
    e = Entry();  // oneDNN has no implementation for this case: the core's path runs it
  }
  return e;
}

// The cache: key = kind, layout, and every size, stride and int of the op.
PrimitiveCache<Entry, 512>& cache() {
  static auto* c = new PrimitiveCache<Entry, 512>();
  return *c;
}

void execute(const vnn_op& op, const Entry& e) {
  dnnl::engine& eng = engine();
  dnnl::stream& strm = stream();
  Scratch scratch(e.bytes);  // held until the stream wait below
  char* base = scratch.get();
  std::unordered_map<int, memory> args;
  args.reserve(e.args.size() + 1);
  std::vector<std::pair<const Arg*, memory>> outs;  // inner buffers to reorder back
  for (const Arg& a : e.args) {
    memory user(a.user, eng, element0(a.input ? op.inputs[a.index] : op.outputs[a.index]));
    if (!a.reorder) {
      args.emplace(a.id, user);
      continue;
    }
    memory inner(a.inner, eng, base + a.offset);
    if (a.input) a.re.execute(strm, user, inner);
    else outs.emplace_back(&a, user);
    args.emplace(a.id, inner);
  }
  args.emplace(DNNL_ARG_SCRATCHPAD, memory(e.scratch, eng, base));
  e.prim.execute(strm, args);
  for (auto& [a, user] : outs) a->re.execute(strm, args.at(a->id), user);
  strm.wait();
}

}  // namespace

bool enabled() { return switched_on(); }

std::string describe() {
  if (!switched_on()) return "onednn=off (VNN_ONEDNN=0)";
  const dnnl_version_t* v = dnnl_version();
  std::string isa;
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core_amx: isa = "avx512_core_amx"; break;
    case dnnl::cpu_isa::avx512_core_bf16: isa = "avx512_core_bf16"; break;
    case dnnl::cpu_isa::avx512_core_vnni: isa = "avx512_core_vnni"; break;
    case dnnl::cpu_isa::avx512_core: isa = "avx512_core"; break;
    case dnnl::cpu_isa::avx2_vnni: isa = "avx2_vnni"; break;
    case dnnl::cpu_isa::avx2: isa = "avx2"; break;
    case dnnl::cpu_isa::avx: isa = "avx"; break;
    default: isa = "sse41 or older"; break;
  }
  return "onednn=" + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
         " (jit isa " + isa + ")";
}

Outcome run_conv(const vnn_op& op, std::string* why) {
  if (op.kind != VNN_OP_CONV2D && op.kind != VNN_OP_CONV2D_BACKWARD_DATA && op.kind != VNN_OP_CONV2D_BACKWARD_WEIGHT)
    return Outcome::declined;
  Operands o;
  Geom g;
  if (!operands(op, &o, why) || !geometry(op, o, &g, why)) return Outcome::invalid;
  if (!switched_on() || o.img->dtype != VNN_FLOAT32) return Outcome::declined;
  for (const vnn_tensor_desc* d : {o.img, o.wei, o.out})
    for (int i = 0; i < 4; ++i)
      if (d->sizes[i] == 0) return Outcome::declined;  // nothing to compute, or a zero gradient: the core's path
  const Layout layout = conv_rule(op.kind, g);
  if (layout == Layout::none) return Outcome::declined;
  const std::string key = op_key(op, int64_t(layout));
  std::lock_guard<std::mutex> lock(cache().mutex());
  const Entry& e = cache().get(key, [&] { return build(op, o, g, layout); });
  if (!e.usable) return Outcome::declined;
  execute(op, e);
  return Outcome::taken;
}

}  // namespace vnn::openmp_backend::onednn

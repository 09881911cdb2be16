// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fused attention on OpenCL: structural checks, the per-device tile choice
// (a few candidate tilings timed once per shape class on the op's own
// operands, tuning.cpp's tuned_choice, cached in the tuning file) and the
// launches of kernels/attention.cl: the forward pass, and for the backward
// the dq pass and the dk / dv pass (two kernels, no atomics). Tiles go
// through local memory on GPUs (STAGED); on CPU-like devices the kernels
// read them in place, the transposed ones from scratch copies made here
// (scratch.hpp) for a chunk of heads at a time, at most kScratchBytes.
#include "ops_attention.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "common/op_params.hpp"
#include "errors.hpp"
#include "launch.hpp"
#include "op_common.hpp"
#include "program_cache.hpp"
#include "scratch.hpp"
#include "tuning.hpp"

namespace vnn_opencl {
namespace {

enum Pass { kForward = 0, kDq = 1, kDkDv = 2 };
const char* const kKernel[3] = {"vnn_sdpa_fwd", "vnn_sdpa_dq", "vnn_sdpa_dkdv"};
const char* const kPassName[3] = {"fwd", "dq", "dkdv"};

// The largest head dim the kernels are built for (private rows of E and Ev
// per item; 256 is the most a transformer uses).
constexpr int64_t kMaxHeadDim = 512;

// The op's operands and geometry, checked.
struct Shape {
  vnn_sdpa_params p{};
  bool backward = false;
  int32_t dtype = VNN_FLOAT32;
  int64_t N = 0, Hq = 0, Hk = 0, G = 1, L = 0, S = 0, E = 0, Ev = 0;
  const vnn_tensor_desc *q = nullptr, *k = nullptr, *v = nullptr, *mask = nullptr;
  const vnn_tensor_desc *out = nullptr, *lse = nullptr;               // forward outputs
  const vnn_tensor_desc *dout = nullptr, *delta = nullptr;            // backward inputs
  const vnn_tensor_desc *dq = nullptr, *dk = nullptr, *dv = nullptr;  // backward outputs
};

// One tiling: rq rows per work item (queries; keys for the dk / dv pass),
// ni items per group, tk rows per tile (keys; queries for dk / dv), vw
// score lanes; staged: tiles through local memory.
struct Tiles {
  int rq = 1, ni = 1, tk = 1, vw = 1;
  bool staged = false;
};

vnn_status parse(const Device& d, const vnn_op& op, const std::string& what, Shape* s) {
  s->backward = op.kind == VNN_OP_SDPA_BACKWARD;
  // Requests the kernels do not take are declined (UNSUPPORTED: the core
  // then runs its math path, which reports what is wrong), as the Kokkos
  // plugins do.
  if (!vnn::kernels::decode_sdpa(op, &s->p))
    return fail(VNN_STATUS_UNSUPPORTED, what,
                s->backward ? ": expects q, k, v, out, dout, lse, delta [, mask] and dq, dk, dv"
                            : ": expects q, k, v [, mask] and out, lse",
                " with the shapes of backend_abi.h's vnn_sdpa_params (unit stride on the last dim), scalars {scale, "
                "dropout_p in [0, 1)} and ints {is_causal, has_mask, seed, offset, threshold}");
  const vnn_tensor_desc* in = op.inputs;
  s->q = &in[0], s->k = &in[1], s->v = &in[2];
  if (s->backward) {
    s->out = &in[3], s->dout = &in[4], s->lse = &in[5], s->delta = &in[6];
    s->mask = s->p.has_mask ? &in[7] : nullptr;
    s->dq = &op.outputs[0], s->dk = &op.outputs[1], s->dv = &op.outputs[2];
  } else {
    s->mask = s->p.has_mask ? &in[3] : nullptr;
    s->out = &op.outputs[0], s->lse = &op.outputs[1];
  }
  const int32_t dt = s->q->dtype;
  s->dtype = dt;
  if (dt != VNN_FLOAT32 && dt != VNN_FLOAT64)
    return fail(VNN_STATUS_UNSUPPORTED, what, ": the fused kernels take float32 and float64, not ",
                vnn::detail::abi_dtype(dt));
  if (dt == VNN_FLOAT64 && !d.fp64)
    return fail(VNN_STATUS_UNSUPPORTED, what, ": float64 is not supported on ", d.label, " (device lacks cl_khr_fp64)");
  for (const vnn_tensor_desc* t : {s->k, s->v, s->mask, s->out, s->lse, s->dout, s->delta, s->dq, s->dk, s->dv})
    if (t && t->dtype != dt)
      return fail(VNN_STATUS_UNSUPPORTED, what, ": the dtype of every operand (lse and delta too) must be q's ",
                  vnn::detail::abi_dtype(dt), ", got ", vnn::detail::abi_dtype(t->dtype));
  s->N = s->q->sizes[0], s->Hq = s->q->sizes[1], s->L = s->q->sizes[2], s->E = s->q->sizes[3];
  s->Hk = s->k->sizes[1], s->S = s->k->sizes[2], s->Ev = s->v->sizes[3];
  s->G = s->Hq / s->Hk;
  if (s->E < 1 || s->Ev < 1 || s->E > kMaxHeadDim || s->Ev > kMaxHeadDim)
    return fail(VNN_STATUS_UNSUPPORTED, what, ": head dims E = ", s->E, ", Ev = ", s->Ev,
                " outside the fused kernels' 1 .. ", kMaxHeadDim);
  if (s->N * s->Hq > INT_MAX || s->L > INT_MAX / 2 || s->S > INT_MAX / 2)
    return fail(VNN_STATUS_UNSUPPORTED, what, ": N * Hq = ", s->N * s->Hq, ", L = ", s->L, ", S = ", s->S,
                " past the fused kernels' int32 indices");
  return VNN_STATUS_OK;
}

size_t esize(const Shape& s) { return s.dtype == VNN_FLOAT64 ? 8 : 4; }

// Local memory of a pass (kernels/attention.cl's __local arrays).
size_t local_bytes(const Shape& s, Pass pass, const Tiles& t) {
  const size_t E = size_t(s.E), Ev = size_t(s.Ev), tk = size_t(t.tk);
  const size_t elems = pass == kForward ? (E + Ev) * tk : pass == kDq ? (2 * E + Ev) * tk : (2 * E + 2 * Ev + 2) * tk;
  return elems * esize(s);
}

// t made to fit the device: staged tiles within the local memory; false
// when even the smallest does not fit. Tiles are not cut to a short
// sequence (the kernels clamp rows and stop at the keys): each cut was a
// program of its own, and a GPT generating token by token built five
// (L = 1, 2, 4, 8, 16), 1.5 s of compiling each on PoCL, to save
// microseconds.
bool fit(const Device& d, const Shape& s, Pass pass, Tiles* t) {
  const size_t room = t->staged ? size_t(d.local_mem) : SIZE_MAX;
  while (local_bytes(s, pass, *t) > room) {
    if (t->tk > t->vw) t->tk /= 2;
    else if (t->vw > 1) t->vw /= 2, t->tk /= 2;
    else return false;
  }
  const size_t most = std::min(d.max_work_group_size, d.max_item_sizes[0]);
  while (size_t(t->ni) > most && t->ni > 1) t->ni /= 2;
  return true;
}

// The tilings the tuner times, the default first. GPUs: tiles staged in
// local memory, one or two rows per item, many items, scalar lanes.
// CPU-like devices (PoCL: a group is a loop on one core, local memory is
// ordinary memory): tiles read in place, score vectors of the preferred
// width, 4 rows per item (one key vector load feeds 4 rows; 2 load more
// than they multiply, 8 spill the registers), 2 where the head dims pass
// 128 (as fast, half the build time). On PoCL (2 cores, AVX-512, CPU time
// of 32 heads x 256 x 256 x 64) the forward took 5 ms with {4, 8, 32, 16}
// against 42 ms with the same tiles staged; 16-key tiles ran 30% slower
// than 32 and 64, 2 rows per item 40% slower than 4.
std::vector<Tiles> candidates(const Device& d, const Shape& s, bool gpu) {
  if (gpu) return {{1, 64, 32, 1, true}, {2, 32, 32, 1, true}, {1, 128, 16, 1, true}};
  const int vw = preferred_vector_width(d, s.dtype), rq = s.E + s.Ev > 256 ? 2 : 4;
  return {{rq, 8, 2 * vw, vw}, {rq, 4, 4 * vw, vw}, {2 * rq, 2, 2 * vw, vw}};
}

// The three passes of one tiling and the transpose of their scratch copies
// (SDPA_PASS 3) in one program (see Siblings): a training step takes all.
const Siblings& passes(int pass) {
  static const auto make = [](size_t index) {
    return Siblings{{"-DSDPA_PASS=0", "-DSDPA_PASS=1", "-DSDPA_PASS=2", "-DSDPA_PASS=3"}, index};
  };
  static const Siblings by_pass[4] = {make(0), make(1), make(2), make(3)};  // built once: every launch asks
  return by_pass[pass];
}

std::string options(const Shape& s, const Tiles& t) {
  auto def = [](std::string& o, const char* k, int64_t v) { o += std::string(" -D") + k + "=" + std::to_string(v); };
  std::string o = s.dtype == VNN_FLOAT64 ? "-DT=double -DIT=long" : "-DT=float -DIT=int";
  def(o, "STAGED", t.staged), def(o, "E", s.E), def(o, "EV", s.Ev);
  def(o, "RQ", t.rq), def(o, "NI", t.ni), def(o, "TK", t.tk), def(o, "VW", t.vw);
  def(o, "VE", int64_t(pow2_divisor_at_most(uint64_t(s.E), size_t(t.vw))));
  def(o, "VEV", int64_t(pow2_divisor_at_most(uint64_t(s.Ev), size_t(t.vw))));
  return o;
}

// A descriptor's buffer, offset and first four strides as kernel arguments.
struct Operand {
  cl_mem m = nullptr;
  cl_long off = 0;
  cl_long4 st{};
  explicit Operand(const vnn_tensor_desc* t) {
    if (t) m = mem(*t), off = t->offset, st = strides4(*t);
  }
};

// Rows of the scratch copies of a pass: its tile's multiple at or above
// the rows it tiles (S; L for dk / dv).
int64_t padded_rows(const Shape& s, Pass pass, const Tiles& t) {
  const int64_t rows = pass == kDkDv ? s.L : s.S;
  return (rows + t.tk - 1) / t.tk * t.tk;
}

// The transposed copies the in-place tiles read (STAGED=0): forward k; dq
// k and v; dk / dv q, dout, lse (-inf as +inf) and delta; [head][d][row]
// with rows padded to tp (kernels/attention.cl vnn_sdpa_transpose), for
// the heads of one chunk.
struct Transposed {
  Scratch a, b, l, dl;
  cl_long tp = 0;
};

// The most the transposed copies of one chunk of heads take: the fused
// path's extra memory stays this buffer (and the lse), not a copy of k or
// q the size of the inputs (L = S = 8192, (B, H, E) = (8, 12, 64): one
// head's k is 2 MiB, so 8 heads a chunk; a GPT's T = 64: every head).
constexpr size_t kScratchBytes = size_t(16) << 20;

// Heads b0 .. b0 + count of src (flat n * heads + h) into out.
vnn_status transpose(Device& d, cl_command_queue q, const Shape& s, const Tiles& t, const vnn_tensor_desc& src,
                     int64_t heads, int64_t b0, int64_t count, int64_t rows, int64_t cols, cl_long tp, double pad,
                     bool fix, const std::string& what, Scratch* out) {
  if (vnn_status st = Scratch::make(d, q, size_t(count * cols * tp) * esize(s), what, out)) return st;
  if (count == 0 || tp == 0) return VNN_STATUS_OK;
  Kernel* k = nullptr;
  if (vnn_status st = get_kernel(d, "attention", "vnn_sdpa_transpose", options(s, t), passes(3), &k)) return st;
  cl_mem dst = out->mem(), sm = mem(src);
  const cl_long so = src.offset;
  cl_long4 st = strides4(src);
  if (src.ndim == 3) st.s[3] = 0;  // lse, delta: one column
  const cl_int H = cl_int(heads), R = cl_int(rows), D = cl_int(cols), f = fix ? 1 : 0, first = cl_int(b0);
  const Scalar pv(pad);
  const size_t global[3] = {size_t((tp + 15) / 16), size_t((cols + 15) / 16), size_t(count)};
  size_t local[3];  // one 16 x 16 tile per item
  return enqueue_nd(*k, q, 3, global, driver_local(d, 3, global, 16, local), what,
                    {arg(dst), arg(sm), arg(so), arg(st), arg(H), arg(R), arg(D), arg(tp), pv.as(s.dtype), arg(f),
                     arg(first)});
}

// The copies for key / value heads hb0 .. hb0 + nkv (flat n * Hk + hk;
// the dk / dv pass: their G query heads each).
vnn_status make_transposed(Device& d, cl_command_queue q, const Shape& s, Pass pass, const Tiles& t, int64_t hb0,
                           int64_t nkv, const std::string& what, Transposed* x) {
  if (t.staged) return VNN_STATUS_OK;
  x->tp = padded_rows(s, pass, t);
  const double inf = std::numeric_limits<double>::infinity();
  if (pass != kDkDv) {
    if (vnn_status st = transpose(d, q, s, t, *s.k, s.Hk, hb0, nkv, s.S, s.E, x->tp, 0.0, false, what, &x->a))
      return st;
    if (pass == kDq) return transpose(d, q, s, t, *s.v, s.Hk, hb0, nkv, s.S, s.Ev, x->tp, 0.0, false, what, &x->b);
    return VNN_STATUS_OK;
  }
  const int64_t b0 = hb0 * s.G, nq = nkv * s.G;
  if (vnn_status st = transpose(d, q, s, t, *s.q, s.Hq, b0, nq, s.L, s.E, x->tp, 0.0, false, what, &x->a)) return st;
  if (vnn_status st = transpose(d, q, s, t, *s.dout, s.Hq, b0, nq, s.L, s.Ev, x->tp, 0.0, false, what, &x->b))
    return st;
  if (vnn_status st = transpose(d, q, s, t, *s.lse, s.Hq, b0, nq, s.L, 1, x->tp, inf, true, what, &x->l)) return st;
  return transpose(d, q, s, t, *s.delta, s.Hq, b0, nq, s.L, 1, x->tp, 0.0, false, what, &x->dl);
}

// The launch of a pass over key / value heads hb0 .. hb0 + nkv (the
// forward and dq grids: their query heads), reading the copies x.
vnn_status launch_pass(Kernel& k, cl_command_queue q, const Shape& s, Pass pass, const Tiles& t, int64_t groups,
                       int64_t hb0, int64_t nkv, const Transposed& x, const std::string& what) {
  const int64_t heads = pass == kDkDv ? nkv : nkv * s.G;
  const size_t global[2] = {size_t(groups) * size_t(t.ni), size_t(heads)}, local[2] = {size_t(t.ni), 1};
  // Without a mask the kernel never reads it: q stands in, strides 0; so
  // for the scratch copies of the staged kernels.
  Operand qo(s.q), ko(s.k), vo(s.v), mo(s.mask ? s.mask : s.q);
  if (!s.mask) mo.off = 0, mo.st = cl_long4{};
  cl_mem xa = x.a.mem() ? x.a.mem() : qo.m, xb = x.b.mem() ? x.b.mem() : qo.m;
  cl_mem xl = x.l.mem() ? x.l.mem() : qo.m, xd = x.dl.mem() ? x.dl.mem() : qo.m;
  const cl_int Hq = cl_int(s.Hq), G = cl_int(s.G), L = cl_int(s.L), S = cl_int(s.S);
  const cl_int flags = (s.p.is_causal ? 1 : 0) | (s.mask ? 2 : 0) | (s.p.dropout_p > 0 ? 4 : 0);
  const Scalar scale(s.p.scale), kept(s.p.dropout_p > 0 ? 1.0 / (1.0 - s.p.dropout_p) : 1.0);
  const Arg sa = scale.as(s.dtype), ka = kept.as(s.dtype);
  const cl_uint threshold = cl_uint(s.p.dropout_threshold);
  const cl_ulong seed = cl_ulong(s.p.dropout_seed), offset = cl_ulong(s.p.dropout_offset);
  std::vector<Arg> args;
  auto add = [&](const Operand& o) { args.insert(args.end(), {arg(o.m), arg(o.off), arg(o.st)}); };
  Operand a0(nullptr), a1(nullptr), lo(s.lse), doo(s.dout), de(s.delta);
  if (pass == kForward) {
    a0 = Operand(s.out), a1 = Operand(s.lse);
    add(a0), add(a1), add(qo), add(ko), add(vo), add(mo);
    args.push_back(arg(xa));
  } else if (pass == kDq) {
    a0 = Operand(s.dq);
    add(a0), add(qo), add(ko), add(vo), add(doo), add(lo), add(de), add(mo);
    args.insert(args.end(), {arg(xa), arg(xb)});
  } else {
    a0 = Operand(s.dk), a1 = Operand(s.dv);
    add(a0), add(a1), add(qo), add(ko), add(vo), add(doo), add(lo), add(de), add(mo);
    args.insert(args.end(), {arg(xa), arg(xb), arg(xl), arg(xd)});
  }
  const cl_int first = cl_int(hb0);
  args.insert(args.end(), {arg(x.tp), arg(first), arg(Hq), arg(G), arg(L), arg(S), sa, arg(flags), ka, arg(threshold),
                           arg(seed), arg(offset)});
  return enqueue_nd(k, q, 2, global, local, what, args.data(), args.size());
}

// Key / value heads per chunk of a pass: every head with staged tiles (no
// copies), else as many as kScratchBytes of copies hold (at least one).
// VNN_OPENCL_SDPA_SCRATCH=<bytes> lowers the bound (tests: 1 runs a launch
// per head).
int64_t heads_per_chunk(const Shape& s, Pass pass, const Tiles& t) {
  const int64_t total = s.N * s.Hk;
  if (t.staged) return total;
  int64_t budget = int64_t(kScratchBytes);
  if (const char* env = std::getenv("VNN_OPENCL_SDPA_SCRATCH"))
    if (std::atoll(env) > 0) budget = std::min<int64_t>(budget, std::atoll(env));
  const int64_t cols = pass == kForward ? s.E : pass == kDq ? s.E + s.Ev : s.G * (s.E + s.Ev + 2);
  const int64_t per_head = cols * padded_rows(s, pass, t) * int64_t(esize(s));
  return std::max<int64_t>(1, std::min<int64_t>(total, budget / std::max<int64_t>(per_head, 1)));
}

// One pass with tiling t, a launch per chunk of key / value heads.
vnn_status run_pass(Device& d, cl_command_queue q, const Shape& s, Pass pass, const Tiles& t,
                    const std::string& what) {
  Kernel* k = nullptr;
  if (vnn_status st = get_kernel(d, "attention", kKernel[pass], options(s, t), passes(pass), &k)) return st;
  if (k->work_group_size < size_t(t.ni))
    return fail(VNN_STATUS_UNSUPPORTED, what, ": ", kKernel[pass], " needs ", t.ni,
                " work items per group, the compiled kernel allows ", k->work_group_size, " on ", d.label);
  const int64_t rows = pass == kDkDv ? s.S : s.L, kv_heads = s.N * s.Hk;
  const int64_t tile = int64_t(t.rq) * t.ni, groups = (rows + tile - 1) / tile;
  if (groups == 0 || kv_heads == 0) return VNN_STATUS_OK;
  const int64_t chunk = heads_per_chunk(s, pass, t);
  Transposed x;
  for (int64_t hb0 = 0; hb0 < kv_heads; hb0 += chunk) {
    const int64_t nkv = std::min(chunk, kv_heads - hb0);
    if (vnn_status st = make_transposed(d, q, s, pass, t, hb0, nkv, what, &x)) return st;
    if (vnn_status st = launch_pass(*k, q, s, pass, t, groups, hb0, nkv, x, what)) return st;
  }
  return VNN_STATUS_OK;
}

// Seconds of the best of two runs of body after a warm-up (the build);
// negative when it failed.
double seconds(cl_command_queue q, const std::function<vnn_status()>& body) {
  double best = -1;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    if (body() != VNN_STATUS_OK || clFinish(q) != CL_SUCCESS) return -1;
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rep > 0 && (best < 0 || t < best)) best = t;
  }
  return best;
}

// Part of every choice key: bump it when the candidate lists change, so
// that indices stored for older lists are timed again, not misread.
constexpr const char* kChoiceVersion = "sdpa2";

// The shape class a choice is kept for: pass, dtype, head dims, groups of
// the GQA, powers of two at or above L and S, and the masking flags.
std::string choice_key(const Shape& s, Pass pass) {
  auto pow2 = [](int64_t v) {
    int64_t p = 1;
    while (p < v) p *= 2;
    return p;
  };
  return std::string(kChoiceVersion) + ":" + kPassName[pass] + ":" + (s.dtype == VNN_FLOAT64 ? "f64" : "f32") + ":e" +
         std::to_string(s.E) + "x" + std::to_string(s.Ev) + ":g" + std::to_string(s.G) + ":l" +
         std::to_string(pow2(s.L)) + ":s" + std::to_string(pow2(s.S)) + ":" + (s.p.is_causal ? "c" : "") +
         (s.mask ? "m" : "") + (s.p.dropout_p > 0 ? "d" : "") + "-";
}

// The tiling of a pass: VNN_OPENCL_SDPA=default the first candidate,
// =staged / =direct the first of the GPU's / the CPU's list (either kind
// of kernel on any device, for tests), =N candidate N; small problems the
// first (a build per candidate costs more than they can win back); else
// the tuned choice for the shape class.
vnn_status choose(Device& d, cl_command_queue q, const Shape& s, Pass pass, const std::string& what, Tiles* out) {
  bool gpu = (d.cl_type & CL_DEVICE_TYPE_GPU) != 0;
  const char* env = std::getenv("VNN_OPENCL_SDPA");
  if (env && (!std::strcmp(env, "staged") || !std::strcmp(env, "direct"))) gpu = env[0] == 's';
  std::vector<Tiles> fitted;
  for (Tiles t : candidates(d, s, gpu))
    if (fit(d, s, pass, &t)) fitted.push_back(t);
  if (fitted.empty())
    return fail(VNN_STATUS_UNSUPPORTED, what, ": head dims E = ", s.E, ", Ev = ", s.Ev, " do not fit the ",
                d.local_mem, " bytes of local memory of ", d.label);
  *out = fitted.front();
  if (env && *env) {
    if (env[0] >= '0' && env[0] <= '9') *out = fitted[size_t(std::min<int>(std::atoi(env), int(fitted.size()) - 1))];
    return VNN_STATUS_OK;
  }
  const double work = double(s.N * s.Hq) * double(s.L) * double(s.S) * double(s.E + s.Ev);
  if (work < double(1 << 24) || fitted.size() < 2) return VNN_STATUS_OK;
  const int pick = tuned_choice(d, choice_key(s, pass), int(fitted.size()), 2.0 * work, [&](int i) -> double {
    if (i == 0) clFinish(q);  // queued work would run inside the measurements
    return seconds(q, [&] { return run_pass(d, q, s, pass, fitted[size_t(i)], what); });
  });
  if (pick >= 0) *out = fitted[size_t(pick)];
  return VNN_STATUS_OK;
}

}  // namespace

vnn_status run_attention(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what) {
  Shape s;
  if (vnn_status st = parse(d, op, what, &s)) return st;
  if (s.N == 0 || s.Hq == 0) return VNN_STATUS_OK;
  Tiles t;
  if (!s.backward) {
    if (s.L == 0) return VNN_STATUS_OK;
    if (vnn_status st = choose(d, q, s, kForward, what, &t)) return st;
    return run_pass(d, q, s, kForward, t, what);
  }
  // dq (zeros for rows without keys, S = 0), then dk and dv (zeros for keys
  // no query reaches, L = 0 too).
  Tiles tk;
  if (vnn_status st = choose(d, q, s, kDq, what, &t)) return st;
  if (vnn_status st = choose(d, q, s, kDkDv, what, &tk)) return st;
  if (vnn_status st = run_pass(d, q, s, kDq, t, what)) return st;
  return run_pass(d, q, s, kDkDv, tk, what);
}

}  // namespace vnn_opencl

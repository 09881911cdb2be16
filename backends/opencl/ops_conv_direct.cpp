// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// conv2d's whole-pass kinds on OpenCL: structural checks, the per-shape
// choice between the direct kernels of kernels/conv.cl (a few channel
// blocks) and the core's im2col + GEMM path (answered with
// VNN_STATUS_UNSUPPORTED), and the launches. The choice is timed once per
// shape on the op's own operands (tuning.cpp's tuned_choice: cached in the
// tuning file). The im2col + GEMM candidate is timed as the ops the core
// enqueues for it (struct Fallback).
#include "ops_conv_direct.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "common/op_params.hpp"
#include "errors.hpp"
#include "launch.hpp"
#include "op_common.hpp"
#include "ops.hpp"
#include "ops_conv.hpp"
#include "program_cache.hpp"
#include "scratch.hpp"
#include "tuning.hpp"

namespace vnn_opencl {
namespace {

thread_local const char* t_path = nullptr;

// The op's geometry, checked; image = x (dx for the data gradient), grad =
// y / dy, weight = w / dw.
struct ConvShape {
  int32_t kind = 0, dtype = 0;
  vnn_conv2d_params g{};
  int64_t N = 0, C = 0, H = 0, W = 0, O = 0, CG = 0, OG = 0, OH = 0, OW = 0;
  const vnn_tensor_desc *image = nullptr, *weight = nullptr, *grad = nullptr, *bias = nullptr;
};

bool sizes_are(const vnn_tensor_desc& t, std::initializer_list<int64_t> s) {
  int i = 0;
  for (int64_t v : s)
    if (t.sizes[i++] != v) return false;
  return true;
}

// INVALID_ARGUMENT for a malformed request, UNSUPPORTED for one the direct
// kernels do not take (the core's path then runs it), else OK.
vnn_status parse(const Device& d, const vnn_op& op, const std::string& what, ConvShape* s) {
  s->kind = op.kind;
  const bool fwd = op.kind == VNN_OP_CONV2D, wgt = op.kind == VNN_OP_CONV2D_BACKWARD_WEIGHT;
  const int max_in = fwd ? 3 : 2, max_out = wgt ? 2 : 1;
  if (!op.inputs || !op.outputs || op.num_inputs < 2 || op.num_inputs > max_in || op.num_outputs < 1 ||
      op.num_outputs > max_out)
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": expects 2", fwd ? " or 3" : "", " inputs and 1",
                wgt ? " or 2" : "", " outputs");
  if (op.num_ints != VNN_CONV2D_NUM_INTS || !vnn::kernels::decode_conv2d(op, &s->g))
    return fail(VNN_STATUS_INVALID_ARGUMENT, what,
                ": needs ints {kh, kw, sh, sw, ph, pw, dh, dw, groups}, positive (padding non-negative)");
  const vnn_conv2d_params& g = s->g;
  // Sizes the direct kernels take (int32 index math, unrolled taps); the
  // core's path serves the rest.
  const int64_t lim = int64_t(1) << 16;
  if (g.kernel_h > 16 || g.kernel_w > 16 || g.kernel_h * g.kernel_w > 49 || g.stride_h > lim ||
      g.stride_w > lim || g.pad_h > lim || g.pad_w > lim || g.dilation_h > lim || g.dilation_w > lim)
    return fail(VNN_STATUS_UNSUPPORTED, what, ": the direct kernels take kernels up to 7x7 (49 taps)");
  s->image = fwd ? &op.inputs[0] : wgt ? &op.inputs[1] : &op.outputs[0];
  s->grad = fwd ? &op.outputs[0] : &op.inputs[0];
  s->weight = wgt ? &op.outputs[0] : &op.inputs[1];
  s->bias = fwd && op.num_inputs == 3 ? &op.inputs[2] : wgt && op.num_outputs == 2 ? &op.outputs[1] : nullptr;
  const int32_t dt = s->grad->dtype;
  s->dtype = dt;
  if (!desc_ok(*s->image, 4, dt) || !desc_ok(*s->weight, 4, dt) || !desc_ok(*s->grad, 4, dt) ||
      (s->bias && !desc_ok(*s->bias, 1, dt)))
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": expects 4-D image, weight and gradient tensors",
                s->bias ? " and a 1-D bias" : "", " of one dtype");
  if (dt != VNN_FLOAT32 && dt != VNN_FLOAT64)
    return fail(VNN_STATUS_UNSUPPORTED, what, ": the direct kernels take float32 and float64");
  if (dt == VNN_FLOAT64 && !d.fp64)
    return fail(VNN_STATUS_UNSUPPORTED, what, ": float64 is not supported on ", d.label, " (device lacks cl_khr_fp64)");
  const vnn_tensor_desc &x = *s->image, &w = *s->weight, &y = *s->grad;
  s->N = x.sizes[0], s->C = x.sizes[1], s->H = x.sizes[2], s->W = x.sizes[3];
  s->O = w.sizes[0], s->CG = w.sizes[1];
  s->OH = conv_out_size(s->H, g.kernel_h, g.stride_h, g.pad_h, g.dilation_h);
  s->OW = conv_out_size(s->W, g.kernel_w, g.stride_w, g.pad_w, g.dilation_w);
  if (s->C % g.groups != 0 || s->O % g.groups != 0 || s->CG * g.groups != s->C || w.sizes[2] != g.kernel_h ||
      w.sizes[3] != g.kernel_w || !sizes_are(y, {s->N, s->O, s->OH, s->OW}) || (s->bias && s->bias->sizes[0] != s->O))
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": sizes image ", vnn::detail::desc_sizes(x), ", weight ",
                vnn::detail::desc_sizes(w), ", gradient ", vnn::detail::desc_sizes(y),
                " do not match the geometry and groups");
  s->OG = s->O / g.groups;
  if (s->N == 0 || s->OH == 0 || s->OW == 0 || s->C == 0 || s->O == 0)
    return fail(VNN_STATUS_UNSUPPORTED, what, ": empty operands take the core's path");
  for (const vnn_tensor_desc* t : {s->image, s->weight, s->grad, s->bias})
    if (t && (!dense(*t) || numel(*t) >= INT_MAX))
      return fail(VNN_STATUS_UNSUPPORTED, what, ": the direct kernels take dense operands below 2^31 elements");
  return VNN_STATUS_OK;
}

// A direct kernel's register block: blk channels as vector lanes (output
// channels forward and for the weight gradient, within one group; input
// channels for the data gradient) x px pixels of a row (forward, data
// gradient) or px input channels (weight gradient); ro vectors of blk
// output channels per item (weight gradient). plane: the padded-plane
// kernel instead (conv_plane.cl; forward and data gradient): rm output
// channels x rnv vectors of vw pixels per item.
struct Variant {
  int blk = 1, px = 1, ro = 1;
  bool plane = false;
  int rm = 0, rnv = 0, vw = 1;
};

// The padded-plane kernel's preconditions: stride 1, dilation 1, one
// group, and for the data gradient a padding below the kernel size (dy is
// padded by kernel - 1 - padding).
bool plane_fits(const ConvShape& s) {
  const vnn_conv2d_params& g = s.g;
  if (g.stride_h != 1 || g.stride_w != 1 || g.dilation_h != 1 || g.dilation_w != 1 || g.groups != 1) return false;
  if (s.kind == VNN_OP_CONV2D_BACKWARD_DATA) return g.pad_h < g.kernel_h && g.pad_w < g.kernel_w;
  return s.kind == VNN_OP_CONV2D;
}

// The variants that fit this shape: the two widest channel blocks that
// divide the channels per group, with 8 pixels per item (weight gradient:
// 1 input channel per item and two vectors of output channels where they
// divide, 2 input channels for the widest block where the group's channels
// are even), and the padded-plane kernel where it fits. Few: each is a
// program build and a timing per shape.
std::vector<Variant> direct_variants(const Device& d, const ConvShape& s) {
  const bool wgt = s.kind == VNN_OP_CONV2D_BACKWARD_WEIGHT;
  const int64_t per = s.kind == VNN_OP_CONV2D_BACKWARD_DATA ? s.CG : s.OG;
  std::vector<Variant> r;
  for (int b : {16, 8, 4, 2, 1})
    if (per % b == 0 && r.size() < 2) r.push_back({b, wgt ? 1 : 8});
  if (wgt) {
    if (s.CG % 2 == 0) r[0].px = 2;
    if (s.OG % (2 * r[0].blk) == 0) {
      Variant two = r[0];
      two.px = 1, two.ro = 2;
      r.insert(r.begin(), two);
    }
  }
  if (!r.empty() && plane_fits(s)) {
    // Output channels of the plane pass: O forward, C for the data gradient.
    const int64_t out_channels = s.kind == VNN_OP_CONV2D ? s.O : s.C;
    Variant v;
    v.plane = true;
    v.vw = preferred_vector_width(d, s.dtype);
    v.rnv = std::max(1, std::min(8, 32 / v.vw));
    v.rm = out_channels % 4 == 0 ? 4 : out_channels % 2 == 0 ? 2 : 1;
    r.insert(r.begin(), v);
  }
  return r;
}

// The padded planes of the plane pass: the image (forward) or dy (data
// gradient) padded so that the pass is a stride-1 convolution without
// padding, and the output it writes.
struct PlaneGeometry {
  int64_t in_c = 0, out_c = 0, src_h = 0, src_w = 0, pad_t = 0, pad_l = 0, php = 0, pwp = 0, ps = 0, oh = 0,
          ow = 0;
};

PlaneGeometry plane_geometry(const ConvShape& s, const Variant& v) {
  const vnn_conv2d_params& g = s.g;
  PlaneGeometry p;
  if (s.kind == VNN_OP_CONV2D) {
    p.in_c = s.C, p.out_c = s.O, p.src_h = s.H, p.src_w = s.W, p.pad_t = g.pad_h, p.pad_l = g.pad_w;
    p.oh = s.OH, p.ow = s.OW;
  } else {
    p.in_c = s.O, p.out_c = s.C, p.src_h = s.OH, p.src_w = s.OW;
    p.pad_t = g.kernel_h - 1 - g.pad_h, p.pad_l = g.kernel_w - 1 - g.pad_w;
    p.oh = s.H, p.ow = s.W;
  }
  p.php = p.src_h + 2 * p.pad_t, p.pwp = p.src_w + 2 * p.pad_l;
  // Zeros past the last row for the last pixel block's reads (up to one
  // block and a row of taps beyond the output), rounded to 16 elements.
  p.ps = (p.php * p.pwp + v.rnv * v.vw + g.kernel_w + 15) / 16 * 16;
  return p;
}

// The weight gradient's padded image planes: (H + 2 PH) x (W + 2 PW).
int64_t weight_plane_stride(const ConvShape& s) { return (s.H + 2 * s.g.pad_h) * (s.W + 2 * s.g.pad_w); }

std::string options(const ConvShape& s, Variant v) {
  const vnn_conv2d_params& g = s.g;
  const char* t = s.dtype == VNN_FLOAT64 ? "double" : "float";
  auto def = [](std::string& o, const char* k, int64_t val) { o += std::string(" -D") + k + "=" + std::to_string(val); };
  if (v.plane) {
    const PlaneGeometry p = plane_geometry(s, v);
    std::string o = std::string("-DPLANE -DT=") + t;
    def(o, "PC", p.in_c), def(o, "PO", p.out_c), def(o, "KH", g.kernel_h), def(o, "KW", g.kernel_w);
    def(o, "PHP", p.php), def(o, "PWP", p.pwp), def(o, "PS", p.ps), def(o, "POH", p.oh), def(o, "POW", p.ow);
    def(o, "RM", v.rm), def(o, "RNV", v.rnv), def(o, "VW", v.vw);
    def(o, "BIAS", s.kind == VNN_OP_CONV2D && s.bias ? 1 : 0);
    return o;  // LX, LY: run_plane adds them
  }
  std::string o = std::string("-DCONV_DIRECT -DT=") + t;
  auto cv = [&](const char* k, int64_t val) { def(o, (std::string("CV_") + k).c_str(), val); };
  cv("C", s.C), cv("H", s.H), cv("W", s.W), cv("O", s.O), cv("OH", s.OH), cv("OW", s.OW);
  cv("KH", g.kernel_h), cv("KW", g.kernel_w), cv("SH", g.stride_h), cv("SW", g.stride_w);
  cv("PH", g.pad_h), cv("PW", g.pad_w), cv("DH", g.dilation_h), cv("DW", g.dilation_w);
  cv("CG", s.CG), cv("OG", s.OG), cv("BLK", v.blk), cv("PX", v.px), cv("RO", v.ro);
  cv("XPS", weight_plane_stride(s));
  // Only the forward kernel reads it (one program less per shape elsewhere).
  cv("BIAS", s.kind == VNN_OP_CONV2D && s.bias ? 1 : 0);
  return o;
}

// A 2-D grid: dim 0 over n items rounded up to the work-group size, dim 1 of size `blocks`.
vnn_status enqueue_items(const Device& d, Kernel& k, cl_command_queue q, int64_t n, int64_t blocks,
                         const std::string& what, std::initializer_list<Arg> args, size_t most = 64) {
  const size_t tuned = launch_local_for(d.index);
  const size_t local = std::min<size_t>({k.work_group_size, d.max_work_group_size, d.max_item_sizes[0],
                                         tuned ? std::min(tuned, most) : most});
  const size_t global[2] = {size_t((n + int64_t(local) - 1) / int64_t(local)) * local, size_t(blocks)};
  const size_t loc[2] = {local, 1};
  return enqueue_nd(k, q, 2, global, loc, what, args);
}

// Copies planes x planes of src_h x src_w (dense, from src at src_off)
// into dst with the zero padding of g (conv_plane.cl vnn_conv2d_pad).
vnn_status pad_planes(Device& d, cl_command_queue q, int32_t dtype, cl_mem dst, cl_mem src, int64_t src_off,
                      int64_t planes, const PlaneGeometry& g, const std::string& what) {
  Kernel* pad = nullptr;
  if (vnn_status st = get_kernel(d, "conv_plane", "vnn_conv2d_pad",
                                 std::string("-DT=") + (dtype == VNN_FLOAT64 ? "double" : "float"), &pad))
    return st;
  const cl_long so = src_off;
  const cl_int sh = cl_int(g.src_h), sw = cl_int(g.src_w), pt = cl_int(g.pad_t), pl = cl_int(g.pad_l),
               php = cl_int(g.php), pwp = cl_int(g.pwp), ps = cl_int(g.ps);
  // One item per row (and one per plane tail).
  const size_t global[2] = {size_t(g.php + 1), size_t(planes)};
  size_t local[2];
  return enqueue_nd(*pad, q, 2, global, driver_local(d, 2, global, 64, local), what,
                    {arg(dst), arg(src), arg(so), arg(sh), arg(sw), arg(pt), arg(pl), arg(php), arg(pwp), arg(ps)});
}

// The weight gradient: the gradient laid out [N, OH*OW, O], the image
// zero-padded into planes, partial sums per chunk of images (enough chunks
// to fill the device), then one pass summing the chunks into dw (and
// dbias).
vnn_status run_weight(Device& d, cl_command_queue q, const ConvShape& s, Variant v, const std::string& opts,
                      const std::string& what) {
  Kernel *layout = nullptr, *k = nullptr, *sum = nullptr;
  if (vnn_status st = get_kernel(d, "conv", "vnn_conv2d_grad_layout", opts, &layout)) return st;
  if (vnn_status st = get_kernel(d, "conv", "vnn_conv2d_direct_weight", opts, &k)) return st;
  if (vnn_status st = get_kernel(d, "conv", "vnn_conv2d_direct_weight_sum", opts, &sum)) return st;
  const int64_t per_chunk_items = (s.O / (v.blk * v.ro)) * (s.CG / v.px);
  const int64_t want = int64_t(std::max<cl_uint>(d.compute_units, 1)) * ((d.cl_type & CL_DEVICE_TYPE_GPU) ? 256 : 32);
  int64_t chunks = std::clamp<int64_t>((want + per_chunk_items - 1) / per_chunk_items, 1, s.N);
  const int64_t per_chunk = (s.N + chunks - 1) / chunks;
  chunks = (s.N + per_chunk - 1) / per_chunk;
  const int64_t total = s.O * s.CG * s.g.kernel_h * s.g.kernel_w + s.O, gy_n = numel(*s.grad);
  const size_t esize = s.dtype == VNN_FLOAT64 ? 8 : 4;
  PlaneGeometry pg;
  pg.src_h = s.H, pg.src_w = s.W, pg.pad_t = s.g.pad_h, pg.pad_l = s.g.pad_w;
  pg.php = s.H + 2 * s.g.pad_h, pg.pwp = s.W + 2 * s.g.pad_w, pg.ps = weight_plane_stride(s);
  const int64_t xp_n = s.N * s.C * pg.ps;
  Scratch part;
  if (vnn_status st = Scratch::make(d, q, size_t(chunks * total) * esize, what, &part)) return st;
  Scratch gyt;
  if (vnn_status st = Scratch::make(d, q, size_t(gy_n) * esize, what, &gyt)) return st;
  Scratch xp;
  if (vnn_status st = Scratch::make(d, q, size_t(xp_n) * esize, what, &xp)) return st;
  cl_mem mx = mem(*s.image), mw = mem(*s.weight), my = mem(*s.grad);
  const cl_long wo = s.weight->offset, yo = s.grad->offset;
  const size_t tiles[3] = {size_t((s.OH * s.OW + 15) / 16), size_t((s.O + 15) / 16), size_t(s.N)};
  size_t tile_local[3];
  if (vnn_status st = enqueue_nd(*layout, q, 3, tiles, driver_local(d, 3, tiles, 16, tile_local), what,
                                 {arg(gyt.mem()), arg(my), arg(yo)}))
    return st;
  if (vnn_status st = pad_planes(d, q, s.dtype, xp.mem(), mx, s.image->offset, s.N * s.C, pg, what)) return st;
  const cl_int nb = cl_int(s.N), pc = cl_int(per_chunk), items = cl_int(chunks * per_chunk_items);
  // Groups small enough that there are four per compute unit: 64 items in
  // one group would run on one core of a CPU device.
  const size_t most = local_filling(d, size_t(items), 64);
  if (vnn_status st = enqueue_items(d, *k, q, items, 1, what,
                                    {arg(part.mem()), arg(gyt.mem()), arg(xp.mem()), arg(nb), arg(pc), arg(items)}, most))
    return st;
  cl_mem mb = s.bias ? mem(*s.bias) : mw;
  const cl_long bo = s.bias ? s.bias->offset : 0;
  const cl_int has_db = s.bias ? 1 : 0, nc = cl_int(chunks);
  return launch(d, *sum, q, total, what, {arg(mw), arg(wo), arg(mb), arg(bo), arg(has_db), arg(part.mem()), arg(nc)});
}

// The padded-plane pass (forward, or the data gradient as a forward pass
// over dy): pad the input planes, lay the weights out [in, KK, out] (taps
// flipped for the data gradient), then one item per rm channels x rnv * vw
// pixels of an image's padded-width output plane.
vnn_status run_plane(Device& d, cl_command_queue q, const ConvShape& s, Variant v, const std::string& what) {
  const bool fwd = s.kind == VNN_OP_CONV2D;
  const PlaneGeometry p = plane_geometry(s, v);
  const int64_t blocks = (p.oh * p.pwp + v.rnv * v.vw - 1) / (v.rnv * v.vw), chans = p.out_c / v.rm;
  size_t ly = size_t(std::min<int64_t>(chans, 8)), lx = size_t(std::min<int64_t>(blocks, 8));
  while (lx * ly > d.max_work_group_size && lx > 1) lx /= 2;
  while (lx * ly > d.max_work_group_size && ly > 1) ly /= 2;
  lx = std::min(lx, d.max_item_sizes[0]), ly = std::min(ly, d.max_item_sizes[1]);
  const std::string opts = options(s, v) + " -DLX=" + std::to_string(lx) + " -DLY=" + std::to_string(ly);
  Kernel *layout = nullptr, *k = nullptr;
  if (vnn_status st = get_kernel(d, "conv_plane", "vnn_conv2d_plane_weights", opts, &layout)) return st;
  if (vnn_status st = get_kernel(d, "conv_plane", "vnn_conv2d_plane", opts, &k)) return st;
  if (k->work_group_size < lx * ly)
    return fail(VNN_STATUS_UNSUPPORTED, what, ": the plane kernel needs ", lx * ly, " work items, the compiled kernel allows ",
                k->work_group_size, " on ", d.label);
  const size_t esize = s.dtype == VNN_FLOAT64 ? 8 : 4;
  const int64_t wn = numel(*s.weight), xp_n = s.N * p.in_c * p.ps;
  Scratch wt;
  if (vnn_status st = Scratch::make(d, q, size_t(wn) * esize, what, &wt)) return st;
  Scratch xp;
  if (vnn_status st = Scratch::make(d, q, size_t(xp_n) * esize, what, &xp)) return st;
  const vnn_tensor_desc& in = fwd ? *s.image : *s.grad;
  const vnn_tensor_desc& out = fwd ? *s.grad : *s.image;
  cl_mem mw = mem(*s.weight), mo = mem(out);
  const cl_long wo = s.weight->offset, oo = out.offset;
  const cl_int flip = fwd ? 0 : 1;
  if (vnn_status st = launch(d, *layout, q, wn, what, {arg(wt.mem()), arg(mw), arg(wo), arg(flip)})) return st;
  if (vnn_status st = pad_planes(d, q, s.dtype, xp.mem(), mem(in), in.offset, s.N * p.in_c, p, what)) return st;
  cl_mem mb = s.bias && fwd ? mem(*s.bias) : mw;
  const cl_long bo = s.bias && fwd ? s.bias->offset : 0;
  const size_t global[3] = {(size_t(blocks) + lx - 1) / lx * lx, (size_t(chans) + ly - 1) / ly * ly, size_t(s.N)};
  const size_t local[3] = {lx, ly, 1};
  return enqueue_nd(*k, q, 3, global, local, what, {arg(mo), arg(oo), arg(xp.mem()), arg(wt.mem()), arg(mb), arg(bo)});
}

// One direct pass with variant v.
vnn_status run_direct(Device& d, cl_command_queue q, const ConvShape& s, Variant v, const std::string& what) {
  if (v.plane) return run_plane(d, q, s, v, what);
  const std::string opts = options(s, v);
  if (s.kind == VNN_OP_CONV2D_BACKWARD_WEIGHT) return run_weight(d, q, s, v, opts, what);
  const bool fwd = s.kind == VNN_OP_CONV2D;
  Kernel *layout = nullptr, *k = nullptr;
  if (vnn_status st = get_kernel(d, "conv", "vnn_conv2d_weight_layout", opts, &layout)) return st;
  if (vnn_status st = get_kernel(d, "conv", fwd ? "vnn_conv2d_direct" : "vnn_conv2d_direct_data", opts, &k))
    return st;
  // The weights with each block's channels contiguous (one vector load).
  const int64_t wn = numel(*s.weight);
  const size_t esize = s.dtype == VNN_FLOAT64 ? 8 : 4;
  Scratch wt;
  if (vnn_status st = Scratch::make(d, q, size_t(wn) * esize, what, &wt)) return st;
  cl_mem mx = mem(*s.image), mw = mem(*s.weight), my = mem(*s.grad);
  const cl_long xo = s.image->offset, wo = s.weight->offset, yo = s.grad->offset;
  const cl_int data_layout = fwd ? 0 : 1;
  if (vnn_status st = launch(d, *layout, q, wn, what, {arg(wt.mem()), arg(mw), arg(wo), arg(data_layout)})) return st;
  const int64_t rows = fwd ? s.N * s.OH : s.N * s.H, width = fwd ? s.OW : s.W;
  const int64_t total = rows * ((width + v.px - 1) / v.px), blocks = (fwd ? s.O : s.C) / v.blk;
  const cl_int n = cl_int(total);
  if (!fwd)
    return enqueue_items(d, *k, q, total, blocks, what, {arg(mx), arg(xo), arg(my), arg(yo), arg(wt.mem()), arg(n)});
  cl_mem mb = s.bias ? mem(*s.bias) : mx;
  const cl_long bo = s.bias ? s.bias->offset : 0;
  return enqueue_items(d, *k, q, total, blocks, what,
                       {arg(my), arg(yo), arg(mx), arg(xo), arg(wt.mem()), arg(mb), arg(bo), arg(n)});
}

vnn_tensor_desc matrix_desc(cl_mem m, int32_t dtype, int64_t offset, int64_t rows, int64_t cols, int64_t rs,
                            int64_t cs) {
  vnn_tensor_desc t{};
  t.data = m;
  t.dtype = dtype;
  t.offset = offset;
  t.ndim = 2;
  t.sizes[0] = rows, t.sizes[1] = cols;
  t.strides[0] = rs, t.strides[1] = cs;
  return t;
}

vnn_status run_op(Device& d, cl_command_queue q, int32_t kind, std::initializer_list<vnn_tensor_desc> in,
                  vnn_tensor_desc out, const int64_t* ints = nullptr, int num_ints = 0) {
  std::vector<vnn_tensor_desc> ins(in);
  // MATMUL: alpha 1, beta 0; BINARY ADD: alpha 1.
  const double scalars[2] = {1.0, 0.0};
  vnn_op op{};
  op.struct_size = sizeof op;
  op.kind = kind;
  op.num_inputs = int32_t(ins.size());
  op.num_outputs = 1;
  op.inputs = ins.data();
  op.outputs = &out;
  op.ints = ints;
  op.num_ints = num_ints;
  op.scalars = scalars;
  op.num_scalars = kind == VNN_OP_MATMUL ? 2 : kind == VNN_OP_BINARY ? 1 : 0;
  op.queue = q;
  return run(d.index, &op);
}

vnn_tensor_desc desc3(cl_mem m, int32_t dtype, int64_t offset, std::initializer_list<int64_t> sizes,
                      std::initializer_list<int64_t> strides) {
  vnn_tensor_desc t{};
  t.data = m, t.dtype = dtype, t.offset = offset, t.ndim = 3;
  int i = 0;
  for (int64_t v : sizes) t.sizes[i++] = v;
  i = 0;
  for (int64_t v : strides) t.strides[i++] = v;
  return t;
}

// The core's im2col + GEMM path for this pass (src/ops/conv.cpp) as the
// ops it enqueues, on scratch buffers (the values are not the real ones,
// the work is): forward IM2COL, one MATMUL per group, the permuting bias
// add (or copy) to NCHW; data gradient the permuting copy of dy to rows,
// MATMULs, COL2IM; weight gradient IM2COL, the copy, MATMULs. Left out:
// the bias gradient's reduction of the rows (the direct kernel does it).
struct Fallback {
  Device& d;
  cl_command_queue q;
  const ConvShape& s;
  cl_mem col = nullptr, rows = nullptr, gyr = nullptr, res = nullptr;
  int64_t CK = 0, L = 0;
  Fallback(Device& dev, cl_command_queue queue, const ConvShape& shape) : d(dev), q(queue), s(shape) {
    CK = s.C * s.g.kernel_h * s.g.kernel_w, L = s.OH * s.OW;
    const size_t esize = s.dtype == VNN_FLOAT64 ? 8 : 4;
    cl_int err = CL_SUCCESS;
    auto make = [&](int64_t n) { return clCreateBuffer(d.context, CL_MEM_READ_WRITE, size_t(n) * esize, nullptr, &err); };
    col = make(CK * s.N * L);
    rows = make(s.O * std::max(s.N * L, CK));
    gyr = make(s.O * s.N * L);
    res = make(s.kind == VNN_OP_CONV2D ? numel(*s.grad) : numel(*s.image));
  }
  ~Fallback() {
    for (cl_mem m : {col, rows, gyr, res})
      if (m) clReleaseMemObject(m);
  }
  Fallback(const Fallback&) = delete;
  Fallback& operator=(const Fallback&) = delete;
  bool ok() const { return col && rows && gyr && res; }
  vnn_status pass() {
    const int64_t ints[VNN_IM2COL_NUM_INTS] = {s.g.kernel_h, s.g.kernel_w, s.g.stride_h, s.g.stride_w,
                                               s.g.pad_h,    s.g.pad_w,    s.g.dilation_h, s.g.dilation_w};
    const int64_t NL = s.N * L, ckg = CK / s.g.groups;
    const int32_t dt = s.dtype;
    // The [N, CK, L] view of the [CK, N, L] column buffer, as the core passes it.
    const vnn_tensor_desc cols = desc3(col, dt, 0, {s.N, CK, L}, {L, NL, 1});
    const bool fwd = s.kind == VNN_OP_CONV2D, data = s.kind == VNN_OP_CONV2D_BACKWARD_DATA;
    if (!data)
      if (vnn_status st = run_op(d, q, VNN_OP_IM2COL, {*s.image}, cols, ints, VNN_IM2COL_NUM_INTS)) return st;
    if (!fwd) {  // dy [N, O, L] to rows [O, N, L]
      const vnn_tensor_desc from = desc3(mem(*s.grad), dt, s.grad->offset, {s.O, s.N, L}, {L, s.O * L, 1});
      if (vnn_status st = run_op(d, q, VNN_OP_COPY, {from}, desc3(gyr, dt, 0, {s.O, s.N, L}, {NL, L, 1}))) return st;
    }
    for (int64_t gi = 0; gi < s.g.groups; ++gi) {
      const cl_mem w = mem(*s.weight);
      const int64_t wo = s.weight->offset + gi * s.OG * ckg, go = gi * s.OG * NL;
      vnn_status st = VNN_STATUS_OK;
      if (fwd)  // W [OG, CKg] @ col [CKg, NL]
        st = run_op(d, q, VNN_OP_MATMUL,
                    {matrix_desc(w, dt, wo, s.OG, ckg, ckg, 1), matrix_desc(col, dt, gi * ckg * NL, ckg, NL, NL, 1)},
                    matrix_desc(rows, dt, gi * s.OG * NL, s.OG, NL, NL, 1));
      else if (data)  // W^T [CKg, OG] @ gy [OG, NL]
        st = run_op(d, q, VNN_OP_MATMUL,
                    {matrix_desc(w, dt, wo, ckg, s.OG, 1, ckg), matrix_desc(gyr, dt, go, s.OG, NL, NL, 1)},
                    matrix_desc(col, dt, gi * ckg * NL, ckg, NL, NL, 1));
      else  // gy [OG, NL] @ col^T [NL, CKg]
        st = run_op(d, q, VNN_OP_MATMUL,
                    {matrix_desc(gyr, dt, go, s.OG, NL, NL, 1), matrix_desc(col, dt, gi * ckg * NL, NL, ckg, 1, NL)},
                    matrix_desc(rows, dt, gi * s.OG * ckg, s.OG, ckg, ckg, 1));
      if (st) return st;
    }
    if (fwd) {  // [O, N, L] rows to [N, O, L], with the bias
      const vnn_tensor_desc nol = desc3(rows, dt, 0, {s.N, s.O, L}, {L, NL, 1});
      const vnn_tensor_desc out = desc3(res, dt, 0, {s.N, s.O, L}, {s.O * L, L, 1});
      if (!s.bias) return run_op(d, q, VNN_OP_COPY, {nol}, out);
      const int64_t add = VNN_BINARY_ADD;
      const vnn_tensor_desc b = desc3(mem(*s.bias), dt, s.bias->offset, {s.N, s.O, L}, {0, s.bias->strides[0], 0});
      return run_op(d, q, VNN_OP_BINARY, {nol, b}, out, &add, 1);
    }
    if (!data) return VNN_STATUS_OK;
    vnn_tensor_desc dx = *s.image;
    dx.data = res, dx.offset = 0;
    return run_op(d, q, VNN_OP_COL2IM, {cols}, dx, ints, VNN_IM2COL_NUM_INTS);
  }
};

// Seconds of one run of body after a warm-up (builds, GEMM shape
// tuning); negative when it failed.
double seconds(cl_command_queue q, const std::function<vnn_status()>& body) {
  double best = -1;
  for (int rep = 0; rep < 2; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    if (body() != VNN_STATUS_OK || clFinish(q) != CL_SUCCESS) return -1;
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rep > 0 && (best < 0 || t < best)) best = t;
  }
  return best;
}

std::string choice_key(const ConvShape& s) {
  const vnn_conv2d_params& g = s.g;
  const char* kind = s.kind == VNN_OP_CONV2D ? "fwd" : s.kind == VNN_OP_CONV2D_BACKWARD_DATA ? "data" : "weight";
  auto x = [](int64_t a, int64_t b) { return std::to_string(a) + "x" + std::to_string(b); };
  return std::string("conv2d:") + kind + ":" + (s.dtype == VNN_FLOAT64 ? "f64" : "f32") + ":" + std::to_string(s.N) +
         "x" + x(s.C, s.H) + "x" + std::to_string(s.W) + ":" + x(s.O, s.CG) + "x" + x(g.kernel_h, g.kernel_w) +
         ":s" + x(g.stride_h, g.stride_w) + ":p" + x(g.pad_h, g.pad_w) + ":d" + x(g.dilation_h, g.dilation_w) +
         ":g" + std::to_string(g.groups) + (s.bias ? ":b" : "");
}

// The variant to run; false: the core's im2col + GEMM path.
bool choose(Device& d, cl_command_queue q, const ConvShape& s, const std::vector<Variant>& vs, const std::string& what,
            Variant* out) {
  if (const char* env = std::getenv("VNN_OPENCL_CONV"); env && *env) {
    if (!std::strcmp(env, "gemm")) return false;
    // The padded-plane kernel where it fits, else the first direct variant.
    if (!std::strcmp(env, "plane")) return *out = vs.front(), true;
    if (!std::strncmp(env, "direct", 6)) {
      const int most = env[6] ? std::atoi(env + 6) : 1 << 20;
      *out = vs.back();
      for (Variant v : vs)
        if (!v.plane && v.blk <= most) return *out = v, true;
      return true;
    }
  }
  // Below ~8M multiply-adds the core's path: its kernels are built once
  // for every shape, a direct kernel is one more program build per layer
  // shape (seconds on PoCL), more than such a pass can win back.
  const double macs = double(s.N * s.O * s.OH * s.OW) * double(s.CG * s.g.kernel_h * s.g.kernel_w);
  if (macs < double(1 << 23)) return false;
  // Candidate 0 is the fallback, i >= 1 the direct kernel with vs[i - 1].
  const double col_elems = double(s.C * s.g.kernel_h * s.g.kernel_w) * double(s.N * s.OH * s.OW);
  const bool time_fallback = col_elems <= double(1 << 26);  // a 256 MiB column buffer at most
  const int pick = tuned_choice(d, choice_key(s), int(vs.size()) + 1, 2.0 * macs, [&](int i) -> double {
    if (i == 0) {  // timed first, and only when the shape is not cached
      clFinish(q);  // queued work would run inside the measurements
      if (!time_fallback) return -1;
      Fallback f(d, q, s);
      return f.ok() ? seconds(q, [&] { return f.pass(); }) : -1;
    }
    return seconds(q, [&] { return run_direct(d, q, s, vs[size_t(i - 1)], what); });
  });
  if (pick <= 0) return false;
  *out = vs[size_t(pick - 1)];
  return true;
}

}  // namespace

const char* conv_last_path() { return t_path; }

vnn_status run_conv_whole(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what) {
  t_path = nullptr;
  ConvShape s;
  if (vnn_status st = parse(d, op, what, &s)) return st;
  const std::vector<Variant> vs = direct_variants(d, s);
  if (vs.empty()) return fail(VNN_STATUS_UNSUPPORTED, what, ": no direct kernel block fits this shape");
  Variant v;
  if (!choose(d, q, s, vs, what, &v)) return fail(VNN_STATUS_UNSUPPORTED, what, ": im2col + GEMM is faster for this shape");
  vnn_status st = run_direct(d, q, s, v, what);
  if (st == VNN_STATUS_OK) t_path = v.plane ? "plane" : "direct";
  return st;
}

}  // namespace vnn_opencl

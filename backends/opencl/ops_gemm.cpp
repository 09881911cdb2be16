// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ops_gemm.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "dtype.hpp"
#include "errors.hpp"
#include "launch.hpp"
#include "op_common.hpp"
#include "program_cache.hpp"
#include "scratch.hpp"
#include "vnn/checked_size.h"

namespace vnn_opencl {
namespace {

// 8x8 items with 4x4 outputs suit small work-groups (Mali, Intel); 16x16
// with 4x4 suits NVIDIA/AMD; 8x8 items with 8x8 outputs give PoCL long
// vectorisable rows; 8x16 items of 4x8 outputs sit between; 16x16 tiles
// of 2x2 keep little padding on skinny outputs (conv2d weight gradients).
constexpr GemmConfig kVariants[kNumGemmVariants] = {
    {32, 32, 16, 4, 4},
    {64, 64, 16, 4, 4},
    {64, 64, 8, 8, 8},
    {32, 128, 8, 4, 8},
    {16, 16, 16, 2, 2},
};

size_t items(const GemmConfig& c) { return size_t(c.tsm / c.wptm) * size_t(c.tsn / c.wptn); }

// alpha and beta in the kernel's T.
struct TypedScalar {
  cl_float f;
  cl_double d;
  cl_int i;
  cl_long l;
  explicit TypedScalar(double v) : f(cl_float(v)), d(v), i(saturating<cl_int>(v)), l(saturating<cl_long>(v)) {}
  Arg as(int32_t dtype) const {
    return dtype == VNN_FLOAT32 ? arg(f) : dtype == VNN_FLOAT64 ? arg(d) : dtype == VNN_INT32 ? arg(i) : arg(l);
  }
};

// Splits of k that give the device about four work-groups per compute
// unit over `groups` output blocks, each split at least `depth` deep (in
// elements of k); 1 for batched problems.
int64_t choose_splits(const Device& d, const GemmProblem& p, int64_t groups, int64_t depth) {
  if (p.batch != 1 || p.k < 2 * depth) return 1;
  const int64_t target = 4 * int64_t(std::max<cl_uint>(d.compute_units, 1));
  if (groups >= target) return 1;
  const int64_t by_fill = (target + groups - 1) / groups, by_depth = p.k / depth;
  return std::max<int64_t>(1, std::min<int64_t>({by_fill, by_depth, 256}));
}

// Enqueues kern (vnn_gemm or vnn_gemm_longk: one argument list) on a
// global[0] x global[1] grid of `local` groups, z = batch x splits, k cut
// into k ranges of `quantum`-multiple length; with more than one range the
// partial products go to a scratch buffer summed by vnn_gemm_splitk_sum.
vnn_status enqueue_gemm(Device& d, cl_command_queue q, const GemmProblem& p, Kernel& kern, const std::string& defs,
                        const size_t* global_xy, const size_t* local, int64_t splits, int64_t quantum,
                        const std::string& what) {
  const DtypeInfo* info = dtype_info(p.dtype);
  const int64_t steps = (p.k + quantum - 1) / quantum;
  const cl_long k_chunk = splits > 1 ? ((steps + splits - 1) / splits) * quantum : std::max<cl_long>(p.k, 1);
  const cl_long used_splits = splits > 1 ? (p.k + k_chunk - 1) / k_chunk : 1;
  const size_t global[3] = {global_xy[0], global_xy[1], size_t(p.batch * used_splits)};
  // Partial products of split-K: scratch.hpp's buffer of this queue.
  Scratch partials;
  if (used_splits > 1) {
    const int64_t dims[3] = {used_splits, p.m, p.n};
    int64_t count = 0, bytes = 0;
    if (!vnn::checked::numel(dims, 3, &count) || !vnn::checked::bytes(count, int64_t(info->size), &bytes))
      return fail(VNN_STATUS_OUT_OF_MEMORY, what, ": split-K scratch of ", used_splits, " x ", p.m, " x ", p.n,
                  " overflows");
    if (vnn_status st = Scratch::make(d, q, size_t(bytes), what, &partials)) return st;
  }
  cl_mem part = partials.mem();
  cl_mem scratch = part ? part : p.out;  // unused by the kernel when splits == 1
  TypedScalar alpha(p.alpha), beta(p.beta);
  cl_int use_beta = p.beta != 0.0;
  vnn_status st = enqueue_nd(kern, q, 3, global, local, what,
                             {arg(p.out), arg(p.out_off), arg(p.a), arg(p.a_off), arg(p.b), arg(p.b_off),
                              alpha.as(p.dtype), beta.as(p.dtype), arg(use_beta), arg(p.m), arg(p.n), arg(p.k),
                              arg(p.a_rs), arg(p.a_cs), arg(p.b_rs), arg(p.b_cs), arg(p.o_rs), arg(p.o_cs),
                              arg(p.batch_ndim), arg(p.batch_sizes), arg(p.a_bs), arg(p.b_bs), arg(p.o_bs),
                              arg(used_splits), arg(k_chunk), arg(scratch)});
  if (st == VNN_STATUS_OK && part) {
    Kernel* sum = nullptr;
    st = get_kernel(d, "gemm", "vnn_gemm_splitk_sum", defs, &sum);
    if (st == VNN_STATUS_OK)
      st = launch(d, *sum, q, p.m * p.n, what,
                  {arg(p.out), arg(p.out_off), arg(p.o_rs), arg(p.o_cs), arg(part), arg(used_splits), arg(p.m),
                   arg(p.n), alpha.as(p.dtype), beta.as(p.dtype), arg(use_beta)});
  }
  return st;
}

// vnn_gemm_longk's block: RM x RN outputs per work-group of `items`
// (64 on GPUs; 16 elsewhere, where a group's items run one after another
// on one thread) capped by what the device allows, 0 where 8 do not fit.
constexpr int kLongkRM = 4, kLongkRN = 4;
size_t longk_items(const Device& d, int32_t dtype) {
  const DtypeInfo* info = dtype_info(dtype);
  const size_t esize = info ? info->size : 8;
  for (size_t lk = (d.cl_type & CL_DEVICE_TYPE_GPU) ? 64 : 16; lk >= 8; lk /= 2)
    if (lk <= d.max_work_group_size && lk <= d.max_item_sizes[0] &&
        size_t(kLongkRM * kLongkRN) * lk * esize + 1024 <= d.local_mem)
      return lk;
  return 0;
}

// The vector width of vnn_gemm_longk / _widen: the device's preferred
// float width (halved for 64-bit types), a power of two up to 16, where the
// operands they load as vectors are unit-stride; else 1 (strided scalars).
int vector_width(const Device& d, const GemmProblem& p, bool unit) {
  return unit ? preferred_vector_width(d, p.dtype) : 1;
}

}  // namespace

const GemmConfig& gemm_variant(int v) { return kVariants[v]; }

std::string gemm_variant_name(int v) {
  // v comes from VNN_OPENCL_GEMM_VARIANT or a tuning file too: name an index
  // past the table rather than read beyond it (ASan: global-buffer-overflow).
  if (v < 0 || v >= kNumGemmVariants)
    return "#" + std::to_string(v) + " (there are " + std::to_string(kNumGemmVariants) + ")";
  const GemmConfig& c = kVariants[v];
  return std::to_string(c.tsm) + "x" + std::to_string(c.tsn) + "x" + std::to_string(c.tsk) + "/" +
         std::to_string(c.wptm) + "x" + std::to_string(c.wptn);
}

bool gemm_variant_fits(const Device& d, int v, int32_t dtype) {
  if (v < 0 || v >= kNumGemmVariants) return false;
  const GemmConfig& c = kVariants[v];
  const DtypeInfo* info = dtype_info(dtype);
  const size_t local = size_t(c.tsk) * size_t(c.tsm + c.tsn) * (info ? info->size : 8);
  // Local memory: ours plus headroom the driver may reserve.
  return items(c) <= d.max_work_group_size && size_t(c.tsn / c.wptn) <= d.max_item_sizes[0] &&
         size_t(c.tsm / c.wptm) <= d.max_item_sizes[1] && local + 1024 <= d.local_mem;
}

int pick_gemm_variant(const double* gflops, int64_t m, int64_t n, int64_t k) {
  int best = -1;
  double best_t = 0;
  for (int v = 0; v < kNumGemmVariants; ++v) {
    if (!(gflops[v] > 0)) continue;
    const GemmConfig& c = kVariants[v];
    const double padded = double((m + c.tsm - 1) / c.tsm * c.tsm) * double((n + c.tsn - 1) / c.tsn * c.tsn) *
                          double(std::max<int64_t>(k, 1));
    const double t = padded / gflops[v];
    if (best < 0 || t < best_t) best = v, best_t = t;
  }
  return best;
}

GemmShape classify_gemm(int64_t m, int64_t n, int64_t k) {
  if (k >= 8 * std::max(m, n)) return GemmShape::long_k;
  if (k <= 128 && std::max(m, n) >= 4 * k) return GemmShape::short_k;
  return GemmShape::square;
}

vnn_status run_gemm_variant(Device& d, cl_command_queue q, const GemmProblem& p, int v, const std::string& what) {
  if (!gemm_variant_fits(d, v, p.dtype))
    return fail(VNN_STATUS_UNSUPPORTED, what, ": GEMM variant ", gemm_variant_name(v), " does not fit ", d.label, " (",
                d.name, ": max work-group ", d.max_work_group_size, ", local memory ", d.local_mem, ")");
  const GemmConfig& c = kVariants[v];
  const DtypeInfo* info = dtype_info(p.dtype);
  const std::string defs = std::string("-DT=") + info->storage + " -DTSM=" + std::to_string(c.tsm) +
                           " -DTSN=" + std::to_string(c.tsn) + " -DTSK=" + std::to_string(c.tsk) +
                           " -DWPTM=" + std::to_string(c.wptm) + " -DWPTN=" + std::to_string(c.wptn);
  Kernel* kern = nullptr;
  if (vnn_status st = get_kernel(d, "gemm", "vnn_gemm", defs, &kern)) return st;
  if (kern->work_group_size < items(c))
    return fail(VNN_STATUS_UNSUPPORTED, what, ": GEMM variant ", gemm_variant_name(v), " needs ", items(c),
                " work items, the compiled kernel allows ", kern->work_group_size, " on ", d.label);
  const size_t local[3] = {size_t(c.tsn / c.wptn), size_t(c.tsm / c.wptm), 1};
  const size_t global[2] = {size_t((p.n + c.tsn - 1) / c.tsn) * local[0], size_t((p.m + c.tsm - 1) / c.tsm) * local[1]};
  const int64_t tiles = ((p.m + c.tsm - 1) / c.tsm) * ((p.n + c.tsn - 1) / c.tsn);
  const int64_t splits = choose_splits(d, p, tiles, int64_t(c.tsk) * 8);
  return enqueue_gemm(d, q, p, *kern, defs, global, local, splits, c.tsk, what);
}

vnn_status run_gemm_longk(Device& d, cl_command_queue q, const GemmProblem& p, const std::string& what) {
  const size_t lk = longk_items(d, p.dtype);
  if (lk == 0)
    return fail(VNN_STATUS_UNSUPPORTED, what, ": the long-k GEMM needs a work-group of 8 items and ", kLongkRM, " x ",
                kLongkRN, " x 8 elements of local memory; ", d.label, " (", d.name, ") allows ", d.max_work_group_size,
                " items and ", d.local_mem, " bytes");
  const int vw = vector_width(d, p, p.a_cs == 1 && p.b_rs == 1);
  const bool blocked = !(d.cl_type & CL_DEVICE_TYPE_GPU);
  const std::string defs = std::string("-DT=") + dtype_info(p.dtype)->storage + " -DLK=" + std::to_string(lk) +
                           " -DRM=" + std::to_string(kLongkRM) + " -DRN=" + std::to_string(kLongkRN) +
                           " -DVW=" + std::to_string(vw) + " -DBLOCKED=" + (blocked ? "1" : "0");
  Kernel* kern = nullptr;
  if (vnn_status st = get_kernel(d, "gemm", "vnn_gemm_longk", defs, &kern)) return st;
  if (kern->work_group_size < lk)
    return fail(VNN_STATUS_UNSUPPORTED, what, ": the long-k GEMM needs ", lk,
                " work items, the compiled kernel allows ", kern->work_group_size, " on ", d.label);
  const size_t bm = size_t((p.m + kLongkRM - 1) / kLongkRM), bn = size_t((p.n + kLongkRN - 1) / kLongkRN);
  const size_t local[3] = {lk, 1, 1};
  const size_t global[2] = {bn * lk, bm};
  // Each split gives every item at least 16 vector steps; split ranges are
  // whole multiples of the group's step so that vectors stay aligned to it.
  const int64_t quantum = int64_t(lk) * vw;
  const int64_t splits = choose_splits(d, p, int64_t(bm * bn), quantum * 16);
  return enqueue_gemm(d, q, p, *kern, defs, global, local, splits, quantum, what);
}

namespace {

constexpr int kWidenRM = 8;  // rows per item of vnn_gemm_widen

// The wide-n kernel's vector lanes and vectors per item for p: one vector,
// and a narrower one, until the block fits in n (the MLP's 10 classes).
void widen_vectors(const Device& d, const GemmProblem& p, int* vw, int* rnv) {
  *rnv = 2, *vw = vector_width(d, p, p.b_cs == 1);
  if (*rnv * *vw > p.n) *rnv = 1;
  while (*vw > 1 && *vw > p.n) *vw /= 2;
}

std::string widen_defines(int vw, int rnv, int lx, int ly) {
  return "-DVW=" + std::to_string(vw) + " -DRM=" + std::to_string(kWidenRM) + " -DRNV=" + std::to_string(rnv) +
         " -DLX=" + std::to_string(lx) + " -DLY=" + std::to_string(ly);
}

// On CPU devices the wide-n kernel's four group shapes for (vw, rnv) and
// the packing kernel in one program (see Siblings): a model's GEMMs take
// two or three shapes, and x @ W^T packs. `own`: the wanted kernel's
// defines; none (empty) where they are not in the list or on GPUs.
Siblings gemm_cpu_siblings(const Device& d, int vw, int rnv, const std::string& own) {
  Siblings s;
  if ((d.cl_type & CL_DEVICE_TYPE_GPU) || d.max_work_group_size < 64 || d.max_item_sizes[0] < 8 ||
      d.max_item_sizes[1] < 8)
    return s;
  for (const auto& [lx, ly] : {std::pair{8, 1}, {1, 1}, {8, 8}, {1, 8}})
    s.variants.push_back(widen_defines(vw, rnv, lx, ly));
  s.variants.push_back("-DPACK=16");
  const auto at = std::find(s.variants.begin(), s.variants.end(), own);
  if (at == s.variants.end()) return Siblings{};
  s.index = size_t(at - s.variants.begin());
  return s;
}

}  // namespace

vnn_status run_gemm_widen(Device& d, cl_command_queue q, const GemmProblem& p, const std::string& what) {
  // b not n-contiguous (x @ W^T: a k-contiguous weight) would load as
  // strided scalars: one problem copies b into a contiguous [k, n] scratch
  // first (k x n moves against m x n x k multiply-adds) and takes the
  // vector loads (the copy in scratch.hpp's buffer of this queue).
  if (p.b_cs != 1 && p.batch == 1 && p.k > 0) {
    const DtypeInfo* info = dtype_info(p.dtype);
    int64_t count = 0, bytes = 0;
    if (!vnn::checked::mul(p.k, p.n, &count) || !vnn::checked::bytes(count, int64_t(info->size), &bytes))
      return fail(VNN_STATUS_OUT_OF_MEMORY, what, ": contiguous copy of b (", p.k, " x ", p.n, ") overflows");
    Scratch packed;
    if (vnn_status st = Scratch::make(d, q, size_t(bytes), what, &packed)) return st;
    cl_mem bc = packed.mem();
    constexpr size_t kPack = 16;
    GemmProblem c = p;
    c.b = bc, c.b_off = 0, c.b_rs = p.n, c.b_cs = 1;
    int vw = 1, rnv = 1;
    widen_vectors(d, c, &vw, &rnv);
    const std::string pack_defs = "-DPACK=" + std::to_string(kPack);
    const Siblings kernels = gemm_cpu_siblings(d, vw, rnv, pack_defs);
    Kernel* pack = nullptr;
    vnn_status st = get_kernel(d, "gemm", "vnn_gemm_pack",
                               std::string("-DT=") + info->storage + (kernels.variants.empty() ? " " + pack_defs : ""),
                               kernels, &pack);
    if (st == VNN_STATUS_OK) {
      // Groups one block wide: PoCL vectorises a group's items along dim 0,
      // and blocks side by side would turn every load and store into a
      // gather or scatter 16 columns apart. Items past k return.
      const size_t ly = std::min<size_t>({8, d.max_item_sizes[1], pack->work_group_size});
      const size_t local[2] = {1, ly};
      const size_t global[2] = {(size_t(p.n) + kPack - 1) / kPack,
                                ((size_t(p.k) + kPack - 1) / kPack + ly - 1) / ly * ly};
      st = enqueue_nd(*pack, q, 2, global, local, what,
                      {arg(bc), arg(p.b), arg(p.b_off), arg(p.k), arg(p.n), arg(p.b_rs), arg(p.b_cs)});
    }
    if (st == VNN_STATUS_OK) st = run_gemm_widen(d, q, c, what);
    return st;
  }
  // Items of RM rows x RNV vectors; groups of LX x LY items (LY row blocks
  // share each b strip) within the device's limits, narrowed while there
  // are fewer groups than four per compute unit (64 x 256 outputs would
  // otherwise be one group: one core of a CPU device).
  // Narrow outputs (the MLP's 10 classes) take one vector, and a narrower
  // one, until the block fits in n: its vector loads then also cover the
  // last columns (gemm.cl shifts the last block left).
  int vw = 1, rnv = 1;
  widen_vectors(d, p, &vw, &rnv);
  const size_t bm = size_t((p.m + kWidenRM - 1) / kWidenRM), bn = size_t((p.n + rnv * vw - 1) / (rnv * vw));
  size_t ly = std::min<size_t>({bm, 8, d.max_item_sizes[1]}), lx = std::min<size_t>(8, d.max_item_sizes[0]);
  while (lx * ly > d.max_work_group_size && lx > 1) lx /= 2;
  while (lx * ly > d.max_work_group_size && ly > 1) ly /= 2;
  const size_t want = 4 * size_t(std::max<cl_uint>(d.compute_units, 1));
  auto groups = [&] { return (bn + lx - 1) / lx * ((bm + ly - 1) / ly) * size_t(p.batch); };
  // On CPU devices a group runs on one core either way: narrowed straight
  // to 1, each dimension, so that the shapes of a model share two or three
  // programs (PoCL builds one per LX x LY, and compiles it at first launch:
  // seconds each) instead of one per power of two.
  const size_t step = (d.cl_type & CL_DEVICE_TYPE_GPU) ? 2 : 8;
  if (step == 8 && ly < 8) ly = 1;
  while (groups() < want && lx > 1) lx = lx >= step ? lx / step : 1;
  while (groups() < want && ly > 1) ly = ly >= step ? ly / step : 1;
  const std::string own = widen_defines(vw, rnv, int(lx), int(ly));
  const Siblings kernels = gemm_cpu_siblings(d, vw, rnv, own);
  const std::string defs =
      std::string("-DT=") + dtype_info(p.dtype)->storage + (kernels.variants.empty() ? " " + own : "");
  Kernel* kern = nullptr;
  if (vnn_status st = get_kernel(d, "gemm", "vnn_gemm_widen", defs, kernels, &kern)) return st;
  if (kern->work_group_size < lx * ly)
    return fail(VNN_STATUS_UNSUPPORTED, what, ": the wide-n GEMM needs ", lx * ly,
                " work items, the compiled kernel allows ", kern->work_group_size, " on ", d.label);
  const size_t local[3] = {lx, ly, 1};
  const size_t global[2] = {(bn + lx - 1) / lx * lx, (bm + ly - 1) / ly * ly};
  return enqueue_gemm(d, q, p, *kern, defs, global, local, 1, 1, what);
}

}  // namespace vnn_opencl

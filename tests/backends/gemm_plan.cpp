// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The MATMUL -> BLAS mapping every vendor BLAS shares (backends/common/
// gemm_plan.hpp), checked on the host against naive loops: operands with
// every layout a vnn view can have (row-major, transposed, strided both
// ways so they must be packed, offset, broadcast and non-collapsible batch
// dims), run through (1) the row-major call OpenBLAS/CLBlast get and (2) the
// column-major call cuBLAS/hipBLAS get (kernels::column_major), the latter
// on a reference implementation of cublasGemmStridedBatchedEx's contract.
// The CUDA plugin adds only the vendor call, which needs a GPU to run.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "common/gemm_plan.hpp"

using namespace vnn::kernels;

namespace {

// Column-major strided-batched gemm as cuBLAS defines it:
// C_b = alpha op(A_b) op(B_b) + beta C_b, A_b = A + b * stride_a, ...
void reference_cublas(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                      int64_t lda, int64_t sa, const double* b, int64_t ldb, int64_t sb, double beta, double* c,
                      int64_t ldc, int64_t sc, int64_t batch) {
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          double x = ta ? a[bi * sa + p + i * lda] : a[bi * sa + i + p * lda];
          double y = tb ? b[bi * sb + j + p * ldb] : b[bi * sb + p + j * ldb];
          acc += x * y;
        }
        double& dst = c[bi * sc + i + j * ldc];
        dst = alpha * acc + (beta != 0 ? beta * dst : 0.0);
      }
}

// Row-major gemm as cblas(CblasRowMajor) defines it.
void reference_cblas(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
                     const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p) {
        double x = ta ? a[p * lda + i] : a[i * lda + p];
        double y = tb ? b[j * ldb + p] : b[p * ldb + j];
        acc += x * y;
      }
      double& dst = c[i * ldc + j];
      dst = alpha * acc + (beta != 0 ? beta * dst : 0.0);
    }
}

vnn_tensor_desc desc(void* data, int64_t offset, std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  vnn_tensor_desc d{};
  d.data = data;
  d.offset = offset;
  d.dtype = VNN_FLOAT64;
  d.ndim = int32_t(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) d.sizes[i] = sizes[i], d.strides[i] = strides[i];
  return d;
}

// Element (batch bi, row r, col c) of a [B..., rows, cols] operand.
double at(const vnn_tensor_desc& d, int64_t bi, int64_t r, int64_t c) {
  const double* p = static_cast<const double*>(d.data);
  return p[batch_offset(d, bi) + r * d.strides[d.ndim - 2] + c * d.strides[d.ndim - 1]];
}

// Copies d into a contiguous buffer (what the plugins' packing does).
vnn_tensor_desc pack(const vnn_tensor_desc& d, int64_t batch, std::vector<double>* buf) {
  const int64_t rows = d.sizes[d.ndim - 2], cols = d.sizes[d.ndim - 1];
  buf->assign(size_t(batch * rows * cols), 0.0);
  vnn_tensor_desc p = packed_desc(d, buf->data());
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) (*buf)[size_t((bi * rows + r) * cols + c)] = at(d, bi, r, c);
  return p;
}

struct Layout {
  const char* name;
  // strides of [rows, cols] given the two sizes
  bool transposed, strided;
};

// An operand [batch sizes..., rows, cols] in its own buffer with the given
// layout; batch dims from bstrides_kind: 0 = contiguous batches, 1 = all
// broadcast, 2 = outer broadcast inside a real inner dim (non-uniform).
vnn_tensor_desc make_operand(std::vector<double>* store, std::vector<int64_t> bsizes, int bkind, int64_t rows,
                             int64_t cols, Layout l, uint32_t seed) {
  const int64_t pitch = l.strided ? 3 : 1;  // every 3rd element: neither dim unit-stride
  int64_t rs, cs;
  if (l.transposed) cs = rows * pitch + 1, rs = pitch;  // column-major with a padded leading dim
  else rs = cols * pitch + 2, cs = pitch;
  const int64_t mat = (rows > 0 && cols > 0) ? (rows - 1) * rs + (cols - 1) * cs + 1 : 1;
  std::vector<int64_t> sizes = bsizes, strides(bsizes.size());
  int64_t real = 1;
  for (int i = int(bsizes.size()) - 1; i >= 0; --i) {
    bool broadcast = bkind == 1 || (bkind == 2 && i == 0);
    strides[size_t(i)] = broadcast ? 0 : real * mat;
    if (!broadcast) real *= bsizes[size_t(i)];
  }
  const int64_t offset = 5;
  store->assign(size_t(offset + real * mat), 0.0);
  uint32_t x = seed;
  for (double& v : *store) {
    x = x * 1664525u + 1013904223u;
    v = double(int32_t(x >> 8) % 1000) / 250.0;
  }
  sizes.push_back(rows), sizes.push_back(cols);
  strides.push_back(rs), strides.push_back(cs);
  return desc(store->data(), offset, sizes, strides);
}

}  // namespace

TEST_CASE("batch offsets and uniform batch strides") {
  double dummy = 0;
  int64_t s = -1;
  // contiguous batches [2, 3] of 4x5
  vnn_tensor_desc c = desc(&dummy, 7, {2, 3, 4, 5}, {60, 20, 5, 1});
  CHECK(uniform_batch_stride(c, &s));
  CHECK(s == 20);
  CHECK(batch_offset(c, 4) == 7 + 4 * 20);
  // all broadcast
  vnn_tensor_desc b = desc(&dummy, 0, {2, 3, 4, 5}, {0, 0, 5, 1});
  CHECK(uniform_batch_stride(b, &s));
  CHECK(s == 0);
  CHECK(batch_offset(b, 5) == 0);
  // outer broadcast, inner real: offsets 0, 20, 40, 0, 20, 40
  vnn_tensor_desc n = desc(&dummy, 0, {2, 3, 4, 5}, {0, 20, 5, 1});
  CHECK_FALSE(uniform_batch_stride(n, &s));
  CHECK(batch_offset(n, 3) == 0);
  CHECK(batch_offset(n, 5) == 40);
  // size-1 batch dims carry any stride
  vnn_tensor_desc one = desc(&dummy, 0, {1, 3, 1, 4, 5}, {999, 20, 123, 5, 1});
  CHECK(uniform_batch_stride(one, &s));
  CHECK(s == 20);
  // plain matrices: one batch
  vnn_tensor_desc m = desc(&dummy, 3, {4, 5}, {5, 1});
  GemmPlan p;
  vnn_tensor_desc mb = desc(&dummy, 0, {5, 6}, {1, 5});
  vnn_tensor_desc mo = desc(&dummy, 0, {4, 6}, {6, 1});
  REQUIRE(plan_gemm(mo, m, mb, &p));
  CHECK(p.batch == 1);
  CHECK(p.uniform);
  CHECK_FALSE(p.a.trans);
  CHECK(p.b.trans);
  CHECK(p.b.ld == 5);
  // shapes that do not form a matmul
  vnn_tensor_desc bad = desc(&dummy, 0, {4, 6}, {6, 1});
  CHECK_FALSE(plan_gemm(mo, m, bad, &p));
}

TEST_CASE("row-major and column-major BLAS calls from the plan equal naive matmul for every layout") {
  const Layout layouts[] = {{"row-major", false, false}, {"transposed", true, false}, {"strided", false, true}};
  struct Dims { int64_t m, k, n; };
  const Dims dims[] = {{1, 1, 1}, {3, 5, 7}, {4, 1, 6}, {1, 6, 5}, {6, 4, 1}, {3, 0, 2}};
  const std::vector<int64_t> batches[] = {{}, {3}, {2, 3}};
  int cases = 0;
  for (const auto& bs : batches)
    for (int bkind : {0, 1, 2}) {
      if (bs.empty() && bkind) continue;
      if (bs.size() < 2 && bkind == 2) continue;
      for (const Dims& d : dims)
        for (const Layout& la : layouts)
          for (const Layout& lb : layouts)
            for (double beta : {0.0, 0.5}) {
              INFO("batch dims " << bs.size() << " kind " << bkind << ", m=" << d.m << " k=" << d.k << " n=" << d.n
                                 << ", a " << la.name << ", b " << lb.name << ", beta " << beta);
              int64_t batch = 1;
              for (int64_t v : bs) batch *= v;
              std::vector<double> sa, sb;
              // a broadcasts in kind 1/2; b stays real so the two differ
              vnn_tensor_desc a = make_operand(&sa, bs, bkind, d.m, d.k, la, 11u + uint32_t(cases));
              vnn_tensor_desc b = make_operand(&sb, bs, 0, d.k, d.n, lb, 7u + uint32_t(cases));
              std::vector<int64_t> osizes = bs, ostrides(bs.size());
              osizes.push_back(d.m), osizes.push_back(d.n);
              ostrides.push_back(d.n), ostrides.push_back(1);
              for (int i = int(bs.size()) - 1, st = int(d.m * d.n); i >= 0; --i)
                ostrides[size_t(i)] = st, st *= int(bs[size_t(i)]);
              const int64_t out_off = 3;
              std::vector<double> init(size_t(out_off + batch * d.m * d.n));
              for (size_t i = 0; i < init.size(); ++i) init[i] = double(i % 7) - 3.0;
              std::vector<double> want = init, row = init, col = init;
              vnn_tensor_desc o_row = desc(row.data(), out_off, osizes, ostrides);
              const double alpha = 1.5;
              for (int64_t bi = 0; bi < batch; ++bi)
                for (int64_t i = 0; i < d.m; ++i)
                  for (int64_t j = 0; j < d.n; ++j) {
                    double acc = 0;
                    for (int64_t p = 0; p < d.k; ++p) acc += at(a, bi, i, p) * at(b, bi, p, j);
                    double& dst = want[size_t(out_off + (bi * d.m + i) * d.n + j)];
                    dst = alpha * acc + beta * dst;
                  }

              GemmPlan plan;
              REQUIRE(plan_gemm(o_row, a, b, &plan));
              CHECK(plan.batch == batch);
              std::vector<double> pa, pb;
              vnn_tensor_desc ua = plan.a.ok ? a : pack(a, batch, &pa);
              vnn_tensor_desc ub = plan.b.ok ? b : pack(b, batch, &pb);
              CHECK(plan.a.ok == !(la.strided && d.m > 1 && d.k > 1));
              if (!plan.a.ok || !plan.b.ok) REQUIRE(plan_gemm(o_row, ua, ub, &plan));
              REQUIRE(plan.a.ok);
              REQUIRE(plan.b.ok);
              const double* xa = static_cast<const double*>(ua.data);
              const double* xb = static_cast<const double*>(ub.data);

              // (1) row-major, one call per batch (OpenBLAS, CLBlast)
              for (int64_t bi = 0; bi < batch; ++bi)
                reference_cblas(plan.a.trans, plan.b.trans, plan.m, plan.n, plan.k, alpha,
                                xa + batch_offset(ua, bi), plan.a.ld, xb + batch_offset(ub, bi), plan.b.ld, beta,
                                row.data() + out_off + bi * plan.stride_c, plan.ldc);
              // (2) column-major strided-batched (cuBLAS, hipBLAS)
              if (plan.uniform) {
                ColumnMajorGemm g = column_major(plan);
                reference_cublas(g.trans_first, g.trans_second, g.m, g.n, g.k, alpha, xb + ub.offset, g.ld_first,
                                 g.stride_first, xa + ua.offset, g.ld_second, g.stride_second, beta,
                                 col.data() + out_off, g.ldc, g.stride_c, g.batch);
              } else {
                GemmPlan one = plan;
                one.batch = 1;
                ColumnMajorGemm g = column_major(one);
                for (int64_t bi = 0; bi < batch; ++bi)
                  reference_cublas(g.trans_first, g.trans_second, g.m, g.n, g.k, alpha, xb + batch_offset(ub, bi),
                                   g.ld_first, 0, xa + batch_offset(ua, bi), g.ld_second, 0, beta,
                                   col.data() + out_off + bi * plan.stride_c, g.ldc, 0, 1);
              }
              // packing writes every batch out, broadcast ones too
              CHECK(plan.uniform == (bkind != 2 || !pa.empty()));
              for (size_t i = 0; i < want.size(); ++i) {
                REQUIRE(row[i] == Approx(want[i]).margin(1e-9));
                REQUIRE(col[i] == Approx(want[i]).margin(1e-9));
              }
              ++cases;
            }
    }
  CHECK(cases > 300);
}

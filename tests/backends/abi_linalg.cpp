// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The plugin C ABI's REDUCE, MATMUL and SOFTMAX against host loops, on
// whichever plugin abi_main.cpp loaded (see abi.cpp).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "backends/abi_plugin.hpp"

using namespace abi_test;

namespace {

const char* dtype_name(vnn_dtype dt) {
  switch (dt) {
    case VNN_FLOAT32: return "float32";
    case VNN_FLOAT64: return "float64";
    case VNN_INT32: return "int32";
    case VNN_INT64: return "int64";
    default: return "other";
  }
}

// The implementation the latest matmul took: the ABI's last_path entry, or
// (OpenCL) its device properties' gemm_last line.
std::string gemm_last() {
  const vnn_backend* B = table();
  if (VNN_BACKEND_HAS(B, last_path)) {
    const char* p = B->last_path(kDevice);
    if (p && *p) return p;
  }
  const vnn_device_info info = device_info();
  const char* p = std::strstr(info.properties, "gemm_last=");
  if (!p) return "";
  p += 10;
  return std::string(p, std::strcspn(p, "\n"));
}

// MATMUL against a naive loop: batched with a broadcast (stride-0) operand,
// transposed operands, alpha/beta, integer and non-unit-stride cases.
// expect_path: the implementation OpenCL must choose ("" = any).
template <typename T>
void check_matmul(vnn_dtype dt, int64_t batch, int64_t m, int64_t n, int64_t k, bool ta, bool tb, bool bcast_b,
                  int64_t a_step, double alpha, double beta, double tol, const char* expect_path) {
  std::mt19937 rng(uint32_t(m * 131 + n * 7 + k));
  std::uniform_int_distribution<int> u(-4, 4);
  // a_step spaces a's columns (a non-unit stride a vendor BLAS cannot take).
  std::vector<T> ha(size_t(batch * m * k * a_step)), hb(size_t((bcast_b ? 1 : batch) * k * n)),
      ho(size_t(batch * m * n));
  for (auto& x : ha) x = T(u(rng)) / (dt == VNN_FLOAT32 || dt == VNN_FLOAT64 ? T(2) : T(1));
  for (auto& x : hb) x = T(u(rng));
  for (auto& x : ho) x = T(u(rng));
  void *da = upload(ha), *db = upload(hb), *dout = upload(ho);
  // a: [batch, m, k], stored [batch, k, m] when ta; b: [batch, k, n] stored [n, k] when tb.
  const std::vector<int64_t> as = ta ? std::vector<int64_t>{m * k * a_step, a_step, m * a_step}
                                     : std::vector<int64_t>{m * k * a_step, k * a_step, a_step};
  const std::vector<int64_t> bs = tb ? std::vector<int64_t>{bcast_b ? 0 : k * n, 1, k}
                                     : std::vector<int64_t>{bcast_b ? 0 : k * n, n, 1};
  auto A = [&](int64_t bb, int64_t i, int64_t p) { return ha[size_t(bb * as[0] + i * as[1] + p * as[2])]; };
  auto Bv = [&](int64_t bb, int64_t p, int64_t j) { return hb[size_t(bb * bs[0] + p * bs[1] + j * bs[2])]; };
  REQUIRE(ok(run_op(VNN_OP_MATMUL, {desc(da, dt, {batch, m, k}, as), desc(db, dt, {batch, k, n}, bs)},
                    desc(dout, dt, {batch, m, n}), {alpha, beta})));
  const std::string path = gemm_last();
  std::vector<T> got = download<T>(dout, ho.size());
  INFO("matmul " << dtype_name(dt) << " batch " << batch << " " << m << "x" << n << "x" << k << " ta " << ta
                 << " tb " << tb << " broadcast " << bcast_b << " a_step " << a_step << ", path " << path);
  size_t wrong = 0;
  for (int64_t bb = 0; bb < batch; ++bb)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += double(A(bb, i, p)) * double(Bv(bb, p, j));
        const size_t o = size_t((bb * m + i) * n + j);
        const double want = alpha * s + (beta != 0 ? beta * double(ho[o]) : 0.0);
        if (!(std::fabs(double(got[o]) - want) <= tol * (1 + std::fabs(want)))) {
          if (wrong++ == 0) UNSCOPED_INFO("first wrong [" << bb << "," << i << "," << j << "]: " << got[o] << " vs " << want);
        }
      }
  CHECK(wrong == 0);
  std::string want_path = expect_path ? expect_path : "";
  // "vnn": one of vnn's own kernels (tiled, long-k, wide-n), as the
  // device's tuning picked for the shape class.
  const bool vnn_kernel = path == "tiled" || path == "longk" || path == "widen";
  if (want_path == "auto") {
    // Unit-stride float: CLBlast or vnn's GEMM, whichever the device's
    // tuning measured faster for the shape; vnn's alone without CLBlast.
    const bool clblast = std::strstr(device_info().properties, "gemm=clblast") != nullptr;
    want_path = clblast && path == "clblast" ? "clblast" : "vnn";
  }
  if (want_path == "vnn" && vnn_kernel) want_path = path;
  if (is_opencl() && !want_path.empty()) CHECK(path == want_path);
  release({da, db, dout});
}

}  // namespace

// REDUCE on a strided (transposed) view, every fn, against host loops.
TEST_CASE("REDUCE: every function over permuted views, arg ties, integers", "[abi]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  // in: logical [3, 5, 200] over storage [200, 5, 3] (fully permuted).
  const int64_t A = 3, Bd = 5, C = 200;
  std::vector<float> h(A * Bd * C);
  for (auto& x : h) x = u(rng);
  void* d = upload(h);
  const vnn_tensor_desc in = desc(d, VNN_FLOAT32, {A, Bd, C}, {1, A, A * Bd});
  auto at = [&](int64_t i, int64_t j, int64_t k) { return double(h[size_t(i + j * A + k * A * Bd)]); };
  auto near = [](double got, double want) { return close(got, want, 1e-5) || std::fabs(got - want) < 1e-5; };
  void* o = device_buffer(64 * 8);
  // k = 1: over C; k = 2: over (Bd, C).
  for (int fn = VNN_REDUCE_SUM; fn <= VNN_REDUCE_MIN; ++fn) {
    auto want_of = [fn](double s, double p, double mx, double mn, double cnt) {
      return fn == 0 ? s : fn == 1 ? s / cnt : fn == 2 ? p : fn == 3 ? mx : mn;
    };
    REQUIRE(ok(run_op(VNN_OP_REDUCE, {in}, desc(o, VNN_FLOAT32, {A, Bd}), {}, {fn, 1})));
    std::vector<float> got = download<float>(o, size_t(A * Bd));
    for (int64_t i = 0; i < A; ++i)
      for (int64_t j = 0; j < Bd; ++j) {
        double s = 0, p = 1, mx = -INFINITY, mn = INFINITY;
        for (int64_t k = 0; k < C; ++k) {
          const double v = at(i, j, k);
          s += v, p *= v, mx = std::max(mx, v), mn = std::min(mn, v);
        }
        const double want = want_of(s, p, mx, mn, double(C));
        INFO("reduce fn " << fn << " k=1 [" << i << "," << j << "]: " << got[size_t(i * Bd + j)] << " vs " << want);
        CHECK(near(got[size_t(i * Bd + j)], want));
      }
    REQUIRE(ok(run_op(VNN_OP_REDUCE, {in}, desc(o, VNN_FLOAT32, {A}), {}, {fn, 2})));
    got = download<float>(o, size_t(A));
    for (int64_t i = 0; i < A; ++i) {
      double s = 0, p = 1, mx = -INFINITY, mn = INFINITY;
      for (int64_t j = 0; j < Bd; ++j)
        for (int64_t k = 0; k < C; ++k) {
          const double v = at(i, j, k);
          s += v, p *= v, mx = std::max(mx, v), mn = std::min(mn, v);
        }
      const double want = want_of(s, p, mx, mn, double(Bd * C));
      INFO("reduce fn " << fn << " k=2 [" << i << "]: " << got[size_t(i)] << " vs " << want);
      CHECK(near(got[size_t(i)], want));
    }
  }
  // Full reduction (k = ndim, scalar out) of a large contiguous buffer.
  std::vector<float> big(100003);
  double bsum = 0;
  for (size_t i = 0; i < big.size(); ++i) bsum += big[i] = float(i % 17) * 0.25f;
  void* db = upload(big);
  REQUIRE(ok(run_op(VNN_OP_REDUCE, {desc(db, VNN_FLOAT32, {int64_t(big.size())})}, desc(o, VNN_FLOAT32, {}), {},
                    {VNN_REDUCE_SUM, 1})));
  CHECK(download<float>(o, 1)[0] == float(bsum));
  // argmax / argmin: ties go to the first index; NaN counts as the extreme.
  std::vector<float> t = {1, 5, 3, 5, 5, 0, 0, 2,           // row 0: max 5 at 1, min 0 at 5
                          7, 7, 7, 7, 7, 7, 7, 7,           // row 1: all equal -> 0
                          -1, 2, NAN, 9, NAN, -3, 9, -3};  // row 2: first NaN at 2
  void* dt = upload(t);
  REQUIRE(ok(run_op(VNN_OP_REDUCE, {desc(dt, VNN_FLOAT32, {3, 8})}, desc(o, VNN_INT64, {3}), {},
                    {VNN_REDUCE_ARGMAX, 1})));
  CHECK(download<int64_t>(o, 3) == std::vector<int64_t>{1, 0, 2});
  REQUIRE(ok(run_op(VNN_OP_REDUCE, {desc(dt, VNN_FLOAT32, {3, 8})}, desc(o, VNN_INT64, {3}), {},
                    {VNN_REDUCE_ARGMIN, 1})));
  CHECK(download<int64_t>(o, 3) == std::vector<int64_t>{5, 0, 2});
  // Ties across many work items: 1000 equal maxima, the first at 123.
  std::vector<int32_t> ti(5000, 1);
  for (int i = 123; i < 5000; i += 4) ti[size_t(i)] = 9;
  void* dti = upload(ti);
  REQUIRE(ok(run_op(VNN_OP_REDUCE, {desc(dti, VNN_INT32, {5000})}, desc(o, VNN_INT64, {}), {}, {VNN_REDUCE_ARGMAX, 1})));
  CHECK(download<int64_t>(o, 1)[0] == 123);
  // Integers: int32 sum into int64 (no overflow), int32 max, int64 prod/min.
  std::vector<int32_t> iv(3000);
  int64_t isum = 0, imax = INT64_MIN;
  for (size_t i = 0; i < iv.size(); ++i) {
    iv[i] = int32_t(2000000000 - int64_t(i) * 7919 % 4000000000LL);
    isum += iv[i];
    imax = std::max<int64_t>(imax, iv[i]);
  }
  void* div_ = upload(iv);
  REQUIRE(ok(run_op(VNN_OP_REDUCE, {desc(div_, VNN_INT32, {3000})}, desc(o, VNN_INT64, {}), {}, {VNN_REDUCE_SUM, 1})));
  CHECK(download<int64_t>(o, 1)[0] == isum);
  REQUIRE(ok(run_op(VNN_OP_REDUCE, {desc(div_, VNN_INT32, {3000})}, desc(o, VNN_INT32, {}), {}, {VNN_REDUCE_MAX, 1})));
  CHECK(download<int32_t>(o, 1)[0] == imax);
  std::vector<int64_t> lv = {3, -2, 5, 1, -7, 2};
  void* dl = upload(lv);
  REQUIRE(ok(run_op(VNN_OP_REDUCE, {desc(dl, VNN_INT64, {2, 3})}, desc(o, VNN_INT64, {2}), {}, {VNN_REDUCE_PROD, 1})));
  CHECK(download<int64_t>(o, 2) == std::vector<int64_t>{-30, -14});
  REQUIRE(ok(run_op(VNN_OP_REDUCE, {desc(dl, VNN_INT64, {2, 3})}, desc(o, VNN_INT64, {2}), {}, {VNN_REDUCE_MIN, 1})));
  CHECK(download<int64_t>(o, 2) == std::vector<int64_t>{-2, -7});
  // MEAN of integers is not a supported pairing.
  CHECK(run_op(VNN_OP_REDUCE, {desc(dl, VNN_INT64, {6})}, desc(o, VNN_INT64, {}), {}, {VNN_REDUCE_MEAN, 1}) ==
        VNN_STATUS_UNSUPPORTED);
  if (fp64_supported()) {
    std::vector<double> dv(10000);
    double ds = 0;
    for (size_t i = 0; i < dv.size(); ++i) ds += dv[i] = 1e-3 * double(i) + 1e-12;
    void* dd = upload(dv);
    REQUIRE(ok(run_op(VNN_OP_REDUCE, {desc(dd, VNN_FLOAT64, {10000})}, desc(o, VNN_FLOAT64, {}), {},
                      {VNN_REDUCE_MEAN, 1})));
    CHECK(close(download<double>(o, 1)[0], ds / 10000, 1e-13));
    release({dd});
  }
  release({d, o, db, dt, dti, div_, dl});
}

TEST_CASE("MATMUL: batched, transposed, broadcast, strided, integer", "[abi]") {
  // OpenCL: vendor BLAS (CLBlast) or one of vnn's kernels by the device's
  // tuning where BLAS can take the operands, else vnn's kernel for the shape
  // class ("vnn"); the other plugins choose for themselves.
  const char* fast = "auto";
  check_matmul<float>(VNN_FLOAT32, 1, 37, 29, 41, false, false, false, 1, 1.0, 0.0, 1e-5, fast);
  check_matmul<float>(VNN_FLOAT32, 3, 20, 33, 18, true, false, false, 1, 0.5, 2.0, 1e-5, fast);
  check_matmul<float>(VNN_FLOAT32, 4, 17, 16, 35, false, true, true, 1, 1.5, -1.0, 1e-5, fast);
  check_matmul<float>(VNN_FLOAT32, 2, 19, 23, 21, true, true, true, 3, 1.0, 1.0, 1e-5, "vnn");
  check_matmul<int32_t>(VNN_INT32, 3, 18, 17, 33, true, false, true, 1, 2.0, 3.0, 0, "vnn");
  check_matmul<int64_t>(VNN_INT64, 2, 5, 40, 7, false, true, false, 2, 1.0, 0.0, 0, "vnn");
  if (fp64_supported()) {
    check_matmul<double>(VNN_FLOAT64, 2, 33, 31, 45, true, true, false, 1, 1.0, 0.5, 1e-12, fast);
    check_matmul<double>(VNN_FLOAT64, 2, 9, 8, 7, false, false, true, 2, 1.0, 0.0, 1e-12, "vnn");
  }
  if (is_opencl()) {
    // Every vnn GEMM variant the device fits (VNN_OPENCL_GEMM_VARIANT; an
    // index past the list is refused as unsupported), with the long-k shape
    // that takes split-K and the batched / strided / integer cases; then the
    // simple kernel of matmul.cl.
    int variants = 0;
    setenv("VNN_OPENCL_GEMM", "tiled", 1);
    for (int v = 0; v < 8; ++v) {
      setenv("VNN_OPENCL_GEMM_VARIANT", std::to_string(v).c_str(), 1);
      std::vector<float> one = {1};
      void* p = upload(one);
      const vnn_status st = run_op(VNN_OP_MATMUL, {desc(p, VNN_FLOAT32, {1, 1}), desc(p, VNN_FLOAT32, {1, 1})},
                                   desc(p, VNN_FLOAT32, {1, 1}), {1.0, 0.0});
      release({p});
      if (st == VNN_STATUS_UNSUPPORTED) continue;
      REQUIRE(ok(st));
      ++variants;
      INFO("gemm variant " << v);
      check_matmul<float>(VNN_FLOAT32, 1, 9, 7, 3000, false, true, false, 1, 0.5, 1.0, 1e-4, "tiled");
      check_matmul<float>(VNN_FLOAT32, 1, 70, 130, 33, true, false, false, 1, 1.0, 0.0, 1e-5, "tiled");
      check_matmul<float>(VNN_FLOAT32, 3, 20, 33, 18, true, false, false, 1, 0.5, 2.0, 1e-5, "tiled");
      check_matmul<int32_t>(VNN_INT32, 3, 18, 17, 33, true, false, true, 1, 2.0, 3.0, 0, "tiled");
      check_matmul<int64_t>(VNN_INT64, 1, 5, 40, 2000, false, true, false, 2, 1.0, 0.0, 0, "tiled");
      if (fp64_supported())
        check_matmul<double>(VNN_FLOAT64, 2, 33, 31, 45, true, true, false, 1, 1.0, 0.5, 1e-12, "tiled");
    }
    unsetenv("VNN_OPENCL_GEMM_VARIANT");
    CHECK(variants >= 1);  // at least one vnn GEMM variant fits the device
    setenv("VNN_OPENCL_GEMM", "simple", 1);
    check_matmul<float>(VNN_FLOAT32, 2, 19, 23, 21, true, true, true, 3, 1.0, 1.0, 1e-5, "simple");
    check_matmul<int64_t>(VNN_INT64, 2, 5, 40, 7, false, true, false, 2, 1.0, 0.0, 0, "simple");
    // The long-k kernel (conv2d weight gradients): split-K over few blocks,
    // edge blocks (m, n not multiples of 4), one k range over many blocks,
    // batched with a broadcast b, strided a, integers, float64.
    setenv("VNN_OPENCL_GEMM", "longk", 1);
    check_matmul<float>(VNN_FLOAT32, 1, 9, 7, 3000, false, true, false, 1, 0.5, 1.0, 1e-4, "longk");
    check_matmul<float>(VNN_FLOAT32, 1, 70, 130, 33, true, false, false, 1, 1.0, 0.0, 1e-5, "longk");
    check_matmul<float>(VNN_FLOAT32, 3, 20, 33, 18, true, false, true, 2, 0.5, 2.0, 1e-5, "longk");
    check_matmul<int32_t>(VNN_INT32, 3, 18, 17, 33, true, false, true, 1, 2.0, 3.0, 0, "longk");
    check_matmul<int64_t>(VNN_INT64, 1, 5, 40, 2000, false, true, false, 2, 1.0, 0.0, 0, "longk");
    if (fp64_supported())
      check_matmul<double>(VNN_FLOAT64, 1, 6, 5, 5000, false, true, false, 1, 1.0, 0.5, 1e-12, "longk");
    // The wide-n kernel (conv2d forward / input gradient): whole and partial
    // column blocks, rows not a multiple of its 8, transposed / strided a,
    // b transposed (scalar loads), batched, integers, float64.
    setenv("VNN_OPENCL_GEMM", "widen", 1);
    check_matmul<float>(VNN_FLOAT32, 1, 29, 3000, 9, false, false, false, 1, 1.0, 0.0, 1e-5, "widen");
    check_matmul<float>(VNN_FLOAT32, 1, 70, 130, 33, true, false, false, 3, 0.5, 1.0, 1e-5, "widen");
    check_matmul<float>(VNN_FLOAT32, 4, 17, 16, 35, false, true, true, 1, 1.5, -1.0, 1e-5, "widen");
    check_matmul<int32_t>(VNN_INT32, 3, 18, 17, 33, true, false, true, 1, 2.0, 3.0, 0, "widen");
    check_matmul<int64_t>(VNN_INT64, 2, 5, 40, 7, false, true, false, 2, 1.0, 0.0, 0, "widen");
    if (fp64_supported())
      check_matmul<double>(VNN_FLOAT64, 2, 33, 310, 45, true, false, false, 1, 1.0, 0.5, 1e-12, "widen");
    unsetenv("VNN_OPENCL_GEMM");
  }
  // beta = 0 never reads out: NaN there must not leak.
  std::vector<float> a = {1, 2, 3, 4}, nanv(4, NAN);
  void *da = upload(a), *dout = upload(nanv);
  REQUIRE(ok(run_op(VNN_OP_MATMUL, {desc(da, VNN_FLOAT32, {2, 2}), desc(da, VNN_FLOAT32, {2, 2})},
                    desc(dout, VNN_FLOAT32, {2, 2}), {1.0, 0.0})));
  CHECK(download<float>(dout, 4) == std::vector<float>{7, 10, 15, 22});
  release({da, dout});
}

TEST_CASE("SOFTMAX: strided rows, large shifts, log form, in place", "[abi]") {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-5.f, 5.f);
  const int64_t rows = 7, n = 1000;
  // in: logical [rows, n] over a transposed [n, rows] storage; values shifted
  // by up to 1e4 so that a naive exp would overflow.
  std::vector<float> h(size_t(rows * n));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t r = 0; r < rows; ++r) h[size_t(j * rows + r)] = u(rng) + (r % 2 ? 1e4f : -50.f);
  void* d = upload(h);
  void* o = device_buffer(size_t(rows * n) * 4);
  const vnn_tensor_desc in = desc(d, VNN_FLOAT32, {rows, n}, {1, rows});
  for (int log_out = 0; log_out < 2; ++log_out) {
    REQUIRE(ok(run_op(VNN_OP_SOFTMAX, {in}, desc(o, VNN_FLOAT32, {rows, n}), {}, {log_out})));
    std::vector<float> got = download<float>(o, size_t(rows * n));
    for (int64_t r = 0; r < rows; ++r) {
      double mx = -INFINITY, s = 0, total = 0;
      for (int64_t j = 0; j < n; ++j) mx = std::max(mx, double(h[size_t(j * rows + r)]));
      for (int64_t j = 0; j < n; ++j) s += std::exp(double(h[size_t(j * rows + r)]) - mx);
      size_t wrong = 0;
      for (int64_t j = 0; j < n; ++j) {
        const double x = double(h[size_t(j * rows + r)]) - mx;
        const double want = log_out ? x - std::log(s) : std::exp(x) / s;
        const double g = got[size_t(r * n + j)];
        wrong += !(std::isfinite(g) && std::fabs(g - want) <= 2e-5 * (1 + std::fabs(want)));
        total += log_out ? std::exp(g) : g;
      }
      INFO("softmax log " << log_out << " row " << r << " sums to " << total);
      CHECK(wrong == 0);
      CHECK(std::fabs(total - 1) < 1e-4);
    }
  }
  // In place, float64 where available, with extreme values in one row.
  if (fp64_supported()) {
    std::vector<double> x = {1000, 1001, 1002, -1e308, 1e308};
    void* dx = upload(x);
    REQUIRE(ok(run_op(VNN_OP_SOFTMAX, {desc(dx, VNN_FLOAT64, {5})}, desc(dx, VNN_FLOAT64, {5}), {}, {1})));
    std::vector<double> g = download<double>(dx, 5);
    CHECK(g[4] == 0.0);
    CHECK(std::isfinite(g[0]));
    CHECK(g[0] < -1e307);
    release({dx});
  }
  release({d, o});
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The block paths of two kernels, checked against naive host loops on the
// device under test: index_select copying whole rows (a batch gathered from
// a [N, ...] data set) and reductions over N, H, W of [N, C, H, W] walked
// run by run (BatchNorm's statistics, a conv bias gradient). Each case also
// runs a layout that must fall back to the general walk (permuted, sliced,
// strided index), so both sides of each rule are covered.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;

namespace {

// In [0, 20): representable (if rounded) in every dtype tested, uint8 included.
std::vector<float> values(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float((i * 7919) % 2003) / 100.f;
  return v;
}

// index_select(x, dim, idx) on the device against a loop over the host copy
// of the same view.
void check_index_select(const Tensor& x_dev, int dim, const Tensor& idx_dev) {
  Tensor got = index_select(x_dev, dim, idx_dev).cpu();
  Tensor x = x_dev.cpu(), idx = idx_dev.cpu().to(kInt64);
  REQUIRE(got.dim() == x.dim());
  std::vector<int64_t> want_sizes(x.sizes().begin(), x.sizes().end());
  want_sizes[size_t(dim)] = idx.numel();
  REQUIRE(std::vector<int64_t>(got.sizes().begin(), got.sizes().end()) == want_sizes);
  auto iv = idx.contiguous().to_vector<int64_t>();
  Tensor xc = x.contiguous().to(kFloat64), gc = got.contiguous().to(kFloat64);
  auto xv = xc.to_vector<double>(), gv = gc.to_vector<double>();
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d) outer *= x.size(d);
  for (int d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  const int64_t n = x.size(dim), k = idx.numel();
  int64_t bad = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < k; ++j)
      for (int64_t i = 0; i < inner; ++i)
        if (gv[size_t((o * k + j) * inner + i)] != xv[size_t((o * n + iv[size_t(j)]) * inner + i)]) ++bad;
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("index_select of whole rows matches loops, block path and general walk") {
  Device dev = device_under_test();
  Tensor base = from_vector(values(40 * 3 * 7 * 5), {40, 3, 7, 5});
  std::vector<int64_t> picks{3, 0, 39, 3, 17, 22, 5, 5, 38, 1};
  Tensor idx = from_vector(picks, {int64_t(picks.size())}).to(dev);
  for (DType t : {kFloat32, kFloat64, kInt64, kInt32, kUInt8, kFloat16}) {
    INFO("dtype " << name(t) << " on " << dev);
    Tensor x = base.to(t).to(dev);
    check_index_select(x, 0, idx);                             // rows of a data set (block path)
    check_index_select(x, 1, from_vector(std::vector<int64_t>{2, 0, 2}, {3}).to(dev));  // outer dims collapse
    check_index_select(x, 3, from_vector(std::vector<int64_t>{4, 0}, {2}).to(dev));     // blocks of one element
    check_index_select(x.narrow(0, 5, 30), 1, from_vector(std::vector<int64_t>{1}, {1}).to(dev));  // offset view
    check_index_select(x.narrow(2, 1, 4), 0, idx);             // inner not one block: general walk
    check_index_select(x.permute({1, 0, 2, 3}), 1, idx);       // outer stride larger than the rows
    check_index_select(x.permute({0, 1, 3, 2}), 0, idx);       // transposed rows: general walk
  }
  // A strided index view, and a 0-D source.
  Tensor x = base.to(dev);
  Tensor wide = from_vector(std::vector<int64_t>{7, -1, 2, -1, 39, -1}, {3, 2}).to(dev);
  check_index_select(x, 0, wide.select(1, 0));
  // A 0-D source takes one index and gives a 0-D result, as PyTorch's.
  Tensor s = full(Shape{}, 4.5, TensorOptions(dev));
  CHECK(index_select(s, 0, from_vector(std::vector<int64_t>{0}, {1}).to(dev)).item() == 4.5);
  CHECK_THROWS_AS(index_select(s, 0, from_vector(std::vector<int64_t>{0, 0}, {2}).to(dev)), IndexError);
  CHECK_THROWS_AS(index_select(x, 0, from_vector(std::vector<int64_t>{40}, {1}).to(dev)), IndexError);
}

TEST_CASE("sum, mean, amax, amin over N, H, W of [N, C, H, W] match loops") {
  Device dev = device_under_test();
  const int64_t N = 6, C = 5, H = 9, W = 7;
  Tensor host = from_vector(values(N * C * H * W), {N, C, H, W});
  for (DType t : {kFloat32, kFloat64}) {
    INFO("dtype " << name(t) << " on " << dev);
    Tensor x = host.to(t).to(dev);
    struct Case { Tensor view; const char* what; };
    // Contiguous: runs of H*W; a W-slice: runs of 4; a permuted view: the
    // channel is no longer dim 1 of storage (runs of W after moving C).
    std::vector<Case> cases = {{x, "contiguous"},
                               {x.narrow(3, 2, 4), "sliced W"},
                               {x.permute({0, 1, 3, 2}), "H and W swapped (no unit-stride run)"},
                               {x.permute({2, 1, 0, 3}), "N and H swapped"}};
    for (const Case& c : cases) {
      INFO(c.what);
      Tensor v = c.view;
      Tensor hv = v.cpu();
      const int64_t a = hv.size(0), cc = hv.size(1), b = hv.size(2), d = hv.size(3);
      std::vector<double> s(size_t(cc), 0.0), mx(size_t(cc), -INFINITY), mn(size_t(cc), INFINITY);
      Tensor h64 = hv.to(kFloat64).contiguous();
      auto hvv = h64.to_vector<double>();
      for (int64_t i0 = 0; i0 < a; ++i0)
        for (int64_t ch = 0; ch < cc; ++ch)
          for (int64_t i2 = 0; i2 < b; ++i2)
            for (int64_t i3 = 0; i3 < d; ++i3) {
              double e = hvv[size_t(((i0 * cc + ch) * b + i2) * d + i3)];
              s[size_t(ch)] += e;
              mx[size_t(ch)] = std::max(mx[size_t(ch)], e);
              mn[size_t(ch)] = std::min(mn[size_t(ch)], e);
            }
      const double count = double(a * b * d);
      auto gs = sum(v, {0, 2, 3}).cpu().to(kFloat64).to_vector<double>();
      auto gm = mean(v, {0, 2, 3}, true).cpu().to(kFloat64).to_vector<double>();
      auto gx = amax(v, {0, 2, 3}).cpu().to(kFloat64).to_vector<double>();
      auto gn = amin(v, {0, 2, 3}).cpu().to(kFloat64).to_vector<double>();
      REQUIRE(gs.size() == size_t(cc));
      REQUIRE(gm.size() == size_t(cc));
      for (int64_t ch = 0; ch < cc; ++ch) {
        CHECK(gs[size_t(ch)] == Approx(s[size_t(ch)]).epsilon(1e-6).margin(1e-4));
        CHECK(gm[size_t(ch)] == Approx(s[size_t(ch)] / count).epsilon(1e-6).margin(1e-6));
        CHECK(gx[size_t(ch)] == mx[size_t(ch)]);
        CHECK(gn[size_t(ch)] == mn[size_t(ch)]);
      }
    }
  }
}

TEST_CASE("a NaN inside a run propagates through amax over N, H, W") {
  Device dev = device_under_test();
  std::vector<float> v = values(4 * 3 * 5 * 5);
  v[size_t(((2 * 3 + 1) * 5 + 3) * 5 + 4)] = NAN;  // sample 2, channel 1
  Tensor x = from_vector(v, {4, 3, 5, 5}).to(dev);
  auto got = amax(x, {0, 2, 3}).cpu().to_vector<float>();
  REQUIRE(got.size() == 3);
  CHECK(!std::isnan(got[0]));
  CHECK(std::isnan(got[1]));
  CHECK(!std::isnan(got[2]));
}

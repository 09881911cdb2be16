// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The scans (cumsum, cumprod, cummax, cummin, logcumsumexp) and the ops
// built on them (nonzero, masked_select, masked_scatter, count_nonzero) on
// the device under test, against plain host loops in float64: every dim of
// a 3-D tensor, strided inputs, rows longer than a work-group or a block
// (the blocked scan) and many short ones (a row per work item), integer and
// bool inputs, NaN and ties, empty and 0-D tensors, float64 finite
// differences of every backward, and the errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TensorOptions on_device(DType dt) { return TensorOptions(device_under_test()).with(dt); }

std::vector<double> host(const Tensor& t) {
  return t.to(Device("cpu", 0)).to(kFloat64).contiguous().to_vector<double>();
}
std::vector<int64_t> host_long(const Tensor& t) {
  return t.to(Device("cpu", 0)).to(kInt64).contiguous().to_vector<int64_t>();
}

Tensor values_tensor(const std::vector<double>& v, const Shape& shape, DType dt) {
  return from_vector(v, shape).to(dt).to(device_under_test());
}

// A host scan of v (row-major, `shape`) along dim d: for each element the
// running value and the index of the running extreme, in float64.
enum class Fn { sum, prod, max, min, lse };
struct HostScan {
  std::vector<double> values;
  std::vector<int64_t> indices;
};
HostScan host_scan(const std::vector<double>& v, const Shape& shape, int d, Fn fn) {
  HostScan r{std::vector<double>(v.size()), std::vector<int64_t>(v.size())};
  int64_t n = shape.size() == 0 ? 1 : shape[d], inner = 1, outer = 1;
  for (int k = d + 1; k < int(shape.size()); ++k) inner *= shape[k];
  for (int k = 0; k < d; ++k) outer *= shape[k];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      double acc = 0;
      int64_t at = 0;
      for (int64_t j = 0; j < n; ++j) {
        const size_t e = size_t((o * n + j) * inner + in);
        const double x = v[e];
        if (j == 0) {
          acc = x;
          at = 0;
        } else if (fn == Fn::sum) {
          acc += x;
        } else if (fn == Fn::prod) {
          acc *= x;
        } else if (fn == Fn::lse) {
          const double hi = std::max(acc, x), lo = std::min(acc, x);
          acc = lo == -kInf ? hi : hi + std::log1p(std::exp(lo - hi));
        } else {
          const bool takes = fn == Fn::max ? x >= acc : x <= acc;
          if (std::isnan(x) || (!std::isnan(acc) && takes)) acc = x, at = j;
        }
        r.values[e] = acc;
        r.indices[e] = at;
      }
    }
  return r;
}

void check_close(const std::vector<double>& got, const std::vector<double>& want, double rtol, double atol) {
  REQUIRE(got.size() == want.size());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const bool same_nan = std::isnan(got[i]) && std::isnan(want[i]);
    const bool same_inf = std::isinf(want[i]) && got[i] == want[i];
    if (!same_nan && !same_inf && !(std::fabs(got[i] - want[i]) <= atol + rtol * std::fabs(want[i])))
      if (bad++ == 0) first = i;
  }
  INFO("first mismatch at " << first << ": got " << got[first] << ", want " << want[first]);
  CHECK(bad == 0);
}

// Each scan of t (float32 or float64) along d against the host loops.
void check_scans(const Tensor& t, int d, double rtol) {
  const std::vector<double> v = host(t);
  INFO("shape " << t.sizes() << " dim " << d << " dtype " << t.dtype());
  check_close(host(cumsum(t, d)), host_scan(v, t.sizes(), d, Fn::sum).values, rtol, rtol);
  check_close(host(cumprod(t, d)), host_scan(v, t.sizes(), d, Fn::prod).values, rtol, 1e-30);
  check_close(host(logcumsumexp(t, d)), host_scan(v, t.sizes(), d, Fn::lse).values, rtol, rtol);
  for (Fn fn : {Fn::max, Fn::min}) {
    auto [values, indices] = fn == Fn::max ? cummax(t, d) : cummin(t, d);
    HostScan want = host_scan(v, t.sizes(), d, fn);
    check_close(host(values), want.values, 0, 0);
    CHECK(host_long(indices) == want.indices);
    CHECK(values.dtype() == t.dtype());
    CHECK(indices.dtype() == kInt64);
  }
}

std::vector<double> sample(int64_t n, double lo, double hi, uint32_t salt) {
  return vnn::test::lcg_values(size_t(n), 11, salt, lo, hi);
}

}  // namespace

TEST_CASE("scans along every dim of a 3-D tensor, contiguous and strided") {
  for (DType dt : {kFloat32, kFloat64}) {
    const double rtol = dt == kFloat32 ? 1e-5 : 1e-12;
    Tensor t = values_tensor(sample(4 * 5 * 6, 0.5, 1.5, 1), {4, 5, 6}, dt);
    for (int d = 0; d < 3; ++d) check_scans(t, d, rtol);
    check_scans(t.transpose(0, 2), 1, rtol);  // strided rows and strided scan dim
    check_scans(t.select(1, 2), 0, rtol);     // a view with an offset
    CHECK(cumsum(t, -1).sizes() == t.sizes());
  }
}

TEST_CASE("long rows (the blocked scan) and many short rows (a row per item)") {
  const int64_t n = 100000;
  Tensor longs = values_tensor(sample(3 * n, -1.0, 1.0, 2), {3, n}, kFloat32);
  const std::vector<double> v = host(longs);
  check_close(host(cumsum(longs, 1)), host_scan(v, longs.sizes(), 1, Fn::sum).values, 1e-5, 1e-4);
  check_close(host(logcumsumexp(longs, 1)), host_scan(v, longs.sizes(), 1, Fn::lse).values, 1e-5, 1e-5);
  // Integers repeat, so cummax sees ties across block boundaries.
  Tensor ints = values_tensor(sample(n, 0, 50, 3), {n}, kFloat64).floor().to(kInt64);
  const std::vector<double> iv = host(ints);
  for (Fn fn : {Fn::max, Fn::min}) {
    auto [values, indices] = fn == Fn::max ? cummax(ints, 0) : cummin(ints, 0);
    HostScan want = host_scan(iv, ints.sizes(), 0, fn);
    check_close(host(values), want.values, 0, 0);
    CHECK(host_long(indices) == want.indices);
  }
  // One long float64 row with a NaN in its middle: every later value NaN.
  std::vector<double> with_nan = sample(n, -1.0, 1.0, 4);
  with_nan[size_t(n / 2 + 17)] = kNaN;
  Tensor nan_row = values_tensor(with_nan, {n}, kFloat64);
  check_close(host(cumsum(nan_row, 0)), host_scan(with_nan, {n}, 0, Fn::sum).values, 1e-9, 1e-9);
  auto [mx, mi] = cummax(nan_row, 0);
  CHECK(host_long(mi) == host_scan(with_nan, {n}, 0, Fn::max).indices);
  std::vector<double> near_one = sample(n, 0.9999, 1.0001, 9);
  check_close(host(cumprod(values_tensor(near_one, {n}, kFloat64), 0)), host_scan(near_one, {n}, 0, Fn::prod).values,
              1e-10, 0);
  Tensor shorts = values_tensor(sample(20000 * 7, 0.5, 1.5, 5), {20000, 7}, kFloat64);
  check_scans(shorts, 1, 1e-12);
  check_scans(shorts.narrow(0, 0, 9), 0, 1e-12);
}

TEST_CASE("integer and bool inputs: int64 sums, kept dtypes for cummax, the dtype argument") {
  std::vector<double> bits = {1, 0, 1, 1, 0, 0, 1};
  Tensor b = values_tensor(bits, {7}, kBool);
  Tensor s = cumsum(b, 0);
  CHECK(s.dtype() == kInt64);
  CHECK(host_long(s) == std::vector<int64_t>{1, 1, 2, 3, 3, 3, 4});
  Tensor i32 = values_tensor({3, -2, 7, 1, -4}, {5}, kInt32);
  CHECK(cumsum(i32, 0).dtype() == kInt64);
  CHECK(host_long(cumsum(i32, 0)) == std::vector<int64_t>{3, 1, 8, 9, 5});
  CHECK(host_long(cumprod(i32, 0)) == std::vector<int64_t>{3, -6, -42, -42, 168});
  CHECK(cumsum(values_tensor({1, 2, 3}, {3}, kUInt8), 0).dtype() == kInt64);
  auto [v, i] = cummax(i32, 0);
  CHECK(v.dtype() == kInt32);
  CHECK(host_long(v) == std::vector<int64_t>{3, 3, 7, 7, 7});
  CHECK(host_long(i) == std::vector<int64_t>{0, 0, 2, 2, 2});
  auto [bv, bi] = cummin(b, 0);
  CHECK(bv.dtype() == kBool);
  CHECK(host_long(bi) == std::vector<int64_t>{0, 1, 1, 1, 4, 5, 5});
  Tensor as_double = cumsum(i32, 0, kFloat64);
  CHECK(as_double.dtype() == kFloat64);
  CHECK(host(as_double) == std::vector<double>{3, 1, 8, 9, 5});
  CHECK(cumsum(i32, 0, kInt32).dtype() == kInt32);
  // int64 sums wrap as PyTorch's do.
  Tensor big = values_tensor({9.2e18, 9.2e18}, {2}, kInt64);
  CHECK(host_long(cumsum(big, 0))[1] == int64_t(uint64_t(host_long(big)[0]) * 2));
  // float16 computes in float32 and keeps its dtype.
  Tensor h = values_tensor({0.5, 0.25, 0.125}, {3}, kFloat16);
  CHECK(cumsum(h, 0).dtype() == kFloat16);
  CHECK(host(cumsum(h, 0)) == std::vector<double>{0.5, 0.75, 0.875});
}

TEST_CASE("cummax and cummin: ties take the latest index, NaN propagates") {
  Tensor x = values_tensor({1, 3, 3, 2, kNaN, 5, kNaN, 0}, {8}, kFloat32);
  auto [v, i] = cummax(x, 0);
  std::vector<double> got = host(v);
  CHECK(got[0] == 1);
  CHECK(got[3] == 3);
  for (size_t k = 4; k < got.size(); ++k) CHECK(std::isnan(got[k]));
  CHECK(host_long(i) == std::vector<int64_t>{0, 1, 2, 2, 4, 4, 6, 6});
  Tensor y = values_tensor({2, 1, 1, 3, kNaN, 0}, {6}, kFloat64);
  auto [mv, mi] = cummin(y, 0);
  CHECK(host(mv)[2] == 1);
  CHECK(host_long(mi) == std::vector<int64_t>{0, 1, 2, 2, 4, 4});
  CHECK(std::isnan(host(cumsum(x, 0))[7]));
  Tensor l = values_tensor({-kInf, -kInf, 1000, 1000}, {4}, kFloat64);
  std::vector<double> lse = host(logcumsumexp(l, 0));
  CHECK(lse[0] == -kInf);
  CHECK(lse[1] == -kInf);
  CHECK(lse[2] == 1000);
  CHECK(lse[3] == Approx(1000 + std::log(2.0)));
}

TEST_CASE("empty and 0-D tensors") {
  Tensor e = zeros({3, 0}, on_device(kFloat32));
  CHECK(cumsum(e, 1).sizes() == Shape{3, 0});
  CHECK(std::get<1>(cummax(e, 0)).sizes() == Shape{3, 0});
  Tensor s = full({}, 5.0, on_device(kFloat32));
  CHECK(cumsum(s, 0).dim() == 0);
  CHECK(cumsum(s, -1).item() == 5.0);
  auto [v, i] = cummin(s, 0);
  CHECK(v.item() == 5.0);
  CHECK(i.item() == 0.0);
  CHECK(nonzero(s).sizes() == Shape{1, 0});
  CHECK(nonzero(zeros({}, on_device(kFloat32))).sizes() == Shape{0, 0});
  CHECK(nonzero(e).sizes() == Shape{0, 2});
  CHECK(masked_select(e, zeros({3, 0}, on_device(kBool))).sizes() == Shape{0});
  CHECK(nonzero_numpy(s).size() == 1);
}

TEST_CASE("cumsum_ and cumprod_ in place") {
  Tensor t = values_tensor({1, 2, 3, 4, 5, 6}, {2, 3}, kFloat32);
  t.cumsum_(1);
  CHECK(host(t) == std::vector<double>{1, 3, 6, 4, 9, 15});
  Tensor p = values_tensor({1, 2, 3, 4}, {4}, kInt32);
  p.cumprod_(0);
  CHECK(p.dtype() == kInt32);
  CHECK(host_long(p) == std::vector<int64_t>{1, 2, 6, 24});
  CHECK(host(t.cumsum(0)) == std::vector<double>{1, 3, 6, 5, 12, 21});
}

TEST_CASE("nonzero, argwhere, nonzero_numpy, where(cond) and count_nonzero against host loops") {
  const Shape shape{7, 9, 11};
  std::vector<double> v = sample(shape.numel(), -1.0, 1.0, 6);
  for (double& x : v) x = x < 0 ? 0 : x;
  v[5] = kNaN;  // NaN counts as non-zero
  Tensor t = values_tensor(v, shape, kFloat32);
  std::vector<int64_t> want;
  for (int64_t i = 0; i < shape.numel(); ++i)
    if (v[size_t(i)] != 0) want.insert(want.end(), {i / 99, (i / 11) % 9, i % 11});
  Tensor nz = nonzero(t);
  CHECK(nz.dtype() == kInt64);
  CHECK(nz.sizes() == Shape{int64_t(want.size() / 3), 3});
  CHECK(host_long(nz) == want);
  CHECK(host_long(argwhere(t.ne(0.0))) == want);
  std::vector<Tensor> cols = where(t.ne(0.0));
  REQUIRE(cols.size() == 3);
  CHECK(host_long(cols[2]) == host_long(nz.select(1, 2)));
  CHECK(count_nonzero(t).item() == double(want.size() / 3));
  Tensor per_row = count_nonzero(t, {1, 2});
  for (int64_t r = 0; r < 7; ++r) {
    int64_t c = 0;
    for (int64_t k = 0; k < 99; ++k) c += v[size_t(r * 99 + k)] != 0;
    CHECK(host_long(per_row)[size_t(r)] == c);
  }
  // A long 1-D input through the blocked scan; int inputs.
  const int64_t n = 100000;
  std::vector<double> w = sample(n, -3.0, 3.0, 7);
  for (double& x : w) x = std::floor(x);
  Tensor ti = values_tensor(w, {n}, kInt32);
  std::vector<int64_t> pos;
  for (int64_t i = 0; i < n; ++i)
    if (w[size_t(i)] != 0) pos.push_back(i);
  CHECK(host_long(nonzero(ti)) == pos);
  CHECK(host_long(nonzero(t.transpose(0, 2))) == host_long(nonzero(t.transpose(0, 2).contiguous())));
}

TEST_CASE("masked_select (broadcast) and masked_scatter") {
  Tensor t = values_tensor(sample(20, -1.0, 1.0, 8), {4, 5}, kFloat64);
  Tensor mask = values_tensor({1, 0, 1, 1, 0}, {5}, kBool);
  std::vector<double> tv = host(t), want;
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 5; ++c)
      if (c != 1 && c != 4) want.push_back(tv[size_t(r * 5 + c)]);
  CHECK(host(masked_select(t, mask)) == want);
  CHECK(host(t.masked_select(mask)) == want);
  // t broadcasts against a bigger mask.
  Tensor row = values_tensor({1, 2, 3}, {3}, kInt64);
  Tensor grid = values_tensor({1, 0, 0, 0, 1, 1}, {2, 3}, kBool);
  CHECK(host_long(masked_select(row, grid)) == std::vector<int64_t>{1, 2, 3});
  Tensor src = values_tensor({10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130}, {13}, kFloat64);
  Tensor out = masked_scatter(t, mask, src);
  std::vector<double> ov = host(out);
  int k = 0;
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 5; ++c) {
      const double expect = (c != 1 && c != 4) ? 10.0 * ++k : tv[size_t(r * 5 + c)];
      CHECK(ov[size_t(r * 5 + c)] == expect);
    }
  Tensor in_place = t.clone();
  in_place.masked_scatter_(mask, src);
  CHECK(host(in_place) == ov);
}

TEST_CASE("nansum, nanmean, aminmax, var_mean, std_mean") {
  Tensor t = values_tensor({1, kNaN, 3, 4, kNaN, kNaN}, {2, 3}, kFloat64);
  CHECK(nansum(t).item() == 8.0);
  CHECK(host(nansum(t, 1)) == std::vector<double>{4, 4});
  std::vector<double> m = host(nanmean(t, 1));
  CHECK(m[0] == 2.0);
  CHECK(m[1] == 4.0);
  CHECK(std::isnan(nanmean(values_tensor({kNaN}, {1}, kFloat32)).item()));
  Tensor u = values_tensor({3, -1, 7, 2}, {2, 2}, kFloat32);
  auto [lo, hi] = aminmax(u);
  CHECK(lo.item() == -1.0);
  CHECK(hi.item() == 7.0);
  auto [rlo, rhi] = u.aminmax(1, true);
  CHECK(rlo.sizes() == Shape{2, 1});
  CHECK(host(rhi) == std::vector<double>{3, 7});
  auto [var_, mean_] = var_mean(u, 1);
  CHECK(host(var_) == std::vector<double>{8, 12.5});
  CHECK(host(mean_) == std::vector<double>{1, 4.5});
  auto [std_, mean2] = std_mean(u, {}, 0);
  CHECK(std_.item() == Approx(std::sqrt(host(var(u, {}, 0))[0])));
  CHECK(mean2.item() == 2.75);
}

TEST_CASE("float64 finite differences of every backward") {
  auto input = [](const Shape& shape, double lo, double hi, uint64_t seed) {
    Generator gen(seed);
    return add(mul(rand(shape, on_device(kFloat64), &gen), hi - lo), lo).requires_grad_();
  };
  auto check = [](const char* name, const std::function<Tensor(const std::vector<Tensor>&)>& f,
                  const std::vector<Tensor>& inputs) {
    INFO("op " << name << " on " << device_under_test());
    auto r = autograd::gradcheck(f, inputs);
    INFO(r.message);
    CHECK(r.ok);
  };
  Tensor x = input({3, 4, 5}, -1.0, 1.0, 3);
  for (int d = 0; d < 3; ++d) {
    check("cumsum", [d](auto& v) { return cumsum(v[0], d); }, {x});
    check("cumprod", [d](auto& v) { return cumprod(v[0], d); }, {x});
    check("logcumsumexp", [d](auto& v) { return logcumsumexp(v[0], d); }, {x});
    check("cummax", [d](auto& v) { return std::get<0>(cummax(v[0], d)); }, {x});
    check("cummin", [d](auto& v) { return std::get<0>(cummin(v[0], d)); }, {x});
  }
  // Zeros in the input: before, at and after the first zero of each row.
  Tensor z = values_tensor({0.5, 0, 2, 0, 1.5, 3, -1, 0.7, 0, 0.2, -2, 0, 1.1, 0.9, 1.3}, {3, 5}, kFloat64);
  z.requires_grad_();
  check("cumprod with zeros", [](auto& v) { return cumprod(v[0], 1); }, {z});
  check("cumprod with zeros, dim 0", [](auto& v) { return cumprod(v[0], 0); }, {z});
  check("cumsum dtype", [](auto& v) { return cumsum(v[0], 1, kFloat64); }, {x});
  check("cumsum_", [](auto& v) {
    Tensor y = mul(v[0], 1.0);
    return y.cumsum_(2);
  }, {x});
  check("cumprod_", [](auto& v) {
    Tensor y = mul(v[0], 1.0);
    return y.cumprod_(0);
  }, {x});
  Tensor s = input({}, 0.5, 1.5, 4);
  check("0-D scans", [](auto& v) {
    return cumsum(v[0], 0) + cumprod(v[0], -1) + logcumsumexp(v[0], 0) + std::get<0>(cummax(v[0], 0));
  }, {s});
  Tensor mask = values_tensor({1, 0, 1, 1, 0}, {5}, kBool);
  Tensor t = input({4, 5}, -1.0, 1.0, 5), src = input({15}, -1.0, 1.0, 7);
  check("masked_select", [mask](auto& v) { return masked_select(v[0], mask); }, {t});
  check("masked_scatter", [mask](auto& v) { return masked_scatter(v[0], mask, v[1]); }, {t, src});
  check("nansum", [](auto& v) { return nansum(v[0], 1); }, {t});
  check("nanmean", [](auto& v) { return nanmean(v[0], 0); }, {t});
}

TEST_CASE("bad input: typed errors naming the op") {
  Tensor t = zeros({2, 3}, on_device(kFloat32));
  CHECK_THROWS_AS(cumsum(t, 2), IndexError);
  CHECK_THROWS_AS(cummax(t, -3), IndexError);
  CHECK_THROWS_AS(logcumsumexp(t.to(kInt64), 0), DTypeError);
  CHECK_THROWS_AS(cumsum(Tensor(), 0), ValueError);
  CHECK_THROWS_AS(nonzero_numpy(Tensor()), ValueError);
  CHECK_THROWS_AS(masked_select(t, Tensor()), ValueError);
  CHECK_THROWS_AS(t.cumsum_(0, kFloat64), DTypeError);
  CHECK_THROWS_AS(masked_select(t, t), DTypeError);
  CHECK_THROWS_AS(masked_select(t, zeros({4}, on_device(kBool))), ShapeError);
  CHECK_THROWS_AS(masked_scatter(t, ones({2, 3}, on_device(kBool)), zeros({5}, on_device(kFloat32))), ShapeError);
  CHECK_THROWS_AS(masked_scatter(t, ones({2, 3}, on_device(kBool)), zeros({6}, on_device(kFloat64))), DTypeError);
  Tensor row = zeros({3}, on_device(kFloat32));
  CHECK_THROWS_AS(row.masked_scatter_(ones({2, 3}, on_device(kBool)), zeros({6}, on_device(kFloat32))), ShapeError);
  CHECK_THROWS_AS(masked_scatter(row, ones({2, 2}, on_device(kBool)), zeros({6}, on_device(kFloat32))), ShapeError);
  // Out of place, self broadcasts to the mask's shape (as PyTorch).
  CHECK(masked_scatter(row, ones({2, 3}, on_device(kBool)), zeros({6}, on_device(kFloat32))).sizes() == Shape{2, 3});
  CHECK_THROWS_AS(aminmax(zeros({0}, on_device(kFloat32))), IndexError);
  CHECK_THROWS_AS(nanmean(t.to(kInt32)), DTypeError);
  try {
    cumprod(t, 5);
    FAIL("no error");
  } catch (const IndexError& e) {
    CHECK(std::string(e.what()).find("cumprod") != std::string::npos);
  }
}

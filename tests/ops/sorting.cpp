// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Sorting and searching (vnn/sorting.h) on the device under test, against
// std::stable_sort and plain host loops: rows of 1, 7, 1000 and 300000,
// many rows, every dim of a 3-D tensor, descending, ties (the indices show
// stability), NaN placement, integer and bool inputs, empty tensors; the
// searches, unique, quantile's interpolation modes, float64 finite
// differences of the differentiable values and the errors of bad input.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

TensorOptions on_device(DType dt) { return TensorOptions(device_under_test()).with(dt); }

// n values in [lo, hi) with many repeats (ties) when `levels` > 0.
std::vector<double> values(int64_t n, uint32_t seed, int levels = 0) {
  std::vector<double> v = vnn::test::lcg_values(size_t(n), seed, 3, -100.0, 100.0);
  if (levels > 0)
    for (double& x : v) x = std::floor(x / 200.0 * levels);
  return v;
}

// PyTorch's order on doubles: NaN largest, -0.0 equal to 0.0.
bool before(double a, double b, bool descending) {
  const bool an = std::isnan(a), bn = std::isnan(b);
  if (descending) return (an && !bn) || (!an && !bn && a > b);
  return (!an && bn) || (!an && !bn && a < b);
}

// The stable sort of each row of a row-major [rows, n] array: positions.
std::vector<int64_t> reference_order(const std::vector<double>& v, int64_t rows, int64_t n, bool descending) {
  std::vector<int64_t> out(size_t(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    auto first = out.begin() + r * n;
    std::iota(first, first + n, int64_t(0));
    const double* row = v.data() + r * n;
    std::stable_sort(first, first + n, [&](int64_t a, int64_t b) { return before(row[a], row[b], descending); });
  }
  return out;
}

// Same bits, NaN equal to NaN.
bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

void check_sorted_rows(const std::vector<double>& v, int64_t rows, int64_t n, bool descending, DType dt) {
  INFO("rows " << rows << " x " << n << ", descending " << descending << ", " << name(dt));
  Tensor t = from_vector(v, {rows, n}).to(device_under_test(), dt);
  auto [sv, si] = sort(t, -1, descending);
  REQUIRE(sv.sizes() == t.sizes());
  REQUIRE(si.dtype() == kInt64);
  std::vector<double> got = sv.to(kFloat64).to_vector<double>(), stored = t.to(kFloat64).to_vector<double>();
  std::vector<int64_t> idx = si.to_vector<int64_t>();
  std::vector<int64_t> want = reference_order(stored, rows, n, descending);
  int64_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const size_t r = i / size_t(n);
    bad += idx[i] != want[i] || !same(got[i], stored[r * size_t(n) + size_t(want[i])]);
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("sort matches std::stable_sort on rows of 1, 7, 1000 and 300000") {
  for (int64_t n : {int64_t(1), int64_t(7), int64_t(1000), int64_t(300000)}) {
    for (bool descending : {false, true}) {
      check_sorted_rows(values(n, uint32_t(n)), 1, n, descending, kFloat32);
      check_sorted_rows(values(n, uint32_t(n) + 1, 50), 1, n, descending, kFloat32);  // ties
    }
  }
  // Many short rows and a few long ones, every native dtype.
  check_sorted_rows(values(3000 * 9, 5, 20), 3000, 9, false, kFloat64);
  check_sorted_rows(values(4 * 5000, 6, 300), 4, 5000, true, kInt64);
  check_sorted_rows(values(64 * 100, 7, 40), 64, 100, false, kInt32);
  check_sorted_rows(values(8 * 333, 8, 7), 8, 333, true, kFloat16);
  // Long rows whose keys differ in one byte only (a radix sort skips the
  // other passes), and long rows of 64-bit keys.
  std::vector<double> mod7(2 * 100000);
  for (size_t i = 0; i < mod7.size(); ++i) mod7[i] = double((i * 2654435761u) % 7);
  check_sorted_rows(mod7, 2, 100000, false, kInt64);
  check_sorted_rows(mod7, 2, 100000, true, kUInt8);
  check_sorted_rows(values(2 * 70000, 9), 2, 70000, false, kFloat64);
}

TEST_CASE("sort along every dim of a 3-D tensor, with argsort and msort") {
  std::vector<double> v = values(4 * 5 * 6, 11, 9);
  Tensor t = from_vector(v, {4, 5, 6}).to(device_under_test(), kFloat32);
  for (int d = 0; d < 3; ++d) {
    for (bool descending : {false, true}) {
      INFO("dim " << d << " descending " << descending);
      auto [sv, si] = t.sort(d, descending);
      // Moving dim d last gives rows the reference sorts.
      Tensor moved = t.transpose(d, 2).contiguous().cpu();
      const int64_t n = t.size(d), rows = t.numel() / n;
      std::vector<int64_t> want = reference_order(moved.to(kFloat64).to_vector<double>(), rows, n, descending);
      CHECK(si.transpose(d, 2).contiguous().to_vector<int64_t>() == want);
      CHECK(vnn::test::max_abs_diff(sv, gather(t, d, si)) == 0.0);
      CHECK(argsort(t, d, descending).to_vector<int64_t>() == si.to_vector<int64_t>());
      CHECK(vnn::test::max_abs_diff(std::get<0>(sort(t, true, d, descending)), sv) == 0.0);
    }
  }
  CHECK(vnn::test::max_abs_diff(msort(t), std::get<0>(sort(t, 0))) == 0.0);
}

TEST_CASE("sort places NaN last ascending and first descending, keeps -0.0, sorts int and bool") {
  std::vector<double> v = {3.0, kNaN, -0.0, 0.0, -INFINITY, kNaN, INFINITY, -2.5, 0.0, 1.0};
  for (DType dt : {kFloat32, kFloat64}) {
    Tensor t = from_vector(v, {10}).to(device_under_test(), dt);
    auto [a, ai] = sort(t);
    CHECK(ai.to_vector<int64_t>() == std::vector<int64_t>{4, 7, 2, 3, 8, 9, 0, 6, 1, 5});
    std::vector<double> av = a.to(kFloat64).to_vector<double>();
    CHECK(std::signbit(av[2]));  // -0.0 stays where it was, among the zeros
    CHECK(std::isnan(av[8]));
    auto [d, di] = sort(t, 0, true);
    CHECK(di.to_vector<int64_t>() == std::vector<int64_t>{1, 5, 6, 0, 9, 2, 3, 8, 7, 4});
  }
  Tensor b = from_vector(std::vector<double>{1, 0, 1, 1, 0}, {5}).to(device_under_test(), kBool);
  CHECK(argsort(b).to_vector<int64_t>() == std::vector<int64_t>{1, 4, 0, 2, 3});
  CHECK(std::get<0>(sort(b, 0, true)).to(kInt64).to_vector<int64_t>() == std::vector<int64_t>{1, 1, 1, 0, 0});
  Tensor u = from_vector(std::vector<double>{200, 3, 255, 0, 3}, {5}).to(device_under_test(), kUInt8);
  CHECK(std::get<0>(sort(u)).to(kInt64).to_vector<int64_t>() == std::vector<int64_t>{0, 3, 3, 200, 255});
  Tensor big = from_vector(std::vector<int64_t>{INT64_MAX, -1, INT64_MIN, 0}, {4}).to(device_under_test());
  CHECK(std::get<0>(sort(big)).to_vector<int64_t>() == std::vector<int64_t>{INT64_MIN, -1, 0, INT64_MAX});
}

TEST_CASE("sort, topk and kthvalue of empty and 0-dim tensors") {
  Tensor e = zeros({3, 0}, on_device(kFloat32));
  auto [ev, ei] = sort(e, 1);
  CHECK(ev.sizes() == Shape{3, 0});
  CHECK(ei.sizes() == Shape{3, 0});
  CHECK(std::get<0>(sort(zeros({0}, on_device(kInt64)))).numel() == 0);
  CHECK(std::get<0>(topk(e, 0)).sizes() == Shape{3, 0});
  Tensor s = full({}, 2.5, on_device(kFloat32));
  auto [sv, si] = sort(s);
  CHECK(sv.dim() == 0);
  CHECK(sv.item() == 2.5);
  CHECK(si.item<int64_t>() == 0);
  CHECK(std::get<0>(kthvalue(s, 1)).item() == 2.5);
}

TEST_CASE("topk, kthvalue, median, nanmedian and mode against host loops") {
  std::vector<double> v = values(6 * 301, 21, 60);
  v[5] = kNaN;  // row 0 holds a NaN
  Tensor t = from_vector(v, {6, 301}).to(device_under_test(), kFloat64);
  std::vector<int64_t> asc = reference_order(v, 6, 301, false), desc = reference_order(v, 6, 301, true);
  auto [tv, ti] = topk(t, 5, 1, true);
  auto [bv, bi] = topk(t, 4, 1, false);
  auto [kv, ki] = kthvalue(t, 100, 1, true);
  auto [mv, mi] = median(t, 1);
  auto [nv, ni] = nanmedian(t, 1);
  std::vector<int64_t> tis = ti.to_vector<int64_t>(), bis = bi.to_vector<int64_t>(), kis = ki.to_vector<int64_t>();
  std::vector<int64_t> mis = mi.to_vector<int64_t>(), nis = ni.to_vector<int64_t>();
  CHECK(kv.sizes() == Shape{6, 1});
  CHECK(mv.sizes() == Shape{6});
  for (int64_t r = 0; r < 6; ++r) {
    INFO("row " << r);
    for (int64_t j = 0; j < 5; ++j) CHECK(tis[size_t(r * 5 + j)] == desc[size_t(r * 301 + j)]);
    for (int64_t j = 0; j < 4; ++j) CHECK(bis[size_t(r * 4 + j)] == asc[size_t(r * 301 + j)]);
    CHECK(kis[size_t(r)] == asc[size_t(r * 301 + 99)]);
    // The row with a NaN: median is its NaN, nanmedian the lower median of the other 300.
    CHECK(mis[size_t(r)] == (r == 0 ? 5 : asc[size_t(r * 301 + 150)]));
    CHECK(nis[size_t(r)] == asc[size_t(r * 301 + (r == 0 ? 149 : 150))]);
  }
  CHECK(std::isnan(median(t).item()));
  std::vector<double> clean(v.begin() + 301, v.end());
  std::vector<double> sorted_clean = clean;
  std::sort(sorted_clean.begin(), sorted_clean.end());
  Tensor c = from_vector(clean, {5, 301}).to(device_under_test(), kFloat32);
  CHECK(median(c).item() == float(sorted_clean[(clean.size() - 1) / 2]));
  CHECK(nanmedian(t).item() == std::get<0>(nanmedian(t.reshape({-1}), 0)).item());
  // mode: the most frequent value (ties: the smallest), the index of its last occurrence.
  Tensor m = from_vector(std::vector<int64_t>{4, 1, 4, 2, 1, 9, 1, 4, 3, 3, 5, 5}, {2, 6}).to(device_under_test());
  auto [modev, modei] = mode(m, 1);
  CHECK(modev.to_vector<int64_t>() == std::vector<int64_t>{1, 3});
  CHECK(modei.to_vector<int64_t>() == std::vector<int64_t>{4, 3});
}

TEST_CASE("searchsorted left and right with 1-D and 2-D sequences, bucketize, sorter") {
  Tensor seq1 = from_vector(std::vector<double>{1, 3, 3, 5, 7}, {5}).to(device_under_test(), kFloat32);
  Tensor vals = from_vector(std::vector<double>{0, 3, 4, 7, 8, kNaN}, {2, 3}).to(device_under_test(), kFloat32);
  CHECK(searchsorted(seq1, vals).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 3, 4, 5, 5});
  CHECK(searchsorted(seq1, vals, false, true).to_vector<int64_t>() == std::vector<int64_t>{0, 3, 3, 5, 5, 5});
  Tensor i32 = searchsorted(seq1, vals, true, false, std::string("right"));
  CHECK(i32.dtype() == kInt32);
  CHECK(i32.to_vector<int32_t>() == std::vector<int32_t>{0, 3, 3, 5, 5, 5});
  CHECK(searchsorted(seq1, 3.0).item<int64_t>() == 1);
  CHECK(bucketize(vals, seq1, false, true).to_vector<int64_t>() == std::vector<int64_t>{0, 3, 3, 5, 5, 5});
  // Each row of values searched in its own row of a 2-D sequence.
  Tensor seq2 = from_vector(std::vector<int64_t>{1, 2, 3, 4, 10, 20, 30, 40}, {2, 4}).to(device_under_test());
  Tensor v2 = from_vector(std::vector<int64_t>{2, 5, 20, 45}, {2, 2}).to(device_under_test());
  CHECK(searchsorted(seq2, v2).to_vector<int64_t>() == std::vector<int64_t>{1, 4, 1, 4});
  CHECK(searchsorted(seq2, v2, false, true).to_vector<int64_t>() == std::vector<int64_t>{2, 4, 2, 4});
  // An unsorted sequence with its sorter gives the sorted sequence's answer.
  Tensor unsorted = from_vector(std::vector<double>{5, 1, 7, 3}, {4}).to(device_under_test(), kFloat64);
  Tensor q = from_vector(std::vector<double>{4, 0, 9}, {3}).to(device_under_test(), kFloat64);
  CHECK(searchsorted(unsorted, q, false, false, std::nullopt, argsort(unsorted)).to_vector<int64_t>() ==
        std::vector<int64_t>{2, 0, 4});
  // A long shared sequence against host lower / upper bounds.
  std::vector<double> big = values(20000, 31, 500);
  std::sort(big.begin(), big.end());
  std::vector<double> probe = values(3000, 32, 600);
  Tensor pos = searchsorted(from_vector(big, {20000}).to(device_under_test()), from_vector(probe, {3000}).to(device_under_test()));
  std::vector<int64_t> got = pos.to_vector<int64_t>();
  int64_t bad = 0;
  for (size_t i = 0; i < probe.size(); ++i)
    bad += got[i] != std::lower_bound(big.begin(), big.end(), probe[i]) - big.begin();
  CHECK(bad == 0);
}

TEST_CASE("unique and unique_consecutive with every return flag") {
  std::vector<double> v = {3, 1, 2, 3, 3, 1, 7, 2, 2};
  Tensor t = from_vector(v, {3, 3}).to(device_under_test(), kFloat32);
  auto [u, inv, cnt] = unique(t, true, true, true);
  CHECK(u.to(kFloat64).to_vector<double>() == std::vector<double>{1, 2, 3, 7});
  CHECK(inv.sizes() == t.sizes());
  CHECK(inv.to_vector<int64_t>() == std::vector<int64_t>{2, 0, 1, 2, 2, 0, 3, 1, 1});
  CHECK(cnt.to_vector<int64_t>() == std::vector<int64_t>{2, 3, 3, 1});
  auto [u2, inv2, cnt2] = unique(t);
  CHECK(u2.numel() == 4);
  CHECK(!inv2.defined());
  CHECK(!cnt2.defined());
  auto [c, cinv, ccnt] = unique_consecutive(t, true, true);
  CHECK(c.to(kFloat64).to_vector<double>() == std::vector<double>{3, 1, 2, 3, 1, 7, 2});
  CHECK(cinv.to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, 3, 3, 4, 5, 6, 6});
  CHECK(ccnt.to_vector<int64_t>() == std::vector<int64_t>{1, 1, 1, 2, 1, 1, 2});
  // Bool, and a large integer input against std::unique.
  Tensor b = from_vector(std::vector<double>{1, 1, 0}, {3}).to(device_under_test(), kBool);
  CHECK(std::get<0>(unique(b)).to(kInt64).to_vector<int64_t>() == std::vector<int64_t>{0, 1});
  std::vector<double> big = values(50000, 41, 3000);
  auto [bu, binv, bcnt] = unique(from_vector(big, {50000}).to(device_under_test(), kInt64), true, true, true);
  std::vector<double> ref = big;
  std::sort(ref.begin(), ref.end());
  ref.erase(std::unique(ref.begin(), ref.end()), ref.end());
  CHECK(bu.to(kFloat64).to_vector<double>() == ref);
  CHECK(bcnt.sum().item<int64_t>() == 50000);
  std::vector<int64_t> bi = binv.to_vector<int64_t>();
  int64_t bad = 0;
  for (size_t i = 0; i < big.size(); ++i) bad += ref[size_t(bi[i])] != big[i];
  CHECK(bad == 0);
  auto [eu, einv, ecnt] = unique(zeros({0}, on_device(kFloat32)), true, true, true);
  CHECK(eu.numel() == 0);
  CHECK(ecnt.numel() == 0);
}

TEST_CASE("quantile and nanquantile with every interpolation mode") {
  Tensor t = from_vector(std::vector<double>{1, 4, 2, 8, 5, 7}, {2, 3}).to(device_under_test(), kFloat64);
  // Row 0 sorted: 1 2 4, row 1: 5 7 8; q = 0.4: rank 0.8.
  struct Case { const char* mode; double r0, r1; };
  for (Case c : {Case{"linear", 1.8, 6.6}, Case{"lower", 1, 5}, Case{"higher", 2, 7}, Case{"midpoint", 1.5, 6},
                 Case{"nearest", 2, 7}}) {
    INFO(c.mode);
    std::vector<double> got = quantile(t, 0.4, 1, false, c.mode).to_vector<double>();
    CHECK(got[0] == Approx(c.r0));
    CHECK(got[1] == Approx(c.r1));
  }
  // Tensor q, keepdim, every element, NaN rows.
  Tensor q = from_vector(std::vector<double>{0.0, 0.5, 1.0}, {3}).to(device_under_test(), kFloat64);
  Tensor r = quantile(t, q, 1, true);
  CHECK(r.sizes() == Shape{3, 2, 1});
  CHECK(r.to_vector<double>() == std::vector<double>{1, 5, 2, 7, 4, 8});
  CHECK(quantile(t, 0.5).item() == Approx(4.5));
  CHECK(quantile(t, 0.5, std::nullopt, true).sizes() == Shape{1, 1});
  Tensor n = from_vector(std::vector<double>{1, kNaN, 3, kNaN, kNaN, kNaN}, {2, 3}).to(device_under_test(), kFloat32);
  std::vector<double> qn = quantile(n, 0.5, 1).to(kFloat64).to_vector<double>();
  CHECK(std::isnan(qn[0]));
  std::vector<double> nq = nanquantile(n, 0.5, 1).to(kFloat64).to_vector<double>();
  CHECK(nq[0] == 2.0);
  CHECK(std::isnan(nq[1]));
}

TEST_CASE("bincount and histc against host loops") {
  Tensor x = from_vector(std::vector<int64_t>{0, 3, 1, 3, 3, 6}, {6}).to(device_under_test());
  CHECK(bincount(x).to_vector<int64_t>() == std::vector<int64_t>{1, 1, 0, 3, 0, 0, 1});
  CHECK(bincount(x, Tensor(), 9).numel() == 9);
  Tensor w = from_vector(std::vector<double>{0.5, 1, 2, 3, 4, 5}, {6}).to(device_under_test(), kFloat32);
  Tensor bw = bincount(x, w);
  CHECK(bw.dtype() == kFloat32);
  CHECK(bw.to(kFloat64).to_vector<double>() == std::vector<double>{0.5, 2, 0, 8, 0, 0, 5});
  CHECK(bincount(zeros({0}, on_device(kInt64)), Tensor(), 3).to_vector<int64_t>() == std::vector<int64_t>{0, 0, 0});
  Tensor h = from_vector(std::vector<double>{1, 2, 1, 2.5, 4, 0.99, kNaN, 3}, {8}).to(device_under_test(), kFloat32);
  CHECK(histc(h, 4, 1, 4).to(kFloat64).to_vector<double>() == std::vector<double>{2, 1, 2, 1});
  CHECK(histc(from_vector(std::vector<double>{1, 2, 2, 3}, {4}).to(device_under_test(), kFloat64), 2)
            .to_vector<double>() == std::vector<double>{1, 3});
}

TEST_CASE("gradients of sort, topk, kthvalue, median, mode and quantile (float64 finite differences)") {
  Generator gen(5);
  Tensor x = rand({3, 7}, on_device(kFloat64), &gen).requires_grad_();
  auto check = [&](const char* name, std::function<Tensor(const std::vector<Tensor>&)> f) {
    INFO(name);
    auto r = autograd::gradcheck(f, {x});
    INFO(r.message);
    CHECK(r.ok);
  };
  check("sort", [](auto& v) { return std::get<0>(sort(v[0], 0, true)); });
  check("topk", [](auto& v) { return std::get<0>(topk(v[0], 3, 1)); });
  check("kthvalue", [](auto& v) { return std::get<0>(kthvalue(v[0], 2, 0)); });
  check("median", [](auto& v) { return std::get<0>(median(v[0], 1, true)); });
  check("quantile", [](auto& v) { return quantile(v[0], 0.3, 1); });
  check("nanquantile midpoint", [](auto& v) { return nanquantile(v[0], 0.7, 0, false, "midpoint"); });
  check("mode", [](auto& v) { return std::get<0>(mode(v[0], 1)); });
  check("nanmedian", [](auto& v) { return std::get<0>(nanmedian(v[0], 0)); });
}

TEST_CASE("randperm sorts Philox keys on the device: a permutation, the same on every device") {
  Generator a(123), b(123);
  Tensor p = randperm(100000, on_device(kInt64), &a);
  CHECK(p.device() == device_under_test());
  std::vector<int64_t> got = p.to_vector<int64_t>();
  CHECK(randperm(100000, TensorOptions(vnn::test::reference_device()).with(kInt64), &b).to_vector<int64_t>() == got);
  std::vector<int64_t> sorted = got;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(sorted.size());
  std::iota(iota.begin(), iota.end(), int64_t(0));
  CHECK(sorted == iota);
  CHECK(got != iota);
  CHECK(randperm(7, on_device(kInt32)).dtype() == kInt32);
}

TEST_CASE("bad input throws typed errors naming the op") {
  Tensor t = from_vector(std::vector<double>{1, 2, 3}, {3}).to(device_under_test(), kFloat32);
  CHECK_THROWS_WITH(kthvalue(t, 4), Catch::Contains("kthvalue") && Catch::Contains("out of range"));
  CHECK_THROWS_AS(kthvalue(t, 0), IndexError);
  CHECK_THROWS_AS(topk(t, 5), IndexError);
  CHECK_THROWS_AS(sort(t, 2), IndexError);
  CHECK_THROWS_WITH(quantile(t, 1.5), Catch::Contains("quantile") && Catch::Contains("[0, 1]"));
  CHECK_THROWS_AS(quantile(t, -0.1), ValueError);
  CHECK_THROWS_AS(quantile(t, from_vector(std::vector<double>{0.5, 2}, {2}).to(device_under_test(), kFloat32)),
                  ValueError);
  CHECK_THROWS_AS(quantile(t, 0.5, 0, false, "cubic"), ValueError);
  CHECK_THROWS_AS(quantile(t.to(kInt64), 0.5), DTypeError);
  CHECK_THROWS_AS(quantile(t, from_vector(std::vector<double>{0.5}, {1}).to(device_under_test(), kFloat64)),
                  DTypeError);
  CHECK_THROWS_WITH(bucketize(t, zeros({2, 2}, on_device(kFloat32))),
                    Catch::Contains("bucketize") && Catch::Contains("1-D"));
  CHECK_THROWS_AS(searchsorted(zeros({2, 3}, on_device(kFloat32)), zeros({3, 3}, on_device(kFloat32))), ShapeError);
  CHECK_THROWS_AS(searchsorted(t, t, false, true, std::string("left")), ValueError);
  CHECK_THROWS_AS(searchsorted(t, t, false, false, std::string("middle")), ValueError);
  CHECK_THROWS_AS(bincount(t), DTypeError);
  CHECK_THROWS_AS(bincount(from_vector(std::vector<int64_t>{1, -2}, {2}).to(device_under_test())), ValueError);
  CHECK_THROWS_AS(bincount(zeros({2, 2}, on_device(kInt64))), ShapeError);
  CHECK_THROWS_AS(histc(zeros({3}, on_device(kInt64))), DTypeError);
  CHECK_THROWS_AS(histc(t, 0), ValueError);
  CHECK_THROWS_AS(median(zeros({0}, on_device(kFloat32))), IndexError);
  CHECK_THROWS_AS(sort(Tensor()), ValueError);
}

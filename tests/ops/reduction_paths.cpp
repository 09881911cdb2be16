// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The work shapes a backend may pick for one reduction or softmax (OpenCL:
// one work item per short row, one work-group per row, long rows split
// over work-groups and merged in order; ops.cpp plan_reduce), each checked
// against naive host loops on sizes that are not multiples of any
// work-group size. Also index_select over a batch of images (merged inner
// dims) and a transposed source (dims that must not merge), and x @ W^T
// with a k-contiguous W^T (OpenCL's wide-n GEMM packs it first; ctest runs
// this file with VNN_OPENCL_GEMM=widen too).
#include <catch2/catch.hpp>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;

namespace {

// Reproducible values in [-1, 1) with many distinct magnitudes.
std::vector<float> values(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 1u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = float(s >> 8) / float(1u << 24) * 2.0f - 1.0f;
  }
  return v;
}

enum class Fn { sum, mean, amax, amin, argmax, argmin };

// fn over each row of a [rows, cols] row-major array, in float64.
std::vector<double> host_rows(const std::vector<float>& v, int64_t rows, int64_t cols, Fn fn) {
  std::vector<double> out(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = v.data() + r * cols;
    double acc = fn == Fn::amax ? -INFINITY : fn == Fn::amin ? INFINITY : 0.0;
    int64_t best = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const double x = p[c];
      if (fn == Fn::sum || fn == Fn::mean) acc += x;
      else if (fn == Fn::amax) acc = std::isnan(acc) || std::isnan(x) ? NAN : std::max(acc, x);
      else if (fn == Fn::amin) acc = std::isnan(acc) || std::isnan(x) ? NAN : std::min(acc, x);
      else if (fn == Fn::argmax && !std::isnan(p[best]) && (std::isnan(x) || x > p[best])) best = c;
      else if (fn == Fn::argmin && !std::isnan(p[best]) && (std::isnan(x) || x < p[best])) best = c;
    }
    if (fn == Fn::mean) acc /= double(cols);
    out[size_t(r)] = fn == Fn::argmax || fn == Fn::argmin ? double(best) : acc;
  }
  return out;
}

Tensor reduce(const Tensor& t, Fn fn) {
  switch (fn) {
    case Fn::sum: return sum(t, 1);
    case Fn::mean: return mean(t, 1);
    case Fn::amax: return amax(t, {1});
    case Fn::amin: return amin(t, {1});
    case Fn::argmax: return argmax(t, 1);
    default: return argmin(t, 1);
  }
}

const char* name(Fn fn) {
  const char* names[] = {"sum", "mean", "amax", "amin", "argmax", "argmin"};
  return names[int(fn)];
}

// Every fn over the rows of `host` ([rows, cols]) on the device under test
// against the host loops; sums within float32 rounding of their length.
void check_rows(const std::vector<float>& host, int64_t rows, int64_t cols) {
  const Device dev = device_under_test();
  Tensor t = from_vector(host, {rows, cols}).to(dev);
  for (Fn fn : {Fn::sum, Fn::mean, Fn::amax, Fn::amin, Fn::argmax, Fn::argmin}) {
    INFO(name(fn) << " over [" << rows << ", " << cols << "] on " << dev);
    const std::vector<double> want = host_rows(host, rows, cols, fn);
    Tensor got_t = reduce(t, fn).to(Device("cpu"));
    REQUIRE(got_t.numel() == rows);
    const bool arg = fn == Fn::argmax || fn == Fn::argmin;
    std::vector<double> got(static_cast<size_t>(rows));
    if (arg) {
      std::vector<int64_t> g = got_t.to_vector<int64_t>();
      for (size_t i = 0; i < g.size(); ++i) got[i] = double(g[i]);
    } else {
      std::vector<float> g = got_t.to_vector<float>();
      for (size_t i = 0; i < g.size(); ++i) got[i] = double(g[i]);
    }
    const double tol = fn == Fn::sum ? 1e-6 * double(cols) + 1e-5 : fn == Fn::mean ? 1e-5 : 0.0;
    for (int64_t r = 0; r < rows; ++r) {
      INFO("row " << r);
      if (std::isnan(want[size_t(r)])) REQUIRE(std::isnan(got[size_t(r)]));
      else REQUIRE(std::abs(got[size_t(r)] - want[size_t(r)]) <= tol);
    }
  }
}

}  // namespace

TEST_CASE("reductions: short rows, one row per work item", "[reduction][paths]") {
  // 7 and 64 columns (a classifier's logits, a bias gradient's batch), 257
  // rows: more rows than one work-group of any power-of-two size.
  for (int64_t cols : {1, 7, 64, 127}) check_rows(values(257 * cols, uint32_t(cols)), 257, cols);
}

TEST_CASE("reductions: column sums of a batch (bias gradient layout)", "[reduction][paths]") {
  const Device dev = device_under_test();
  const int64_t n = 64, c = 301;
  const std::vector<float> host = values(n * c, 3);
  Tensor g = sum(from_vector(host, {n, c}).to(dev), 0).to(Device("cpu"));
  std::vector<float> got = g.to_vector<float>();
  REQUIRE(got.size() == size_t(c));
  for (int64_t j = 0; j < c; ++j) {
    double want = 0;
    for (int64_t i = 0; i < n; ++i) want += host[size_t(i * c + j)];
    REQUIRE(std::abs(double(got[size_t(j)]) - want) <= 1e-4);
  }
}

TEST_CASE("reductions: rows of a few hundred, one work-group per row", "[reduction][paths]") {
  check_rows(values(40 * 999, 5), 40, 999);
}

TEST_CASE("reductions: few long rows, split over work-groups", "[reduction][paths]") {
  SECTION("one row of 100003 (a full sum)") { check_rows(values(100003, 7), 1, 100003); }
  SECTION("three rows of 50001") { check_rows(values(3 * 50001, 11), 3, 50001); }
  SECTION("the extreme in the last chunk, ties across chunks take the first index") {
    std::vector<float> v = values(2 * 70001, 13);
    v[70000] = 5.0f;           // row 0: the last element is the maximum
    v[70001 + 10] = 6.0f;      // row 1: the maximum twice, far apart
    v[70001 + 69990] = 6.0f;
    v[70001 + 20] = -6.0f;     // and the minimum twice
    v[70001 + 60000] = -6.0f;
    check_rows(v, 2, 70001);
  }
  SECTION("NaN in a late chunk wins max, min, argmax and argmin") {
    std::vector<float> v = values(90001, 17);
    v[85000] = std::numeric_limits<float>::quiet_NaN();
    v[88000] = std::numeric_limits<float>::quiet_NaN();
    check_rows(v, 1, 90001);
  }
  SECTION("full-tensor reductions of a 3-D tensor") {
    const Device dev = device_under_test();
    const std::vector<float> host = values(7 * 129 * 131, 19);
    Tensor t = from_vector(host, {7, 129, 131}).to(dev);
    double want = 0;
    for (float x : host) want += x;
    REQUIRE(std::abs(double(sum(t).item()) - want) <= 1e-3);
    REQUIRE(std::abs(double(mean(t).item()) - want / double(host.size())) <= 1e-6);
    int64_t best = 0;
    for (size_t i = 0; i < host.size(); ++i)
      if (host[i] > host[size_t(best)]) best = int64_t(i);
    REQUIRE(int64_t(argmax(t).item()) == best);
    REQUIRE(double(max(t).item()) == double(host[size_t(best)]));
  }
}

TEST_CASE("softmax and log_softmax: short and long rows", "[reduction][paths]") {
  const Device dev = device_under_test();
  for (int64_t cols : {10, 128, 129, 1000}) {
    const int64_t rows = 33;
    std::vector<float> host = values(rows * cols, uint32_t(cols));
    for (auto& x : host) x *= 20.0f;  // exps far from 1: the max subtraction matters
    Tensor t = from_vector(host, {rows, cols}).to(dev);
    std::vector<float> s = softmax(t, 1).to(Device("cpu")).to_vector<float>();
    std::vector<float> ls = log_softmax(t, 1).to(Device("cpu")).to_vector<float>();
    for (int64_t r = 0; r < rows; ++r) {
      const float* p = host.data() + r * cols;
      double mx = -INFINITY, z = 0;
      for (int64_t c = 0; c < cols; ++c) mx = std::max(mx, double(p[c]));
      for (int64_t c = 0; c < cols; ++c) z += std::exp(double(p[c]) - mx);
      for (int64_t c = 0; c < cols; ++c) {
        INFO("cols " << cols << " row " << r << " col " << c);
        const double lw = double(p[c]) - mx - std::log(z);
        REQUIRE(std::abs(double(ls[size_t(r * cols + c)]) - lw) <= 1e-4 * std::max(1.0, std::abs(lw)));
        REQUIRE(std::abs(double(s[size_t(r * cols + c)]) - std::exp(lw)) <= 1e-6);
      }
    }
  }
}

TEST_CASE("index_select: image batches and transposed sources", "[indexing][paths]") {
  const Device dev = device_under_test();
  const std::vector<float> host = values(50 * 1 * 7 * 9, 23);
  const std::vector<int64_t> idx = {49, 0, 17, 17, 3, 48, 25};
  Tensor x = from_vector(host, {50, 1, 7, 9}).to(dev);
  Tensor i = from_vector(idx, {int64_t(idx.size())}).to(dev);
  SECTION("rows of [1, 7, 9] images (inner dims merge)") {
    std::vector<float> got = index_select(x, 0, i).to(Device("cpu")).to_vector<float>();
    REQUIRE(got.size() == idx.size() * 63);
    for (size_t r = 0; r < idx.size(); ++r)
      for (size_t e = 0; e < 63; ++e) REQUIRE(got[r * 63 + e] == host[size_t(idx[r]) * 63 + e]);
  }
  SECTION("a permuted source (no dims merge across the permutation)") {
    Tensor xt = x.reshape({50, 63}).t();  // [63, 50], strides (1, 63)
    std::vector<float> got = index_select(xt, 1, i).to(Device("cpu")).to_vector<float>();
    REQUIRE(got.size() == 63 * idx.size());
    for (size_t e = 0; e < 63; ++e)
      for (size_t r = 0; r < idx.size(); ++r) REQUIRE(got[e * idx.size() + r] == host[size_t(idx[r]) * 63 + e]);
  }
  SECTION("a middle dim of a 4-D tensor") {
    const std::vector<int64_t> j = {6, 0, 6, 2};
    Tensor jt = from_vector(j, {4}).to(dev);
    std::vector<float> got = index_select(x, 2, jt).to(Device("cpu")).to_vector<float>();
    REQUIRE(got.size() == 50 * 4 * 9);
    for (size_t b = 0; b < 50; ++b)
      for (size_t r = 0; r < 4; ++r)
        for (size_t c = 0; c < 9; ++c)
          REQUIRE(got[(b * 4 + r) * 9 + c] == host[(b * 7 + size_t(j[r])) * 9 + c]);
  }
}

TEST_CASE("matmul: x @ W^T of a Linear layer, odd sizes", "[matmul][paths]") {
  const Device dev = device_under_test();
  for (auto [m, k, n] : {std::array<int64_t, 3>{37, 77, 45}, {64, 784, 256}, {5, 3, 129}}) {
    INFO(m << " x " << k << " @ (" << n << " x " << k << ")^T on " << dev);
    const std::vector<float> xh = values(m * k, uint32_t(m)), wh = values(n * k, uint32_t(n));
    Tensor x = from_vector(xh, {m, k}).to(dev), w = from_vector(wh, {n, k}).to(dev);
    std::vector<float> got = matmul(x, w.t()).to(Device("cpu")).to_vector<float>();
    REQUIRE(got.size() == size_t(m * n));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (int64_t p = 0; p < k; ++p) want += double(xh[size_t(i * k + p)]) * double(wh[size_t(j * k + p)]);
        REQUIRE(std::abs(double(got[size_t(i * n + j)]) - want) <= 1e-5 * double(k) + 1e-5);
      }
  }
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// grid_sample and affine_grid: values against plain float64 loops written
// from PyTorch's definitions (every mode, padding_mode and align_corners, 2-D
// and 3-D, strided operands), float64 finite-difference gradients wrt the
// input and the grid (and theta), and the typed errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"
#include "support/op_checks.hpp"
#include "vnn/nn.h"

using namespace vnn;
namespace F = vnn::nn::functional;
using vnn::test::check_close;
using vnn::test::check_error;
using vnn::test::check_grad;
using vnn::test::device_under_test;

namespace {

// Sizes of a case: x [N, C, D, H, W] (D = 1 in 2-D), grid [N, Do, Ho, Wo, dims].
struct Geo {
  int dims;
  int64_t N, C, D, H, W, Do, Ho, Wo;
  std::vector<int64_t> x_shape() const {
    return dims == 2 ? std::vector<int64_t>{N, C, H, W} : std::vector<int64_t>{N, C, D, H, W};
  }
  std::vector<int64_t> grid_shape() const {
    return dims == 2 ? std::vector<int64_t>{N, Ho, Wo, 2} : std::vector<int64_t>{N, Do, Ho, Wo, 3};
  }
  int64_t x_numel() const { return N * C * D * H * W; }
  int64_t grid_numel() const { return N * Do * Ho * Wo * dims; }
};

double unnormalize(double c, int64_t n, bool align) { return align ? (c + 1) / 2 * double(n - 1) : ((c + 1) * n - 1) / 2; }

// Reflects v into [lo, hi] (a mirror at each end), then clips to the pixels.
double reflect_into(double v, double lo, double hi) {
  if (lo == hi) return 0;
  const double span = hi - lo, m = std::fmod(std::fabs(v - lo), 2 * span);
  return lo + (m <= span ? m : 2 * span - m);
}

double padded(double v, int64_t n, GridSamplePadding pad, bool align) {
  if (pad == GridSamplePadding::reflection)
    v = align ? reflect_into(v, 0, double(n - 1)) : reflect_into(v, -0.5, double(n) - 0.5);
  if (pad != GridSamplePadding::zeros) v = std::min(std::max(v, 0.0), double(n - 1));
  return v;
}

// Keys' cubic convolution kernel, A = -0.75, at distance s.
double keys(double s) {
  const double A = -0.75, a = std::fabs(s);
  if (a <= 1) return (A + 2) * a * a * a - (A + 3) * a * a + 1;
  if (a < 2) return A * a * a * a - 5 * A * a * a + 8 * A * a - 4 * A;
  return 0;
}

std::vector<double> ref_grid_sample(const std::vector<double>& x, const std::vector<double>& grid, const Geo& g,
                                    GridSampleMode mode, GridSamplePadding pad, bool align) {
  std::vector<double> out;
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t c = 0; c < g.C; ++c) {
      // x[n, c, z, y, x]: 0 outside.
      auto at = [&](int64_t z, int64_t y, int64_t xx) {
        if (z < 0 || z >= g.D || y < 0 || y >= g.H || xx < 0 || xx >= g.W) return 0.0;
        return x[size_t((((n * g.C + c) * g.D + z) * g.H + y) * g.W + xx)];
      };
      for (int64_t p = 0; p < g.Do * g.Ho * g.Wo; ++p) {
        const double* q = &grid[size_t((n * g.Do * g.Ho * g.Wo + p) * g.dims)];
        double ix = unnormalize(q[0], g.W, align), iy = unnormalize(q[1], g.H, align);
        double iz = g.dims == 3 ? unnormalize(q[2], g.D, align) : 0.0;
        if (mode == GridSampleMode::bicubic) {
          const double fx = std::floor(ix), fy = std::floor(iy);
          double s = 0;
          for (int j = -1; j <= 2; ++j)
            for (int i = -1; i <= 2; ++i) {
              const int64_t tx = int64_t(padded(fx + i, g.W, pad, align));
              const int64_t ty = int64_t(padded(fy + j, g.H, pad, align));
              s += at(0, ty, tx) * keys(ix - (fx + i)) * keys(iy - (fy + j));
            }
          out.push_back(s);
          continue;
        }
        ix = padded(ix, g.W, pad, align), iy = padded(iy, g.H, pad, align);
        if (g.dims == 3) iz = padded(iz, g.D, pad, align);
        if (mode == GridSampleMode::nearest) {
          out.push_back(at(int64_t(std::nearbyint(iz)), int64_t(std::nearbyint(iy)), int64_t(std::nearbyint(ix))));
          continue;
        }
        const double x0 = std::floor(ix), y0 = std::floor(iy), z0 = std::floor(iz);
        double s = 0;
        for (int dz = 0; dz <= (g.dims == 3 ? 1 : 0); ++dz)
          for (int dy = 0; dy <= 1; ++dy)
            for (int dx = 0; dx <= 1; ++dx) {
              const double w = (1 - std::fabs(ix - (x0 + dx))) * (1 - std::fabs(iy - (y0 + dy))) *
                               (g.dims == 3 ? 1 - std::fabs(iz - (z0 + dz)) : 1.0);
              s += w * at(int64_t(z0) + dz, int64_t(y0) + dy, int64_t(x0) + dx);
            }
        out.push_back(s);
      }
    }
  return out;
}

const char* mode_str(GridSampleMode m) {
  return m == GridSampleMode::bilinear ? "bilinear" : m == GridSampleMode::nearest ? "nearest" : "bicubic";
}
const char* pad_str(GridSamplePadding p) {
  return p == GridSamplePadding::zeros ? "zeros" : p == GridSamplePadding::border ? "border" : "reflection";
}

const GridSamplePadding kPads[] = {GridSamplePadding::zeros, GridSamplePadding::border, GridSamplePadding::reflection};

F::GridSampleFuncOptions opts(GridSampleMode m, GridSamplePadding p, bool align) {
  return F::GridSampleFuncOptions().mode(m).padding_mode(p).align_corners(align);
}

// Values of every padding mode and align_corners for one mode and geometry,
// float64 (exact to rounding) and float32, then gradients wrt x and grid.
void check_mode(const Geo& g, GridSampleMode mode, bool with_float32, bool with_grad) {
  Device dev = device_under_test();
  const std::vector<double> xv = test::lcg_values(size_t(g.x_numel()), 5, 1, -2.0, 2.0);
  // Points reach past [-1, 1] so that every padding rule is exercised.
  const std::vector<double> gv = test::lcg_values(size_t(g.grid_numel()), 5, 2, -1.3, 1.3);
  for (GridSamplePadding pad : kPads)
    for (bool align : {false, true}) {
      INFO(mode_str(mode) << " " << pad_str(pad) << " align_corners=" << align << " " << g.dims << "-D");
      const std::vector<double> want = ref_grid_sample(xv, gv, g, mode, pad, align);
      Tensor x = from_vector(xv, Shape(g.x_shape()), dev), grid = from_vector(gv, Shape(g.grid_shape()), dev);
      check_close(F::grid_sample(x, grid, opts(mode, pad, align)), want, 1e-10);
      if (with_float32)
        check_close(F::grid_sample(x.to(kFloat32), grid.to(kFloat32), opts(mode, pad, align)), want, 2e-4);
      if (!with_grad) continue;
      Tensor xl = x.clone().requires_grad_(), gl = grid.clone().requires_grad_();
      check_grad(
          "grid_sample", [&](const std::vector<Tensor>& t) { return F::grid_sample(t[0], t[1], opts(mode, pad, align)); },
          {xl, gl});
    }
}

}  // namespace

TEST_CASE("grid_sample 2-D matches PyTorch's definition for every mode, padding_mode and align_corners") {
  const Geo g{2, 2, 3, 1, 4, 5, 1, 3, 4};
  check_mode(g, GridSampleMode::bilinear, true, false);
  check_mode(g, GridSampleMode::bicubic, true, false);
  // Nearest in float64 only: a float32 coordinate may round to the other side of a half.
  check_mode(g, GridSampleMode::nearest, false, false);
}

TEST_CASE("grid_sample 3-D (trilinear, nearest) matches PyTorch's definition") {
  const Geo g{3, 2, 2, 3, 4, 3, 2, 2, 3};
  check_mode(g, GridSampleMode::bilinear, true, false);
  check_mode(g, GridSampleMode::nearest, false, false);
}

TEST_CASE("grid_sample gradients wrt input and grid agree with finite differences (float64)") {
  const Geo g2{2, 2, 2, 1, 3, 3, 1, 2, 2};
  check_mode(g2, GridSampleMode::bilinear, false, true);
  check_mode(g2, GridSampleMode::bicubic, false, true);
  check_mode(g2, GridSampleMode::nearest, false, true);
  const Geo g3{3, 1, 2, 2, 3, 3, 2, 2, 1};
  check_mode(g3, GridSampleMode::bilinear, false, true);
  check_mode(g3, GridSampleMode::nearest, false, true);
}

TEST_CASE("grid_sample reads strided operands and writes the batch's own gradients") {
  Device dev = device_under_test();
  const Geo g{2, 2, 3, 1, 4, 5, 1, 3, 4};
  const std::vector<double> xv = test::lcg_values(size_t(g.x_numel()), 7, 1, -2.0, 2.0);
  const std::vector<double> gv = test::lcg_values(size_t(g.grid_numel()), 7, 2, -1.1, 1.1);
  Tensor x = from_vector(xv, Shape(g.x_shape()), dev), grid = from_vector(gv, Shape(g.grid_shape()), dev);
  // The same values as channels-last and coordinate-major views.
  Tensor xs = x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
  Tensor gs = grid.permute({0, 3, 1, 2}).contiguous().permute({0, 2, 3, 1});
  REQUIRE_FALSE(xs.is_contiguous());
  for (GridSampleMode m : {GridSampleMode::bilinear, GridSampleMode::nearest, GridSampleMode::bicubic}) {
    INFO(mode_str(m));
    const auto o = opts(m, GridSamplePadding::reflection, false);
    check_close(F::grid_sample(xs, gs, o), F::grid_sample(x, grid, o).to_vector<double>(), 1e-12);
  }
  // Backward through strided leaves matches the contiguous one.
  auto grads = [&](const Tensor& a, const Tensor& b) {
    Tensor al = a.detach().requires_grad_(), bl = b.detach().requires_grad_();
    Tensor w = from_vector(test::lcg_values(size_t(g.N * g.C * g.Ho * g.Wo), 7, 3, -1.0, 1.0),
                           {g.N, g.C, g.Ho, g.Wo}, dev);
    (F::grid_sample(al, bl, opts(GridSampleMode::bilinear, GridSamplePadding::border, true)) * w).sum().backward();
    return std::make_pair(al.grad(), bl.grad());
  };
  auto [dx, dg] = grads(x, grid);
  auto [dxs, dgs] = grads(xs, gs);
  check_close(dxs, dx.to_vector<double>(), 1e-12);
  check_close(dgs, dg.to_vector<double>(), 1e-12);
  CHECK(dx.abs().sum().item() > 0.0);
  CHECK(dg.abs().sum().item() > 0.0);
  // float16 is computed in float32.
  Tensor h = F::grid_sample(x.to(kFloat16), grid.to(kFloat16), opts(GridSampleMode::bilinear, kBorder, false));
  CHECK(h.dtype() == kFloat16);
  check_close(h, F::grid_sample(x.to(kFloat16).to(kFloat32), grid.to(kFloat16).to(kFloat32),
                                opts(GridSampleMode::bilinear, kBorder, false)).to_vector<double>(), 2e-2);
}

TEST_CASE("grid_sample's backward is a kernel: a second derivative through it throws, naming it") {
  Device dev = device_under_test();
  Tensor x = from_vector(test::lcg_values(12, 3, 1, -1.0, 1.0), {1, 1, 3, 4}, dev).requires_grad_();
  Tensor grid = from_vector(test::lcg_values(8, 3, 2, -1.0, 1.0), {1, 2, 2, 2}, dev).requires_grad_();
  Tensor y = (F::grid_sample(x, grid) * F::grid_sample(x, grid)).sum();
  Tensor g = autograd::grad({y}, {grid}, {}, /*retain_graph=*/true, /*create_graph=*/true)[0];
  check_error<Unsupported>([&] { autograd::grad({g.sum()}, {x}); }, "grid_sample");
}

TEST_CASE("affine_grid: base grid times theta, differentiable; identity theta samples the input back") {
  Device dev = device_under_test();
  const std::vector<double> th = {0.9, -0.2, 0.13, 0.3, 1.1, -0.27};  // no point on a border kink
  Tensor theta = from_vector(th, {1, 2, 3}, dev);
  for (bool align : {false, true}) {
    INFO("align_corners=" << align);
    const int64_t H = 3, W = 4;
    Tensor grid = F::affine_grid(theta, {1, 2, H, W}, align);
    REQUIRE(grid.sizes() == Shape{1, H, W, 2});
    std::vector<double> want;
    auto pos = [&](int64_t i, int64_t n) {
      const double v = -1.0 + 2.0 * double(i) / double(n - 1);
      return align ? v : v * double(n - 1) / double(n);
    };
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w) {
        const double xw = pos(w, W), yh = pos(h, H);
        want.push_back(th[0] * xw + th[1] * yh + th[2]);
        want.push_back(th[3] * xw + th[4] * yh + th[5]);
      }
    check_close(grid, want, 1e-12);
    // The identity map reproduces the input at the pixel centres.
    Tensor x = from_vector(test::lcg_values(2 * 3 * 3 * 4, 9, 1, -1.0, 1.0), {2, 3, 3, 4}, dev);
    Tensor eye = from_vector(std::vector<double>{1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0}, {2, 2, 3}, dev);
    Tensor back = F::grid_sample(x, F::affine_grid(eye, {2, 3, 3, 4}, align),
                                 opts(GridSampleMode::bilinear, GridSamplePadding::zeros, align));
    check_close(back, x.to_vector<double>(), 1e-12);
    // 3-D: theta [N, 3, 4] -> [N, D, H, W, 3].
    Tensor t3 = from_vector(test::lcg_values(12, 9, 2, -1.0, 1.0), {1, 3, 4}, dev);
    Tensor g3 = F::affine_grid(t3, {1, 1, 2, 3, 2}, align);
    REQUIRE(g3.sizes() == Shape{1, 2, 3, 2, 3});
    check_grad("affine_grid 3-D", [&](const std::vector<Tensor>& t) { return F::affine_grid(t[0], {1, 1, 2, 3, 2}, align); },
               {t3.clone().requires_grad_()});
    // A spatial transformer step: gradient through affine_grid and grid_sample to theta.
    check_grad("affine_grid + grid_sample",
               [&](const std::vector<Tensor>& t) {
                 return F::grid_sample(x.narrow(0, 0, 1), F::affine_grid(t[0], {1, 3, 2, 3}, align),
                                       opts(GridSampleMode::bilinear, kBorder, align));
               },
               {theta.clone().requires_grad_()});
  }
}

TEST_CASE("grid_sample and affine_grid reject bad arguments with typed errors") {
  Device dev = device_under_test();
  Tensor x = zeros({1, 2, 3, 3}, TensorOptions(dev));
  Tensor grid = zeros({1, 2, 2, 2}, TensorOptions(dev));
  check_error<ShapeError>([&] { F::grid_sample(x, zeros({1, 2, 2, 3}, TensorOptions(dev))); }, "grid_sample");
  check_error<ShapeError>([&] { F::grid_sample(x, zeros({2, 2, 2, 2}, TensorOptions(dev))); }, "batch");
  check_error<ShapeError>([&] { F::grid_sample(zeros({1, 2, 3}, TensorOptions(dev)), grid); }, "grid_sample");
  check_error<ShapeError>([&] { F::grid_sample(zeros({1, 2, 0, 3}, TensorOptions(dev)), grid); }, "empty");
  check_error<ValueError>(
      [&] {
        F::grid_sample(zeros({1, 1, 2, 2, 2}, TensorOptions(dev)), zeros({1, 1, 1, 1, 3}, TensorOptions(dev)),
                       F::GridSampleFuncOptions().mode(kBicubic));
      },
      "kBicubic");
  check_error<DTypeError>([&] { F::grid_sample(x, grid.to(kFloat64)); }, "grid_sample");
  check_error<DTypeError>([&] { F::grid_sample(x.to(kInt32), grid.to(kInt32)); }, "grid_sample");
  check_error<ValueError>([&] { F::GridSampleFuncOptions().mode(kTrilinear); }, "grid_sample");
  check_error<ValueError>([&] { F::GridSampleFuncOptions().padding_mode(kReflect); }, "kReflection");
  CHECK(F::GridSampleFuncOptions().mode(kNearest).padding_mode(kZeros).mode() == GridSampleMode::nearest);
  check_error<ShapeError>([&] { F::affine_grid(zeros({1, 3, 4}, TensorOptions(dev)), {1, 1, 2, 2}); }, "affine_grid");
  check_error<ShapeError>([&] { F::affine_grid(zeros({2, 2, 3}, TensorOptions(dev)), {1, 1, 2, 2}); }, "theta");
  check_error<ValueError>([&] { F::affine_grid(zeros({1, 2, 3}, TensorOptions(dev)), {1, 2, 2}); }, "affine_grid");
  check_error<ValueError>([&] { F::affine_grid(zeros({1, 2, 3}, TensorOptions(dev)), {1, 1, 0, 2}); }, "positive");
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// conv2d through a backend's whole-pass ops (oneDNN in the CPU plugin):
// every configuration of tests/ops/conv.cpp (stride, padding, dilation,
// groups, depthwise, 1x1, the C = 1 first layer, bias or none) at sizes on
// both sides of the CPU plugin's selection rule (too small for oneDNN;
// plain layout with few channels per group; blocked with many), float32
// forward and all three gradients against float64 on the same device, which
// always runs vnn's own IM2COL + GEMM kernels (tests/ops/conv.cpp checks
// those against plain loops). The profiler must name the path the rule
// picks: conv2d[onednn] where oneDNN is built and on, never for float64.
// ctest runs this program twice on the CPU: as built, and with VNN_ONEDNN=0.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "support/device_under_test.hpp"
#include "support/plugin_table.hpp"
#include "vnn/profiler.h"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::onednn_on;
using vnn::test::max_abs_diff;

namespace {

struct Case {
  int64_t N, C, H, W, O, kh, kw, s, p, d, g;
  bool small;  // far below the rule's minimum work: stays on vnn's kernels
};

const std::vector<Case> kCases = {
    {4, 4, 16, 16, 8, 3, 3, 1, 0, 1, 1, false},     // plain (4 channels per group)
    {4, 16, 15, 13, 12, 3, 2, 2, 1, 1, 1, false},   // blocked, stride 2, odd sizes, 3x2 kernel
    {2, 8, 17, 17, 8, 3, 3, 1, 2, 2, 1, false},     // dilation 2, padding 2
    {4, 16, 14, 14, 12, 3, 3, 2, 1, 1, 2, false},   // 2 groups of 8
    {4, 16, 12, 12, 16, 3, 3, 1, 1, 1, 16, false},  // depthwise
    {16, 2, 24, 24, 6, 1, 1, 1, 0, 1, 1, false},    // 1x1
    {8, 1, 28, 28, 8, 3, 3, 1, 1, 1, 1, false},     // the CNN's first layer shape, C = 1
    {8, 32, 14, 14, 16, 3, 3, 1, 1, 1, 1, false},   // the CNN's second layer shape, fewer outputs
    {1, 2, 5, 5, 3, 3, 3, 1, 1, 1, 1, true},        // tiny
    {2, 4, 6, 6, 4, 3, 3, 1, 1, 1, 4, true},        // tiny, depthwise
};

std::string label(const Case& c) {
  return "N" + std::to_string(c.N) + " C" + std::to_string(c.C) + " " + std::to_string(c.H) + "x" +
         std::to_string(c.W) + " O" + std::to_string(c.O) + " k" + std::to_string(c.kh) + "x" + std::to_string(c.kw) +
         " s" + std::to_string(c.s) + " p" + std::to_string(c.p) + " d" + std::to_string(c.d) + " g" +
         std::to_string(c.g);
}

Tensor values(const Shape& s, uint32_t seed, const Device& dev) {
  return from_vector(vnn::test::lcg_values(size_t(s.numel()), seed, 12345u, -1.0, 1.0), s).to(dev);
}

struct Grads {
  Tensor y, gx, gw, gb;
};

// Forward and backward through autograd, loss = sum(y * r).
Grads run(const Case& c, DType t, bool bias, bool strided_input, const Device& dev) {
  Tensor x = values({c.N, c.C, c.H, c.W}, 1, dev).to(t);
  if (strided_input) x = x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});  // NHWC storage
  x = x.detach().requires_grad_(true);
  Tensor w = values({c.O, c.C / c.g, c.kh, c.kw}, 2, dev).to(t).detach().requires_grad_(true);
  Tensor b = bias ? values({c.O}, 3, dev).to(t).detach().requires_grad_(true) : Tensor();
  Tensor y = conv2d(x, w, b, c.s, c.p, c.d, c.g);
  Tensor r = values(y.sizes(), 4, dev).to(t);
  sum(mul(y, r)).backward();
  return {y.detach(), x.grad(), w.grad(), bias ? b.grad() : Tensor()};
}

// The largest |a - b| relative to b's largest magnitude.
double rel_err(const Tensor& a, const Tensor& b) {
  double scale = std::max(1.0, max(abs(b.to(kFloat64))).item());
  return max_abs_diff(a.to(kFloat64), b.to(kFloat64)) / scale;
}

}  // namespace

TEST_CASE("conv2d float32 (whole-pass path where taken) matches float64 on vnn's kernels") {
  Device dev = device_under_test();
  for (const Case& c : kCases)
    for (bool bias : {true, false})
      for (bool strided : {false, true}) {
        INFO(label(c) << (bias ? " bias" : " no bias") << (strided ? " NHWC-strided input" : "") << " on " << dev);
        Grads f = run(c, kFloat32, bias, strided, dev), d = run(c, kFloat64, bias, strided, dev);
        REQUIRE(f.y.device() == dev);
        CHECK(rel_err(f.y, d.y) < 1e-5);
        CHECK(rel_err(f.gx, d.gx) < 1e-5);
        CHECK(rel_err(f.gw, d.gw) < 1e-5);
        if (bias) CHECK(rel_err(f.gb, d.gb) < 1e-5);
        // The public gradient functions take the same path (float32 operands).
        Tensor r = values(f.y.sizes(), 4, dev).to(kFloat32);
        Tensor x = values({c.N, c.C, c.H, c.W}, 1, dev).to(kFloat32),
               w = values({c.O, c.C / c.g, c.kh, c.kw}, 2, dev).to(kFloat32);
        CHECK(rel_err(conv2d_backward_input(r, w, x.sizes(), c.s, c.p, c.d, c.g), d.gx) < 1e-5);
        CHECK(rel_err(conv2d_backward_weight(r, x, w.sizes(), c.s, c.p, c.d, c.g), d.gw) < 1e-5);
      }
}

TEST_CASE("the profiler names the conv2d path the selection rule takes") {
  Device dev = device_under_test();
  const bool onednn = onednn_on(dev);
  for (const Case& c : kCases)
    for (DType t : {kFloat32, kFloat64}) {
      INFO(label(c) << " " << name(t) << " on " << dev << (onednn ? " (oneDNN on)" : " (no oneDNN)"));
      profiler::Profile p;
      run(c, t, true, false, dev);
      p.stop();
      int whole = 0, im2col = 0, direct = 0;
      for (const auto& e : p.events()) {
        if (e.name == "conv2d[onednn]" || e.name == "conv2d_backward_input[onednn]" ||
            e.name == "conv2d_backward_weight[onednn]")
          ++whole;
        if (e.name == "conv2d[direct]" || e.name == "conv2d_backward_input[direct]" ||
            e.name == "conv2d_backward_weight[direct]" || e.name == "conv2d[plane]" ||
            e.name == "conv2d_backward_input[plane]")
          ++direct;
        if (e.name.rfind("conv2d (im2col)", 0) == 0 || e.name.rfind("conv2d_backward_input (col2im)", 0) == 0) ++im2col;
      }
      const bool expect = onednn && t == kFloat32 && !c.small;
      CHECK(whole == (expect ? 3 : 0));  // forward, input and weight gradients
      // OpenCL's direct and plane kernels (backends/opencl/ops_conv_direct.cpp):
      // all three passes forced with VNN_OPENCL_CONV=direct... or plane, none with
      // =gemm, chosen per pass by its tuner otherwise.
      const char* force = dev.backend() == "opencl" ? std::getenv("VNN_OPENCL_CONV") : nullptr;
      const std::string mode = force ? force : "";
      if (dev.backend() != "opencl" || mode == "gemm") {
        CHECK(direct == 0);
        CHECK((im2col > 0) == !expect);
      } else if (mode.rfind("direct", 0) == 0 || mode == "plane") {
        CHECK(direct == 3);
        CHECK(im2col == 0);
      } else {
        CHECK(direct <= 3);
        CHECK((direct == 3) == (im2col == 0));
      }
    }
}

TEST_CASE("conv2d whole-pass ops refuse malformed requests from the C ABI, never crash") {
  std::string plugin;
  const vnn_backend* b = vnn::test::plugin_table(&plugin);
  REQUIRE(b != nullptr);
  const int32_t dev = device_under_test().index();
  Device d = device_under_test();
  zeros({1}, d).item<float>();  // the device is initialised
  // Contiguous float32 descriptors over plugin allocations of exactly their
  // size: only the geometry and counts below lie.
  std::vector<void*> blocks;
  auto desc = [&](Shape sizes) {
    vnn_tensor_desc r{};
    r.dtype = VNN_FLOAT32;
    r.ndim = int32_t(sizes.size());
    int64_t st = 1;
    for (int i = r.ndim - 1; i >= 0; --i) r.sizes[i] = sizes[size_t(i)], r.strides[i] = st, st *= sizes[size_t(i)];
    REQUIRE(b->alloc(dev, size_t(st) * 4, &r.data) == VNN_STATUS_OK);
    blocks.push_back(r.data);
    return r;
  };
  vnn::test::Conv2dRequest req;
  req.in[0] = desc({4, 16, 14, 14}), req.in[1] = desc({12, 16, 3, 3}), req.out = desc({4, 12, 14, 14});
  vnn_op& op = req.op;
  vnn_tensor_desc* in = req.in;
  vnn_tensor_desc& out = req.out;
  int64_t* ints = req.ints;
  vnn_status s = b->run(dev, &op);
  // A backend without whole-pass convolution answers UNSUPPORTED; the CPU
  // plugin with oneDNN runs it.
  CHECK((s == VNN_STATUS_OK || s == VNN_STATUS_UNSUPPORTED));
  auto refused = [&] {
    vnn_status r = b->run(dev, &op);
    INFO(b->last_error());
    CHECK((r == VNN_STATUS_INVALID_ARGUMENT || r == VNN_STATUS_UNSUPPORTED));
    if (plugin == "openmp" && onednn_on(d)) CHECK(r == VNN_STATUS_INVALID_ARGUMENT);
  };
  out.sizes[3] = 13;  // output size disagrees with the geometry
  refused();
  out.sizes[3] = 14;
  op.num_ints = 8;  // groups missing
  refused();
  op.num_ints = 9;
  ints[8] = 5;  // 16 channels in 5 groups
  refused();
  ints[8] = 1;
  ints[2] = 0;  // stride 0
  refused();
  ints[2] = 1;
  in[1].sizes[2] = 2;  // weight kernel disagrees with ints
  refused();
  in[1].sizes[2] = 3;
  op.num_inputs = 1;
  refused();
  op.num_inputs = 2;
  out.sizes[3] = 15;  // past the end of the output buffer: the descriptor check
  CHECK(b->run(dev, &op) == VNN_STATUS_INVALID_ARGUMENT);
  // The accepted run's kernels done before its buffers go and the process
  // exits (PoCL builds a kernel at its first launch, in a worker thread;
  // a build still running at exit crashed in LLVM's teardown).
  CHECK(b->queue_synchronize(dev, nullptr) == VNN_STATUS_OK);
  for (void* h : blocks) CHECK(b->free(dev, h) == VNN_STATUS_OK);
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// onednn_ops_bench: whether two oneDNN paths would pay in the CPU plugin,
// measured against what vnn runs today, in one program and one run:
//  (a) max / avg pooling 2x2 forward (training) and backward on the CNN's
//      shapes: vnn's Kokkos pooling (vnn::max_pool2d_with_indices and
//      *_backward) against oneDNN's pooling primitives on plain NCHW.
//  (c) vnn's own pooling API over a range of sizes (2x2 / 2 max with
//      indices and its backward, 3x3 / 2 padded avg and its backward):
//      run it with VNN_ONEDNN_POOL=off, =all and unset in alternation to
//      find and check the plugin's size rule (onednn_pooling.cpp).
//  (b) conv2d followed by ReLU on the quick start's layers: vnn's conv2d
//      (oneDNN inside the plugin) and its separate relu, against oneDNN's
//      convolution with and without an eltwise_relu post-op (what a fused
//      conv2d_relu would save is the relu pass minus the post-op's cost).
// Times are per call, median of 5 batches; CPU time is the process's.
//   onednn_ops_bench [--inner N] [--only-pool-sizes]
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "vnn/vnn.h"

namespace {

using clk = std::chrono::steady_clock;
using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

struct Timing {
  double wall = 0, cpu = 0;  // seconds per call
};

Timing per_call(int inner, const std::function<void()>& f) {
  f();
  std::vector<double> t;
  const double c0 = cpu_now();
  for (int r = 0; r < 5; ++r) {
    auto t0 = clk::now();
    for (int i = 0; i < inner; ++i) f();
    t.push_back(std::chrono::duration<double>(clk::now() - t0).count() / inner);
  }
  std::sort(t.begin(), t.end());
  return {t[2], (cpu_now() - c0) / (5.0 * inner)};
}

std::string ratio(double a, double b) {
  char s[32];
  std::snprintf(s, sizeof s, "%.2f", b > 0 ? a / b : 0.0);
  return s;
}

struct Dnnl {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
};

void row(const char* what, const Timing& v, const Timing& d) {
  std::printf("| %s | %.1f | %.1f | %s | %.1f | %.1f | %s |\n", what, v.wall * 1e6, d.wall * 1e6,
              ratio(d.wall, v.wall).c_str(), v.cpu * 1e6, d.cpu * 1e6, ratio(d.cpu, v.cpu).c_str());
  std::fflush(stdout);
}

void pooling(Dnnl& k, int inner) {
  std::printf("\n## (a) pooling 2x2 stride 2, float32 NCHW, us per call\n\n");
  std::printf("| op | vnn wall | oneDNN wall | oneDNN / vnn | vnn CPU | oneDNN CPU | oneDNN / vnn (CPU) |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  const std::vector<memory::dims> shapes = {{64, 32, 28, 28}, {64, 64, 14, 14}};
  for (const memory::dims& s : shapes)
    for (int avg = 0; avg < 2; ++avg) {
      const memory::dims os = {s[0], s[1], s[2] / 2, s[3] / 2};
      vnn::Tensor x = vnn::randn({s[0], s[1], s[2], s[3]}), gy = vnn::randn({os[0], os[1], os[2], os[3]});
      vnn::Tensor y, idx, gx;
      Timing vf, vb;
      if (avg) {
        vf = per_call(inner, [&] { y = vnn::avg_pool2d(x, 2); });
        vb = per_call(inner, [&] { gx = vnn::avg_pool2d_backward(gy, x, 2); });
      } else {
        vf = per_call(inner, [&] { std::tie(y, idx) = vnn::max_pool2d_with_indices(x, 2); });
        vb = per_call(inner, [&] { gx = vnn::max_pool2d_backward(gy, x, idx, 2); });
      }
      const auto alg = avg ? dnnl::algorithm::pooling_avg_include_padding : dnnl::algorithm::pooling_max;
      memory::desc src(s, dt::f32, tag::nchw), dst(os, dt::f32, tag::nchw);
      dnnl::pooling_forward::desc fd(dnnl::prop_kind::forward_training, alg, src, dst, {2, 2}, {2, 2}, {0, 0},
                                     {0, 0});
      dnnl::pooling_forward::primitive_desc fpd(fd, k.eng);
      dnnl::pooling_backward::desc bd(alg, src, dst, {2, 2}, {2, 2}, {0, 0}, {0, 0});
      dnnl::pooling_backward::primitive_desc bpd(bd, k.eng, fpd);
      memory ms(src, k.eng, x.data<float>()), md(dst, k.eng), mgy(dst, k.eng, gy.data<float>()), mgx(src, k.eng);
      memory ws = fpd.workspace_desc().get_size() ? memory(fpd.workspace_desc(), k.eng) : memory();
      dnnl::pooling_forward fwd(fpd);
      dnnl::pooling_backward bwd(bpd);
      std::unordered_map<int, memory> fa = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_DST, md}};
      std::unordered_map<int, memory> ba = {{DNNL_ARG_DIFF_DST, mgy}, {DNNL_ARG_DIFF_SRC, mgx}};
      if (ws) fa[DNNL_ARG_WORKSPACE] = ws, ba[DNNL_ARG_WORKSPACE] = ws;
      Timing df = per_call(inner, [&] { fwd.execute(k.strm, fa), k.strm.wait(); });
      Timing db = per_call(inner, [&] { bwd.execute(k.strm, ba), k.strm.wait(); });
      // The same answers, or the comparison means nothing.
      vnn::Tensor dy = vnn::from_vector(
          std::vector<float>(static_cast<float*>(md.get_data_handle()),
                             static_cast<float*>(md.get_data_handle()) + y.numel()),
          y.sizes());
      if (vnn::max(vnn::abs(vnn::sub(dy, y))).item() > 1e-5)
        std::fprintf(stderr, "onednn_ops_bench: oneDNN's pooling output differs from vnn's\n");
      std::string name = std::string(avg ? "avg" : "max") + " [" + std::to_string(s[0]) + "," + std::to_string(s[1]) +
                         "," + std::to_string(s[2]) + "," + std::to_string(s[3]) + "]";
      row((name + " forward").c_str(), vf, df);
      row((name + " backward").c_str(), vb, db);
    }
}

void pool_sizes(int inner) {
  const char* env = std::getenv("VNN_ONEDNN_POOL");
  std::printf("\n## (c) vnn pooling API, VNN_ONEDNN_POOL=%s, us per call (wall / CPU)\n\n", env ? env : "(unset)");
  std::printf("| input | elements | max fwd | max bwd | avg 3x3/2 p1 fwd | avg bwd |\n|---|---|---|---|---|---|\n");
  const std::vector<vnn::Shape> shapes = {{1, 4, 16, 16},  {1, 16, 16, 16}, {2, 16, 16, 16}, {4, 16, 16, 16},
                                          {8, 16, 16, 16}, {16, 16, 16, 16}, {64, 32, 28, 28}, {64, 64, 14, 14}};
  for (const vnn::Shape& s : shapes) {
    vnn::Tensor x = vnn::randn(s), y, idx, gx, ya, gxa;
    std::tie(y, idx) = vnn::max_pool2d_with_indices(x, 2);
    vnn::Tensor gy = vnn::randn(y.sizes()), gya = vnn::randn(vnn::avg_pool2d(x, 3, 2, 1).sizes());
    const Timing mf = per_call(inner, [&] { std::tie(y, idx) = vnn::max_pool2d_with_indices(x, 2); });
    const Timing mb = per_call(inner, [&] { gx = vnn::max_pool2d_backward(gy, x, idx, 2); });
    const Timing af = per_call(inner, [&] { ya = vnn::avg_pool2d(x, 3, 2, 1); });
    const Timing ab = per_call(inner, [&] { gxa = vnn::avg_pool2d_backward(gya, x, 3, 2, 1); });
    std::printf("| %s | %lld | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f |\n", s.str().c_str(),
                (long long)s.numel(), mf.wall * 1e6, mf.cpu * 1e6, mb.wall * 1e6, mb.cpu * 1e6, af.wall * 1e6,
                af.cpu * 1e6, ab.wall * 1e6, ab.cpu * 1e6);
    std::fflush(stdout);
  }
}

void conv_relu(Dnnl& k, int inner) {
  std::printf("\n## (b) conv2d 3x3 padding 1 + bias, then ReLU, float32, us per call\n\n");
  std::printf("CPU time per call (wall in brackets); oneDNN's conv here is plain NCHW, x64:gemm:jit with or without\n"
              "the post-op (DNNL_VERBOSE), as the plugin runs layer 1.\n\n");
  std::printf("| layer | vnn conv2d | vnn relu | oneDNN conv | oneDNN conv + relu post-op | post-op cost | "
              "saved by fusing (vnn relu - post-op cost) |\n|---|---|---|---|---|---|---|\n");
  struct L { int64_t n, c, h, o; };
  for (const L& l : {L{64, 1, 28, 32}, L{64, 32, 14, 64}}) {
    vnn::Tensor x = vnn::randn({l.n, l.c, l.h, l.h}), w = vnn::randn({l.o, l.c, 3, 3}), b = vnn::randn({l.o}), y, r;
    Timing vc = per_call(inner, [&] { y = vnn::conv2d(x, w, b, 1, 1); });
    Timing vr = per_call(inner, [&] { r = vnn::relu(y); });
    Timing dc[2];
    for (int fused = 0; fused < 2; ++fused) {
      memory::desc src({l.n, l.c, l.h, l.h}, dt::f32, tag::nchw), wei({l.o, l.c, 3, 3}, dt::f32, tag::oihw),
          bia({l.o}, dt::f32, tag::x), dst({l.n, l.o, l.h, l.h}, dt::f32, tag::nchw);
      dnnl::convolution_forward::desc cd(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, src,
                                         wei, bia, dst, {1, 1}, {1, 1}, {1, 1});
      dnnl::primitive_attr attr;
      if (fused) {
        dnnl::post_ops po;
        po.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
        attr.set_post_ops(po);
      }
      dnnl::convolution_forward::primitive_desc pd(cd, attr, k.eng);
      memory ms(src, k.eng, x.data<float>()), mw(wei, k.eng, w.data<float>()), mb(bia, k.eng, b.data<float>()),
          md(dst, k.eng);
      dnnl::convolution_forward conv(pd);
      std::unordered_map<int, memory> a = {
          {DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_BIAS, mb}, {DNNL_ARG_DST, md}};
      dc[fused] = per_call(inner, [&] { conv.execute(k.strm, a), k.strm.wait(); });
      if (fused) {
        vnn::Tensor got = vnn::from_vector(std::vector<float>(static_cast<float*>(md.get_data_handle()),
                                                              static_cast<float*>(md.get_data_handle()) + r.numel()),
                                           r.sizes());
        if (vnn::max(vnn::abs(vnn::sub(got, r))).item() > 1e-3)
          std::fprintf(stderr, "onednn_ops_bench: the fused conv + relu differs from vnn's\n");
      }
    }
    const double post = dc[1].cpu - dc[0].cpu;
    std::printf("| [%lld,%lld,%lld,%lld] -> %lld | %.1f (%.1f) | %.1f (%.1f) | %.1f (%.1f) | %.1f (%.1f) | %.1f | %.1f |\n",
                (long long)l.n, (long long)l.c, (long long)l.h, (long long)l.h, (long long)l.o, vc.cpu * 1e6,
                vc.wall * 1e6, vr.cpu * 1e6, vr.wall * 1e6, dc[0].cpu * 1e6, dc[0].wall * 1e6, dc[1].cpu * 1e6,
                dc[1].wall * 1e6, post * 1e6, (vr.cpu - post) * 1e6);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int inner = 20;
  bool only_sizes = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--inner") && i + 1 < argc) inner = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--only-pool-sizes")) only_sizes = true;
    else {
      std::fprintf(stderr, "usage: %s [--inner N] [--only-pool-sizes]\n", argv[0]);
      return 2;
    }
  }
  try {
    (void)vnn::zeros({1});  // vnn's plugin first: its OpenMP pool is the one both use
    Dnnl k;
    std::printf("# onednn_ops_bench: vnn %s on cpu:0 vs oneDNN %d.%d called directly\n", VNN_VERSION_STRING,
                dnnl_version()->major, dnnl_version()->minor);
    if (!only_sizes) {
      pooling(k, inner);
      conv_relu(k, inner);
    }
    pool_sizes(inner);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onednn_ops_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The plugin C ABI, entry by entry, against values computed on the host:
// memory, copies, fill/copy/binary/unary/reduce ops, queues and events,
// threads and errors. Runs against whichever plugin abi_main.cpp loaded
// (every plugin found: openmp, opencl, cuda/hip where a device is);
// matmul and softmax are in abi_linalg.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <random>
#include <thread>

#include "backends/abi_plugin.hpp"

using namespace abi_test;

TEST_CASE("device_info describes every device", "[abi]") {
  const vnn_backend* B = table();
  int32_t count = 0;
  REQUIRE(ok(B->probe(&count)));
  REQUIRE(count > 0);
  for (int32_t i = 0; i < count; ++i) {
    vnn_device_info info{};
    info.struct_size = sizeof info;
    REQUIRE(ok(B->device_info(i, &info)));
    INFO(plugin_name() << ":" << i << ": " << info.name << " | " << info.vendor << " | arch " << info.arch);
    CHECK(info.name[0] != 0);
    CHECK(info.total_memory > 0);
    // Only the CPU plugin hands out plain host pointers.
    CHECK(info.host_accessible == (plugin_name() == "openmp" ? 1 : 0));
  }
  // A device past the count and a too-small struct are argument errors.
  vnn_device_info info{};
  info.struct_size = sizeof info;
  CHECK(B->device_info(count, &info) == VNN_STATUS_INVALID_ARGUMENT);
  info.struct_size = 8;
  CHECK(B->device_info(0, &info) == VNN_STATUS_INVALID_ARGUMENT);
}

TEST_CASE("memory: transfers with offsets, empty and impossible allocations", "[abi]") {
  const vnn_backend* B = table();
  std::vector<float> h(1000);
  for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>(i) * 0.5f - 7.0f;
  void* d = upload(h);
  CHECK(download<float>(d, h.size()) == h);
  // Byte offsets on both sides of a partial transfer and a device copy.
  std::vector<float> part(10);
  REQUIRE(ok(B->copy_to_host(kDevice, part.data(), d, 100 * sizeof(float), 10 * sizeof(float), nullptr, 1)));
  CHECK(part[0] == h[100]);
  CHECK(part[9] == h[109]);
  void* d2 = device_buffer(h.size() * sizeof(float));
  REQUIRE(ok(B->copy_on_device(kDevice, d2, 8, d, 40, 200, nullptr)));
  std::vector<float> got(50);
  REQUIRE(ok(B->copy_to_host(kDevice, got.data(), d2, 8, 200, nullptr, 1)));
  CHECK(got[0] == h[10]);
  CHECK(got[49] == h[59]);
  // 0 bytes: valid and unique handles.
  void *z1 = nullptr, *z2 = nullptr;
  REQUIRE(ok(B->alloc(kDevice, 0, &z1)));
  REQUIRE(ok(B->alloc(kDevice, 0, &z2)));
  CHECK(z1 != nullptr);
  CHECK(z2 != nullptr);
  CHECK(z1 != z2);
  // Asking far more than the device can give is an out-of-memory status
  // whose message names the size.
  void* huge = nullptr;
  CHECK(B->alloc(kDevice, size_t{1} << 60, &huge) == VNN_STATUS_OUT_OF_MEMORY);
  const std::string msg = B->last_error();
  INFO("OOM message: " << msg);
  CHECK(msg.find("1152921504606846976") != std::string::npos);
  if (is_opencl()) CHECK(msg.find("max alloc") != std::string::npos);
  release({d, d2, z1, z2});
}

TEST_CASE("FILL: strided, every dtype, float16/bfloat16 rounding", "[abi]") {
  void* d = device_buffer(16 * sizeof(float));
  REQUIRE(ok(run_op(VNN_OP_FILL, {}, desc(d, VNN_FLOAT32, {16}), {2.5})));
  // Strided: every other element of the last 8 (a kernel, not a buffer fill).
  REQUIRE(ok(run_op(VNN_OP_FILL, {}, desc(d, VNN_FLOAT32, {2, 2}, {4, 2}, 8), {-1.0})));
  std::vector<float> got = download<float>(d, 16);
  for (int i = 0; i < 16; ++i) {
    const bool hit = i == 8 || i == 10 || i == 12 || i == 14;
    INFO("fill[" << i << "]");
    CHECK(got[i] == (hit ? -1.0f : 2.5f));
  }
  void* h16 = device_buffer(8);
  REQUIRE(ok(run_op(VNN_OP_FILL, {}, desc(h16, VNN_FLOAT16, {2}), {0.1})));
  REQUIRE(ok(run_op(VNN_OP_FILL, {}, desc(h16, VNN_BFLOAT16, {2}, {1}, 2), {1.0 / 3.0})));
  std::vector<uint16_t> bits = download<uint16_t>(h16, 4);
  CHECK(bits[0] == 0x2e66);  // float16(0.1)
  CHECK(bits[1] == 0x2e66);
  CHECK(bits[2] == 0x3eab);  // bfloat16(1/3)
  CHECK(bits[3] == 0x3eab);
  void* b = device_buffer(4);
  REQUIRE(ok(run_op(VNN_OP_FILL, {}, desc(b, VNN_BOOL, {4}, {1}), {2.5})));
  REQUIRE(ok(run_op(VNN_OP_FILL, {}, desc(b, VNN_UINT8, {1}, {1}, 3), {7})));
  std::vector<uint8_t> bb = download<uint8_t>(b, 4);
  CHECK(bb[0] == 1);
  CHECK(bb[2] == 1);
  CHECK(bb[3] == 7);
  void* i64 = device_buffer(3 * 8);
  REQUIRE(ok(run_op(VNN_OP_FILL, {}, desc(i64, VNN_INT64, {3}, {1}), {-5e12})));
  std::vector<int64_t> ii = download<int64_t>(i64, 3);
  CHECK(ii[0] == -5000000000000LL);
  CHECK(ii[2] == -5000000000000LL);
  release({d, h16, b, i64});
}

TEST_CASE("COPY: transposes, converts and rounds", "[abi]") {
  // Transpose 3x4 float32 into 4x3 int32: C casts truncate toward zero.
  std::vector<float> src(12);
  for (int i = 0; i < 12; ++i) src[i] = i * 1.75f - 5.0f;
  void* s = upload(src);
  void* o = device_buffer(12 * 4);
  REQUIRE(ok(run_op(VNN_OP_COPY, {desc(s, VNN_FLOAT32, {4, 3}, {1, 4})}, desc(o, VNN_INT32, {4, 3}))));
  std::vector<int32_t> t = download<int32_t>(o, 12);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c) {
      INFO("transpose[" << r << "][" << c << "]");
      CHECK(t[r * 3 + c] == static_cast<int32_t>(src[c * 4 + r]));
    }

  // float32 -> float16 -> float32, round to nearest even.
  const float one = 1.0f;
  std::vector<float> f = {one, 0.1f, 65504.0f, 1e5f, one + std::ldexp(1.0f, -11),
                          one + 3 * std::ldexp(1.0f, -11), -2.5f, 6e-8f, 1e-9f, NAN};
  const uint16_t want[] = {0x3c00, 0x2e66, 0x7bff, 0x7c00, 0x3c00, 0x3c02, 0xc100, 0x0001, 0x0000};
  void* fd = upload(f);
  void* hd = device_buffer(f.size() * 2);
  void* back = device_buffer(f.size() * 4);
  REQUIRE(ok(run_op(VNN_OP_COPY, {desc(fd, VNN_FLOAT32, {10})}, desc(hd, VNN_FLOAT16, {10}))));
  REQUIRE(ok(run_op(VNN_OP_COPY, {desc(hd, VNN_FLOAT16, {10})}, desc(back, VNN_FLOAT32, {10}))));
  std::vector<uint16_t> hb = download<uint16_t>(hd, 10);
  std::vector<float> fb = download<float>(back, 10);
  for (int i = 0; i < 9; ++i) {
    INFO("float16 of " << f[i]);
    CHECK(hb[i] == want[i]);
    CHECK(fb[i] == static_cast<float>(half_to_double(want[i])));
  }
  CHECK((hb[9] & 0x7c00) == 0x7c00);  // NaN stays NaN
  CHECK((hb[9] & 0x3ff) != 0);
  CHECK(std::isnan(fb[9]));

  // float32 -> bfloat16 -> float32 and float32 -> bool.
  std::vector<float> g = {1.0f / 3.0f, -0.0f, 0.5f, NAN};
  void* gd = upload(g);
  void* bf = device_buffer(8);
  void* gb = device_buffer(16);
  void* bo = device_buffer(4);
  REQUIRE(ok(run_op(VNN_OP_COPY, {desc(gd, VNN_FLOAT32, {4})}, desc(bf, VNN_BFLOAT16, {4}))));
  REQUIRE(ok(run_op(VNN_OP_COPY, {desc(bf, VNN_BFLOAT16, {4})}, desc(gb, VNN_FLOAT32, {4}))));
  REQUIRE(ok(run_op(VNN_OP_COPY, {desc(gd, VNN_FLOAT32, {4})}, desc(bo, VNN_BOOL, {4}))));
  std::vector<uint16_t> bfb = download<uint16_t>(bf, 4);
  std::vector<float> gbb = download<float>(gb, 4);
  std::vector<uint8_t> bob = download<uint8_t>(bo, 4);
  CHECK(bfb[0] == 0x3eab);
  CHECK(bfb[1] == 0x8000);
  CHECK(bfb[2] == 0x3f00);
  CHECK(gbb[0] == 0.333984375f);
  CHECK(std::isnan(gbb[3]));
  CHECK(bob == std::vector<uint8_t>{1, 0, 1, 1});  // NaN is true

  // An 8-dim permuted copy (reversed axes) walks the general index path.
  std::vector<int32_t> big(256);
  for (int i = 0; i < 256; ++i) big[i] = i * 3 + 1;
  void* bd = upload(big);
  void* pd = device_buffer(256 * 8);
  std::vector<int64_t> sz(8, 2), rev = {1, 2, 4, 8, 16, 32, 64, 128};
  REQUIRE(ok(run_op(VNN_OP_COPY, {desc(bd, VNN_INT32, sz, rev)}, desc(pd, VNN_INT64, sz))));
  std::vector<int64_t> pb = download<int64_t>(pd, 256);
  for (int i = 0; i < 256; ++i) {
    int r = 0;
    for (int k = 0; k < 8; ++k) r |= ((i >> k) & 1) << (7 - k);
    INFO("8-dim permute [" << i << "]");
    CHECK(pb[i] == big[r]);
  }

  if (fp64_supported()) {
    // Direct double -> half rounding: via float this would round to 1.0.
    std::vector<double> dd = {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)};
    void* ddd = upload(dd);
    void* dh = device_buffer(2);
    REQUIRE(ok(run_op(VNN_OP_COPY, {desc(ddd, VNN_FLOAT64, {1})}, desc(dh, VNN_FLOAT16, {1}))));
    CHECK(download<uint16_t>(dh, 1)[0] == 0x3c01);
    release({ddd, dh});
  }
  release({s, o, fd, hd, back, gd, bf, gb, bo, bd, pd});
}

TEST_CASE("BINARY on floats: broadcast, in place, float16", "[abi]") {
  // a: 3x4; b: a 4-vector broadcast over rows (stride 0); out = a + 2 * b.
  std::vector<float> a(12), b = {1.0f, -2.0f, 0.25f, NAN};
  for (int i = 0; i < 12; ++i) a[i] = i * 0.5f - 2.0f;
  void* ad = upload(a);
  void* bd = upload(b);
  void* od = device_buffer(12 * 4);
  const vnn_tensor_desc A = desc(ad, VNN_FLOAT32, {3, 4}), O = desc(od, VNN_FLOAT32, {3, 4});
  const vnn_tensor_desc Brow = desc(bd, VNN_FLOAT32, {3, 4}, {0, 1});
  const vnn_tensor_desc Bscalar = desc(bd, VNN_FLOAT32, {3, 4}, {0, 0}, 2);  // b[2] everywhere
  for (int fn = 0; fn <= VNN_BINARY_MINIMUM; ++fn) {
    for (int bc = 0; bc < 2; ++bc) {
      REQUIRE(ok(run_op(VNN_OP_BINARY, {A, bc ? Bscalar : Brow}, O, {2.0}, {fn})));
      std::vector<float> got = download<float>(od, 12);
      for (int i = 0; i < 12; ++i) {
        const float x = a[i], y = bc ? b[2] : b[i % 4];
        const float want = fn == 0 ? x + 2.0f * y : fn == 1 ? x - 2.0f * y : fn == 2 ? x * y
                           : fn == 3                         ? x / y
                           : std::isnan(x) || std::isnan(y) ? NAN
                           : fn == 4                         ? std::max(x, y)
                                                             : std::min(x, y);
        INFO("binary fn " << fn << " broadcast " << bc << " [" << i << "]: " << got[i] << ", want " << want);
        CHECK(close(got[i], want, 1e-7));
      }
    }
  }
  // In place, and on float16 (computed in float, stored rounded).
  REQUIRE(ok(run_op(VNN_OP_BINARY, {A, A}, A, {1.0}, {VNN_BINARY_ADD})));
  CHECK(download<float>(ad, 12)[5] == 2 * a[5]);
  void* h = device_buffer(4);
  REQUIRE(ok(run_op(VNN_OP_FILL, {}, desc(h, VNN_FLOAT16, {2}), {1.5})));
  REQUIRE(ok(run_op(VNN_OP_BINARY, {desc(h, VNN_FLOAT16, {2}), desc(h, VNN_FLOAT16, {2})}, desc(h, VNN_FLOAT16, {2}),
                    {1.0}, {VNN_BINARY_MUL})));
  CHECK(download<uint16_t>(h, 2)[1] == 0x4080);  // 2.25
  release({ad, bd, od, h});
}

template <typename T>
void check_unary(vnn_dtype dt, double rel) {
  std::vector<T> x = {-3.5, -1, -0.25, 0, 0.5, 1, 2.75, 10, -20, 20};
  void* xd = upload(x);
  void* od = device_buffer(x.size() * sizeof(T));
  const int64_t n = static_cast<int64_t>(x.size());
  for (int fn = 0; fn <= VNN_UNARY_TANH; ++fn) {
    REQUIRE(ok(run_op(VNN_OP_UNARY, {desc(xd, dt, {n})}, desc(od, dt, {n}), {}, {fn})));
    std::vector<T> got = download<T>(od, x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const T v = x[i];
      const T want = fn == 0 ? -v : fn == 1 ? std::abs(v) : fn == 2 ? std::exp(v) : fn == 3 ? std::log(v)
                     : fn == 4 ? std::sqrt(v)
                     : fn == 5 ? (v < 0 ? T(0) : v)
                     : fn == 6 ? T(1) / (T(1) + std::exp(-v))
                               : std::tanh(v);
      INFO("unary fn " << fn << " of " << double(v) << ": " << double(got[i]) << ", want " << double(want));
      CHECK(close(got[i], want, rel));
    }
  }
  release({xd, od});
}

TEST_CASE("UNARY on float32 and float64", "[abi]") {
  check_unary<float>(VNN_FLOAT32, 4e-7);
  if (fp64_supported()) check_unary<double>(VNN_FLOAT64, 1e-15);
}

TEST_CASE("integers: truncating division, wrapping, bool arithmetic", "[abi]") {
  const int32_t mn = std::numeric_limits<int32_t>::min();
  std::vector<int32_t> a = {7, -7, 5, mn, 9, -3}, b = {-2, 2, 0, -1, 4, 3};
  void* ad = upload(a);
  void* bd = upload(b);
  void* od = device_buffer(6 * 4);
  auto bin = [&](int fn, double alpha) {
    REQUIRE(ok(run_op(VNN_OP_BINARY, {desc(ad, VNN_INT32, {6}), desc(bd, VNN_INT32, {6})}, desc(od, VNN_INT32, {6}),
                      {alpha}, {fn})));
    return download<int32_t>(od, 6);
  };
  // Truncating, x / 0 = 0, MIN / -1 wraps.
  CHECK(bin(VNN_BINARY_DIV, 1) == std::vector<int32_t>{-3, -3, 0, mn, 2, -1});
  std::vector<int32_t> s = bin(VNN_BINARY_SUB, 3);
  CHECK(s[0] == 13);
  CHECK(s[5] == -12);
  std::vector<int32_t> m = bin(VNN_BINARY_MAXIMUM, 1);
  CHECK(m[0] == 7);
  CHECK(m[1] == 2);
  CHECK(m[3] == -1);
  REQUIRE(ok(run_op(VNN_OP_UNARY, {desc(ad, VNN_INT32, {6})}, desc(od, VNN_INT32, {6}), {}, {VNN_UNARY_ABS})));
  CHECK(download<int32_t>(od, 6)[1] == 7);
  REQUIRE(ok(run_op(VNN_OP_UNARY, {desc(ad, VNN_INT32, {6})}, desc(od, VNN_INT32, {6}), {}, {VNN_UNARY_RELU})));
  std::vector<int32_t> r = download<int32_t>(od, 6);
  CHECK(r[0] == 7);
  CHECK(r[1] == 0);
  CHECK(r[3] == 0);

  std::vector<int64_t> l = {int64_t{1} << 40, -5}, l2 = {3, 4};
  void* ld = upload(l);
  void* l2d = upload(l2);
  REQUIRE(ok(run_op(VNN_OP_BINARY, {desc(ld, VNN_INT64, {2}), desc(l2d, VNN_INT64, {2})}, desc(ld, VNN_INT64, {2}),
                    {3.0}, {VNN_BINARY_ADD})));
  CHECK(download<int64_t>(ld, 2) == std::vector<int64_t>{(int64_t{1} << 40) + 9, 7});

  std::vector<uint8_t> u = {200, 1, 0, 1}, v = {100, 1, 0, 0};
  void* ud = upload(u);
  void* vd = upload(v);
  void* uo = device_buffer(4);
  REQUIRE(ok(run_op(VNN_OP_BINARY, {desc(ud, VNN_UINT8, {2}), desc(vd, VNN_UINT8, {2})}, desc(uo, VNN_UINT8, {2}),
                    {1.0}, {VNN_BINARY_ADD})));
  CHECK(download<uint8_t>(uo, 1)[0] == 44);  // 200 + 100 wraps
  // bool, C++ rules: true + true -> true, true - true -> false, true * false
  // -> false. From offset 1 both inputs read {1, 0}.
  const vnn_tensor_desc ba = desc(ud, VNN_BOOL, {2}, {1}, 1), bb = desc(vd, VNN_BOOL, {2}, {1}, 1);
  const vnn_tensor_desc bo = desc(uo, VNN_BOOL, {2});
  REQUIRE(ok(run_op(VNN_OP_BINARY, {ba, bb}, bo, {1.0}, {VNN_BINARY_ADD})));
  CHECK(download<uint8_t>(uo, 2) == std::vector<uint8_t>{1, 0});
  REQUIRE(ok(run_op(VNN_OP_BINARY, {ba, bb}, bo, {1.0}, {VNN_BINARY_SUB})));
  CHECK(download<uint8_t>(uo, 1)[0] == 0);
  release({ad, bd, od, ld, l2d, ud, vd, uo});
}

TEST_CASE("queues and events: timing, pinned memory, asynchronous copies", "[abi]") {
  const vnn_backend* B = table();
  const size_t n = 1 << 22;
  void* d = device_buffer(n * 4);
  void *e0 = nullptr, *e1 = nullptr;
  REQUIRE(ok(B->event_create(kDevice, &e0)));
  REQUIRE(ok(B->event_create(kDevice, &e1)));
  REQUIRE(ok(B->event_record(kDevice, e0, nullptr)));
  REQUIRE(ok(run_op(VNN_OP_FILL, {}, desc(d, VNN_FLOAT32, {int64_t(n) / 2}, {2}), {3.0})));
  REQUIRE(ok(B->event_record(kDevice, e1, nullptr)));
  REQUIRE(ok(B->event_synchronize(kDevice, e1)));
  double ms = -1;
  REQUIRE(ok(B->event_elapsed(kDevice, e0, e1, &ms)));
  CHECK(ms >= 0);
  if (VNN_BACKEND_HAS(B, event_query)) CHECK(B->event_query(kDevice, e1) == VNN_STATUS_OK);  // synchronised

  // Non-blocking copies from and to pinned memory on an extra queue.
  void* q = nullptr;
  REQUIRE(ok(B->queue_create(kDevice, &q)));
  void *hin = nullptr, *hout = nullptr;
  REQUIRE(ok(B->host_alloc(kDevice, n * 4, &hin)));
  REQUIRE(ok(B->host_alloc(kDevice, n * 4, &hout)));
  float* in = static_cast<float*>(hin);
  float* out = static_cast<float*>(hout);
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<float>(i % 1000) - 500.0f;
  REQUIRE(ok(B->copy_to_device(kDevice, d, 0, hin, n * 4, q, 0)));
  REQUIRE(ok(run_op(VNN_OP_UNARY, {desc(d, VNN_FLOAT32, {int64_t(n)})}, desc(d, VNN_FLOAT32, {int64_t(n)}), {},
                    {VNN_UNARY_NEG}, q)));
  REQUIRE(ok(B->copy_to_host(kDevice, hout, d, 0, n * 4, q, 0)));
  REQUIRE(ok(B->queue_synchronize(kDevice, q)));
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i) wrong += out[i] != -in[i];
  CHECK(wrong == 0);
  REQUIRE(ok(B->host_free(kDevice, hin)));
  REQUIRE(ok(B->host_free(kDevice, hout)));
  REQUIRE(ok(B->queue_destroy(kDevice, q)));
  REQUIRE(ok(B->event_destroy(kDevice, e0)));
  REQUIRE(ok(B->event_destroy(kDevice, e1)));
  release({d});
}

TEST_CASE("edge shapes: 0-dim and empty outputs", "[abi]") {
  void* d = device_buffer(4 * 4);
  REQUIRE(ok(run_op(VNN_OP_FILL, {}, desc(d, VNN_INT32, {4}), {1})));
  REQUIRE(ok(run_op(VNN_OP_FILL, {}, desc(d, VNN_INT32, {}, {}, 2), {9})));  // ndim 0: one element
  REQUIRE(ok(run_op(VNN_OP_FILL, {}, desc(d, VNN_INT32, {3, 0}), {5})));    // no elements: nothing
  CHECK(download<int32_t>(d, 4) == std::vector<int32_t>{1, 1, 9, 1});
  release({d});
}

// Ops from several threads at once share cached kernels and the default
// queue. Catch2's assertions are not thread-safe: the threads collect their
// failures and the main thread checks them.
TEST_CASE("ops from four threads at once", "[abi]") {
  const vnn_backend* B = table();
  std::mutex m;
  std::vector<std::string> failures;
  auto fail = [&](int t, int iter, const std::string& what) {
    std::lock_guard<std::mutex> lock(m);
    failures.push_back("thread " + std::to_string(t) + " iter " + std::to_string(iter) + ": " + what);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const int64_t n = 4096;
      void *a = nullptr, *b = nullptr;
      if (B->alloc(kDevice, n * 4, &a) != VNN_STATUS_OK || B->alloc(kDevice, n * 4, &b) != VNN_STATUS_OK)
        return fail(t, -1, std::string("alloc: ") + B->last_error());
      for (int iter = 0; iter < 50; ++iter) {
        float got[2] = {0, 0};
        if (run_op(VNN_OP_FILL, {}, desc(a, VNN_FLOAT32, {n}, {1}), {double(t)}) != VNN_STATUS_OK ||
            run_op(VNN_OP_FILL, {}, desc(b, VNN_FLOAT32, {n / 2}, {2}), {double(iter)}) != VNN_STATUS_OK ||
            run_op(VNN_OP_BINARY, {desc(a, VNN_FLOAT32, {n / 2}, {2}), desc(b, VNN_FLOAT32, {n / 2}, {2})},
                   desc(b, VNN_FLOAT32, {n / 2}, {2}), {0.5}, {VNN_BINARY_ADD}) != VNN_STATUS_OK ||
            B->copy_to_host(kDevice, got, b, 0, sizeof got, nullptr, 1) != VNN_STATUS_OK) {
          fail(t, iter, B->last_error());
          break;
        }
        if (got[0] != t + 0.5f * iter) fail(t, iter, "got " + std::to_string(got[0]));
      }
      if (B->free(kDevice, a) != VNN_STATUS_OK || B->free(kDevice, b) != VNN_STATUS_OK)
        fail(t, -1, std::string("free: ") + B->last_error());
    });
  }
  for (auto& th : threads) th.join();
  for (const std::string& f : failures) UNSCOPED_INFO(f);
  CHECK(failures.empty());
}

TEST_CASE("errors: unknown kinds and functions are UNSUPPORTED, named", "[abi]") {
  const vnn_backend* B = table();
  void* d = device_buffer(8);
  CHECK(run_op(99, {}, desc(d, VNN_FLOAT32, {1})) == VNN_STATUS_UNSUPPORTED);
  INFO("kind 99: " << B->last_error());
  CHECK(std::string(B->last_error()).find(plugin_name() + ":") != std::string::npos);
  CHECK(run_op(VNN_OP_UNARY, {desc(d, VNN_FLOAT32, {1})}, desc(d, VNN_FLOAT32, {1}), {}, {42}) ==
        VNN_STATUS_UNSUPPORTED);
  if (!fp64_supported()) {
    CHECK(run_op(VNN_OP_FILL, {}, desc(d, VNN_FLOAT64, {1}), {1.0}) == VNN_STATUS_UNSUPPORTED);
    CHECK(std::string(B->last_error()).find("cl_khr_fp64") != std::string::npos);
  }
  release({d});
}

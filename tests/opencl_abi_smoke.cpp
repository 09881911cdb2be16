// Standalone smoke test of the OpenCL backend plugin through the C ABI only:
//   opencl_abi_smoke <path/to/libvnn-backend-opencl.so> [--expect-no-device]
// It dlopen()s the plugin the way the core does and checks every entry with
// values computed on the host. Exit 0: passed; 77: skipped (no OpenCL
// device); anything else: failed, with the reason on stderr.
// With VNN_OPENCL_CACHE_DIR set it also reports whether programs came from
// the disk cache (no new cache files appear when they all did).
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "vnn/backend_abi.h"

namespace {

const vnn_backend* B = nullptr;
int32_t DEV = 0;

#define CHECK(cond, ...)                                                     \
  do {                                                                       \
    if (!(cond)) {                                                           \
      std::fprintf(stderr, "FAILED %s:%d: %s\n  ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                     \
      std::fprintf(stderr, "\n");                                            \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

#define CHECK_OK(call)                                                               \
  do {                                                                               \
    vnn_status st_ = (call);                                                         \
    CHECK(st_ == VNN_STATUS_OK, "status %d, last_error: %s", static_cast<int>(st_), \
          B->last_error());                                                          \
  } while (0)

vnn_tensor_desc desc(void* data, vnn_dtype dt, std::vector<int64_t> sizes,
                     std::vector<int64_t> strides = {}, int64_t offset = 0) {
  vnn_tensor_desc d{};
  d.data = data;
  d.dtype = dt;
  d.offset = offset;
  d.ndim = static_cast<int32_t>(sizes.size());
  if (strides.empty()) {  // contiguous, row-major
    strides.resize(sizes.size());
    int64_t s = 1;
    for (size_t k = sizes.size(); k-- > 0;) {
      strides[k] = s;
      s *= sizes[k];
    }
  }
  for (size_t k = 0; k < sizes.size(); ++k) {
    d.sizes[k] = sizes[k];
    d.strides[k] = strides[k];
  }
  return d;
}

vnn_status run_op(int kind, std::vector<vnn_tensor_desc> in, vnn_tensor_desc out,
                  std::vector<double> scalars = {}, std::vector<int64_t> ints = {},
                  void* queue = nullptr) {
  vnn_op op{};
  op.struct_size = sizeof op;
  op.kind = kind;
  op.num_inputs = static_cast<int32_t>(in.size());
  op.num_outputs = 1;
  op.num_scalars = static_cast<int32_t>(scalars.size());
  op.num_ints = static_cast<int32_t>(ints.size());
  op.inputs = in.data();
  op.outputs = &out;
  op.scalars = scalars.data();
  op.ints = ints.data();
  op.queue = queue;
  return B->run(DEV, &op);
}

template <typename T>
void* upload(const std::vector<T>& v) {
  void* h = nullptr;
  CHECK_OK(B->alloc(DEV, v.size() * sizeof(T), &h));
  CHECK_OK(B->copy_to_device(DEV, h, 0, v.data(), v.size() * sizeof(T), nullptr, 1));
  return h;
}

template <typename T>
std::vector<T> download(void* h, size_t n) {
  std::vector<T> v(n);
  CHECK_OK(B->copy_to_host(DEV, v.data(), h, 0, n * sizeof(T), nullptr, 1));
  return v;
}

void* device_buffer(size_t bytes) {
  void* h = nullptr;
  CHECK_OK(B->alloc(DEV, bytes, &h));
  return h;
}

// Independent of the plugin's encoder: decodes IEEE binary16 exactly.
double half_to_double(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
  double v = exp == 0    ? std::ldexp(man, -24)
             : exp == 31 ? (man ? NAN : INFINITY)
                         : std::ldexp(1024 + man, exp - 25);
  return sign ? -v : v;
}

bool close(double got, double want, double rel) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= rel * std::max(std::fabs(want), 1e-30) + 1e-300;
}

size_t count_cache_files() {
  const char* dir = std::getenv("VNN_OPENCL_CACHE_DIR");
  if (!dir || !std::filesystem::is_directory(dir)) return 0;
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".bin") ++n;
  return n;
}

bool fp64_supported() {
  vnn_device_info info{};
  info.struct_size = sizeof info;
  CHECK_OK(B->device_info(DEV, &info));
  return std::strstr(info.properties, "fp64=yes") != nullptr;
}

void test_memory() {
  std::vector<float> h(1000);
  for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>(i) * 0.5f - 7.0f;
  void* d = upload(h);
  CHECK(download<float>(d, h.size()) == h, "H2D/D2H roundtrip differs");
  // Byte offsets on both sides of a partial transfer and a device copy.
  std::vector<float> part(10);
  CHECK_OK(B->copy_to_host(DEV, part.data(), d, 100 * sizeof(float), 10 * sizeof(float), nullptr, 1));
  CHECK(part[0] == h[100] && part[9] == h[109], "offset read wrong: %g", part[0]);
  void* d2 = device_buffer(h.size() * sizeof(float));
  CHECK_OK(B->copy_on_device(DEV, d2, 8, d, 40, 200, nullptr));
  std::vector<float> got(50);
  CHECK_OK(B->copy_to_host(DEV, got.data(), d2, 8, 200, nullptr, 1));
  CHECK(got[0] == h[10] && got[49] == h[59], "copy_on_device with offsets wrong: %g", got[0]);
  // 0 bytes: valid and unique handles.
  void *z1 = nullptr, *z2 = nullptr;
  CHECK_OK(B->alloc(DEV, 0, &z1));
  CHECK_OK(B->alloc(DEV, 0, &z2));
  CHECK(z1 && z2 && z1 != z2, "0-byte allocations must be unique handles");
  // Asking far more than the device can give is an out-of-memory status.
  void* huge = nullptr;
  vnn_status st = B->alloc(DEV, size_t{1} << 60, &huge);
  CHECK(st == VNN_STATUS_OUT_OF_MEMORY, "status %d: %s", st, B->last_error());
  CHECK(std::strstr(B->last_error(), "1152921504606846976") && std::strstr(B->last_error(), "max alloc"),
        "OOM message lacks the sizes: %s", B->last_error());
  std::printf("  OOM message: %s\n", B->last_error());
  for (void* p : {d, d2, z1, z2}) CHECK_OK(B->free(DEV, p));
}

void test_fill() {
  void* d = device_buffer(16 * sizeof(float));
  CHECK_OK(run_op(VNN_OP_FILL, {}, desc(d, VNN_FLOAT32, {16}), {2.5}));
  // Strided: every other element of the last 8 (kernel path, not FillBuffer).
  CHECK_OK(run_op(VNN_OP_FILL, {}, desc(d, VNN_FLOAT32, {2, 2}, {4, 2}, 8), {-1.0}));
  std::vector<float> got = download<float>(d, 16);
  for (int i = 0; i < 16; ++i) {
    bool hit = i == 8 || i == 10 || i == 12 || i == 14;
    CHECK(got[i] == (hit ? -1.0f : 2.5f), "fill[%d] = %g", i, got[i]);
  }
  void* h16 = device_buffer(8);
  CHECK_OK(run_op(VNN_OP_FILL, {}, desc(h16, VNN_FLOAT16, {2}), {0.1}));
  CHECK_OK(run_op(VNN_OP_FILL, {}, desc(h16, VNN_BFLOAT16, {2}, {1}, 2), {1.0 / 3.0}));
  std::vector<uint16_t> bits = download<uint16_t>(h16, 4);
  CHECK(bits[0] == 0x2e66 && bits[1] == 0x2e66, "float16 fill 0.1: %04x", bits[0]);
  CHECK(bits[2] == 0x3eab && bits[3] == 0x3eab, "bfloat16 fill 1/3: %04x", bits[2]);
  void* b = device_buffer(4);
  CHECK_OK(run_op(VNN_OP_FILL, {}, desc(b, VNN_BOOL, {4}, {1}), {2.5}));
  CHECK_OK(run_op(VNN_OP_FILL, {}, desc(b, VNN_UINT8, {1}, {1}, 3), {7}));
  std::vector<uint8_t> bb = download<uint8_t>(b, 4);
  CHECK(bb[0] == 1 && bb[2] == 1 && bb[3] == 7, "bool/uint8 fill: %d %d", bb[0], bb[3]);
  void* i64 = device_buffer(3 * 8);
  CHECK_OK(run_op(VNN_OP_FILL, {}, desc(i64, VNN_INT64, {3}, {1}), {-5e12}));
  std::vector<int64_t> ii = download<int64_t>(i64, 3);
  CHECK(ii[0] == -5000000000000LL && ii[2] == -5000000000000LL, "int64 fill: %lld", (long long)ii[0]);
  for (void* p : {d, h16, b, i64}) CHECK_OK(B->free(DEV, p));
}

void test_copy() {
  // Transpose 3x4 float32 into 4x3 int32: C casts truncate toward zero.
  std::vector<float> src(12);
  for (int i = 0; i < 12; ++i) src[i] = i * 1.75f - 5.0f;
  void* s = upload(src);
  void* o = device_buffer(12 * 4);
  CHECK_OK(run_op(VNN_OP_COPY, {desc(s, VNN_FLOAT32, {4, 3}, {1, 4})}, desc(o, VNN_INT32, {4, 3})));
  std::vector<int32_t> t = download<int32_t>(o, 12);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c)
      CHECK(t[r * 3 + c] == static_cast<int32_t>(src[c * 4 + r]), "transpose[%d][%d] = %d", r, c,
            t[r * 3 + c]);

  // float32 -> float16 -> float32, round to nearest even.
  const float one = 1.0f;
  std::vector<float> f = {one, 0.1f, 65504.0f, 1e5f, one + std::ldexp(1.0f, -11),
                          one + 3 * std::ldexp(1.0f, -11), -2.5f, 6e-8f, 1e-9f, NAN};
  const uint16_t want[] = {0x3c00, 0x2e66, 0x7bff, 0x7c00, 0x3c00, 0x3c02, 0xc100, 0x0001, 0x0000};
  void* fd = upload(f);
  void* hd = device_buffer(f.size() * 2);
  void* back = device_buffer(f.size() * 4);
  CHECK_OK(run_op(VNN_OP_COPY, {desc(fd, VNN_FLOAT32, {10})}, desc(hd, VNN_FLOAT16, {10})));
  CHECK_OK(run_op(VNN_OP_COPY, {desc(hd, VNN_FLOAT16, {10})}, desc(back, VNN_FLOAT32, {10})));
  std::vector<uint16_t> hb = download<uint16_t>(hd, 10);
  std::vector<float> fb = download<float>(back, 10);
  for (int i = 0; i < 9; ++i) {
    CHECK(hb[i] == want[i], "float16 of %g: %04x, want %04x", f[i], hb[i], want[i]);
    CHECK(fb[i] == static_cast<float>(half_to_double(want[i])), "back[%d] = %g", i, fb[i]);
  }
  CHECK((hb[9] & 0x7c00) == 0x7c00 && (hb[9] & 0x3ff) && std::isnan(fb[9]), "NaN lost: %04x", hb[9]);

  // float32 -> bfloat16 -> float32 and float32 -> bool.
  std::vector<float> g = {1.0f / 3.0f, -0.0f, 0.5f, NAN};
  void* gd = upload(g);
  void* bf = device_buffer(8);
  void* gb = device_buffer(16);
  void* bo = device_buffer(4);
  CHECK_OK(run_op(VNN_OP_COPY, {desc(gd, VNN_FLOAT32, {4})}, desc(bf, VNN_BFLOAT16, {4})));
  CHECK_OK(run_op(VNN_OP_COPY, {desc(bf, VNN_BFLOAT16, {4})}, desc(gb, VNN_FLOAT32, {4})));
  CHECK_OK(run_op(VNN_OP_COPY, {desc(gd, VNN_FLOAT32, {4})}, desc(bo, VNN_BOOL, {4})));
  std::vector<uint16_t> bfb = download<uint16_t>(bf, 4);
  std::vector<float> gbb = download<float>(gb, 4);
  std::vector<uint8_t> bob = download<uint8_t>(bo, 4);
  CHECK(bfb[0] == 0x3eab && bfb[1] == 0x8000 && bfb[2] == 0x3f00, "bfloat16: %04x %04x", bfb[0], bfb[1]);
  CHECK(gbb[0] == 0.333984375f && std::isnan(gbb[3]), "bfloat16 back: %.9g", gbb[0]);
  CHECK(bob[0] == 1 && bob[1] == 0 && bob[2] == 1 && bob[3] == 1, "to bool: %d%d%d%d", bob[0], bob[1],
        bob[2], bob[3]);

  // An 8-dim permuted copy (reversed axes) walks the general index path.
  std::vector<int32_t> big(256);
  for (int i = 0; i < 256; ++i) big[i] = i * 3 + 1;
  void* bd = upload(big);
  void* pd = device_buffer(256 * 8);
  std::vector<int64_t> sz(8, 2), rev = {1, 2, 4, 8, 16, 32, 64, 128};
  CHECK_OK(run_op(VNN_OP_COPY, {desc(bd, VNN_INT32, sz, rev)}, desc(pd, VNN_INT64, sz)));
  std::vector<int64_t> pb = download<int64_t>(pd, 256);
  for (int i = 0; i < 256; ++i) {
    int r = 0;
    for (int k = 0; k < 8; ++k) r |= ((i >> k) & 1) << (7 - k);
    CHECK(pb[i] == big[r], "8-dim permute [%d] = %lld, want %d", i, (long long)pb[i], big[r]);
  }

  if (fp64_supported()) {
    // Direct double -> half rounding: via float this would round to 1.0.
    std::vector<double> dd = {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)};
    void* ddd = upload(dd);
    void* dh = device_buffer(2);
    CHECK_OK(run_op(VNN_OP_COPY, {desc(ddd, VNN_FLOAT64, {1})}, desc(dh, VNN_FLOAT16, {1})));
    uint16_t h = download<uint16_t>(dh, 1)[0];
    CHECK(h == 0x3c01, "float64 -> float16 double-rounded: %04x", h);
    CHECK_OK(B->free(DEV, ddd));
    CHECK_OK(B->free(DEV, dh));
  }
  for (void* p : {s, o, fd, hd, back, gd, bf, gb, bo, bd, pd}) CHECK_OK(B->free(DEV, p));
}

void test_binary_float() {
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
      CHECK_OK(run_op(VNN_OP_BINARY, {A, bc ? Bscalar : Brow}, O, {2.0}, {fn}));
      std::vector<float> got = download<float>(od, 12);
      for (int i = 0; i < 12; ++i) {
        float x = a[i], y = bc ? b[2] : b[i % 4];
        float want = fn == 0 ? x + 2.0f * y : fn == 1 ? x - 2.0f * y : fn == 2 ? x * y
                   : fn == 3 ? x / y : std::isnan(x) || std::isnan(y) ? NAN
                   : fn == 4 ? std::max(x, y) : std::min(x, y);
        CHECK(close(got[i], want, 1e-7), "binary fn %d bc %d [%d]: %g, want %g", fn, bc, i, got[i], want);
      }
    }
  }
  // In place, and on float16 (computed in float, stored rounded).
  CHECK_OK(run_op(VNN_OP_BINARY, {A, A}, A, {1.0}, {VNN_BINARY_ADD}));
  std::vector<float> twice = download<float>(ad, 12);
  CHECK(twice[5] == 2 * a[5], "in-place add: %g", twice[5]);
  void* h = device_buffer(4);
  CHECK_OK(run_op(VNN_OP_FILL, {}, desc(h, VNN_FLOAT16, {2}), {1.5}));
  CHECK_OK(run_op(VNN_OP_BINARY, {desc(h, VNN_FLOAT16, {2}), desc(h, VNN_FLOAT16, {2})},
                  desc(h, VNN_FLOAT16, {2}), {1.0}, {VNN_BINARY_MUL}));
  CHECK(download<uint16_t>(h, 2)[1] == 0x4080, "float16 1.5*1.5 != 2.25");
  for (void* p : {ad, bd, od, h}) CHECK_OK(B->free(DEV, p));
}

template <typename T>
void test_unary(vnn_dtype dt, double rel) {
  std::vector<T> x = {-3.5, -1, -0.25, 0, 0.5, 1, 2.75, 10, -20, 20};
  void* xd = upload(x);
  void* od = device_buffer(x.size() * sizeof(T));
  int64_t n = static_cast<int64_t>(x.size());
  for (int fn = 0; fn <= VNN_UNARY_TANH; ++fn) {
    CHECK_OK(run_op(VNN_OP_UNARY, {desc(xd, dt, {n})}, desc(od, dt, {n}), {}, {fn}));
    std::vector<T> got = download<T>(od, x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      T v = x[i];
      T want = fn == 0 ? -v : fn == 1 ? std::abs(v) : fn == 2 ? std::exp(v) : fn == 3 ? std::log(v)
             : fn == 4 ? std::sqrt(v) : fn == 5 ? (v < 0 ? T(0) : v)
             : fn == 6 ? T(1) / (T(1) + std::exp(-v)) : std::tanh(v);
      CHECK(close(got[i], want, rel), "unary fn %d on %s of %g: %.17g, want %.17g", fn,
            dt == VNN_FLOAT32 ? "float32" : "float64", double(v), double(got[i]), double(want));
    }
  }
  CHECK_OK(B->free(DEV, xd));
  CHECK_OK(B->free(DEV, od));
}

void test_int() {
  const int32_t mn = std::numeric_limits<int32_t>::min();
  std::vector<int32_t> a = {7, -7, 5, mn, 9, -3}, b = {-2, 2, 0, -1, 4, 3};
  void* ad = upload(a);
  void* bd = upload(b);
  void* od = device_buffer(6 * 4);
  auto bin = [&](int fn, double alpha) {
    CHECK_OK(run_op(VNN_OP_BINARY, {desc(ad, VNN_INT32, {6}), desc(bd, VNN_INT32, {6})},
                    desc(od, VNN_INT32, {6}), {alpha}, {fn}));
    return download<int32_t>(od, 6);
  };
  std::vector<int32_t> q = bin(VNN_BINARY_DIV, 1);
  const int32_t qw[] = {-3, -3, 0, mn, 2, -1};  // truncating, x/0 = 0, MIN/-1 wraps
  for (int i = 0; i < 6; ++i) CHECK(q[i] == qw[i], "int32 div [%d]: %d, want %d", i, q[i], qw[i]);
  std::vector<int32_t> s = bin(VNN_BINARY_SUB, 3);
  CHECK(s[0] == 13 && s[5] == -12, "int32 sub alpha 3: %d %d", s[0], s[5]);
  std::vector<int32_t> m = bin(VNN_BINARY_MAXIMUM, 1);
  CHECK(m[0] == 7 && m[1] == 2 && m[3] == -1, "int32 max: %d %d", m[1], m[3]);
  CHECK_OK(run_op(VNN_OP_UNARY, {desc(ad, VNN_INT32, {6})}, desc(od, VNN_INT32, {6}), {}, {VNN_UNARY_ABS}));
  CHECK(download<int32_t>(od, 6)[1] == 7, "int32 abs");
  CHECK_OK(run_op(VNN_OP_UNARY, {desc(ad, VNN_INT32, {6})}, desc(od, VNN_INT32, {6}), {}, {VNN_UNARY_RELU}));
  std::vector<int32_t> r = download<int32_t>(od, 6);
  CHECK(r[0] == 7 && r[1] == 0 && r[3] == 0, "int32 relu: %d %d", r[1], r[3]);

  std::vector<int64_t> l = {int64_t{1} << 40, -5}, l2 = {3, 4};
  void* ld = upload(l);
  void* l2d = upload(l2);
  CHECK_OK(run_op(VNN_OP_BINARY, {desc(ld, VNN_INT64, {2}), desc(l2d, VNN_INT64, {2})},
                  desc(ld, VNN_INT64, {2}), {3.0}, {VNN_BINARY_ADD}));
  std::vector<int64_t> lr = download<int64_t>(ld, 2);
  CHECK(lr[0] == (int64_t{1} << 40) + 9 && lr[1] == 7, "int64 add alpha: %lld", (long long)lr[1]);

  std::vector<uint8_t> u = {200, 1, 0, 1}, v = {100, 1, 0, 0};
  void* ud = upload(u);
  void* vd = upload(v);
  void* uo = device_buffer(4);
  CHECK_OK(run_op(VNN_OP_BINARY, {desc(ud, VNN_UINT8, {2}), desc(vd, VNN_UINT8, {2})},
                  desc(uo, VNN_UINT8, {2}), {1.0}, {VNN_BINARY_ADD}));
  CHECK(download<uint8_t>(uo, 1)[0] == 44, "uint8 200+100 must wrap to 44");
  // bool, C++ rules: true + true -> true, true - true -> false, true * false -> false.
  // From offset 1 both inputs read {1, 0}.
  vnn_tensor_desc ba = desc(ud, VNN_BOOL, {2}, {1}, 1), bb = desc(vd, VNN_BOOL, {2}, {1}, 1);
  vnn_tensor_desc bo = desc(uo, VNN_BOOL, {2});
  CHECK_OK(run_op(VNN_OP_BINARY, {ba, bb}, bo, {1.0}, {VNN_BINARY_ADD}));
  std::vector<uint8_t> br = download<uint8_t>(uo, 2);
  CHECK(br[0] == 1 && br[1] == 0, "bool add: %d %d", br[0], br[1]);
  CHECK_OK(run_op(VNN_OP_BINARY, {ba, bb}, bo, {1.0}, {VNN_BINARY_SUB}));
  CHECK(download<uint8_t>(uo, 1)[0] == 0, "bool true - true");
  for (void* p : {ad, bd, od, ld, l2d, ud, vd, uo}) CHECK_OK(B->free(DEV, p));
}

void test_queues_events() {
  const size_t n = 1 << 22;
  void* d = device_buffer(n * 4);
  void *e0 = nullptr, *e1 = nullptr;
  CHECK_OK(B->event_create(DEV, &e0));
  CHECK_OK(B->event_create(DEV, &e1));
  CHECK_OK(B->event_record(DEV, e0, nullptr));
  CHECK_OK(run_op(VNN_OP_FILL, {}, desc(d, VNN_FLOAT32, {int64_t(n) / 2}, {2}), {3.0}));
  CHECK_OK(B->event_record(DEV, e1, nullptr));
  CHECK_OK(B->event_synchronize(DEV, e1));
  double ms = -1;
  CHECK_OK(B->event_elapsed(DEV, e0, e1, &ms));
  CHECK(ms >= 0, "elapsed %g ms", ms);
  std::printf("  event_elapsed over a strided fill of %zu floats: %.3f ms\n", n / 2, ms);

  // Non-blocking copies from and to pinned memory on an extra queue.
  void* q = nullptr;
  CHECK_OK(B->queue_create(DEV, &q));
  void *hin = nullptr, *hout = nullptr;
  CHECK_OK(B->host_alloc(DEV, n * 4, &hin));
  CHECK_OK(B->host_alloc(DEV, n * 4, &hout));
  float* in = static_cast<float*>(hin);
  float* out = static_cast<float*>(hout);
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<float>(i % 1000) - 500.0f;
  CHECK_OK(B->copy_to_device(DEV, d, 0, hin, n * 4, q, 0));
  CHECK_OK(run_op(VNN_OP_UNARY, {desc(d, VNN_FLOAT32, {int64_t(n)})}, desc(d, VNN_FLOAT32, {int64_t(n)}),
                  {}, {VNN_UNARY_NEG}, q));
  CHECK_OK(B->copy_to_host(DEV, hout, d, 0, n * 4, q, 0));
  CHECK_OK(B->queue_synchronize(DEV, q));
  for (size_t i = 0; i < n; i += 997) CHECK(out[i] == -in[i], "pinned roundtrip [%zu]: %g", i, out[i]);
  CHECK_OK(B->host_free(DEV, hin));
  CHECK_OK(B->host_free(DEV, hout));
  CHECK_OK(B->queue_destroy(DEV, q));
  CHECK_OK(B->event_destroy(DEV, e0));
  CHECK_OK(B->event_destroy(DEV, e1));
  CHECK_OK(B->free(DEV, d));
}

void test_edge_shapes() {
  void* d = device_buffer(4 * 4);
  CHECK_OK(run_op(VNN_OP_FILL, {}, desc(d, VNN_INT32, {4}), {1}));
  CHECK_OK(run_op(VNN_OP_FILL, {}, desc(d, VNN_INT32, {}, {}, 2), {9}));  // ndim 0: one element
  CHECK_OK(run_op(VNN_OP_FILL, {}, desc(d, VNN_INT32, {3, 0}), {5}));    // no elements: nothing
  std::vector<int32_t> got = download<int32_t>(d, 4);
  CHECK(got[0] == 1 && got[1] == 1 && got[2] == 9 && got[3] == 1, "scalar/empty fill: %d %d %d %d",
        got[0], got[1], got[2], got[3]);
  CHECK_OK(B->free(DEV, d));
}

// Ops from several threads at once share cached kernels (argument setting
// must be serialised inside the plugin) and the default queue.
void test_threads() {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      const int64_t n = 4096;
      void* a = device_buffer(n * 4);
      void* b = device_buffer(n * 4);
      for (int iter = 0; iter < 50; ++iter) {
        CHECK_OK(run_op(VNN_OP_FILL, {}, desc(a, VNN_FLOAT32, {n}, {1}), {double(t)}));
        CHECK_OK(run_op(VNN_OP_FILL, {}, desc(b, VNN_FLOAT32, {n / 2}, {2}), {double(iter)}));
        CHECK_OK(run_op(VNN_OP_BINARY, {desc(a, VNN_FLOAT32, {n / 2}, {2}), desc(b, VNN_FLOAT32, {n / 2}, {2})},
                        desc(b, VNN_FLOAT32, {n / 2}, {2}), {0.5}, {VNN_BINARY_ADD}));
        std::vector<float> got = download<float>(b, 2);
        CHECK(got[0] == t + 0.5f * iter, "thread %d iter %d: %g", t, iter, got[0]);
      }
      CHECK_OK(B->free(DEV, a));
      CHECK_OK(B->free(DEV, b));
    });
  }
  for (auto& th : threads) th.join();
}

void test_errors() {
  void* d = device_buffer(8);
  vnn_status st = run_op(99, {}, desc(d, VNN_FLOAT32, {1}));
  CHECK(st == VNN_STATUS_UNSUPPORTED && std::strstr(B->last_error(), "opencl:"), "kind 99: %d %s", st,
        B->last_error());
  st = run_op(VNN_OP_UNARY, {desc(d, VNN_FLOAT32, {1})}, desc(d, VNN_FLOAT32, {1}), {}, {42});
  CHECK(st == VNN_STATUS_UNSUPPORTED, "unary fn 42: %d %s", st, B->last_error());
  std::printf("  unsupported op message: %s\n", B->last_error());
  if (!fp64_supported()) {
    st = run_op(VNN_OP_FILL, {}, desc(d, VNN_FLOAT64, {1}), {1.0});
    CHECK(st == VNN_STATUS_UNSUPPORTED && std::strstr(B->last_error(), "cl_khr_fp64"), "%s", B->last_error());
  }
  CHECK_OK(B->free(DEV, d));
}

// REDUCE on a strided (transposed) view, every fn, against host loops.
void test_reduce() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  // in: logical [3, 5, 200] over storage [200, 5, 3] (fully permuted).
  const int64_t A = 3, Bd = 5, C = 200;
  std::vector<float> h(A * Bd * C);
  for (auto& x : h) x = u(rng);
  void* d = upload(h);
  vnn_tensor_desc in = desc(d, VNN_FLOAT32, {A, Bd, C}, {1, A, A * Bd});
  auto at = [&](int64_t i, int64_t j, int64_t k) { return double(h[size_t(i + j * A + k * A * Bd)]); };
  void* o = device_buffer(64 * 8);
  // k = 1: over C; k = 2: over (Bd, C).
  for (int fn = VNN_REDUCE_SUM; fn <= VNN_REDUCE_MIN; ++fn) {
    CHECK_OK(run_op(VNN_OP_REDUCE, {in}, desc(o, VNN_FLOAT32, {A, Bd}), {}, {fn, 1}));
    std::vector<float> got = download<float>(o, size_t(A * Bd));
    for (int64_t i = 0; i < A; ++i)
      for (int64_t j = 0; j < Bd; ++j) {
        double s = 0, p = 1, mx = -INFINITY, mn = INFINITY;
        for (int64_t k = 0; k < C; ++k) {
          double v = at(i, j, k);
          s += v, p *= v, mx = std::max(mx, v), mn = std::min(mn, v);
        }
        double want = fn == 0 ? s : fn == 1 ? s / C : fn == 2 ? p : fn == 3 ? mx : mn;
        CHECK(close(got[size_t(i * Bd + j)], want, 1e-5) || std::fabs(got[size_t(i * Bd + j)] - want) < 1e-5,
              "reduce fn %d [%lld,%lld]: %g vs %g", fn, (long long)i, (long long)j, got[size_t(i * Bd + j)], want);
      }
    CHECK_OK(run_op(VNN_OP_REDUCE, {in}, desc(o, VNN_FLOAT32, {A}), {}, {fn, 2}));
    got = download<float>(o, size_t(A));
    for (int64_t i = 0; i < A; ++i) {
      double s = 0, p = 1, mx = -INFINITY, mn = INFINITY;
      for (int64_t j = 0; j < Bd; ++j)
        for (int64_t k = 0; k < C; ++k) {
          double v = at(i, j, k);
          s += v, p *= v, mx = std::max(mx, v), mn = std::min(mn, v);
        }
      double want = fn == 0 ? s : fn == 1 ? s / (Bd * C) : fn == 2 ? p : fn == 3 ? mx : mn;
      CHECK(close(got[size_t(i)], want, 1e-5) || std::fabs(got[size_t(i)] - want) < 1e-5,
            "reduce k=2 fn %d [%lld]: %g vs %g", fn, (long long)i, got[size_t(i)], want);
    }
  }
  // Full reduction (k = ndim, scalar out) of a large contiguous buffer.
  std::vector<float> big(100003);
  double bs = 0;
  for (size_t i = 0; i < big.size(); ++i) bs += big[i] = float(i % 17) * 0.25f;
  void* db = upload(big);
  CHECK_OK(run_op(VNN_OP_REDUCE, {desc(db, VNN_FLOAT32, {int64_t(big.size())})}, desc(o, VNN_FLOAT32, {}), {},
                  {VNN_REDUCE_SUM, 1}));
  CHECK(download<float>(o, 1)[0] == float(bs), "full sum %g vs %g", download<float>(o, 1)[0], bs);
  // argmax / argmin: ties go to the first index; NaN counts as the extreme.
  std::vector<float> t = {1, 5, 3, 5, 5, 0, 0, 2,    // row 0: max 5 at 1, min 0 at 5
                          7, 7, 7, 7, 7, 7, 7, 7,    // row 1: all equal -> 0
                          -1, 2, NAN, 9, NAN, -3, 9, -3};  // row 2: first NaN at 2
  void* dt = upload(t);
  CHECK_OK(run_op(VNN_OP_REDUCE, {desc(dt, VNN_FLOAT32, {3, 8})}, desc(o, VNN_INT64, {3}), {}, {VNN_REDUCE_ARGMAX, 1}));
  std::vector<int64_t> gi = download<int64_t>(o, 3);
  CHECK(gi[0] == 1 && gi[1] == 0 && gi[2] == 2, "argmax %lld %lld %lld", (long long)gi[0], (long long)gi[1],
        (long long)gi[2]);
  CHECK_OK(run_op(VNN_OP_REDUCE, {desc(dt, VNN_FLOAT32, {3, 8})}, desc(o, VNN_INT64, {3}), {}, {VNN_REDUCE_ARGMIN, 1}));
  gi = download<int64_t>(o, 3);
  CHECK(gi[0] == 5 && gi[1] == 0 && gi[2] == 2, "argmin %lld %lld %lld", (long long)gi[0], (long long)gi[1],
        (long long)gi[2]);
  // Ties across many work items: 1000 equal maxima, the first at 123.
  std::vector<int32_t> ti(5000, 1);
  for (int i = 123; i < 5000; i += 4) ti[size_t(i)] = 9;
  void* dti = upload(ti);
  CHECK_OK(run_op(VNN_OP_REDUCE, {desc(dti, VNN_INT32, {5000})}, desc(o, VNN_INT64, {}), {}, {VNN_REDUCE_ARGMAX, 1}));
  CHECK(download<int64_t>(o, 1)[0] == 123, "argmax ties: %lld", (long long)download<int64_t>(o, 1)[0]);
  // Integers: int32 sum into int64 (no overflow), int64 max/min, int32 prod.
  std::vector<int32_t> iv(3000);
  int64_t isum = 0, imax = INT64_MIN;
  for (size_t i = 0; i < iv.size(); ++i) {
    iv[i] = int32_t(2000000000 - int64_t(i) * 7919 % 4000000000LL);
    isum += iv[i];
    imax = std::max<int64_t>(imax, iv[i]);
  }
  void* div_ = upload(iv);
  CHECK_OK(run_op(VNN_OP_REDUCE, {desc(div_, VNN_INT32, {3000})}, desc(o, VNN_INT64, {}), {}, {VNN_REDUCE_SUM, 1}));
  CHECK(download<int64_t>(o, 1)[0] == isum, "int32 sum %lld vs %lld", (long long)download<int64_t>(o, 1)[0],
        (long long)isum);
  CHECK_OK(run_op(VNN_OP_REDUCE, {desc(div_, VNN_INT32, {3000})}, desc(o, VNN_INT32, {}), {}, {VNN_REDUCE_MAX, 1}));
  CHECK(download<int32_t>(o, 1)[0] == imax, "int32 max %d vs %lld", download<int32_t>(o, 1)[0], (long long)imax);
  std::vector<int64_t> lv = {3, -2, 5, 1, -7, 2};
  void* dl = upload(lv);
  CHECK_OK(run_op(VNN_OP_REDUCE, {desc(dl, VNN_INT64, {2, 3})}, desc(o, VNN_INT64, {2}), {}, {VNN_REDUCE_PROD, 1}));
  gi = download<int64_t>(o, 2);
  CHECK(gi[0] == -30 && gi[1] == -14, "int64 prod %lld %lld", (long long)gi[0], (long long)gi[1]);
  CHECK_OK(run_op(VNN_OP_REDUCE, {desc(dl, VNN_INT64, {2, 3})}, desc(o, VNN_INT64, {2}), {}, {VNN_REDUCE_MIN, 1}));
  gi = download<int64_t>(o, 2);
  CHECK(gi[0] == -2 && gi[1] == -7, "int64 min %lld %lld", (long long)gi[0], (long long)gi[1]);
  // MEAN of integers is not a supported pairing.
  vnn_status st = run_op(VNN_OP_REDUCE, {desc(dl, VNN_INT64, {6})}, desc(o, VNN_INT64, {}), {}, {VNN_REDUCE_MEAN, 1});
  CHECK(st == VNN_STATUS_UNSUPPORTED, "int mean: %d", st);
  if (fp64_supported()) {
    std::vector<double> dv(10000);
    double ds = 0;
    for (size_t i = 0; i < dv.size(); ++i) ds += dv[i] = 1e-3 * double(i) + 1e-12;
    void* dd = upload(dv);
    CHECK_OK(run_op(VNN_OP_REDUCE, {desc(dd, VNN_FLOAT64, {10000})}, desc(o, VNN_FLOAT64, {}), {},
                    {VNN_REDUCE_MEAN, 1}));
    CHECK(close(download<double>(o, 1)[0], ds / 10000, 1e-13), "f64 mean %.17g vs %.17g", download<double>(o, 1)[0],
          ds / 10000);
    CHECK_OK(B->free(DEV, dd));
  }
  for (void* p : {d, o, db, dt, dti, div_, dl}) CHECK_OK(B->free(DEV, p));
}

const char* dtype_name(vnn_dtype dt) {
  switch (dt) {
    case VNN_FLOAT32: return "float32";
    case VNN_FLOAT64: return "float64";
    case VNN_INT32: return "int32";
    case VNN_INT64: return "int64";
    default: return "other";
  }
}

std::string gemm_last() {
  vnn_device_info info{};
  info.struct_size = sizeof info;
  CHECK_OK(B->device_info(DEV, &info));
  const char* p = std::strstr(info.properties, "gemm_last=");
  if (!p) return "";
  p += 10;
  return std::string(p, std::strcspn(p, "\n"));
}

// MATMUL against a naive loop: batched with a broadcast (stride-0) operand,
// transposed operands, alpha/beta, integer and non-unit-stride cases.
template <typename T>
void check_matmul(vnn_dtype dt, int64_t batch, int64_t m, int64_t n, int64_t k, bool ta, bool tb, bool bcast_b,
                  int64_t a_step, double alpha, double beta, double tol, const char* expect_path) {
  std::mt19937 rng(uint32_t(m * 131 + n * 7 + k));
  std::uniform_int_distribution<int> u(-4, 4);
  // a_step spaces a's columns (a non-unit stride CLBlast cannot take).
  std::vector<T> ha(size_t(batch * m * k * a_step)), hb(size_t((bcast_b ? 1 : batch) * k * n)),
      ho(size_t(batch * m * n));
  for (auto& x : ha) x = T(u(rng)) / (dt == VNN_FLOAT32 || dt == VNN_FLOAT64 ? T(2) : T(1));
  for (auto& x : hb) x = T(u(rng));
  for (auto& x : ho) x = T(u(rng));
  void *da = upload(ha), *db = upload(hb), *dout = upload(ho);
  // a: [batch, m, k], stored [batch, k, m] when ta; b: [batch, k, n] stored [n, k] when tb.
  std::vector<int64_t> as = ta ? std::vector<int64_t>{m * k * a_step, a_step, m * a_step}
                               : std::vector<int64_t>{m * k * a_step, k * a_step, a_step};
  std::vector<int64_t> bs = tb ? std::vector<int64_t>{bcast_b ? 0 : k * n, 1, k}
                               : std::vector<int64_t>{bcast_b ? 0 : k * n, n, 1};
  auto A = [&](int64_t bb, int64_t i, int64_t p) { return ha[size_t(bb * as[0] + i * as[1] + p * as[2])]; };
  auto Bv = [&](int64_t bb, int64_t p, int64_t j) { return hb[size_t(bb * bs[0] + p * bs[1] + j * bs[2])]; };
  CHECK_OK(run_op(VNN_OP_MATMUL, {desc(da, dt, {batch, m, k}, as), desc(db, dt, {batch, k, n}, bs)},
                  desc(dout, dt, {batch, m, n}), {alpha, beta}));
  std::vector<T> got = download<T>(dout, ho.size());
  for (int64_t bb = 0; bb < batch; ++bb)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += double(A(bb, i, p)) * double(Bv(bb, p, j));
        size_t o = size_t((bb * m + i) * n + j);
        double want = alpha * s + (beta != 0 ? beta * double(ho[o]) : 0.0);
        CHECK(std::fabs(double(got[o]) - want) <= tol * (1 + std::fabs(want)),
              "matmul %s b%lld %lldx%lldx%lld ta%d tb%d [%lld,%lld,%lld]: %g vs %g", dtype_name(dt),
              (long long)batch, (long long)m, (long long)n, (long long)k, ta, tb, (long long)bb, (long long)i,
              (long long)j, double(got[o]), want);
      }
  std::string path = gemm_last();
  std::printf("  matmul %s batch %lld %lldx%lldx%lld ta=%d tb=%d bcast=%d a_step=%lld: gemm_last=%s\n",
              dtype_name(dt), (long long)batch, (long long)m, (long long)n, (long long)k, ta, tb, bcast_b,
              (long long)a_step, path.c_str());
  std::string want_path = expect_path ? expect_path : "";
  if (want_path == "auto") {
    // Unit-stride float: CLBlast or vnn's GEMM, whichever the device's
    // tuning measured faster for the shape; vnn's alone without CLBlast.
    vnn_device_info info{};
    info.struct_size = sizeof info;
    CHECK_OK(B->device_info(DEV, &info));
    bool clblast = std::strstr(info.properties, "gemm=clblast") != nullptr;
    want_path = clblast && path == "clblast" ? "clblast" : "tiled";
  }
  if (!want_path.empty()) CHECK(path == want_path, "expected path %s, got %s", want_path.c_str(), path.c_str());
  for (void* p : {da, db, dout}) CHECK_OK(B->free(DEV, p));
}

void test_matmul() {
  const char* fast = "auto";
  check_matmul<float>(VNN_FLOAT32, 1, 37, 29, 41, false, false, false, 1, 1.0, 0.0, 1e-5, fast);
  check_matmul<float>(VNN_FLOAT32, 3, 20, 33, 18, true, false, false, 1, 0.5, 2.0, 1e-5, fast);
  check_matmul<float>(VNN_FLOAT32, 4, 17, 16, 35, false, true, true, 1, 1.5, -1.0, 1e-5, fast);
  check_matmul<float>(VNN_FLOAT32, 2, 19, 23, 21, true, true, true, 3, 1.0, 1.0, 1e-5, "tiled");
  check_matmul<int32_t>(VNN_INT32, 3, 18, 17, 33, true, false, true, 1, 2.0, 3.0, 0, "tiled");
  check_matmul<int64_t>(VNN_INT64, 2, 5, 40, 7, false, true, false, 2, 1.0, 0.0, 0, "tiled");
  if (fp64_supported()) {
    check_matmul<double>(VNN_FLOAT64, 2, 33, 31, 45, true, true, false, 1, 1.0, 0.5, 1e-12, fast);
    check_matmul<double>(VNN_FLOAT64, 2, 9, 8, 7, false, false, true, 2, 1.0, 0.0, 1e-12, "tiled");
  }
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
    vnn_status st = run_op(VNN_OP_MATMUL, {desc(p, VNN_FLOAT32, {1, 1}), desc(p, VNN_FLOAT32, {1, 1})},
                           desc(p, VNN_FLOAT32, {1, 1}), {1.0, 0.0});
    CHECK_OK(B->free(DEV, p));
    if (st == VNN_STATUS_UNSUPPORTED) continue;
    CHECK_OK(st);
    ++variants;
    std::printf("  gemm variant %d\n", v);
    check_matmul<float>(VNN_FLOAT32, 1, 9, 7, 3000, false, true, false, 1, 0.5, 1.0, 1e-4, "tiled");
    check_matmul<float>(VNN_FLOAT32, 1, 70, 130, 33, true, false, false, 1, 1.0, 0.0, 1e-5, "tiled");
    check_matmul<float>(VNN_FLOAT32, 3, 20, 33, 18, true, false, false, 1, 0.5, 2.0, 1e-5, "tiled");
    check_matmul<int32_t>(VNN_INT32, 3, 18, 17, 33, true, false, true, 1, 2.0, 3.0, 0, "tiled");
    check_matmul<int64_t>(VNN_INT64, 1, 5, 40, 2000, false, true, false, 2, 1.0, 0.0, 0, "tiled");
    if (fp64_supported()) check_matmul<double>(VNN_FLOAT64, 2, 33, 31, 45, true, true, false, 1, 1.0, 0.5, 1e-12, "tiled");
  }
  unsetenv("VNN_OPENCL_GEMM_VARIANT");
  CHECK(variants >= 1, "no vnn GEMM variant fits the device");
  setenv("VNN_OPENCL_GEMM", "simple", 1);
  check_matmul<float>(VNN_FLOAT32, 2, 19, 23, 21, true, true, true, 3, 1.0, 1.0, 1e-5, "simple");
  check_matmul<int64_t>(VNN_INT64, 2, 5, 40, 7, false, true, false, 2, 1.0, 0.0, 0, "simple");
  unsetenv("VNN_OPENCL_GEMM");
  // beta = 0 never reads out: NaN there must not leak.
  std::vector<float> a = {1, 2, 3, 4}, nanv(4, NAN);
  void *da = upload(a), *dout = upload(nanv);
  CHECK_OK(run_op(VNN_OP_MATMUL, {desc(da, VNN_FLOAT32, {2, 2}), desc(da, VNN_FLOAT32, {2, 2})},
                  desc(dout, VNN_FLOAT32, {2, 2}), {1.0, 0.0}));
  std::vector<float> got = download<float>(dout, 4);
  CHECK(got[0] == 7 && got[1] == 10 && got[2] == 15 && got[3] == 22, "beta=0 over NaN: %g %g %g %g", got[0],
        got[1], got[2], got[3]);
  for (void* p : {da, dout}) CHECK_OK(B->free(DEV, p));
}

void test_softmax() {
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
  vnn_tensor_desc in = desc(d, VNN_FLOAT32, {rows, n}, {1, rows});
  for (int log_out = 0; log_out < 2; ++log_out) {
    CHECK_OK(run_op(VNN_OP_SOFTMAX, {in}, desc(o, VNN_FLOAT32, {rows, n}), {}, {log_out}));
    std::vector<float> got = download<float>(o, size_t(rows * n));
    for (int64_t r = 0; r < rows; ++r) {
      double mx = -INFINITY, s = 0, total = 0;
      for (int64_t j = 0; j < n; ++j) mx = std::max(mx, double(h[size_t(j * rows + r)]));
      for (int64_t j = 0; j < n; ++j) s += std::exp(double(h[size_t(j * rows + r)]) - mx);
      for (int64_t j = 0; j < n; ++j) {
        double x = double(h[size_t(j * rows + r)]) - mx;
        double want = log_out ? x - std::log(s) : std::exp(x) / s;
        double g = got[size_t(r * n + j)];
        CHECK(std::isfinite(g) && std::fabs(g - want) <= 2e-5 * (1 + std::fabs(want)),
              "softmax log=%d [%lld,%lld]: %g vs %g", log_out, (long long)r, (long long)j, g, want);
        total += log_out ? std::exp(g) : g;
      }
      CHECK(std::fabs(total - 1) < 1e-4, "softmax log=%d row %lld sums to %.8f", log_out, (long long)r, total);
    }
  }
  // In place, float64 if available, with a large single-row input.
  if (fp64_supported()) {
    std::vector<double> x = {1000, 1001, 1002, -1e308, 1e308};
    void* dx = upload(x);
    CHECK_OK(run_op(VNN_OP_SOFTMAX, {desc(dx, VNN_FLOAT64, {5})}, desc(dx, VNN_FLOAT64, {5}), {}, {1}));
    std::vector<double> g = download<double>(dx, 5);
    CHECK(g[4] == 0.0 && std::isfinite(g[0]) && g[0] < -1e307, "log_softmax f64: %g %g", g[4], g[0]);
    CHECK_OK(B->free(DEV, dx));
  }
  for (void* p : {d, o}) CHECK_OK(B->free(DEV, p));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <libvnn-backend-opencl.so> [--expect-no-device]\n", argv[0]);
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  CHECK(lib, "dlopen: %s", dlerror());
  auto entry = reinterpret_cast<vnn_backend_entry_fn>(dlsym(lib, VNN_BACKEND_ENTRY_NAME));
  CHECK(entry, "dlsym: %s", dlerror());
  B = entry(VNN_BACKEND_ABI_VERSION);
  CHECK(B && B->abi_version == VNN_BACKEND_ABI_VERSION && B->struct_size == sizeof(vnn_backend),
        "bad table");
  CHECK(std::strcmp(B->name, "opencl") == 0, "name %s", B->name);

  int32_t count = -1;
  vnn_status st = B->probe(&count);
  if (argc > 2 && std::strcmp(argv[2], "--expect-no-device") == 0) {
    CHECK(st == VNN_STATUS_NO_DEVICE && count == 0, "status %d count %d: %s", st, count, B->last_error());
    std::printf("no device, as expected: %s\n", B->last_error());
    return 0;
  }
  if (st == VNN_STATUS_NO_DEVICE) {
    std::printf("SKIP: %s\n", B->last_error());
    return 77;
  }
  CHECK_OK(st);
  CHECK(count > 0, "probe OK with 0 devices");
  for (int32_t i = 0; i < count; ++i) {
    vnn_device_info info{};
    info.struct_size = sizeof info;
    CHECK_OK(B->device_info(i, &info));
    std::printf("opencl:%d: %s | %s | driver %s | type %d | %d CUs | %llu bytes | arch %s | pci '%s' | usable %d\n%s",
                i, info.name, info.vendor, info.driver_version, info.type, info.compute_units,
                static_cast<unsigned long long>(info.total_memory), info.arch, info.pci_id, info.usable,
                info.properties);
    CHECK(info.host_accessible == 0 && info.total_memory > 0, "device_info fields");
  }
  size_t cache_before = count_cache_files();
  // init_device is idempotent and thread safe.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back([] { CHECK_OK(B->init_device(DEV)); });
  for (auto& t : threads) t.join();
  CHECK_OK(B->init_device(DEV));

  std::printf("memory\n");
  test_memory();
  std::printf("fill\n");
  test_fill();
  std::printf("copy\n");
  test_copy();
  std::printf("binary\n");
  test_binary_float();
  std::printf("unary float32\n");
  test_unary<float>(VNN_FLOAT32, 4e-7);
  if (fp64_supported()) {
    std::printf("unary float64\n");
    test_unary<double>(VNN_FLOAT64, 1e-15);
  } else {
    std::printf("unary float64: device lacks fp64, skipped\n");
  }
  std::printf("int\n");
  test_int();
  std::printf("queues and events\n");
  test_queues_events();
  std::printf("edge shapes\n");
  test_edge_shapes();
  std::printf("threads\n");
  test_threads();
  std::printf("reduce\n");
  test_reduce();
  std::printf("matmul\n");
  test_matmul();
  std::printf("softmax\n");
  test_softmax();
  std::printf("errors\n");
  test_errors();
  if (std::getenv("VNN_OPENCL_CACHE_DIR")) {
    size_t after = count_cache_files();
    std::printf("disk cache: %zu program files before, %zu after (%s)\n", cache_before, after,
                after == cache_before ? "no new files: programs came from the disk cache" : "new programs were built and cached");
  }
  std::printf("PASSED\n");
  return 0;
}

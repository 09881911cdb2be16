// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hostile inputs through the public API and the plugin ABI (issue 20): each
// case asserts the typed error it must raise, and that the process goes on
// working afterwards. Runs once per backend (cpu, opencl).
//
// Cases that need a fresh device discovery (VNN_DEVICE, VNN_BACKEND_PATH)
// run this same program again in a child process, naming one hidden test
// ("[.child]") with the environment they need.
#include <catch2/catch.hpp>
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"
#include "support/plugin_table.hpp"
#include "vnn/backend_abi.h"

extern char** environ;

using namespace vnn;
using vnn::test::device_under_test;

namespace {

const int64_t k32 = int64_t(1) << 32;

TensorOptions on_device(DType d = kFloat32) { return TensorOptions(device_under_test()).with(d); }

// Runs f, which must throw E; returns the message for further checks.
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL("threw the wrong type: " << e.what());
  }
  FAIL("did not throw");
  return "";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The device still allocates and computes after a failure.
void still_works() {
  Tensor t = arange(0, 100, 1, on_device());
  CHECK(sum(t).item<double>() == 4950.0);
}

std::string tmpdir() {
  static std::string d = [] {
    char t[] = "/tmp/vnn_hostile_XXXXXX";
    return std::string(mkdtemp(t));
  }();
  return d;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}
void write_file(const std::string& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }
void write_gz(const std::string& p, const std::string& s) {
  gzFile f = gzopen(p.c_str(), "wb");
  gzwrite(f, s.data(), unsigned(s.size()));
  gzclose(f);
}
std::string idx_bytes(uint8_t type, std::vector<uint32_t> dims, const std::string& data) {
  std::string s{0, 0, char(type), char(dims.size())};
  for (auto d : dims) s += std::string{char(d >> 24), char(d >> 16), char(d >> 8), char(d)};
  return s + data;
}

struct Child {
  int exit_code = -1;
  std::string output;  // stdout and stderr
  std::string mark;    // what the child test wrote to $VNN_HOSTILE_MARK
};

// Runs the hidden test `name` of this program in a child process with the
// extra environment `env` (posix_spawn: nothing runs between fork and exec).
Child run_child(const std::string& name, const std::vector<std::string>& env) {
  static int counter = 0;
  const std::string base = tmpdir() + "/child" + std::to_string(++counter);
  const std::string out_path = base + ".out", mark_path = base + ".mark";
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) envs.push_back(*e);
  for (const auto& e : env) envs.push_back(e);
  envs.push_back("VNN_HOSTILE_MARK=" + mark_path);
  std::vector<char*> envp;
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string exe = "/proc/self/exe", test = name;
  std::vector<char*> argv = {exe.data(), test.data(), nullptr};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  REQUIRE(rc == 0);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  Child c;
  c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  c.output = slurp(out_path);
  c.mark = slurp(mark_path);
  return c;
}

// The child's last word: its assertions before this all passed.
void mark(const std::string& text) {
  const char* p = std::getenv("VNN_HOSTILE_MARK");
  REQUIRE(p != nullptr);
  write_file(p, text);
}

using vnn::test::plugin_table;

}  // namespace

// ---- 1. shapes whose element count or byte size overflows ------------------

TEST_CASE("hostile: creation with an overflowing shape throws ValueError before allocating") {
  const MemoryStats before = memory_stats(device_under_test());
  const Shape huge{k32, k32};
  std::string m = error_of<ValueError>([&] { zeros(huge, on_device()); });
  INFO(m);
  CHECK(has(m, "zeros: shape [4294967296, 4294967296] has 1.8e+19 elements"));
  CHECK(has(m, "more than an int64 index can address"));
  CHECK(has(error_of<ValueError>([&] { empty(huge, on_device()); }), "empty: shape"));
  CHECK(has(error_of<ValueError>([&] { ones(huge, on_device()); }), "ones: shape"));
  CHECK(has(error_of<ValueError>([&] { full(huge, 3.0, on_device()); }), "full: shape"));
  CHECK(has(error_of<ValueError>([&] { randn(huge, on_device()); }), "randn: shape"));
  CHECK(has(error_of<ValueError>([&] { rand(huge, on_device()); }), "rand: shape"));
  CHECK(has(error_of<ValueError>([&] { randint(0, 5, huge, on_device(kInt64)); }), "randint: shape"));
  // Eight dims of 2^8 = 2^64 elements, wrapping to exactly 0 unchecked.
  CHECK_THROWS_AS(zeros({256, 256, 256, 256, 256, 256, 256, 256}, on_device()), ValueError);
  // The count fits int64 but its bytes do not (2^62 float64 = 2^65 bytes).
  std::string b = error_of<ValueError>([&] { empty({int64_t(1) << 62}, on_device(kFloat64)); });
  CHECK(has(b, "does not fit int64"));
  // Empty, but strides would overflow: [0, 2^62, 2^62].
  CHECK_THROWS_AS(empty({0, int64_t(1) << 62, int64_t(1) << 62}, on_device()), ValueError);
  CHECK_THROWS_AS(from_blob(nullptr, huge, kFloat32, device_under_test()), ValueError);
  CHECK_THROWS_AS(Shape(huge).numel(), ValueError);
  // Negative sizes are a ValueError naming the dimension (as the LibTorch-style API asks).
  CHECK_THROWS_AS(zeros({-1, 2}, on_device()), ValueError);
  // Nothing reached the allocator.
  CHECK(memory_stats(device_under_test()).allocations == before.allocations);
  // Still a valid empty shape when the other sizes are sane.
  CHECK(empty({0, k32}, on_device()).numel() == 0);
  still_works();
}

TEST_CASE("hostile: select(0, 1).fill_(1) on an overflowing shape never writes") {
  // Used to allocate the wrapped (0-byte) size and then write far past it.
  CHECK_THROWS_AS(zeros({k32, k32}, on_device()).select(0, 1).fill_(1), ValueError);
  // The same shape reached through a view of a small tensor.
  Tensor one = ones({1, 1}, on_device());
  std::string m = error_of<ValueError>([&] { one.expand({k32, k32}).select(0, 1).fill_(1); });
  CHECK(has(m, "expand: shape [4294967296, 4294967296]"));
  CHECK(one.item<float>() == 1.0f);
  still_works();
}

TEST_CASE("hostile: view / reshape / expand / as_strided past int64 or past the storage throw ValueError") {
  Tensor t = arange(0, 12, 1, on_device()).reshape({3, 4});
  CHECK_THROWS_AS(t.view({k32, k32}), ValueError);
  CHECK_THROWS_AS(t.reshape({k32, k32, -1}), ValueError);
  CHECK_THROWS_AS(t.reshape({-1, k32, k32}), ValueError);
  CHECK_THROWS_AS(t.reshape({5, 5}), ShapeError);  // a plain mismatch stays a ShapeError
  CHECK_THROWS_AS(t.unflatten(1, {k32, k32}), ValueError);
  CHECK_THROWS_AS(t.select(0, 0).expand({k32, k32, 4}), ValueError);
  CHECK(t.select(0, 0).expand({k32, 4}).numel() == 4 * k32);  // 2^34 fits: a broadcast view, no memory
  // as_strided: within the storage is a view, past it (either end) an error.
  Tensor d = t.as_strided({2, 2}, {4, 1}, 5);
  CHECK(d.to_vector<float>() == std::vector<float>{5, 6, 9, 10});
  std::string m = error_of<ValueError>([&] { t.as_strided({1000000}, {1}, 0); });
  CHECK(has(m, "as_strided"));
  CHECK(has(m, "outside its storage"));
  CHECK_THROWS_AS(t.as_strided({2}, {int64_t(1) << 62}, 0), ValueError);      // extent passes int64
  CHECK_THROWS_AS(t.as_strided({3}, {std::numeric_limits<int64_t>::max()}, 0), ValueError);
  CHECK_THROWS_AS(t.as_strided({2}, {-1}, 0), ValueError);                    // before the start
  CHECK_THROWS_AS(t.as_strided({2}, {1}, -1), ValueError);
  CHECK_THROWS_AS(t.as_strided({2}, {1, 1}, 0), ShapeError);
  CHECK(t.as_strided({0, 5}, {1, 1}, 0).numel() == 0);
  Tensor g = ones({4}, on_device()).requires_grad_();
  CHECK_THROWS_AS(g.as_strided({2}, {1}, 0), Unsupported);
  // narrow's start + length used to be summed unchecked.
  CHECK_THROWS_AS(t.narrow(1, 2, std::numeric_limits<int64_t>::max()), IndexError);
  // cat of sizes summing past int64.
  Tensor big = ones({1}, on_device()).expand({int64_t(1) << 62});
  CHECK_THROWS_AS(cat({big, big, big, big}, 0), ValueError);
  still_works();
}

TEST_CASE("hostile: broadcasting, matmul, conv and pooling arguments that overflow throw ValueError") {
  Tensor a = ones({1}, on_device()).expand({k32, 1}), b = ones({1}, on_device()).expand({1, k32});
  CHECK_THROWS_AS(add(a, b), ValueError);  // the [2^32, 2^32] result
  Tensor x = ones({1, 1, 4, 4}, on_device()), w = ones({1, 1, 3, 3}, on_device());
  const int64_t max = std::numeric_limits<int64_t>::max(), big = max / 2 + 1;
  // dilation * (kernel - 1) and H + 2 * padding used to wrap into a small,
  // "valid" output size.
  CHECK_THROWS_AS(conv2d(x, w, Tensor(), {1, 1}, {0, 0}, {max, max}), ValueError);
  CHECK_THROWS_AS(conv2d(x, w, Tensor(), {1, 1}, {big, big}, {1, 1}), ValueError);
  CHECK_THROWS_AS(max_pool2d(x, {3, 3}, {1, 1}, {1, 1}, {max, max}), ValueError);
  CHECK_THROWS_AS(max_pool2d(x, {max, max}, {1, 1}, {max / 2, max / 2}, {1, 1}), ValueError);
  CHECK(conv2d(x, w).sizes() == Shape{1, 1, 2, 2});
  still_works();
}

TEST_CASE("hostile: arange / linspace / eye / randperm counts are checked before any cast or allocation") {
  std::string m = error_of<ValueError>([] { arange(0, 1e300); });
  CHECK(has(m, "arange"));
  CHECK(has(m, "more than an int64 index can address"));
  CHECK_THROWS_AS(arange(-1e308, 1e308, 1e-300), ValueError);  // (end - start) / step is inf
  CHECK_THROWS_AS(arange(0, 1, std::nan("")), ValueError);
  CHECK(arange(5, 0, 1, on_device()).numel() == 0);
  // Counts that fit int64 but no host holds: OutOfMemory, not bad_alloc.
  CHECK_THROWS_AS(arange(0, 1e18), OutOfMemory);
  CHECK_THROWS_AS(linspace(0, 1, int64_t(1) << 59), OutOfMemory);  // 2^62 bytes
  CHECK_THROWS_AS(linspace(0, 1, int64_t(1) << 60), ValueError);   // 2^63 bytes
  CHECK_THROWS_AS(linspace(0, 1, std::numeric_limits<int64_t>::max()), ValueError);
  CHECK_THROWS_AS(eye(int64_t(1) << 20, int64_t(1) << 20), OutOfMemory);  // 8 TiB
  CHECK_THROWS_AS(eye(k32, k32), ValueError);                             // 2^64 elements
  CHECK_THROWS_AS(randperm(int64_t(1) << 62), ValueError);
  CHECK(linspace(0, 1, 3, on_device()).to_vector<float>() == std::vector<float>{0, 0.5f, 1});
  still_works();
}

// ---- 2. bool storage holding bytes other than 0 and 1 ---------------------

TEST_CASE("hostile: bool storage with bytes 2 and 255 reads as true everywhere") {
  const uint8_t bytes[6] = {0, 1, 2, 255, 0, 128};
  Tensor mask = from_blob(bytes, {6}, kBool, device_under_test());
  CHECK(mask.to(kFloat32).to_vector<float>() == std::vector<float>{0, 1, 1, 1, 0, 1});
  CHECK(mask.to(kInt32).to_vector<int32_t>() == std::vector<int32_t>{0, 1, 1, 1, 0, 1});
  CHECK(logical_not(mask).to(kInt32).to_vector<int32_t>() == std::vector<int32_t>{1, 0, 0, 0, 1, 0});
  Tensor t = ones({6}, on_device(kBool));
  CHECK(eq(mask, t).to(kInt32).to_vector<int32_t>() == std::vector<int32_t>{0, 1, 1, 1, 0, 1});
  Tensor a = full({6}, 7.0, on_device()), b = zeros({6}, on_device());
  CHECK(where(mask, a, b).to_vector<float>() == std::vector<float>{0, 7, 7, 7, 0, 7});
  CHECK(sum(mask).item<int64_t>() == 4);
  CHECK(any(mask).item<bool>());
  CHECK(!all(mask).item<bool>());
  // Converting out of bool reads each byte as (byte != 0); a clone keeps
  // reading the same.
  CHECK(mask.to(kUInt8).to_vector<uint8_t>() == std::vector<uint8_t>{0, 1, 1, 1, 0, 1});
  CHECK(mask.clone().to(kInt64).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 1, 1, 0, 1});
  CHECK(mask.clone().to_vector<bool>() == std::vector<bool>{false, true, true, true, false, true});
}

// ---- 3. empty tensors through every reduction (PyTorch's answers) ----------

TEST_CASE("hostile: numel-0 tensors through every reduction") {
  Tensor e = empty({0}, on_device()), e2 = empty({0, 3}, on_device());
  CHECK(sum(e).item<double>() == 0.0);
  CHECK(prod(e).item<double>() == 1.0);
  CHECK(std::isnan(mean(e).item<double>()));
  CHECK(std::isnan(var(e).item<double>()));
  CHECK(std::isnan(vnn::std(e).item<double>()));
  CHECK(norm(e).item<double>() == 0.0);
  CHECK(!any(e.to(kBool)).item<bool>());
  CHECK(all(e.to(kBool)).item<bool>());
  CHECK(logsumexp(e, 0).item<double>() == -INFINITY);
  CHECK_THROWS_AS(max(e), IndexError);
  CHECK_THROWS_AS(min(e), IndexError);
  CHECK_THROWS_AS(amax(e), IndexError);
  CHECK_THROWS_AS(amin(e), IndexError);
  CHECK_THROWS_AS(argmax(e), IndexError);
  CHECK_THROWS_AS(argmin(e), IndexError);
  // Along the empty dim: one answer per kept element.
  CHECK(sum(e2, 0).to_vector<float>() == std::vector<float>{0, 0, 0});
  CHECK(prod(e2, 0).to_vector<float>() == std::vector<float>{1, 1, 1});
  for (float v : mean(e2, 0).to_vector<float>()) CHECK(std::isnan(v));
  CHECK_THROWS_AS(max(e2, 0), IndexError);
  CHECK_THROWS_AS(argmin(e2, 0), IndexError);
  // Along a non-empty dim of an empty tensor: an empty result, no error.
  CHECK(sum(e2, 1).numel() == 0);
  CHECK(std::get<0>(max(e2, 1)).numel() == 0);
  CHECK(argmax(e2, 1).numel() == 0);
  CHECK(softmax(e2, 1).numel() == 0);
  still_works();
}

// ---- 4. NaN / Inf into cross_entropy ---------------------------------------

TEST_CASE("hostile: NaN and Inf logits into cross_entropy give defined results") {
  Tensor target = from_vector<int64_t>({0, 1}, {2}, device_under_test());
  auto loss = [&](std::vector<float> logits, nn::Reduction r) {
    nn::CrossEntropyOptions o;
    o.reduction = r;
    return nn::cross_entropy(from_vector(logits, {2, 2}, device_under_test()), target, o)
        .to_vector<float>();
  };
  const float inf = INFINITY, nan = NAN;
  std::vector<float> l = loss({nan, 0, 0, 0}, nn::Reduction::none);
  CHECK(std::isnan(l[0]));
  CHECK(l[1] == Approx(std::log(2.0)));
  l = loss({0, -inf, -inf, 0}, nn::Reduction::none);  // the other class impossible: loss 0
  CHECK(l[0] == 0.0f);
  CHECK(l[1] == 0.0f);
  l = loss({-inf, 0, 0, -inf}, nn::Reduction::none);  // the target impossible: loss +inf
  CHECK(l[0] == inf);
  CHECK(l[1] == inf);
  // +inf logits: log_softmax subtracts the max, inf - inf = NaN, as in
  // PyTorch; the other row is unaffected.
  l = loss({inf, 0, 0, 0}, nn::Reduction::none);
  CHECK(std::isnan(l[0]));
  CHECK(l[1] == Approx(std::log(2.0)));
  CHECK(std::isnan(loss({inf, inf, 0, 0}, nn::Reduction::none)[0]));
  CHECK(std::isnan(loss({nan, 0, 0, 0}, nn::Reduction::mean)[0]));
  still_works();
}

// ---- 5. allocations no device can satisfy ----------------------------------

TEST_CASE("hostile: a 10^13-element allocation is OutOfMemory naming sizes and device; work goes on") {
  const int64_t n = 10000000000000;  // 4e13 bytes of float32
  std::string m = error_of<OutOfMemory>([&] { zeros({n}, on_device()); });
  INFO(m);
  CHECK(has(m, "[10000000000000]"));
  CHECK(has(m, "40000000000000 bytes"));
  CHECK(has(m, device_under_test().str()));
  CHECK_THROWS_AS(empty({n, 1}, on_device(kFloat64)), OutOfMemory);
  CHECK_THROWS_AS(ones({1}, on_device()).expand({n}).contiguous(), OutOfMemory);
  // Allocate and compute afterwards.
  Tensor x = randn({64, 64}, on_device());
  Tensor y = matmul(x, x.transpose(0, 1));
  CHECK(y.sizes() == Shape{64, 64});
  CHECK(std::isfinite(sum(y).item<double>()));
  still_works();
}

// ---- 6. descriptors through the C ABI are re-checked by the plugin ---------

TEST_CASE("hostile: the plugin refuses descriptors past their buffer or overflowing, never writes") {
  std::string plugin;
  const vnn_backend* b = plugin_table(&plugin);
  REQUIRE(b != nullptr);
  INFO(plugin);
  const int32_t dev = device_under_test().index();
  zeros({1}, on_device()).item<float>();  // the device is initialised
  void* h = nullptr;
  REQUIRE(b->alloc(dev, 64, &h) == VNN_STATUS_OK);  // 16 float32
  vnn_tensor_desc d{};
  d.data = h;
  d.dtype = VNN_FLOAT32;
  d.ndim = 1;
  d.sizes[0] = 16;
  d.strides[0] = 1;
  const double one = 1.0;
  vnn_op op{};
  op.struct_size = sizeof(vnn_op);
  op.kind = VNN_OP_FILL;
  op.num_outputs = 1;
  op.outputs = &d;
  op.num_scalars = 1;
  op.scalars = &one;
  CHECK(b->run(dev, &op) == VNN_STATUS_OK);  // exactly the buffer: fine
  auto refused = [&](const char* why_part) {
    vnn_status s = b->run(dev, &op);
    std::string why = b->last_error();
    INFO(why);
    CHECK(s == VNN_STATUS_INVALID_ARGUMENT);
    CHECK(has(why, why_part));
  };
  d.sizes[0] = 17;  // one element past the end
  refused("past the end of its allocation of 64 bytes");
  d.sizes[0] = 4;
  d.offset = 13;
  refused("past the end");
  d.offset = -1;
  refused("before the start");
  d.offset = 0;
  d.strides[0] = 5;  // 4 elements 5 apart reach element 15: fits
  CHECK(b->run(dev, &op) == VNN_STATUS_OK);
  d.strides[0] = 6;  // ... 6 apart reach 18: does not
  refused("past the end");
  d.ndim = 2;
  d.sizes[0] = k32;
  d.sizes[1] = k32;
  d.strides[0] = 0;
  d.strides[1] = 0;
  refused("overflows int64");
  d.sizes[0] = -3;
  refused("negative size");
  d.ndim = 1;
  d.sizes[0] = 3;  // 2 * INT64_MAX
  d.strides[0] = std::numeric_limits<int64_t>::max();
  refused("extent overflows int64");
  d.sizes[0] = 2;  // reaches element INT64_MAX: its byte end overflows
  refused("past the end");
  d.ndim = VNN_MAX_DIMS + 1;
  refused("ndim");
  // Copies are bounded by the allocation too.
  std::vector<char> host(128, 0);
  if (b->copy_to_device) {
    CHECK(b->copy_to_device(dev, h, 0, host.data(), 64, nullptr, 1) == VNN_STATUS_OK);
    CHECK(b->copy_to_device(dev, h, 8, host.data(), 64, nullptr, 1) != VNN_STATUS_OK);
    CHECK(b->copy_to_host(dev, host.data(), h, 60, 8, nullptr, 1) != VNN_STATUS_OK);
  }
  CHECK(b->free(dev, h) == VNN_STATUS_OK);
  still_works();
}

// ---- 7. hostile environments: VNN_DEVICE, VNN_BACKEND_PATH -----------------

TEST_CASE("hostile child: VNN_DEVICE names a device that is not there", "[.child]") {
  Device d = best_device();  // falls back, with a warning on stderr
  CHECK(is_available(d));
  CHECK(sum(ones({3}, TensorOptions(d))).item<double>() == 3.0);
  mark("fallback " + d.str());
}

TEST_CASE("hostile child: strict mode refuses the missing VNN_DEVICE", "[.child]") {
  std::string m = error_of<DeviceNotFound>([] { best_device(); });
  CHECK(has(m, "VNN_DEVICE=cuda:7 is not available"));
  still_works();
  mark("strict DeviceNotFound");
}

TEST_CASE("hostile: VNN_DEVICE=cuda:7 falls back with a warning, or throws DeviceNotFound when strict") {
  Child c = run_child("hostile child: VNN_DEVICE names a device that is not there", {"VNN_DEVICE=cuda:7"});
  INFO(c.output);
  CHECK(c.exit_code == 0);
  CHECK(has(c.mark, "fallback "));
  CHECK(has(c.output, "VNN_DEVICE=cuda:7 is not available"));
  Child s = run_child("hostile child: strict mode refuses the missing VNN_DEVICE", {"VNN_DEVICE=cuda:7", "VNN_STRICT=1"});
  INFO(s.output);
  CHECK(s.exit_code == 0);
  CHECK(s.mark == "strict DeviceNotFound");
  // Asked for explicitly, in this process: DeviceNotFound naming what exists.
  std::string m = error_of<DeviceNotFound>([] { zeros({2}, TensorOptions(Device("cuda", 7))); });
  CHECK(has(m, "cuda:7"));
}

TEST_CASE("hostile child: a garbage plugin on VNN_BACKEND_PATH", "[.child]") {
  bool seen = false;
  for (const auto& r : backend_report())
    if (r.backend == "x") {
      seen = true;
      CHECK(!r.loaded);
      CHECK(r.status == "dlopen failed");
      CHECK(!r.detail.empty());
    }
  CHECK(seen);
  still_works();
  std::string m;
  if (strict()) m = error_of<PluginError>([] { best_device(); });
  CHECK((!strict() || has(m, "libvnn-backend-x.so")));
  mark(strict() ? "strict PluginError" : "reported");
}

TEST_CASE("hostile: a garbage libvnn-backend-x.so is reported as dlopen failed and the process goes on") {
  const std::string dir = tmpdir() + "/plugins";
  mkdir(dir.c_str(), 0755);
  write_file(dir + "/libvnn-backend-x.so", std::string("\x7f" "ELF garbage, not a shared library\n", 34));
  Child c = run_child("hostile child: a garbage plugin on VNN_BACKEND_PATH", {"VNN_BACKEND_PATH=" + dir});
  INFO(c.output);
  CHECK(c.exit_code == 0);
  CHECK(c.mark == "reported");
  Child s = run_child("hostile child: a garbage plugin on VNN_BACKEND_PATH", {"VNN_BACKEND_PATH=" + dir, "VNN_STRICT=1"});
  INFO(s.output);
  CHECK(s.exit_code == 0);
  CHECK(s.mark == "strict PluginError");
}

// ---- 8. truncated and corrupt IDX / gzip files ------------------------------

TEST_CASE("hostile: truncated and corrupt IDX and .gz files are FormatError naming the file") {
  const std::string d = tmpdir();
  auto format_error = [](const std::string& path, const std::string& part) {
    std::string m = error_of<FormatError>([&] { data::read_idx(path); });
    INFO(m);
    CHECK(has(m, path));
    CHECK(has(m, part));
  };
  // Dims whose product wraps to 0 in 64 bits (2^17 * 2^17 * 2^30 = 2^64):
  // unchecked, this returned a [2^17, 2^17, 2^30] tensor over 0 bytes.
  write_file(d + "/wrap.idx", idx_bytes(0x08, {1u << 17, 1u << 17, 1u << 30}, ""));
  format_error(d + "/wrap.idx", "more than 2^34 elements");
  write_gz(d + "/wrap.idx.gz", idx_bytes(0x08, {1u << 17, 1u << 17, 1u << 30}, ""));
  format_error(d + "/wrap.idx.gz", "more than 2^34 elements");
  write_file(d + "/huge.idx", idx_bytes(0x0D, {0xffffffffu, 0xffffffffu}, "abcd"));
  format_error(d + "/huge.idx", "more than 2^34 elements");
  // A plain file declaring 2^30 float64 (8 GiB) with 3 data bytes: refused
  // from the file size, nothing allocated.
  const MemoryStats before = memory_stats(Device("cpu", 0));
  write_file(d + "/big.idx", idx_bytes(0x0E, {1u << 30}, "abc"));
  format_error(d + "/big.idx", "truncated");
  CHECK(memory_stats(Device("cpu", 0)).allocations == before.allocations);
  // Truncated inside the dims, in the data, and gzip streams cut short.
  write_file(d + "/dims.idx", idx_bytes(0x08, {3, 3}, "").substr(0, 9));
  format_error(d + "/dims.idx", "truncated");
  std::string payload(4000, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = char((i * 7919) % 253);
  write_gz(d + "/cut.idx.gz", idx_bytes(0x08, {4000}, payload));
  std::string gz = slurp(d + "/cut.idx.gz");
  REQUIRE(gz.size() > 40);
  write_file(d + "/cut.idx.gz", gz.substr(0, gz.size() / 2));
  CHECK_THROWS_AS(data::read_idx(d + "/cut.idx.gz"), FormatError);
  write_file(d + "/head.idx.gz", gz.substr(0, 12));  // gzip header only
  CHECK_THROWS_AS(data::read_idx(d + "/head.idx.gz"), FormatError);
  // A gzip magic followed by garbage, and a .gz that is no gzip at all.
  write_file(d + "/bad.idx.gz", std::string("\x1f\x8b\x08\x00", 4) + std::string(64, '\x5a'));
  CHECK_THROWS_AS(data::read_idx(d + "/bad.idx.gz"), FormatError);
  write_file(d + "/text.idx.gz", "hello, I am not an IDX file\n");
  format_error(d + "/text.idx.gz", "bad IDX magic");
  // Too many dims, an empty file.
  write_file(d + "/nine.idx", std::string{0, 0, 8, 9});
  format_error(d + "/nine.idx", "bad IDX magic");
  write_file(d + "/empty.idx", "");
  format_error(d + "/empty.idx", "truncated");
  still_works();
}

TEST_CASE("hostile: Fashion-MNIST directories with truncated or corrupt files are FormatError naming the file") {
  const std::string d = tmpdir() + "/fm";
  mkdir(d.c_str(), 0755);
  const std::string images = d + "/t10k-images-idx3-ubyte.gz", labels = d + "/t10k-labels-idx1-ubyte.gz";
  write_gz(labels, idx_bytes(0x08, {2}, std::string{1, 2}));
  auto fm_error = [&](const std::string& part) {
    std::string m = error_of<FormatError>([&] { data::FashionMNIST(d, false); });
    INFO(m);
    CHECK(has(m, images));
    CHECK(has(m, part));
  };
  write_gz(images, idx_bytes(0x08, {2, 28, 28}, std::string(784, '\x10')));  // half the pixels
  fm_error("truncated");
  write_gz(images, idx_bytes(0x08, {2, 28, 27}, std::string(2 * 28 * 27, '\x10')));
  fm_error("[N, 28, 28]");
  write_gz(images, idx_bytes(0x0D, {2, 28, 28}, std::string(2 * 784 * 4, '\0')));
  fm_error("uint8");
  write_file(images, "\x1f\x8b garbage");
  CHECK_THROWS_AS(data::FashionMNIST(d, false), FormatError);
  write_gz(images, idx_bytes(0x08, {2, 28, 28}, std::string(2 * 784, '\x10')));
  data::FashionMNIST ok(d, false);  // repaired: loads
  CHECK(ok.size() == 2);
}

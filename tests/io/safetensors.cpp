// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// safetensors save/load on the device under test: every dtype round-trips
// bit for bit, map_location moves between devices, writes are atomic, and
// corrupt files give FormatError naming the file.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;

namespace {
std::string tmpdir() {
  static std::string d = [] {
    char t[] = "/tmp/vnn_st_XXXXXX";
    return std::string(mkdtemp(t));
  }();
  return d;
}
std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
void spit(const std::string& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary);
  f << s;
}
// A file from a header string and data bytes.
std::string make_file(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char(n >> (8 * i));
  return out + header + data;
}
}  // namespace

TEST_CASE("safetensors: every dtype round-trips onto the device under test, bit for bit") {
  Device dev = device_under_test();
  std::string path = tmpdir() + "/all.safetensors";
  io::TensorMap m;
  m["f32"] = arange(0.0, 70000, 1, TensorOptions(dev)).view({7, 10000});  // above the 32768 grain
  m["f64"] = arange(-3, 3, 0.5, TensorOptions(dev).with(kFloat64));
  m["i32"] = arange(-5, 5, 1, TensorOptions(dev).with(kInt32)).view({2, 5});
  m["i64"] = from_vector<int64_t>({int64_t(1) << 40, -7}, {2}, dev);
  m["u8"] = arange(0, 200, 1, TensorOptions(dev).with(kUInt8));
  m["bool"] = from_vector<bool>({true, false, true}, {3}, dev);
  m["f16"] = arange(0.0, 8, 1, TensorOptions(dev)).to(kFloat16);
  m["bf16"] = arange(0.0, 8, 1, TensorOptions(dev)).to(kBFloat16);
  m["scalar"] = full({}, 2.5, TensorOptions(dev));
  m["empty"] = zeros({0, 3}, TensorOptions(dev));
  m["strided"] = arange(0.0, 12, 1, TensorOptions(dev)).view({3, 4}).transpose(0, 1);
  io::save(path, m, {{"format", "pt"}, {"epoch", "3"}});
  for (Device to : {dev, Device("cpu", 0)}) {
    auto back = io::load(path, to);
    REQUIRE(back.size() == m.size());
    for (auto& [name, t] : m) {
      INFO(name << " onto " << to);
      const Tensor& b = back.at(name);
      CHECK(b.device() == to);
      CHECK(b.dtype() == t.dtype());
      CHECK(b.sizes() == t.sizes());
      CHECK(b.is_contiguous());
      Tensor ref = t.cpu().contiguous();
      Tensor got = b.cpu();
      REQUIRE(got.nbytes() == ref.nbytes());
      if (ref.nbytes()) CHECK(std::memcmp(got.raw_data(), ref.raw_data(), ref.nbytes()) == 0);
    }
  }
  CHECK(io::load(path).at("strided").to_vector<float>() == std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  auto meta = io::load_metadata(path);
  CHECK(meta.at("format") == "pt");
  CHECK(meta.at("epoch") == "3");
}

TEST_CASE("safetensors: map_location moves a checkpoint written on one device onto another") {
  Device dev = device_under_test();
  std::string path = tmpdir() + "/map.safetensors";
  Tensor w = randn({64, 33}, TensorOptions(dev));
  io::save(path, {{"w", w}});
  Tensor on_cpu = io::load(path, "cpu").at("w");
  CHECK(on_cpu.device() == Device("cpu", 0));
  CHECK(vnn::test::max_abs_diff(on_cpu, w) == 0.0);
  io::save(path, {{"w", on_cpu}});
  Tensor on_dev = io::load(path, dev).at("w");
  CHECK(on_dev.device() == dev);
  CHECK(vnn::test::max_abs_diff(on_dev, w) == 0.0);
  CHECK_THROWS_AS(io::load(path, Device("nosuch", 3)), DeviceNotFound);
}

TEST_CASE("safetensors: a failed save leaves the previous file intact and no temporary behind") {
  std::string dir = tmpdir() + "/atomic";
  mkdir(dir.c_str(), 0755);
  std::string path = dir + "/ckpt.safetensors";
  io::save(path, {{"a", ones({4})}});
  std::string before = slurp(path);
  io::testing::set_write_failure_hook([](size_t written) { return written > 0; });  // fail after the first chunk
  try {
    io::save(path, {{"a", zeros({1 << 20})}, {"b", zeros({1 << 20})}});
    FAIL("save should have failed");
  } catch (const FileError& e) {
    CHECK(std::string(e.what()).find("ckpt.safetensors") != std::string::npos);
  }
  io::testing::set_write_failure_hook({});
  CHECK(slurp(path) == before);
  CHECK(io::load(path).at("a").to_vector<float>() == std::vector<float>(4, 1.0f));
  int files = 0;
  FILE* p = popen(("ls -A " + dir).c_str(), "r");
  char buf[256];
  while (fgets(buf, sizeof buf, p)) ++files;
  pclose(p);
  CHECK(files == 1);
  if (geteuid() != 0) {  // root ignores directory permissions
    chmod(dir.c_str(), 0555);
    CHECK_THROWS_AS(io::save(path, {{"a", zeros({2})}}), FileError);
    chmod(dir.c_str(), 0755);
    CHECK(slurp(path) == before);
  }
  CHECK_THROWS_AS(io::save(tmpdir() + "/no/such/dir/x.safetensors", {{"a", ones({1})}}), FileError);
  CHECK_THROWS_AS(io::save(path, {{"__metadata__", ones({1})}}), ValueError);
  CHECK_THROWS_AS(io::save(path, {{"a", Tensor()}}), ValueError);
}

TEST_CASE("safetensors: corrupt and hostile files are rejected with FormatError naming the file") {
  std::string path = tmpdir() + "/bad.safetensors";
  std::string good_data(16, '\0');
  std::string ok = R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
  spit(path, make_file(ok, good_data));
  CHECK(io::load(path).at("a").sizes() == Shape{2, 2});
  struct Case { const char* what; std::string bytes; const char* expect; };
  std::string huge(8, '\0');
  huge[5] = 1;  // 2^40
  std::vector<Case> cases{
      {"empty file", "", "shorter than the 8-byte"},
      {"short length", "abc", "shorter than the 8-byte"},
      {"length past end", make_file(ok, good_data).substr(0, 30), "past the end"},
      {"length > 100MB", huge + "{}", "100 MB"},
      {"invalid JSON", make_file("{\"a\":", ""), "invalid JSON"},
      {"not an object", make_file("[1,2]", ""), "not an object"},
      {"unknown dtype", make_file(R"({"a":{"dtype":"Q7","shape":[1],"data_offsets":[0,1]}})", "x"), "unknown dtype"},
      {"offsets past end", make_file(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})", "xy"), "past the"},
      {"size mismatch", make_file(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", std::string(8, 'x')), "needs 12"},
      {"overlap", make_file(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})", std::string(6, 'x')), "overlap"},
      {"duplicate", make_file(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})", "xy"), "duplicate"},
      {"begin > end", make_file(R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[3,1]}})", "xyz"), "> end"},
      {"negative shape", make_file(R"({"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,0]}})", ""), "non-negative"},
      {"shape overflow", make_file(R"({"a":{"dtype":"F64","shape":[4294967296,4294967296,16],"data_offsets":[0,8]}})", std::string(8, 'x')), "overflows 64-bit"},
      {"huge offset", make_file(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[18446744073709551615,18446744073709551616]}})", "x"), "non-negative integers"},
      {"bad metadata", make_file(R"({"__metadata__":{"k":1}})", ""), "not a string"},
      {"deep nesting", make_file(std::string(200, '[') + std::string(200, ']'), ""), "not an object"},
      {"deep nesting in an entry", make_file("{\"a\":" + std::string(200, '['), ""), "entry is not an object"},
  };
  for (auto& c : cases) {
    INFO(c.what);
    spit(path, c.bytes);
    try {
      io::load(path);
      FAIL("accepted");
    } catch (const FormatError& e) {
      std::string msg = e.what();
      CHECK(msg.find(path) != std::string::npos);
      CHECK(msg.find(c.expect) != std::string::npos);
    }
  }
  CHECK_THROWS_AS(io::load(tmpdir() + "/missing.safetensors"), FileError);
  CHECK_THROWS_WITH(io::load(tmpdir() + "/missing.safetensors"), Catch::Contains("missing.safetensors"));
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// IDX (plain and gzip), Fashion-MNIST and CSV readers, with their errors.
#include <catch2/catch.hpp>
#include <stdlib.h>
#include <zlib.h>

#include <sys/stat.h>

#include <fstream>

#include "support/device_under_test.hpp"

using namespace vnn;
using namespace vnn::data;

namespace {
std::string tmpdir() {
  static std::string d = [] {
    char t[] = "/tmp/vnn_rd_XXXXXX";
    return std::string(mkdtemp(t));
  }();
  return d;
}
std::string idx_bytes(uint8_t type, std::vector<uint32_t> dims, const std::string& data) {
  std::string s{0, 0, char(type), char(dims.size())};
  for (auto d : dims) s += std::string{char(d >> 24), char(d >> 16), char(d >> 8), char(d)};
  return s + data;
}
void write_plain(const std::string& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }
void write_gz(const std::string& p, const std::string& s) {
  gzFile f = gzopen(p.c_str(), "wb");
  gzwrite(f, s.data(), unsigned(s.size()));
  gzclose(f);
}
template <class F>
void check_throws(F f, const std::string& a, const std::string& b) {
  try {
    f();
    FAIL("no error");
  } catch (const Error& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find(a) != std::string::npos);
    CHECK(std::string(e.what()).find(b) != std::string::npos);
  }
}
}  // namespace

TEST_CASE("read_idx: plain and gzip, uint8 and big-endian int32/float32") {
  std::string d = tmpdir();
  std::string u8 = idx_bytes(0x08, {2, 3}, std::string{1, 2, 3, 4, 5, 6});
  write_plain(d + "/a.idx", u8);
  write_gz(d + "/a.idx.gz", u8);
  for (auto p : {d + "/a.idx", d + "/a.idx.gz"}) {
    Tensor t = read_idx(p);
    CHECK(t.dtype() == kUInt8);
    CHECK(t.sizes() == Shape{2, 3});
    CHECK(t.to_vector<int32_t>() == std::vector<int32_t>{1, 2, 3, 4, 5, 6});
  }
  write_plain(d + "/i.idx", idx_bytes(0x0C, {2}, std::string{0, 0, 1, 2, char(0xff), char(0xff), char(0xff), char(0xfe)}));
  CHECK(read_idx(d + "/i.idx").to_vector<int32_t>() == std::vector<int32_t>{258, -2});
  write_plain(d + "/f.idx", idx_bytes(0x0D, {1}, std::string{0x3f, char(0xc0), 0, 0}));
  CHECK(read_idx(d + "/f.idx").to_vector<float>() == std::vector<float>{1.5f});
}

TEST_CASE("read_idx: missing, bad magic, truncated, trailing data, corrupt gzip") {
  std::string d = tmpdir();
  check_throws([&] { read_idx(d + "/nope.idx"); }, "nope.idx", "does not exist");
  CHECK_THROWS_AS(read_idx(d + "/nope.idx"), FileError);
  write_plain(d + "/m.idx", "\x01\x02\x08\x01");
  check_throws([&] { read_idx(d + "/m.idx"); }, "m.idx", "bad IDX magic");
  write_plain(d + "/t.idx", idx_bytes(0x08, {10}, "abc"));
  check_throws([&] { read_idx(d + "/t.idx"); }, "t.idx", "truncated");
  write_gz(d + "/t.idx.gz", idx_bytes(0x08, {10}, "abc"));
  check_throws([&] { read_idx(d + "/t.idx.gz"); }, "t.idx.gz", "truncated");
  write_plain(d + "/x.idx", idx_bytes(0x08, {2}, "abc"));
  check_throws([&] { read_idx(d + "/x.idx"); }, "x.idx", "size mismatch");
  write_plain(d + "/s.idx", std::string{0, 0});
  check_throws([&] { read_idx(d + "/s.idx"); }, "s.idx", "truncated");
  write_plain(d + "/ty.idx", idx_bytes(0x0B, {1}, "ab"));
  check_throws([&] { read_idx(d + "/ty.idx"); }, "ty.idx", "0x");
  // A gzip stream cut in the middle.
  std::string big(5000, 'q');
  for (size_t i = 0; i < big.size(); ++i) big[i] = char((i * 7919) % 251);
  write_gz(d + "/c.idx.gz", idx_bytes(0x08, {5000}, big));
  std::ifstream in(d + "/c.idx.gz", std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), {});
  write_plain(d + "/c.idx.gz", gz.substr(0, gz.size() / 2));
  CHECK_THROWS_AS(read_idx(d + "/c.idx.gz"), FormatError);
  gz[gz.size() / 2] ^= 0x55;
  gz[gz.size() / 2 + 1] ^= 0x55;
  write_plain(d + "/c2.idx.gz", gz);
  CHECK_THROWS_AS(read_idx(d + "/c2.idx.gz"), FormatError);
}

TEST_CASE("FashionMNIST: the real data set, and loud errors for missing or mismatched files") {
  std::string root = fashion_mnist_root();
  FashionMNIST test(root, false, 500);
  CHECK(test.size() == 500);
  Example e = test.get(0);
  CHECK(e.data.sizes() == Shape{1, 28, 28});
  CHECK(e.data.dtype() == kFloat32);
  CHECK(e.target.dtype() == kInt64);
  CHECK(e.target.item<int64_t>() == 9);  // t10k's first image is an ankle boot
  auto px = test.images().to_vector<float>();
  float lo = 1, hi = 0;
  for (float v : px) lo = std::min(lo, v), hi = std::max(hi, v);
  CHECK(lo == 0.0f);
  CHECK(hi == 1.0f);
  FashionMNIST full_test(root, false);
  CHECK(full_test.size() == 10000);

  std::string d = tmpdir() + "/fm";
  mkdir(d.c_str(), 0755);
  check_throws([&] { FashionMNIST(d, true); }, d + "/train-images-idx3-ubyte", "VNN_FASHION_MNIST_DIR");
  setenv("VNN_FASHION_MNIST_DIR", d.c_str(), 1);
  CHECK(fashion_mnist_root() == d);
  CHECK(fashion_mnist_root("/x") == "/x");
  write_gz(d + "/t10k-images-idx3-ubyte.gz", idx_bytes(0x08, {2, 28, 28}, std::string(2 * 784, '\x10')));
  write_plain(d + "/t10k-labels-idx1-ubyte", idx_bytes(0x08, {3}, std::string{1, 2, 3}));
  check_throws([&] { FashionMNIST("", false); }, "size mismatch", "t10k-labels-idx1-ubyte");
  write_plain(d + "/t10k-labels-idx1-ubyte", idx_bytes(0x08, {2}, std::string{1, 12}));
  check_throws([&] { FashionMNIST("", false); }, "t10k-labels-idx1-ubyte", "outside the classes");
  write_plain(d + "/t10k-labels-idx1-ubyte", idx_bytes(0x08, {2}, std::string{1, 2}));
  FashionMNIST tiny("", false);
  CHECK(tiny.get(1).target.item<int64_t>() == 2);
  CHECK(tiny.get(0).data.to_vector<float>()[5] == Approx(16.0 / 255.0));
  unsetenv("VNN_FASHION_MNIST_DIR");
}

TEST_CASE("read_csv: header, label column, errors naming line and column") {
  std::string p = tmpdir() + "/t.csv";
  write_plain(p, "a, b ,label\n1.5,2,0\n\n-3,4e1,2\n");
  CsvTable t = read_csv(p, {"label"});
  CHECK(t.feature_names == std::vector<std::string>{"a", "b"});
  CHECK(t.features.sizes() == Shape{2, 2});
  CHECK(t.features.to_vector<float>() == std::vector<float>{1.5f, 2, -3, 40});
  CHECK(t.labels.to_vector<int64_t>() == std::vector<int64_t>{0, 2});
  CsvTable nolab = read_csv(p);
  CHECK(nolab.features.sizes() == Shape{2, 3});
  CHECK(!nolab.labels.defined());
  auto ds = std::make_shared<TensorDataset>(t.features, t.labels);
  CHECK(ds->get(1).target.item<int64_t>() == 2);
  write_plain(p, "a,b\n1,2\n3\n");
  check_throws([&] { read_csv(p); }, "t.csv:3", "expected 2 fields");
  write_plain(p, "a,b\n1,x\n");
  check_throws([&] { read_csv(p); }, "t.csv:2 column \"b\"", "not a number");
  write_plain(p, "a,y\n1,0.5\n");
  check_throws([&] { read_csv(p, {"y"}); }, "column \"y\"", "not an integer");
  check_throws([&] { read_csv(p, {"zz"}); }, "t.csv", "no column");
  check_throws([&] { read_csv(tmpdir() + "/none.csv"); }, "none.csv", "cannot open");
  CsvOptions noheader;
  noheader.header = false;
  write_plain(p, "1;2\n3;4\n");
  noheader.delimiter = ';';
  CHECK(read_csv(p, noheader).features.to_vector<float>() == std::vector<float>{1, 2, 3, 4});
}

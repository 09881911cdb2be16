// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// IDX (through zlib's gz* API, which reads gzip and plain files alike),
// Fashion-MNIST and numeric CSV.
#include <zlib.h>

#include <algorithm>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "data/host_util.hpp"
#include "vnn/data/readers.h"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::data {

using detail::host_empty;
using detail::host_ptr;

namespace {

bool file_exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

struct Gz {
  gzFile f = nullptr;
  std::string path;
  explicit Gz(const std::string& p) : path(p) {
    VNN_CHECK(FileError, file_exists(p), "read_idx: ", p, " does not exist or is not a regular file");
    f = gzopen(p.c_str(), "rb");
    VNN_CHECK(FileError, f, "read_idx: cannot open ", p, ": ", std::strerror(errno));
  }
  ~Gz() { if (f) gzclose(f); }
  // Reads up to n bytes; FormatError on a corrupt gzip stream.
  size_t read(void* dst, size_t n) {
    size_t got = 0;
    while (got < n) {
      unsigned chunk = unsigned(std::min<size_t>(n - got, size_t(1) << 30));
      int r = gzread(f, static_cast<char*>(dst) + got, chunk);
      if (r < 0) {
        int code = 0;
        const char* msg = gzerror(f, &code);
        VNN_THROW(FormatError, "read_idx: ", path, " is corrupt (zlib: ", (msg ? msg : "error"), ")");
      }
      if (r == 0) break;
      got += size_t(r);
    }
    if (got < n) {
      int code = 0;
      const char* msg = gzerror(f, &code);
      if (code != Z_OK && code != Z_STREAM_END)
        VNN_THROW(FormatError, "read_idx: ", path, " is corrupt (zlib: ", (msg ? msg : "error"), ")");
    }
    return got;
  }
};

}  // namespace

Tensor read_idx(const std::string& path) {
  Gz gz(path);
  uint8_t magic[4];
  VNN_CHECK(FormatError, gz.read(magic, 4) == 4, "read_idx: ", path,
            " is truncated: shorter than the 4-byte IDX magic");
  if (magic[0] != 0 || magic[1] != 0 || magic[3] == 0 || magic[3] > kMaxDims)
    VNN_THROW(FormatError, "read_idx: ", path, " has a bad IDX magic (bytes ", magic[0], " ", magic[1], " ", magic[2],
              " ", magic[3], "; expected 0 0 <type> <1..8 dims>)");
  DType dt;
  switch (magic[2]) {
    case 0x08: dt = kUInt8; break;
    case 0x0C: dt = kInt32; break;
    case 0x0D: dt = kFloat32; break;
    case 0x0E: dt = kFloat64; break;
    default:
      VNN_THROW(FormatError, "read_idx: ", path, " has IDX element type 0x", magic[2],
                ", which vnn does not read (supported: 0x08 uint8, 0x0C int32, 0x0D float32, 0x0E float64)");
  }
  Shape shape;
  uint64_t total = 1;
  for (int d = 0; d < magic[3]; ++d) {
    uint8_t b[4];
    VNN_CHECK(FormatError, gz.read(b, 4) == 4, "read_idx: ", path, " is truncated inside the dimension sizes");
    uint64_t s = (uint64_t(b[0]) << 24) | (uint64_t(b[1]) << 16) | (uint64_t(b[2]) << 8) | b[3];
    shape.push_back(int64_t(s));
    // total <= 2^34 and s < 2^32 here, so total * s could pass 2^64 and
    // wrap to a small count: checked.
    if (__builtin_mul_overflow(total, s, &total) || total > (uint64_t(1) << 34))
      VNN_THROW(FormatError, "read_idx: ", path, " declares shape ", shape.str(), ", more than 2^34 elements");
  }
  size_t isz = itemsize(dt);
  size_t want = size_t(total) * isz;
  // The file must be able to hold what it declares before anything is
  // allocated: a 22-byte file declaring [2, 3e9] float32 would otherwise
  // ask for 24 GB. A plain file holds its data bytes exactly; a gzip one at
  // most 1032x its size (deflate's maximum ratio).
  struct stat st {};
  const uint64_t file_size = ::stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
  const uint64_t head = 4 + 4 * uint64_t(magic[3]);
  const bool plain = gzdirect(gz.f) == 1;
  if (plain ? uint64_t(want) > file_size - std::min(file_size, head) : uint64_t(want) > 1032 * file_size + 1024)
    VNN_THROW(FormatError, "read_idx: ", path, " is truncated: shape ", shape.str(), " needs ", want,
              " data bytes, more than the ", file_size, "-byte ",
              (plain ? "file holds" : "gzip file can hold (deflate expands at most 1032:1)"));
  Tensor out = detail::host_memory_guard("read_idx: " + path + " (shape " + shape.str() + ", " + std::to_string(want) +
                                             " bytes)",
                                         [&] { return host_empty(shape, dt, "read_idx"); });
  size_t got = gz.read(host_ptr(out), want);
  VNN_CHECK(FormatError, got == want, "read_idx: ", path, " is truncated: shape ", shape.str(), " needs ", want,
            " data bytes, the file holds ", got);
  uint8_t extra;
  VNN_CHECK(FormatError, gz.read(&extra, 1) == 0, "read_idx: ", path, " has data beyond the ", want, " bytes shape ",
            shape.str(), " needs (size mismatch)");
  if (isz > 1) {  // IDX is big-endian
    auto* p = static_cast<uint8_t*>(host_ptr(out));
    for (size_t i = 0; i < size_t(total); ++i) std::reverse(p + i * isz, p + (i + 1) * isz);
  }
  return out;
}

std::string fashion_mnist_root(const std::string& root) {
  if (!root.empty()) return root;
  if (const char* env = std::getenv("VNN_FASHION_MNIST_DIR"))
    if (*env) return env;
  return "/usr/share/datasets/fashion-mnist";
}

namespace {
std::string find_idx(const std::string& root, const std::string& stem) {
  std::string plain = root + "/" + stem;
  if (file_exists(plain)) return plain;
  if (file_exists(plain + ".gz")) return plain + ".gz";
  VNN_THROW(FileError, "FashionMNIST: neither ", plain, " nor ", plain,
            ".gz exists (pass the directory, set VNN_FASHION_MNIST_DIR, or install Debian's "
            "dataset-fashion-mnist)");
}
}  // namespace

FashionMNIST::FashionMNIST(const std::string& root_arg, bool train, int64_t limit) {
  std::string root = fashion_mnist_root(root_arg);
  std::string prefix = train ? "train" : "t10k";
  std::string ip = find_idx(root, prefix + "-images-idx3-ubyte"), lp = find_idx(root, prefix + "-labels-idx1-ubyte");
  Tensor img = read_idx(ip), lab = read_idx(lp);
  if (img.dtype() != kUInt8 || img.dim() != 3 || img.size(1) != 28 || img.size(2) != 28)
    VNN_THROW(FormatError, "FashionMNIST: ", ip, " should hold uint8 images [N, 28, 28], holds ", name(img.dtype()),
              " ", img.shape_str());
  if (lab.dtype() != kUInt8 || lab.dim() != 1)
    VNN_THROW(FormatError, "FashionMNIST: ", lp, " should hold uint8 labels [N], holds ", name(lab.dtype()), " ",
              lab.shape_str());
  VNN_CHECK(FormatError, img.size(0) == lab.size(0), "FashionMNIST: size mismatch: ", ip, " holds ", img.size(0),
            " images but ", lp, " holds ", lab.size(0), " labels");
  n_ = img.size(0);
  if (limit > 0 && limit < n_) n_ = limit;
  images_ = host_empty({n_, 1, 28, 28}, kFloat32);
  labels_ = host_empty({n_}, kInt64);
  const uint8_t* ib = static_cast<const uint8_t*>(host_ptr(img));
  const uint8_t* lb = static_cast<const uint8_t*>(host_ptr(lab));
  float* fi = static_cast<float*>(host_ptr(images_));
  int64_t* li = static_cast<int64_t*>(host_ptr(labels_));
  for (int64_t i = 0; i < n_ * 784; ++i) fi[i] = float(ib[i]) * (1.0f / 255.0f);
  for (int64_t i = 0; i < n_; ++i) {
    if (lb[i] > 9)
      VNN_THROW(FormatError, "FashionMNIST: ", lp, " label ", i, " is ", lb[i], ", outside the classes 0..9");
    li[i] = lb[i];
  }
}

Example FashionMNIST::get(int64_t index) const {
  check_index(index, n_, "FashionMNIST::get");
  return {images_.select(0, index), labels_.select(0, index)};
}

const std::vector<std::string>& FashionMNIST::class_names() {
  static const std::vector<std::string> names{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                              "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return names;
}

}  // namespace vnn::data

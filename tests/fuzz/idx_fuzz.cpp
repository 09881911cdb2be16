// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target for the IDX reader (plain and gzip): only vnn errors may
// come out, and an accepted file's tensor matches its declared shape.
#include <zlib.h>

#include <cstdlib>

#include "fuzz_support.hpp"
#include "vnn/data/readers.h"
#include "vnn/tensor.h"

namespace {
// An IDX file: magic 0 0 <type> <ndim>, big-endian dims, big-endian data.
std::string idx(uint8_t type, const std::vector<uint32_t>& dims, size_t itemsize) {
  std::string out{'\0', '\0', char(type), char(dims.size())};
  size_t n = 1;
  for (uint32_t d : dims) {
    for (int s = 24; s >= 0; s -= 8) out += char(d >> s);
    n *= d;
  }
  for (size_t i = 0; i < n * itemsize; ++i) out += char(i * 37 + 1);
  return out;
}
std::string gzip(const std::string& raw) {
  const std::string path = "vnn_fuzz_seed_" + std::to_string(::getpid()) + ".idx.gz";
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, raw.data(), unsigned(raw.size()));
  gzclose(f);
  std::string out = vnn::fuzz::slurp(path);
  std::remove(path.c_str());
  return out;
}
}  // namespace

std::vector<std::string> fuzz_seeds() {
  std::vector<std::string> out{idx(0x08, {3, 2, 2}, 1), idx(0x0C, {4}, 4), idx(0x0D, {2, 3}, 4), idx(0x0E, {2}, 8),
                               idx(0x08, {0, 5}, 1)};
  out.push_back(gzip(out[0]));
  out.push_back(gzip(out[2]));
  return out;
}

bool fuzz_seed_ok(const std::string& seed) {
  return vnn::data::read_idx(vnn::fuzz::as_file(reinterpret_cast<const uint8_t*>(seed.data()), seed.size())).defined();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vnn;
  const std::string path = fuzz::as_file(data, size);
  fuzz::only_vnn_errors([&] {
    Tensor t = data::read_idx(path);
    if (!t.defined() || t.dim() < 1 || t.dim() > 8) std::abort();
  });
  return 0;
}

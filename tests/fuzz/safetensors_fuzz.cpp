// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target for the full safetensors load path: parse_header's
// layout invariants on the raw bytes, then io::load and io::load_metadata
// on the same bytes as a file. Only vnn errors may come out.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "fuzz_support.hpp"
#include "vnn/io/safetensors.h"
#include "vnn/tensor.h"

std::vector<std::string> fuzz_seeds() {
  using namespace vnn;
  const std::string path = "vnn_fuzz_seed_" + std::to_string(::getpid()) + ".safetensors";
  std::vector<std::string> out;
  auto add = [&](const io::TensorMap& m, const io::Metadata& meta) {
    io::save(path, m, meta);
    out.push_back(fuzz::slurp(path));
  };
  Tensor f = arange(0, 6, 1).view({2, 3});
  add({{"f32", f}, {"f64", f.to(kFloat64)}, {"bf16", f.to(kBFloat16)}, {"f16", f.to(kFloat16)},
       {"bool", from_vector<bool>({true, false, true}, {3})}, {"i32", f.to(kInt32)},
       {"i64", from_vector<int64_t>({int64_t(1) << 40, -7}, {2})}, {"u8", arange(0, 5, 1, TensorOptions(kUInt8))}},
      {{"format", "pt"}, {"epoch", "3"}});
  add({{"scalar", full({}, 2.5)}, {"empty", zeros({0, 3})}, {"w\xc3\xa9ight", ones({1})}}, {});
  add({{"x", f}}, {{"k", "v\"with\\escapes\n"}});
  std::remove(path.c_str());
  return out;
}

bool fuzz_seed_ok(const std::string& seed) {
  using namespace vnn;
  const io::TensorMap m = io::load(fuzz::as_file(reinterpret_cast<const uint8_t*>(seed.data()), seed.size()));
  return !m.empty();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vnn;
  fuzz::only_vnn_errors([&] {
    io::Header h = io::parse_header(data, size, size, "fuzz-input");
    for (auto& e : h.tensors)
      if (e.end > size - h.data_start || e.begin > e.end) std::abort();  // accepted an out-of-range layout
  });
  const std::string path = fuzz::as_file(data, size);
  fuzz::only_vnn_errors([&] {
    io::TensorMap m = io::load(path);
    for (auto& [name, t] : m)
      if (!t.defined() || name.empty()) std::abort();
  });
  fuzz::only_vnn_errors([&] { io::load_metadata(path); });
  return 0;
}

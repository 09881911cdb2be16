// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runs a fuzz target (linked in) without libFuzzer, in the normal suite:
// its valid seeds (which must be accepted), every truncation and many byte
// flips and structural replacements of them, hand-made hostile headers, and
// every file of the regression corpora named on the command line (crashes
// libFuzzer found, kept in tests/fuzz/regressions/<target>/).
//   corpus_<target> [dir...]        replay
//   corpus_<target> --write-seeds D write the seeds to D (for libFuzzer)
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {
std::string file(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char(uint64_t(header.size()) >> (8 * i));
  return out + header + data;
}
void run(const std::string& s) {
  // A heap copy of exactly the input size, so ASan (when on) sees overreads.
  std::vector<uint8_t> buf(s.begin(), s.end());
  LLVMFuzzerTestOneInput(buf.empty() ? nullptr : buf.data(), buf.size());
}
// The safetensors header region of s (all of s when it has none).
size_t header_end(const std::string& s) {
  if (s.size() < 8) return s.size();
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | uint8_t(s[size_t(i)]);
  return n <= s.size() - 8 ? size_t(8 + n) : s.size();
}
}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> seeds = fuzz_seeds();
  if (argc == 3 && std::strcmp(argv[1], "--write-seeds") == 0) {
    ::mkdir(argv[2], 0755);
    for (size_t i = 0; i < seeds.size(); ++i) {
      std::string p = std::string(argv[2]) + "/seed-" + std::to_string(i);
      std::FILE* f = std::fopen(p.c_str(), "wb");
      if (!f || std::fwrite(seeds[i].data(), 1, seeds[i].size(), f) != seeds[i].size()) return 1;
      std::fclose(f);
    }
    std::printf("%zu seeds written to %s\n", seeds.size(), argv[2]);
    return 0;
  }
  if (seeds.empty()) {
    std::fprintf(stderr, "no seeds\n");
    return 1;
  }
  for (size_t i = 0; i < seeds.size(); ++i) {
    bool ok = false;
    try {
      ok = fuzz_seed_ok(seeds[i]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "seed %zu: %s\n", i, e.what());
    }
    if (!ok) {
      std::fprintf(stderr, "seed %zu (%zu bytes) is not accepted by the target: the corpus would not reach it\n", i,
                   seeds[i].size());
      return 1;
    }
  }
  size_t cases = 0;
  for (auto& s : seeds) {
    // About 512 positions of the header and every 16th byte of the data
    // (values: flipping them exercises little but the value checks), so a
    // seed costs a bounded number of runs.
    const size_t head = header_end(s), step = std::max<size_t>(1, head / 512);
    auto next = [&](size_t i) { return i < head ? i + step : i + 16; };
    for (size_t n = 0; n <= s.size(); n = next(n), ++cases) run(s.substr(0, n));
    for (size_t i = 0; i < s.size(); i = next(i))
      for (int bit : {0, 1, 4, 7}) {
        std::string m = s;
        m[i] = char(m[i] ^ (1 << bit));
        run(m);
        ++cases;
      }
    for (size_t i = 0; i < head; i += step)
      for (char c : {'"', '{', '}', '[', ']', ',', ':', '-', '9', '\\', '\0', '\xff'}) {
        std::string m = s;
        m[i] = c;
        run(m);
        ++cases;
      }
  }
  std::string huge(8, '\xff');
  for (const std::string& s : {huge, huge + "{}", file(std::string(100000, '['), ""),
                               file("{\"a\":" + std::string(100000, '{'), "")}) {
    run(s);
    ++cases;
  }
  size_t replayed = 0;
  for (int a = 1; a < argc; ++a) {
    DIR* d = ::opendir(argv[a]);
    if (!d) {
      std::fprintf(stderr, "cannot open corpus directory %s\n", argv[a]);
      return 1;
    }
    while (struct dirent* e = ::readdir(d)) {
      std::string p = std::string(argv[a]) + "/" + e->d_name;
      struct stat st {};
      if (e->d_name[0] == '.' || ::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
          std::strstr(e->d_name, "README"))
        continue;
      run(vnn::fuzz::slurp(p));
      ++replayed;
    }
    ::closedir(d);
  }
  std::printf("%zu seeds, %zu generated inputs, %zu regression files: no crash\n", seeds.size(), cases, replayed);
  return 0;
}

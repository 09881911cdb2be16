// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared pieces of the fuzz targets (tests/fuzz/*_fuzz.cpp): each target
// defines LLVMFuzzerTestOneInput and fuzz_seeds(); corpus_driver.cpp (the
// normal suite) and libFuzzer (run_libfuzzer.sh, slow label) both run them.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>
#include <typeinfo>
#include <vector>

#include "vnn/error.h"

// Valid inputs built with the library's own writers (never hand-typed).
std::vector<std::string> fuzz_seeds();
// True when the target's whole path accepts seed (the corpus driver requires
// it of every seed, so a seed can never silently stop parsing again).
bool fuzz_seed_ok(const std::string& seed);

namespace vnn::fuzz {

// The input as a file the loaders can open: one memfd, rewritten per input.
inline std::string as_file(const uint8_t* data, size_t size) {
  static int fd = [] {
    int f = ::memfd_create("vnn-fuzz", MFD_CLOEXEC);
    if (f < 0) std::abort();
    return f;
  }();
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != ssize_t(size)) std::abort();
  return "/proc/self/fd/" + std::to_string(fd);
}

// A file's bytes (seed generation).
inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Runs f: vnn errors are the expected answer to bad input; anything else
// escaping (std::bad_alloc, std::out_of_range, ...) is a bug, reported as a
// crash.
template <class F>
void only_vnn_errors(F&& f) {
  try {
    f();
  } catch (const vnn::Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: non-vnn exception %s: %s\n", typeid(e).name(), e.what());
    std::abort();
  }
}

}  // namespace vnn::fuzz

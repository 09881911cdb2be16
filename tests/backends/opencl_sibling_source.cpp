// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A program of sibling variants (backends/opencl/sibling_source.hpp): each
// copy of a kernel file gets its variant's defines and its own names, and
// leaves no macro behind for the next copy. Host-only: the text is checked
// here; every op test on opencl:0 builds the real programs.
#include <catch2/catch.hpp>

#include <string>

#include "opencl/sibling_source.hpp"

using vnn_opencl::sibling_kernel_name;
using vnn_opencl::sibling_source;

namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// A kernel file in the style of kernels/*.cl: a helper pasted from a macro
// argument, a typedef, an inline function without the vnn_ prefix, macros
// of its own and one that the shared options may already define.
const char* const kBody = R"(// FN selects the function (vnn_twice in a comment stays as it is)
#ifndef OX
#define OX -1
#endif
#define HELPER_twice vnn_twice
#define MAKE(NAME) inline float NAME(float x) { return x + x; }
MAKE(HELPER_twice)
typedef float TW;
inline TW scale_of(TW x) { return x * FN; }
__kernel void vnn_apply(__global TW* p) { p[0] = scale_of(vnn_twice(p[0])) + vnn_shared(OX); }
)";

const char* const kShared = "inline float vnn_shared(int x) { return x; }\n";

}  // namespace

TEST_CASE("sibling_source gives each variant its defines and its own names") {
  const std::string src = sibling_source(kShared, kBody, "-DT=float", {"-DFN=2", "-DFN=3 -DEXTRA"});
  CHECK(sibling_kernel_name("vnn_apply", 1) == "vnn_apply__1");
  // Both copies, each after its defines.
  CHECK(count(src, "__kernel void vnn_apply(") == 2);
  CHECK(src.find("#define FN 2\n") < src.find("#define FN 3\n"));
  CHECK(src.find("#define EXTRA 1\n") != std::string::npos);
  // The body's own names are renamed per copy: the kernel, the helper made
  // by a macro, the typedef and the inline function without the prefix.
  for (const char* name : {"vnn_apply", "vnn_twice", "TW", "scale_of"}) {
    INFO(name);
    CHECK(count(src, std::string("#define ") + name + " " + name + "__0\n") == 1);
    CHECK(count(src, std::string("#define ") + name + " " + name + "__1\n") == 1);
    CHECK(count(src, std::string("#undef ") + name + "\n") == 2);
  }
  // The shared part's helper, a comment's words and macro parameters stay.
  for (const char* name : {"vnn_shared", "NAME", "x"}) {
    INFO(name);
    CHECK(src.find(std::string("#define ") + name + " ") == std::string::npos);
  }
  // The body's macros and the variant's defines are undefined after each copy.
  for (const char* name : {"OX", "HELPER_twice", "MAKE", "FN"}) {
    INFO(name);
    CHECK(count(src, std::string("#undef ") + name + "\n") == 2);
  }
  CHECK(count(src, "#undef EXTRA\n") == 1);
}

TEST_CASE("sibling_source leaves a macro of the shared options defined") {
  const std::string src = sibling_source(kShared, kBody, "-DT=float -DOX=1", {"-DFN=2", "-DFN=3"});
  CHECK(src.find("#undef OX\n") == std::string::npos);
  CHECK(count(src, "#undef MAKE\n") == 2);
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Kokkos Tools through vnn's CPU plugin: KOKKOS_TOOLS_LIBS (the name every
// Kokkos from 3.7 reads; the plugin passes it on to 3.4's
// KOKKOS_PROFILE_LIBRARY) loads the tool built next to this test, and the
// tool must see vnn's kernels. A plain main, not Catch: the environment has
// to be set before the plugin starts Kokkos, once per process.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "vnn/vnn.h"

static int failures = 0;
static void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::cerr << "FAILED: " << what << "\n";
    ++failures;
  }
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " <tool library> <output file>\n";
    return 2;
  }
  setenv("KOKKOS_TOOLS_LIBS", argv[1], 1);
  unsetenv("KOKKOS_PROFILE_LIBRARY");
  setenv("VNN_TEST_TOOL_OUT", argv[2], 1);
  std::remove(argv[2]);
  vnn::Device cpu("cpu", 0);
  // One op on each side of the inline grain: Serial and OpenMP dispatches.
  for (int64_t n : {64, 100000}) {
    vnn::Tensor a = vnn::ones({n}, vnn::TensorOptions(cpu));
    vnn::Tensor b = vnn::add(a, a);
    auto v = b.to_vector<float>();
    expect(v.front() == 2.0f && v.back() == 2.0f, "add result for n = " + std::to_string(n));
  }
  std::ifstream f(argv[2]);
  expect(bool(f), std::string("the tool wrote no file at ") + argv[2] + ": Kokkos did not load it");
  std::string line;
  int init = 0, kernels = 0;
  while (std::getline(f, line)) {
    if (line.rfind("init ", 0) == 0) ++init;
    if (line.rfind("parallel_", 0) == 0) ++kernels;
  }
  expect(init == 1, "kokkosp_init_library ran once (saw " + std::to_string(init) + ")");
  expect(kernels >= 2, "the tool saw vnn's kernels (saw " + std::to_string(kernels) + ")");
  std::cout << "Kokkos tool saw " << kernels << " kernel dispatches\n";
  return failures ? 1 : 0;
}

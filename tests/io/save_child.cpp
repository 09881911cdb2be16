// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Helper for the stray-temp-file test: saves a 16 MB tensor to argv[1] and,
// once 1 MB of the temporary file is written, prints "w" and waits to be
// killed (SIGKILL mid-save).
#include <unistd.h>

#include <cstdio>

#include "vnn/vnn.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  vnn::Tensor t = vnn::zeros({4 << 20});
  vnn::io::testing::set_write_failure_hook([](size_t written) {
    if (written >= (size_t(1) << 20)) {
      std::fputs("w", stdout);
      std::fflush(stdout);
      for (;;) ::pause();
    }
    return false;
  });
  vnn::io::save(argv[1], {{"t", t}});
  return 1;  // never reached: the parent kills it
}

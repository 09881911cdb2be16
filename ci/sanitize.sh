#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The sanitizer legs of CI (ci/test.sh runs them after the main suite):
#   asan  ASan+UBSan build in build-asan: the cpu and opencl tests, slow ones
#         excluded, and the OpenCL kernel-variant reruns (opencl-gemm-*,
#         grid-stride, pocl-basic): they change which kernels PoCL compiles,
#         code ASan does not instrument, over host paths test[opencl] runs
#         already; the main suite runs them (~150 s of this leg on 2 cores).
#   tsan  TSan build in build-tsan: the tests labelled tsan (threads,
#         DataLoader, streams, profiler, transfers). Built with clang and
#         LLVM's OpenMP runtime, whose Archer tool tells TSan about OpenMP's
#         barriers and locks (libgomp is not instrumented: under g++ every
#         parallel region would report races that are not there).
# Every finding fails the leg: -fno-sanitize-recover=all, halt_on_error=1,
# and any sanitizer report in the test logs (a child process, a test judged
# by its output) fails it too. Suppressions (ci/sanitizers/*.supp) hold only
# findings shown to lie in third-party code, each with its reason.
#   ci/sanitize.sh [asan] [tsan]       default: both (or VNN_SANITIZE_LEGS="asan tsan")
#   VNN_SANITIZE_CMAKE_ARGS="..."      extra configure arguments (e.g. a compiler launcher)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
supp="$here/sanitizers"
legs=("$@")
if [ "${#legs[@]}" -eq 0 ]; then read -ra legs <<<"${VNN_SANITIZE_LEGS:-asan tsan}"; fi
jobs="$(nproc)"
# Only what the tests need: no GPU plugins (not sanitizable), examples, bench.
common=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DVNN_BACKEND_CUDA=OFF -DVNN_BACKEND_HIP=OFF
        -DVNN_BUILD_EXAMPLES=OFF -DVNN_BUILD_BENCH=OFF)
# shellcheck disable=SC2206
extra=(${VNN_SANITIZE_CMAKE_ARGS:-})
# ccache, as ci/build.sh: CI's clean clone reuses a session's sanitizer compiles.
if command -v ccache >/dev/null 2>&1 && [ "${VNN_CCACHE:-1}" = 1 ]; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
  export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-8G}"
  common+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi

# A sanitizer report anywhere in the ctest log (outputs of every test).
check_log() {
  local log="$1/Testing/Temporary/LastTest.log"
  if grep -nE "ERROR: (Address|Leak)Sanitizer|runtime error: |WARNING: ThreadSanitizer|SUMMARY: (Address|Undefined|Thread|Leak)Sanitizer" \
       "$log" >"$1/sanitizer-findings.txt"; then
    echo "ci/sanitize.sh: sanitizer findings in $log:" >&2
    head -40 "$1/sanitizer-findings.txt" >&2
    return 1
  fi
}

run_leg() {
  local leg="$1" build t0 t1 t2
  t0=$(date +%s)
  case "$leg" in
    asan)
      build="${VNN_ASAN_BUILD_DIR:-$root/build-asan}"
      # clang at -O1: a third of g++'s ASan+UBSan compile time here (g++'s
      # UBSan at -O3 is the slow part), exact stacks. OpenMP is then LLVM's
      # libomp; OpenBLAS's OpenMP build calls it through libomp's GOMP entry
      # points.
      cmake -S "$root" -B "$build" "${common[@]}" -DVNN_SANITIZE=address,undefined \
        -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
        "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" "${extra[@]}"
      cmake --build "$build" -j "$jobs"
      t1=$(date +%s)
      # Leak checking is off: every test process loads PoCL (discovery
      # probes all plugins), and PoCL 3.1 leaves LLVM and device-driver
      # allocations at exit whose allocating frames lie in modules unloaded by
      # then ("<unknown module>", so no suppression can name them): a plain
      # OpenCL program (context, queue, one built kernel; no vnn code) gets
      # 45 leak reports; LSan's tracer also crashed ("Tracer caught signal
      # 11") in vnn-devices with PoCL loaded. ASan's memory errors and UBSan
      # stay fatal. allocator_may_return_null=1: the tests ask for impossible
      # sizes (2^60 bytes) on purpose and expect OutOfMemory, which ASan's
      # malloc would otherwise turn into an abort.
      (cd "$build" &&
        ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=0:allocator_may_return_null=1:strict_string_checks=1:detect_stack_use_after_return=0:check_initialization_order=1" \
        UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
        ctest --output-on-failure --no-tests=error -j "${VNN_TEST_JOBS:-2}" -L 'cpu|opencl' \
          -LE 'slow|opencl-gemm|opencl-grid-stride|pocl-basic')
      ;;
    tsan)
      build="${VNN_TSAN_BUILD_DIR:-$root/build-tsan}"
      local archer=/usr/lib/llvm-14/lib/libarcher.so
      if [ ! -f "$archer" ]; then
        echo "ci/sanitize.sh: $archer missing (apt-get install libomp-14-dev; ci/install-deps.sh does)" >&2
        return 1
      fi
      # OpenBLAS's OpenMP build and oneDNN run on libgomp, a second OpenMP
      # runtime in the process next to libomp: the TSan leg uses the tiled
      # Kokkos matmul and IM2COL + GEMM for conv2d.
      # -O1 as in the asan leg: the CPU plugin's one large translation unit
      # (every Kokkos kernel) took over 15 minutes at -O3 under TSan here.
      cmake -S "$root" -B "$build" "${common[@]}" -DVNN_SANITIZE=thread \
        -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DVNN_CPU_BLAS=OFF -DVNN_CPU_ONEDNN=OFF \
        "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" "${extra[@]}"
      cmake --build "$build" -j "$jobs" --target vnn_tsan_tests  # only what -L tsan runs
      t1=$(date +%s)
      # ignore_noninstrumented_modules=1 is what Archer asks for (it warns
      # without it): libomp itself is not built with TSan, so its own
      # accesses (a pthread_mutex_lock inside Kokkos's OpenMP initialisation
      # was reported in all 11 tests) are only seen through Archer's
      # annotations; accesses by vnn and Kokkos code stay checked.
      (cd "$build" &&
        OMP_TOOL_LIBRARIES="$archer" ARCHER_OPTIONS="verbose=0" \
        TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1:suppressions=$supp/tsan.supp" \
        ctest --output-on-failure --no-tests=error -j "${VNN_TEST_JOBS:-2}" -L tsan -LE slow)
      ;;
    *)
      echo "ci/sanitize.sh: unknown leg '$leg' (asan or tsan)" >&2
      return 2
      ;;
  esac
  check_log "$build"
  t2=$(date +%s)
  echo "ci/sanitize.sh: $leg leg passed: built in $((t1 - t0)) s, tested in $((t2 - t1)) s ($build)"
}

for leg in "${legs[@]}"; do run_leg "$leg"; done

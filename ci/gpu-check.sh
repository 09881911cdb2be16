#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# GPU check: the cuda-labelled tests, the GEMM / copy / launch benchmarks
# against cuBLAS and cudaMemcpy, vnn's CNN training on cuda:0, and PyTorch's
# figures for the same work, on a machine with an NVIDIA GPU and no internet
# (the device tool's H200: CUDA 13, CMake, ninja, PyTorch; no Catch2, no
# OpenBLAS). GPU minutes are scarce, so everything is built beforehand on
# the build box:
#
#   ci/gpu-check.sh --prepare     (here; ~15 min on 2 cores, once per change)
#     builds vnn with the CUDA plugin (sm_80 + sm_90 SASS), the tests and
#     the benchmarks into /tmp/vnn-gpu/build (no OpenBLAS, no OpenCL: only
#     what that machine has), strips it into build-gpu-bundle/ (ignored by
#     git) with the Fashion-MNIST files, and prints its size. Carry it:
#     the device tool's carry ["build-gpu-bundle"].
#   ci/gpu-check.sh               (on the GPU machine; ~3 min)
#     unpacks the bundle to /tmp/vnn-gpu/build (CTest files hold absolute
#     paths), lists devices, runs `ctest -L cuda` (a missing GPU fails the
#     run: VNN_REQUIRE_DEVICE=1), bench/cuda_bench, train_bench --device
#     cuda:0 and bench/torch_gpu_bench.py. Logs go to $OUT when set. The
#     cuda label includes test_cuda_multi_gpu (several GPUs in one process:
#     skipped, saying so, with fewer than two).
#   ci/gpu-check.sh --from-source [build-dir]
#     builds there instead (needs build-kokkos-src/ carried: `--prepare-source`
#     copies a Kokkos source tree there; the CUDA plugin alone takes minutes).
# Exit status: non-zero when a cuda test fails or no GPU is found.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bundle="$root/build-gpu-bundle"
fixed=/tmp/vnn-gpu/build   # the build's absolute path, here and there
carried_src="$root/build-kokkos-src"
data_src=/usr/share/datasets/fashion-mnist
gen=()
if command -v ninja >/dev/null; then gen=(-G Ninja); fi
export PATH="$PATH:/usr/local/cuda/bin"

configure_gpu_build() {  # <build-dir> [extra cmake args]
  local dir="$1"
  shift
  cmake -S "$root" -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DVNN_BACKEND_CUDA=ON -DVNN_BACKEND_HIP=OFF -DVNN_BACKEND_OPENCL=OFF -DVNN_CPU_BLAS=OFF \
    -DVNN_BUILD_TESTS=ON -DVNN_BUILD_EXAMPLES=OFF -DVNN_BUILD_BENCH=ON -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON "$@"
}

case "${1:-}" in
  --prepare)
    t0=$(date +%s)
    configure_gpu_build "$fixed" -DVNN_KOKKOS_BUILD_JOBS="${JOBS:-2}" >/tmp/vnn-gpu.configure.log 2>&1 ||
      { tail -30 /tmp/vnn-gpu.configure.log; exit 1; }
    cmake --build "$fixed" --parallel "${JOBS:-2}" >/tmp/vnn-gpu.build.log 2>&1 ||
      { grep -E "error|FAILED" /tmp/vnn-gpu.build.log | head -30; exit 1; }
    echo "gpu-check: CUDA plugin code: $(python3 "$root/ci/fatbin-archs.py" "$fixed/lib/vnn/libvnn-backend-cuda.so")"
    rm -rf "$bundle" /tmp/vnn-gpu/stage
    mkdir -p "$bundle" /tmp/vnn-gpu/stage
    # What running needs: binaries, plugins, CTest files; no objects. ELF
    # files stripped, all of it xz-compressed (the carry limit is 64 MiB).
    tar -C "$fixed" --exclude='*.o' --exclude='*.a' --exclude='*.ninja' --exclude='.ninja_*' --exclude='*.log' \
      --exclude='CMakeFiles' -cf - . | tar -C /tmp/vnn-gpu/stage -xf -
    find /tmp/vnn-gpu/stage -type f -exec sh -c \
      'case "$(file -b "$1")" in ELF*) strip --strip-unneeded "$1";; esac' _ {} \;
    tar -C /tmp/vnn-gpu/stage -cf - . | xz -T2 -6 >"$bundle/build.tar.xz"
    rm -rf /tmp/vnn-gpu/stage
    if [ -d "$data_src" ]; then mkdir -p "$bundle/data" && cp "$data_src"/*.gz "$bundle/data/"; fi
    echo "gpu-check: bundle $(du -sh "$bundle" | cut -f1) in $bundle, built in $(($(date +%s) - t0)) s;"
    echo "gpu-check: carry build-gpu-bundle to the GPU machine and run ci/gpu-check.sh there"
    exit 0 ;;
  --prepare-source)
    cache="${VNN_KOKKOS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vnn/kokkos}"
    line="$(bash "$root/cmake/kokkos/fetch-kokkos.sh" "$cache" | tail -1)"
    rm -rf "$carried_src"
    cp -a "${line%%$'\t'*}" "$carried_src"
    echo "gpu-check: Kokkos source (${line#*$'\t'}) copied to $carried_src; carry build-kokkos-src"
    exit 0 ;;
esac

t0=$(date +%s)
out="${OUT:-/tmp/vnn-gpu-out}"
mkdir -p "$out"
echo "== gpu-check: $(date -u +%FT%TZ), $(nproc) cores"
nvidia-smi -L 2>/dev/null || echo "nvidia-smi: not available"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"

if [ "${1:-}" = "--from-source" ]; then
  build="${2:-$root/build-gpu}"
  [ -d "$carried_src" ] && export VNN_KOKKOS_SOURCE="${VNN_KOKKOS_SOURCE:-$carried_src}"
  configure_gpu_build "$build" -DVNN_KOKKOS_BUILD_JOBS="$(nproc)" >"$out/configure.log" 2>&1 ||
    { tail -40 "$out/configure.log"; exit 1; }
  cmake --build "$build" --parallel "$(nproc)" >"$out/build.log" 2>&1 ||
    { grep -E "error|FAILED" "$out/build.log" | head -40; exit 1; }
else
  [ -f "$bundle/build.tar.xz" ] ||
    { echo "gpu-check: no build-gpu-bundle/ (run ci/gpu-check.sh --prepare on the build box and carry it)"; exit 1; }
  rm -rf "$fixed"
  mkdir -p "$fixed"
  if command -v xz >/dev/null; then xz -dc "$bundle/build.tar.xz"; else
    python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' \
      "$bundle/build.tar.xz"; fi | tar -C "$fixed" -xf -
  build="$fixed"
fi
data="$bundle/data"
[ -d "$data" ] || data="$data_src"
echo "== devices ($(($(date +%s) - t0)) s)"
"$build/bin/vnn-devices" --verbose 2>&1 | grep -E "^(cpu|cuda)|  (cuda|openmp):|compiled_for|compute_capability|multi_gpu" | head -24

echo "== ctest -L cuda"
rc=0
VNN_REQUIRE_DEVICE=1 ctest --test-dir "$build" -L cuda --timeout 300 -j4 >"$out/ctest.log" 2>&1 || rc=$?
grep -E "tests passed|Failed|\*\*\*|Not Run|Timeout" "$out/ctest.log" | head -30
cp "$build/Testing/Temporary/LastTest.log" "$out/LastTest.log" 2>/dev/null || true
# Several GPUs in one process (issue 18): part of the cuda label; its
# verdict (skipped on a one-GPU machine, with the count) shown on its own.
echo "== several GPUs: $(grep -E "test_cuda_multi_gpu .*(Passed|Failed|Skipped|Not Run)" "$out/ctest.log" | head -1)"
grep -A3 "SKIP: several GPUs\|PASS: cuda:1 refused\|FAIL: cuda" "$build/Testing/Temporary/LastTest.log" 2>/dev/null | head -4 || true

echo "== cuda_bench ($(($(date +%s) - t0)) s)"
timeout 180 "$build/bin/cuda_bench" 2>&1 | tee "$out/cuda_bench.txt" || echo "cuda_bench: exit $?"
echo "== train_bench --device cuda:0 ($(($(date +%s) - t0)) s)"
timeout 180 "$build/bin/train_bench" --device cuda:0 --skip-torch --only cnn --batches 300 --data "$data" 2>&1 |
  tee "$out/train_bench.txt" | grep -E "^#|^\| (CNN|model)" || echo "train_bench: exit $?"
echo "== PyTorch peer ($(($(date +%s) - t0)) s)"
timeout 240 python3 "$root/bench/torch_gpu_bench.py" --data "$data" --batches 300 2>&1 | tee "$out/torch_gpu_bench.txt" ||
  echo "torch_gpu_bench: exit $?"
echo "== gpu-check: $(($(date +%s) - t0)) s, ctest rc=$rc"
exit $rc

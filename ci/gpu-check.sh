#!/usr/bin/env bash
# GPU check: builds vnn with the CUDA plugin and runs the CUDA tests, on a
# machine with an NVIDIA GPU, CUDA (nvcc), CMake and ninja, and no internet.
#
# Kokkos has to travel with the tree, as source (Kokkos is built at configure
# time, ~1-2 min on 16 cores). On a machine with the sources (the build box):
#   ci/gpu-check.sh --prepare
# copies a Kokkos source tree (VNN_KOKKOS_SOURCE, else the one
# cmake/kokkos/fetch-kokkos.sh supplies: Debian's trilinos -> packages/kokkos,
# 12 MB) into build-kokkos-src/ (ignored by git through /build*/). Carry that
# folder along (the device tool: carry ["build-kokkos-src"]) and run there:
#   ci/gpu-check.sh [build-dir]          (default build-gpu)
# Environment: VNN_KOKKOS_SOURCE overrides the carried tree; JOBS (default
# nproc). Exit status: that of ctest (non-zero when a CUDA test fails or no
# GPU is found: the plugin test is run with VNN_REQUIRE_DEVICE=1).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
carried="$root/build-kokkos-src"

if [ "${1:-}" = "--prepare" ]; then
  cache="${VNN_KOKKOS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vnn/kokkos}"
  line="$(bash "$root/cmake/kokkos/fetch-kokkos.sh" "$cache" | tail -1)"
  src="${line%%$'\t'*}"
  rm -rf "$carried"
  cp -a "$src" "$carried"
  echo "gpu-check: Kokkos source (${line#*$'\t'}) copied to $carried ($(du -sh "$carried" | cut -f1));"
  echo "gpu-check: carry build-kokkos-src to the GPU machine and run ci/gpu-check.sh there"
  exit 0
fi

build="${1:-$root/build-gpu}"
jobs="${JOBS:-$(nproc)}"
export PATH="$PATH:/usr/local/cuda/bin"
if [ -z "${VNN_KOKKOS_SOURCE:-}" ] && [ -d "$carried" ]; then
  export VNN_KOKKOS_SOURCE="$carried"
fi
gen=()
if command -v ninja >/dev/null; then gen=(-G Ninja); fi

t0=$(date +%s)
echo "== gpu-check: $(date -u +%FT%TZ), $(uname -m), $jobs jobs"
nvidia-smi -L 2>/dev/null || echo "nvidia-smi: not available"
nvcc --version 2>/dev/null | tail -1 || echo "nvcc: not found"
echo "Kokkos source: ${VNN_KOKKOS_SOURCE:-(fetch-kokkos.sh default order)}"

echo "== configure ($build)"
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DVNN_BACKEND_CUDA=ON -DVNN_BACKEND_HIP=OFF -DVNN_BACKEND_OPENCL=OFF \
  -DVNN_BUILD_TESTS=ON -DVNN_BUILD_EXAMPLES=OFF -DVNN_KOKKOS_BUILD_JOBS="$jobs" \
  >"$build.configure.log" 2>&1 || { tail -40 "$build.configure.log"; exit 1; }
grep -E "^-- vnn" "$build.configure.log" || true
t1=$(date +%s)

echo "== build"
cmake --build "$build" --parallel "$jobs" >"$build.build.log" 2>&1 || { grep -E "error|FAILED" "$build.build.log" | head -40; tail -20 "$build.build.log"; exit 1; }
t2=$(date +%s)

echo "== ctest -L cuda"
rc=0
VNN_REQUIRE_DEVICE=1 ctest --test-dir "$build" -L cuda --output-on-failure --timeout 600 || rc=$?
t3=$(date +%s)
echo "== gpu-check: configure $((t1 - t0)) s, build $((t2 - t1)) s, tests $((t3 - t2)) s, ctest rc=$rc"
if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then
  cp "$build.configure.log" "$build.build.log" "$OUT/" 2>/dev/null || true
  cp "$build/Testing/Temporary/LastTest.log" "$OUT/" 2>/dev/null || true
fi
exit $rc

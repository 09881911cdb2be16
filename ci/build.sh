#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Configures and builds vnn (Release, Ninja) into $VNN_BUILD_DIR (default
# build/). Kokkos is found or built once into ~/.cache/vnn (see README).
#   VNN_CMAKE_ARGS="-D..."     extra configure arguments
#   VNN_BUILD_TARGET=target    build one target instead of all (the quick
#                              start's vnn-quickstart)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
build="${VNN_BUILD_DIR:-$root/build}"
start=$(date +%s)
# ccache (when installed) lets CI's clean clone reuse a session's compiles:
# CCACHE_BASEDIR makes paths under the clone relative, so another clone's
# objects hash the same.
launcher=()
if command -v ccache >/dev/null 2>&1 && [ "${VNN_CCACHE:-1}" = 1 ]; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
  export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-8G}"
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
# The OpenCL and GPU options go back to their defaults (ON where the OpenCL
# loader / nvcc / hipcc is found), the tests on and the precompiled headers
# off unless VNN_CMAKE_ARGS sets them, so a quick start's settings left in
# the cache never take coverage away from ci/test.sh in the same build
# directory.
# shellcheck disable=SC2086
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -UVNN_BACKEND_OPENCL -UVNN_BACKEND_CUDA -UVNN_BACKEND_HIP -UVNN_PRECOMPILED_HEADERS -UVNN_BUILD_TESTS \
  "${launcher[@]}" \
  ${VNN_CMAKE_ARGS:-}
target=()
if [ -n "${VNN_BUILD_TARGET:-}" ]; then target=(--target "$VNN_BUILD_TARGET"); fi
cmake --build "$build" -j "$(nproc)" "${target[@]}"
echo "ci/build.sh: configured and built ${VNN_BUILD_TARGET:-all} in $(( $(date +%s) - start )) s ($build)"

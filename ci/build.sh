#!/usr/bin/env bash
# Configures and builds vnn (Release, Ninja) into $VNN_BUILD_DIR (default
# build/). Kokkos is found or built once into ~/.cache/vnn (see README).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
build="${VNN_BUILD_DIR:-$root/build}"
start=$(date +%s)
# shellcheck disable=SC2086
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${VNN_CMAKE_ARGS:-}
cmake --build "$build" -j "$(nproc)"
echo "ci/build.sh: configured and built in $(( $(date +%s) - start )) s ($build)"

#!/usr/bin/env bash
# Builds vnn and runs the whole test suite (the README's second command).
#   ci/test.sh                      everything ctest knows (cpu, opencl, loader, slow, ...)
#   VNN_TEST_LABELS=opencl ci/test.sh   one label (ctest -L)
#   VNN_BUILD_DIR=... VNN_CMAKE_ARGS="..."  to change the build
#   VNN_SANITIZE_LEGS="asan tsan"   sanitizer legs after a whole-suite run (ci/sanitize.sh; "" for none)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
"$here/install-deps.sh"
"$here/build.sh"
build="${VNN_BUILD_DIR:-$root/build}"
args=(--output-on-failure --no-tests=error -j "${VNN_TEST_JOBS:-2}")
if [ -n "${VNN_TEST_LABELS:-}" ]; then args+=(-L "$VNN_TEST_LABELS"); fi
start=$(date +%s)
(cd "$build" && ctest "${args[@]}")
echo "ci/test.sh: tests passed in $(( $(date +%s) - start )) s"
# The whole-suite run (no label chosen) adds the sanitizer legs: ASan+UBSan
# and TSan builds of their own (ci/sanitize.sh). VNN_SANITIZE_LEGS="" skips
# them, VNN_SANITIZE_LEGS=asan runs one.
if [ -z "${VNN_TEST_LABELS:-}" ] && [ -n "${VNN_SANITIZE_LEGS-asan tsan}" ]; then
  VNN_SANITIZE_LEGS="${VNN_SANITIZE_LEGS-asan tsan}" "$here/sanitize.sh"
fi

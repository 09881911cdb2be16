#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds vnn and runs the whole test suite (the README's second command).
#   ci/test.sh                      everything ctest knows (cpu, opencl, loader, slow, ...)
#   VNN_TEST_LABELS=opencl ci/test.sh   one label (ctest -L)
#   VNN_BUILD_DIR=... VNN_CMAKE_ARGS="..."  to change the build
#   VNN_KOKKOS_DIR=<dir>            build on that Kokkos (passed on as -DKokkos_DIR)
#   VNN_TEST_EXCLUDE_LABELS=slow    leave a label out (ctest -LE)
#   VNN_SANITIZE_LEGS="asan tsan"   sanitizer legs after a whole-suite run (ci/sanitize.sh; the default;
#                                   VNN_SANITIZE_LEGS= skips them)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
"$here/install-deps.sh"
if [ -n "${VNN_KOKKOS_DIR:-}" ]; then
  export VNN_CMAKE_ARGS="${VNN_CMAKE_ARGS:-} -DKokkos_DIR=$VNN_KOKKOS_DIR"
fi
"$here/build.sh"
build="${VNN_BUILD_DIR:-$root/build}"
args=(--output-on-failure --no-tests=error -j "${VNN_TEST_JOBS:-2}")
if [ -n "${VNN_TEST_LABELS:-}" ]; then args+=(-L "$VNN_TEST_LABELS"); fi
if [ -n "${VNN_TEST_EXCLUDE_LABELS:-}" ]; then args+=(-LE "$VNN_TEST_EXCLUDE_LABELS"); fi
start=$(date +%s)
(cd "$build" && ctest "${args[@]}")
echo "ci/test.sh: tests passed in $(( $(date +%s) - start )) s"
# SPDX lines, third-party notices (every linked library named, nothing
# GPL-only by default), the README's version and license, no diary words in docs.
"$here/release-checks.sh" "$build"
# The whole-suite run (no label chosen) adds the sanitizer legs named in
# VNN_SANITIZE_LEGS (default both): ASan+UBSan and TSan builds of their own
# (ci/sanitize.sh), each failing on any finding.
legs="${VNN_SANITIZE_LEGS-asan tsan}"
if [ -z "${VNN_TEST_LABELS:-}" ] && [ -n "$legs" ]; then
  start=$(date +%s)
  VNN_SANITIZE_LEGS="$legs" "$here/sanitize.sh"
  echo "ci/test.sh: sanitizer legs ($legs) passed in $(( $(date +%s) - start )) s"
fi

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Installs the Debian 12 packages vnn's build, tests and examples need.
# Idempotent: packages already present are skipped by apt; safe to re-run.
#   ci/install-deps.sh            core + OpenCL + HIP toolchain + data set
#   VNN_DEPS_MINIMAL=1 ci/install-deps.sh   core only (CPU backend)
#   VNN_DEPS_BENCH=1 ci/install-deps.sh     also the LibTorch peer for bench/
#   VNN_DEPS_TENSORBOARD=0 VNN_DEPS_DOCS=0 ci/install-deps.sh   no tensorboard venv, no
#                                           doxygen (the quick start)
set -euo pipefail

sudo_cmd=""
if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi

core=(build-essential cmake ninja-build pkg-config catch2 libopenblas-dev libopenblas-openmp-dev libdnnl-dev
      zlib1g-dev dpkg-dev xz-utils ca-certificates ccache)
opencl=(ocl-icd-opencl-dev opencl-headers opencl-clhpp-headers pocl-opencl-icd
        clinfo libclblast-dev)
hip=(hipcc libamdhip64-dev rocm-device-libs)
data=(dataset-fashion-mnist fortunes)  # Fashion-MNIST; English text for examples/train_gpt
fuzz=(clang libclang-rt-14-dev)  # the safetensors parser fuzz test (label slow)
sanitize=(libomp-14-dev)  # ci/sanitize.sh's TSan leg: LLVM's OpenMP and its Archer tool
bench=(libtorch-dev python3-torch)
distributed=(libgloo-dev libopenmpi-dev openmpi-bin)  # vnn::distributed's Gloo and MPI engines
tensorboard=(python3-venv python3-pip)  # test_utils_tensorboard_read's venv (below)
docs=(doxygen)  # the docs target and the docs_api test

want=("${core[@]}")
if [ "${VNN_DEPS_MINIMAL:-0}" != 1 ]; then
  want+=("${opencl[@]}" "${hip[@]}" "${data[@]}" "${fuzz[@]}" "${sanitize[@]}" "${distributed[@]}")
  if [ "${VNN_DEPS_TENSORBOARD:-1}" = 1 ]; then want+=("${tensorboard[@]}"); fi
  if [ "${VNN_DEPS_DOCS:-1}" = 1 ]; then want+=("${docs[@]}"); fi
fi
if [ "${VNN_DEPS_BENCH:-0}" = 1 ]; then want+=("${bench[@]}"); fi

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#want[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# TensorBoard (PyPI; Debian 12 has no package) in a venv the tests find.
if [ "${VNN_DEPS_MINIMAL:-0}" != 1 ] && [ "${VNN_DEPS_TENSORBOARD:-1}" = 1 ]; then
  venv="$HOME/.cache/vnn/tensorboard-venv"
  if ! "$venv/bin/python3" -c "import tensorboard" 2>/dev/null; then
    echo "install-deps: installing tensorboard into $venv"
    # Best effort: without it test_utils_tensorboard_read reports itself skipped.
    { python3 -m venv "$venv" && "$venv/bin/pip" install -q tensorboard; } ||
      echo "install-deps: warning: tensorboard could not be installed; test_utils_tensorboard_read will be skipped"
  fi
fi

#!/usr/bin/env bash
# The README's first command: installs what vnn needs (Debian 12), builds it
# and trains a CNN on Fashion-MNIST on the best device found. Arguments go
# to the example (e.g. --epochs 5 --device opencl:0).
#
# Only the plugins this machine can use are built (cpu and opencl always,
# cuda where an NVIDIA driver is present, hip where /dev/kfd or an AMD GPU
# is), and only what the example needs (no tests), so the first epoch comes
# minutes after the clone. VNN_BACKENDS_BUILD=cuda,hip builds the named GPU
# plugins whatever the machine has ("all" for both, "none" for neither).
# ci/test.sh (CI) always builds all four and the tests.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
# The GPU plugins the machine can use, or the ones asked for.
gpu_detect() {
  local found=()
  if [ -e /proc/driver/nvidia/version ] || command -v nvidia-smi >/dev/null 2>&1 \
     || ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    found+=(cuda)
  fi
  if [ -e /dev/kfd ] || grep -qsx '0x1002' /sys/class/drm/card*/device/vendor; then
    found+=(hip)
  fi
  echo "${found[*]:-}"
}
if [ -n "${VNN_BACKENDS_BUILD:-}" ]; then
  wanted="${VNN_BACKENDS_BUILD//,/ }"
  why="asked for in VNN_BACKENDS_BUILD"
else
  wanted="$(gpu_detect)"
  why="no driver/device found"
fi
cmake_args=()
built=(cpu opencl)
skipped=()
for b in cuda hip; do
  case " $wanted " in
    *" $b "*|*" all "*) on=ON; built+=("$b") ;;
    *) on=OFF; skipped+=("$b") ;;
  esac
  cmake_args+=("-DVNN_BACKEND_${b^^}=$on")
done
for b in $wanted; do
  case "$b" in cuda|hip|all|none|cpu|opencl|openmp) ;;
    *) echo "quickstart: unknown backend '$b' in VNN_BACKENDS_BUILD (use cuda, hip, all or none)" >&2; exit 2 ;;
  esac
done
if [ "${#skipped[@]}" -gt 0 ]; then
  list="${skipped[*]}"
  gpus="${built[*]:2} ${list}"  # the GPU plugins already asked for, plus the skipped ones
  gpus="$(echo $gpus)"
  if [ -n "${VNN_BACKENDS_BUILD:-}" ]; then why="not in VNN_BACKENDS_BUILD"; fi
  echo "quickstart: building the ${built[*]} plugins; skipped ${list// /, } ($why): add them with VNN_BACKENDS_BUILD=${gpus// /,} ci/quickstart.sh (ci/test.sh builds all four)"
else
  echo "quickstart: building the cpu, opencl, cuda and hip plugins ($why)"
fi

VNN_DEPS_TENSORBOARD=0 VNN_DEPS_DOCS=0 "$here/install-deps.sh"
VNN_CMAKE_ARGS="${cmake_args[*]} ${VNN_CMAKE_ARGS:-}" VNN_BUILD_TARGET=vnn-quickstart "$here/build.sh"
build="${VNN_BUILD_DIR:-$root/build}"
"$build/bin/vnn-devices"
echo
exec "$build/bin/train_fashion_mnist" "$@"

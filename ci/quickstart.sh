#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The README's first command: installs what vnn needs (Debian 12), builds it
# and trains a CNN on Fashion-MNIST on the best device found. Arguments go
# to the example (e.g. --epochs 5 --device opencl:0).
#
# Only the plugins this machine can use are built (cpu always, opencl
# where an OpenCL driver other than PoCL is installed or the arguments name
# an opencl device: PoCL runs on the CPU, where cpu:0 ranks first and is
# faster, cuda where an NVIDIA driver is present, hip where /dev/kfd or an
# AMD GPU is), and only what the example needs (no tests), with libvnn's
# standard headers precompiled, so the first epoch comes minutes after the
# clone (issue 34). VNN_BACKENDS_BUILD=opencl,cuda,hip builds the named
# plugins whatever the machine has ("all" for the three, "none" for none).
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
# An OpenCL driver that is not PoCL (a GPU's), or an opencl device asked for.
opencl_wanted() {
  local icd
  for icd in /etc/OpenCL/vendors/*.icd; do
    [ -e "$icd" ] || continue
    grep -qi pocl "$icd" || return 0
  done
  case " $* " in *opencl*) return 0 ;; esac
  return 1
}
if [ -n "${VNN_BACKENDS_BUILD:-}" ]; then
  wanted="${VNN_BACKENDS_BUILD//,/ }"
  why="asked for in VNN_BACKENDS_BUILD"
else
  wanted="$(gpu_detect)"
  why="no driver/device found"
fi
if [ -z "${VNN_BACKENDS_BUILD:-}" ] && opencl_wanted "$@"; then wanted="opencl $wanted"; fi
cmake_args=(-DVNN_PRECOMPILED_HEADERS=ON -DVNN_BUILD_TESTS=OFF)  # no tests: not even their configure
built=(cpu)
skipped=()
for b in opencl cuda hip; do
  case " $wanted " in
    *" $b "*|*" all "*) on=ON; built+=("$b") ;;
    *) on=OFF; skipped+=("$b") ;;
  esac
  cmake_args+=("-DVNN_BACKEND_${b^^}=$on")
done
for b in $wanted; do
  case "$b" in cuda|hip|all|none|cpu|opencl|openmp) ;;
    *) echo "quickstart: unknown backend '$b' in VNN_BACKENDS_BUILD (use opencl, cuda, hip, all or none)" >&2; exit 2 ;;
  esac
done
if [ "${#skipped[@]}" -gt 0 ]; then
  list="${skipped[*]}"
  more="${built[*]:1} ${list}"  # the plugins already asked for, plus the skipped ones
  more="$(echo $more)"
  if [ -n "${VNN_BACKENDS_BUILD:-}" ]; then why="not in VNN_BACKENDS_BUILD"
  else
    why="no driver/device found"
    case " $list " in *" opencl "*) why="$why; opencl: PoCL only, which runs on the CPU" ;; esac
  fi
  echo "quickstart: building the ${built[*]} plugins; skipped ${list// /, } ($why): add them with VNN_BACKENDS_BUILD=${more// /,} ci/quickstart.sh (ci/test.sh builds all four)"
else
  echo "quickstart: building the cpu, opencl, cuda and hip plugins ($why)"
fi

VNN_DEPS_TENSORBOARD=0 VNN_DEPS_DOCS=0 "$here/install-deps.sh"
VNN_CMAKE_ARGS="${cmake_args[*]} ${VNN_CMAKE_ARGS:-}" VNN_BUILD_TARGET=vnn-quickstart "$here/build.sh"
build="${VNN_BUILD_DIR:-$root/build}"
"$build/bin/vnn-devices"
echo
exec "$build/bin/train_fashion_mnist" "$@"

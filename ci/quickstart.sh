#!/usr/bin/env bash
# The README's first command: installs what vnn needs (Debian 12), builds it
# and trains a CNN on Fashion-MNIST on the best device found. Arguments go
# to the example (e.g. --epochs 5 --device opencl:0).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
"$here/install-deps.sh"
"$here/build.sh"
build="${VNN_BUILD_DIR:-$root/build}"
"$build/bin/vnn-devices"
echo
exec "$build/bin/train_fashion_mnist" "$@"

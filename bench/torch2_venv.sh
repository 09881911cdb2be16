#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Makes (once) the venv with current PyTorch 2.x from PyPI that the bench
# scripts use as the peer (Debian's python3-torch 1.13 has no SDPA), and
# prints its python. ~5.4 GB under ~/.cache/vnn/torch2-venv (the Linux wheel
# is the CUDA build; on a CPU-only machine it runs on the CPU).
#   bench/torch2_venv.sh            -> prints the venv's python3
set -euo pipefail
venv="${VNN_TORCH2_VENV:-$HOME/.cache/vnn/torch2-venv}"
if ! "$venv/bin/python3" -c "import torch" 2>/dev/null; then
  echo "torch2_venv: installing torch into $venv (about 2 minutes, 5.4 GB)" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q torch numpy >&2
fi
# tests/opdb/export_opdb.py imports torch.testing's op database, which needs these.
if ! "$venv/bin/python3" -c "import expecttest" 2>/dev/null; then
  "$venv/bin/pip" install -q expecttest hypothesis >&2
fi
echo "$venv/bin/python3"

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Regenerates PyTorch's partitions with the installed torch and checks vnn's
# DistributedSampler against them (the committed fixture is checked too, by
# test_data_distributed_sampler, on machines without torch).
# usage: sampler_torch_parity.sh TEST_PROGRAM SCRIPT OUT_FILE
set -u
test_program=$1 script=$2 out=$3
for py in "${VNN_PYTHON:-}" python3 /usr/bin/python3; do
  [ -n "$py" ] || continue
  if "$py" -c "import torch" 2>/dev/null; then
    "$py" "$script" > "$out" || exit 1
    echo "fixture from $py: $("$py" -c 'import torch; print("torch", torch.__version__)')"
    VNN_SAMPLER_FIXTURE=$out exec "$test_program" "[fixture]"
  fi
done
echo "SKIP: no python3 with torch (tried VNN_PYTHON, python3, /usr/bin/python3)"
exit 77

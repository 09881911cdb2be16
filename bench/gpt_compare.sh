#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# examples/train_gpt against its PyTorch 2.x twin (bench/train_gpt_torch.py)
# in one run: the same model, initial weights (train_gpt --save-init), data,
# batches and schedule, on the same cores. Prints each side's training
# tokens/s and validation losses, and the ratios.
#   bench/gpt_compare.sh [BUILD_DIR] [train_gpt flags...]   (default: the example's default model)
#   VNN_GPT_DEVICE=opencl:0 bench/gpt_compare.sh            (vnn on another device; PyTorch stays on the CPU)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="${1:-$here/../build}"
shift || true
py="$("$here/torch2_venv.sh")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
threads="${OMP_NUM_THREADS:-$(nproc)}"
echo "gpt_compare: $(nproc) cores, $threads threads, flags: ${*:-(defaults)}"
OMP_NUM_THREADS=$threads "$build/bin/train_gpt" --device "${VNN_GPT_DEVICE:-cpu:0}" --sample-tokens 200 \
  --save-init "$work/init.safetensors" --out "$work/vnn" "$@" | tr '\r' '\n' | grep -v '^iter [0-9]*/' | tee "$work/vnn.log"
# The PyTorch twin takes the same model and schedule flags (not --device / --amp / --out).
torch_flags=()
while [ $# -gt 0 ]; do
  case "$1" in
    --device|--amp|--out|--sample-tokens|--temperature|--top-k|--save-init|--stop-at) shift 2 ;;
    --resume|--distributed) shift ;;
    *) torch_flags+=("$1"); shift ;;
  esac
done
OMP_NUM_THREADS=$threads "$py" "$here/train_gpt_torch.py" --init "$work/init.safetensors" --threads "$threads" \
  "${torch_flags[@]}" | tee "$work/torch.log"
v_tps=$(sed -n 's/.*(\([0-9]*\) tokens\/s.*/\1/p' "$work/vnn.log" | tail -1)
t_tps=$(sed -n 's/.*, \([0-9]*\) tokens\/s.*/\1/p' "$work/torch.log" | tail -1)
v_val=$(sed -n 's/.*final val loss \([0-9.]*\).*/\1/p' "$work/vnn.log" | tail -1)
t_val=$(sed -n 's/.*final val loss \([0-9.]*\).*/\1/p' "$work/torch.log" | tail -1)
awk -v a="$v_tps" -v b="$t_tps" -v c="$v_val" -v d="$t_val" 'BEGIN {
  printf "gpt_compare: vnn %d tokens/s, PyTorch %d tokens/s: %.2fx; final val loss vnn %.4f, PyTorch %.4f (|diff| %.4f)\n",
         a, b, a / b, c, d, (c > d ? c - d : d - c) }'

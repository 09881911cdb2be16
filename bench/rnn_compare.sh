#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# vnn's LSTM and GRU (bench/rnn_bench.cpp) beside PyTorch 2.x's on the CPU
# (bench/rnn_bench_torch.py): 2 layers, hidden 512, sequence 128, a training
# step at batch 32 and the batch-1 inference latency, same threads and run.
#   bench/rnn_compare.sh RNN_BENCH [SAMPLES]
#     RNN_BENCH: the rnn_bench binary (e.g. build/bin/rnn_bench)
# Prints a table with the vnn / torch speed ratios (> 1: vnn faster).
set -euo pipefail
export LC_ALL=C
bench=${1:?rnn_bench binary}
samples=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
py=$("$here/torch2_venv.sh")
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bench" --device cpu:0 --samples "$samples" > "$out/vnn.txt"
"$py" "$here/rnn_bench_torch.py" --samples "$samples" > "$out/torch.txt"
grep '^#' "$out/vnn.txt" | head -1
grep '^#' "$out/torch.txt" | head -1
echo "| module | vnn train ms | torch train ms | train torch/vnn | vnn batch-1 ms | torch batch-1 ms | batch-1 torch/vnn | vnn composed train / batch-1 ms |"
echo "|---|---|---|---|---|---|---|---|"
join <(grep -v '^#' "$out/vnn.txt" | sort) <(grep -v '^#' "$out/torch.txt" | sort) |
  awk '{ printf "| %s | %.1f | %.1f | %.2fx | %.2f | %.2f | %.2fx | %.1f / %.2f |\n", $1, $2, $6, $6 / $2, $3, $7, $7 / $3, $4, $5 }'

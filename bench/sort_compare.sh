#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# vnn's sort and unique (bench/sort_bench.cpp on cpu:0 and opencl:0) beside
# PyTorch 2.x's CPU (bench/sort_bench_torch.py), same sizes, threads and run.
#   bench/sort_compare.sh SORT_BENCH [SAMPLES]
#     SORT_BENCH: the sort_bench binary (e.g. build/bin/sort_bench)
# Prints one table: per op and n, each device's ms and Melem/s, the copy
# GB/s measured in the same run, and torch / vnn time ratios (> 1: vnn faster).
set -euo pipefail
export LC_ALL=C
bench=${1:?sort_bench binary}
samples=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
py=$("$here/torch2_venv.sh")
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bench" --samples "$samples" > "$out/vnn.txt"
"$py" "$here/sort_bench_torch.py" --samples "$samples" > "$out/torch.txt"
grep '^#' "$out/torch.txt" "$out/vnn.txt" | sed 's/^[^:]*://'
echo "| op | n | device | vnn ms | vnn Melem/s | copy GB/s (device) | torch cpu ms | torch Melem/s | torch / vnn |"
echo "|---|---|---|---|---|---|---|---|---|"
awk 'NR == FNR { if ($1 !~ /^#/) { tms[$2 "_" $3] = $4; tme[$2 "_" $3] = $5 } next }
     $1 !~ /^#/ {
       k = $2 "_" $3
       printf "| %s | %s | %s | %s | %s | %s | %s | %s | %.2f |\n", $2, $3, $1, $4, $5, $6, tms[k], tme[k], tms[k] / $4 }' \
  "$out/torch.txt" "$out/vnn.txt"

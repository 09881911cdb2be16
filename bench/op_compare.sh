#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# One op benchmark of vnn (bench/NAME_bench.cpp on cpu:0 and opencl:0)
# beside PyTorch 2.x's CPU (bench/NAME_bench_torch.py), same sizes, threads
# and run; scan_compare.sh, sort_compare.sh and conv_compare.sh call it.
#   bench/op_compare.sh NAME UNIT BENCH [SAMPLES]
#     NAME:  scan, sort, conv (picks NAME_bench_torch.py)
#     UNIT:  what the rate column holds (GB/s, Melem/s)
#     BENCH: the NAME_bench binary (e.g. build/bin/scan_bench)
# Both sides print "device op n ms rate copy_GB/s" lines (torch: device cpu).
# Prints one table: per op and n, each device's ms and rate, the copy GB/s
# measured in the same run, and torch / vnn time ratios (> 1: vnn faster).
set -euo pipefail
export LC_ALL=C
name=${1:?bench name (scan, sort)}
unit=${2:?rate unit}
bench=${3:?the NAME_bench binary}
samples=${4:-5}
here=$(cd "$(dirname "$0")" && pwd)
py=$("$here/torch2_venv.sh")
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bench" --samples "$samples" > "$out/vnn.txt"
"$py" "$here/${name}_bench_torch.py" --samples "$samples" > "$out/torch.txt"
grep '^#' "$out/torch.txt" "$out/vnn.txt" | sed 's/^[^:]*://'
echo "| op | n | device | vnn ms | vnn $unit | copy GB/s (device) | torch cpu ms | torch $unit | torch / vnn |"
echo "|---|---|---|---|---|---|---|---|---|"
awk 'NR == FNR { if ($1 !~ /^#/) { tms[$2 "_" $3] = $4; trate[$2 "_" $3] = $5 } next }
     $1 !~ /^#/ && $2 != "copy" {  # the copy rows are the bandwidth reference, a column already
       k = $2 "_" $3
       printf "| %s | %s | %s | %s | %s | %s | %s | %s | %.2f |\n", $2, $3, $1, $4, $5, $6, tms[k], trate[k], tms[k] / $4 }' \
  "$out/torch.txt" "$out/vnn.txt"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# issue 17's same-run table: CNN and MLP training samples/s on opencl:0
# beside cpu:0 on the same cores, then conv2d per layer and the GEMM /
# per-op figures of the OpenCL benches. Each round runs opencl:0, cpu:0 with
# OMP_WAIT_POLICY=passive and cpu:0 with the default wait policy, one after
# another, so a machine that changes speed weighs on each alike; ratios are
# taken within a round, medians over ROUNDS.
#   bench/opencl_compare.sh BUILD_DIR [ROUNDS] [CNN_BATCHES] [MLP_BATCHES]
# (opencl:0 runs with OMP_WAIT_POLICY=passive: the CPU plugin's idle
# OpenMP threads would otherwise spin beside PoCL's.)
set -euo pipefail
build=${1:?build dir}
rounds=${2:-3}
cnn_batches=${3:-200}
mlp_batches=${4:-1000}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
tb=$build/bin/train_bench
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# samples/s of one train_bench run: the 4th column of the model's row.
rate() {
  local model=$1 dev=$2 batches=$3 wait=$4
  env ${wait:+OMP_WAIT_POLICY=$wait} "$tb" --skip-torch --only "$model" --device "$dev" --batches "$batches" 2>/dev/null |
    awk -F'|' -v m="$model" 'tolower($2) ~ m { gsub(/ /, "", $4); print $4; exit }'
}
# Warm-up: kernel builds and the tuner's first timings land in the caches.
rate cnn opencl:0 20 passive > /dev/null
rate mlp opencl:0 50 passive > /dev/null
echo "| model | round | opencl:0 | cpu:0 passive | cpu:0 default | opencl / cpu passive | opencl / cpu default |"
echo "|---|---|---|---|---|---|---|"
for model in cnn mlp; do
  batches=$cnn_batches
  [ "$model" = mlp ] && batches=$mlp_batches
  : > "/tmp/oclc-$model-p.txt"
  : > "/tmp/oclc-$model-d.txt"
  for r in $(seq "$rounds"); do
    o=$(rate "$model" opencl:0 "$batches" passive)
    p=$(rate "$model" cpu:0 "$batches" passive)
    d=$(rate "$model" cpu:0 "$batches" "")
    rp=$(awk -v a="$o" -v b="$p" 'BEGIN { printf "%.2f", a / b }')
    rd=$(awk -v a="$o" -v b="$d" 'BEGIN { printf "%.2f", a / b }')
    echo "$rp" >> "/tmp/oclc-$model-p.txt"
    echo "$rd" >> "/tmp/oclc-$model-d.txt"
    echo "| $model | $r | $o | $p | $d | $rp | $rd |"
  done
  echo "| $model | median | | | | $(median < "/tmp/oclc-$model-p.txt") | $(median < "/tmp/oclc-$model-d.txt") |"
done
echo
OMP_WAIT_POLICY=passive "$build/bin/opencl_conv_bench"
echo
OMP_WAIT_POLICY=passive "$build/bin/opencl_gemm_bench" --samples 5

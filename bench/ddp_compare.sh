#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# DDP training throughput, vnn beside torch DDP (gloo), same machine, same
# run, the same per-rank batch, 1 thread per rank; 1 rank and 2 ranks, so
# the scaling efficiency (2-rank samples/s / (2 x 1-rank samples/s)) of each
# comes out too. Runs alternate vnn / torch, ROUNDS times (median reported).
#   bench/ddp_compare.sh BUILD_DIR [ROUNDS] [STEPS]
set -euo pipefail
build=${1:?build dir}
rounds=${2:-3}
steps=${3:-60}
here=$(cd "$(dirname "$0")" && pwd)
py=${VNN_PYTHON:-/usr/bin/python3}
export OMP_NUM_THREADS=1
run=$build/bin/vnn-run
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "| model | ranks | vnn samples/s | torch samples/s | vnn / torch |"
echo "|---|---|---|---|---|"
declare -A res
for model in mlp cnn; do
  for n in 1 2; do
    : > /tmp/ddp-vnn-$model-$n.txt
    : > /tmp/ddp-torch-$model-$n.txt
    for r in $(seq "$rounds"); do
      "$run" --nproc-per-node "$n" "$build/bin/ddp_bench" --model "$model" --steps "$steps" 2>/dev/null |
        awk '/vnn ddp/ { print $NF }' >> /tmp/ddp-vnn-$model-$n.txt
      "$run" --nproc-per-node "$n" "$py" "$here/ddp_bench_torch.py" --model "$model" --steps "$steps" 2>/dev/null |
        awk '/torch ddp/ { print $NF }' >> /tmp/ddp-torch-$model-$n.txt
    done
    v=$(median < /tmp/ddp-vnn-$model-$n.txt)
    t=$(median < /tmp/ddp-torch-$model-$n.txt)
    res[$model-$n-vnn]=$v
    res[$model-$n-torch]=$t
    awk -v m=$model -v n=$n -v v=$v -v t=$t 'BEGIN { printf "| %s | %d | %.0f | %.0f | %.2fx |\n", m, n, v, t, (t > 0 ? v / t : 0) }'
  done
done
echo
echo "| model | vnn scaling 2 vs 1 rank | torch scaling 2 vs 1 rank |"
echo "|---|---|---|"
for model in mlp cnn; do
  awk -v m=$model -v v1=${res[$model-1-vnn]} -v v2=${res[$model-2-vnn]} -v t1=${res[$model-1-torch]} \
      -v t2=${res[$model-2-torch]} 'BEGIN { printf "| %s | %.0f%% | %.0f%% |\n", m, 100 * v2 / (2 * v1), 100 * t2 / (2 * t1) }'
done

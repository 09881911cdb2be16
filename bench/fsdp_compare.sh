#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# FSDP step time and peak memory per rank, vnn beside PyTorch 2.x FSDP2
# (fully_shard, gloo), same machine, same run: nanoGPT's model (each block a
# unit), Adam, float32, the same shapes and per-rank batch, 1 thread per
# rank; 2 and 4 ranks. Runs alternate vnn / torch, ROUNDS times (medians).
# speed = torch step time / vnn step time (> 1: vnn faster); memory = vnn
# peak RSS growth / torch's (< 1: vnn smaller).
#   bench/fsdp_compare.sh BUILD_DIR [ROUNDS] [STEPS] [-- fsdp_bench options]
set -euo pipefail
build=${1:?build dir}
rounds=${2:-3}
steps=${3:-10}
shift $(( $# < 3 ? $# : 3 ))
[ "${1:-}" = "--" ] && shift
extra=("$@")
here=$(cd "$(dirname "$0")" && pwd)
py=${VNN_PYTHON:-$("$here/torch2_venv.sh")}
export OMP_NUM_THREADS=1
run=$build/bin/vnn-run
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { awk -v k="$1" '{ for (i = 1; i < NF; ++i) if ($i == k) print $(i + 1) }'; }
echo "| ranks | params | vnn step ms | torch step ms | speed vnn/torch | vnn peak MiB | torch peak MiB | memory vnn/torch | vnn live tensors MiB |"
echo "|---|---|---|---|---|---|---|---|---|"
for n in 2 4; do
  : > /tmp/fsdp-vnn-$n.txt
  : > /tmp/fsdp-torch-$n.txt
  for r in $(seq "$rounds"); do
    "$run" --nproc-per-node "$n" "$build/bin/fsdp_bench" --steps "$steps" "${extra[@]}" 2>/dev/null |
      grep 'vnn fsdp' >> /tmp/fsdp-vnn-$n.txt
    "$run" --nproc-per-node "$n" "$py" "$here/fsdp_bench_torch.py" --steps "$steps" "${extra[@]}" 2>/dev/null |
      grep 'torch fsdp' >> /tmp/fsdp-torch-$n.txt
  done
  params=$(field params < /tmp/fsdp-vnn-$n.txt | head -1)
  vt=$(field step_ms < /tmp/fsdp-vnn-$n.txt | median)
  tt=$(field step_ms < /tmp/fsdp-torch-$n.txt | median)
  vm=$(field peak_rss_mib < /tmp/fsdp-vnn-$n.txt | median)
  tm=$(field peak_rss_mib < /tmp/fsdp-torch-$n.txt | median)
  va=$(field peak_alloc_mib < /tmp/fsdp-vnn-$n.txt | median)
  awk -v n=$n -v p=$params -v vt=$vt -v tt=$tt -v vm=$vm -v tm=$tm -v va=$va 'BEGIN {
    printf "| %d | %s | %.1f | %.1f | %.2fx | %.1f | %.1f | %.2fx | %.1f |\n", n, p, vt, tt, (vt > 0 ? tt / vt : 0), vm, tm,
      (tm > 0 ? vm / tm : 0), va }'
done

#!/usr/bin/env bash
# vnn allreduce bus bandwidth beside torch.distributed (gloo), same machine,
# same run, 2 and 4 ranks on loopback.
#   bench/allreduce_compare.sh BUILD_DIR [MAX_MIB]
set -euo pipefail
build=${1:?build dir}
max=${2:-256}
here=$(cd "$(dirname "$0")" && pwd)
export OMP_NUM_THREADS=1
for n in 2 4; do
  "$build/bin/allreduce_bench" --nproc "$n" --max-mib "$max" > /tmp/vnn-ar-$n.txt
  python3 "$here/allreduce_bench_torch.py" --nproc "$n" --max-mib "$max" > /tmp/torch-ar-$n.txt
  echo "## $n ranks: busbw GB/s"
  echo "| bytes | vnn us | vnn busbw | torch us | torch busbw | vnn / torch |"
  echo "|---|---|---|---|---|---|"
  paste -d' ' <(grep -v '^#' /tmp/vnn-ar-$n.txt) <(grep -v '^#' /tmp/torch-ar-$n.txt) |
    awk '{ printf "| %d | %.1f | %.3f | %.1f | %.3f | %.2fx |\n", $1, $2, $3, $5, $6, $6 > 0 ? $3 / $6 : 0 }'
done

#!/usr/bin/env bash
# vnn allreduce bus bandwidth beside torch.distributed (gloo), same machine,
# same run, 2 and 4 ranks on loopback. vnn runs twice: as shipped (with the
# per-collective size agreement check, docs/distributed.md) and with
# VNN_DIST_CHECK_SIZES=0; torch runs between the two.
#   bench/allreduce_compare.sh BUILD_DIR [MAX_MIB]
set -euo pipefail
build=${1:?build dir}
max=${2:-256}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
export OMP_NUM_THREADS=1
for n in 2 4; do
  "$build/bin/allreduce_bench" --nproc "$n" --max-mib "$max" > "$out/vnn-$n.txt"
  # Debian's python3-torch: the system interpreter, not a pyenv one
  /usr/bin/python3 "$here/allreduce_bench_torch.py" --nproc "$n" --max-mib "$max" > "$out/torch-$n.txt"
  VNN_DIST_CHECK_SIZES=0 "$build/bin/allreduce_bench" --nproc "$n" --max-mib "$max" > "$out/vnn-nocheck-$n.txt"
  echo "## $n ranks: bus bandwidth, GB/s (us per allreduce)"
  echo "| bytes | vnn | vnn, no size check | torch gloo | vnn / torch | vnn no check / torch |"
  echo "|---|---|---|---|---|---|"
  paste -d' ' <(grep -v '^#' "$out/vnn-$n.txt") <(grep -v '^#' "$out/vnn-nocheck-$n.txt") \
    <(grep -v '^#' "$out/torch-$n.txt") |
    awk '{ a = ($2 > 0) ? $8 / $2 : 0; b = ($5 > 0) ? $8 / $5 : 0;  # speed ratios from the times
           printf "| %d | %.3f (%.0f) | %.3f (%.0f) | %.3f (%.0f) | %.2fx | %.2fx |\n", $1, $3, $2, $6, $5, $9, $8, a, b }'
done
rm -rf "$out"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# vnn allreduce bus bandwidth beside torch.distributed (gloo), same machine,
# same run, 2 and 4 ranks on loopback. vnn runs twice: as shipped (sizes
# checked when a collective stalls, docs/distributed.md) and with
# VNN_DIST_CHECK_SIZES=1 (checked before each collective); torch runs
# between the two. Loopback latency on a small VM swings by 2-5x from run to
# run, so the three alternate ROUNDS times and the table gives each one's
# median (per size) of its runs' best-of-3 times.
#   bench/allreduce_compare.sh BUILD_DIR [MAX_MIB] [ROUNDS]
set -euo pipefail
build=${1:?build dir}
max=${2:-256}
rounds=${3:-5}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
export OMP_NUM_THREADS=1
for n in 2 4; do
  for ((k = 1; k <= rounds; k++)); do
    "$build/bin/allreduce_bench" --nproc "$n" --max-mib "$max" > "$out/vnn-$n-$k.txt"
    # Debian's python3-torch: the system interpreter, not a pyenv one
    /usr/bin/python3 "$here/allreduce_bench_torch.py" --nproc "$n" --max-mib "$max" > "$out/torch-$n-$k.txt"
    VNN_DIST_CHECK_SIZES=1 "$build/bin/allreduce_bench" --nproc "$n" --max-mib "$max" > "$out/every-$n-$k.txt"
  done
  echo "## $n ranks: bus bandwidth, GB/s (us per allreduce), medians of $rounds alternating runs"
  /usr/bin/python3 - "$out" "$n" "$rounds" <<'PY'
import statistics, sys
out, n, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
def runs(name):  # {bytes: [us per run]}
    t = {}
    for k in range(1, rounds + 1):
        for line in open(f"{out}/{name}-{n}-{k}.txt"):
            if not line.startswith("#"):
                b, us, _ = line.split()
                t.setdefault(int(b), []).append(float(us))
    return t
v, e, t = runs("vnn"), runs("every"), runs("torch")
bw = lambda b, us: b / us * 1e-3 * 2 * (int(n) - 1) / int(n)
print("| bytes | vnn | vnn, size check every call | torch gloo | vnn / torch | every call / torch | vnn/torch per run |")
print("|---|---|---|---|---|---|---|")
for b in sorted(v):
    mv, me, mt = (statistics.median(x[b]) for x in (v, e, t))
    per = " ".join(f"{b_ / a_:.2f}" for a_, b_ in zip(v[b], t[b]))
    print(f"| {b} | {bw(b, mv):.3f} ({mv:.0f}) | {bw(b, me):.3f} ({me:.0f}) | {bw(b, mt):.3f} ({mt:.0f}) "
          f"| {mt / mv:.2f}x | {mt / me:.2f}x | {per} |")
PY
done
rm -rf "$out"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# vnn's fused scaled_dot_product_attention (bench/sdpa_bench.cpp) beside
# PyTorch 2.x's F.scaled_dot_product_attention on the CPU
# (bench/sdpa_bench_torch.py), same shapes, threads and run: each L runs
# vnn then torch, so a machine that changes speed weighs on both alike.
#   bench/sdpa_compare.sh SDPA_BENCH [MAX_L] [SAMPLES] [MATH_MAX_L]
#     SDPA_BENCH: the sdpa_bench binary (e.g. build/bin/sdpa_bench)
#     MAX_L: the largest L (default 4096; 8192 takes several minutes per side)
#     MATH_MAX_L: the largest L for vnn's math path (default 2048: its
#       [8, 12, L, L] float32 scores are 1.5 GiB there, 6 GiB at 4096)
# Prints the GFLOP/s (forward 4 B H L^2 E, halved for causal; forward +
# backward 3.5 times that) and vnn / torch speed ratios (> 1: vnn faster).
set -euo pipefail
export LC_ALL=C
bench=${1:?sdpa_bench binary}
max=${2:-4096}
samples=${3:-3}
math_max=${4:-2048}
here=$(cd "$(dirname "$0")" && pwd)
py=$("$here/torch2_venv.sh")
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bench" --l 128 --max-l 128 --samples 1 --math-max-l 0 --no-backward | grep 'sgemm' || true
for L in 128 512 1024 2048 4096 8192; do
  [ "$L" -le "$max" ] || continue
  "$bench" --device cpu:0 --l "$L" --samples "$samples" --math-max-l "$math_max" --no-sgemm >> "$out/vnn.txt"
  "$py" "$here/sdpa_bench_torch.py" --l "$L" --samples "$samples" >> "$out/torch.txt"
done
grep '^# torch' "$out/torch.txt" | head -1
grep '^# sdpa_bench' "$out/vnn.txt" | head -1
echo "| L | causal | vnn fwd ms | torch fwd ms | fwd vnn/torch | vnn fwd GFLOP/s | vnn fwd+bwd ms | torch fwd+bwd ms | fwd+bwd vnn/torch | vnn fwd+bwd GFLOP/s | vnn math fwd / fwd+bwd ms | flash peak MiB (fwd / fwd+bwd) | math peak MiB (fwd / fwd+bwd) | max abs flash - math |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
join -j1 <(grep -v '^#' "$out/vnn.txt" | awk '{print $1"_"$2, $0}' | sort) \
         <(grep -v '^#' "$out/torch.txt" | awk '{print $1"_"$2, $3, $4}' | sort) |
  sort -t_ -k1,1n -k2,2n |
  awk '{ L = $2; c = $3; f = $4; fb = $5; mf = $6; mfb = $7; pf = $8; pfb = $9; mpf = $10; mpfb = $11; d = $12;
         tf = $13; tfb = $14;
         fl = 4.0 * 8 * 12 * L * L * 64 * (c ? 0.5 : 1.0);
         printf "| %d | %s | %.1f | %.1f | %.2fx | %.1f | %.1f | %.1f | %.2fx | %.1f | %s | %.0f / %.0f | %s | %s |\n",
           L, c ? "yes" : "no", f, tf, tf / f, fl / f / 1e6, fb, tfb, (fb > 0 ? tfb / fb : 0), (fb > 0 ? 3.5 * fl / fb / 1e6 : 0),
           (mf > 0 ? sprintf("%.0f / %.0f", mf, mfb) : "-"), pf, pfb, (mf > 0 ? sprintf("%.0f / %.0f", mpf, mpfb) : "-"),
           (d >= 0 ? d : "-") }'

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# train_fashion_mnist --distributed under vnn-run on 2 ranks, then its
# checkpoint resumed on 1 rank (no --distributed) and on 2 ranks.
# usage: ddp_smoke.sh VNN_RUN TRAIN_FASHION_MNIST WORK_DIR
set -eu
run=$1 train=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
small="--epochs 1 --limit 1024 --workers 1 --batch-size 64"
fail() { echo "FAIL: $*"; exit 1; }

"$run" --nproc-per-node 2 "$train" --distributed $small --out "$work/two" > "$work/two.log" 2>&1 ||
  { cat "$work/two.log"; fail "the 2-rank run failed"; }
cat "$work/two.log"
grep -q '^\[rank0\]: Distributed: 2 ranks' "$work/two.log" || fail "rank 0 did not report 2 ranks"
grep -q '^\[rank0\]: Final test accuracy: .* x 2 ranks' "$work/two.log" || fail "no final accuracy from rank 0"
# Only rank 0 speaks and writes.
! grep -q '^\[rank1\]: .*\(epoch\|Final\|Wrote\)' "$work/two.log" || fail "rank 1 printed results"
for f in checkpoint.safetensors metrics.csv curves.svg; do
  [ -s "$work/two/$f" ] || fail "$f missing after the 2-rank run"
done
[ "$(ls "$work/two" | wc -l)" -eq 3 ] || fail "unexpected files: $(ls "$work/two")"

# The 2-rank checkpoint on 1 rank, plain (no process group).
cp -r "$work/two" "$work/one_after_two"
"$train" --device cpu --epochs 2 --limit 1024 --workers 1 --batch-size 64 --resume --out "$work/one_after_two" \
  > "$work/one.log" 2>&1 || { cat "$work/one.log"; fail "resuming on 1 rank failed"; }
cat "$work/one.log"
grep -q 'Resumed from .* after epoch 1' "$work/one.log" || fail "1 rank did not resume after epoch 1"
grep -q '^epoch 2: ' "$work/one.log" || fail "1 rank did not train epoch 2"

# ... and on 2 ranks again.
cp -r "$work/two" "$work/two_after_two"
"$run" --nproc-per-node 2 "$train" --distributed --epochs 2 --limit 1024 --workers 1 --batch-size 64 --resume \
  --out "$work/two_after_two" > "$work/two_again.log" 2>&1 || { cat "$work/two_again.log"; fail "resuming on 2 ranks failed"; }
cat "$work/two_again.log"
grep -q '^\[rank0\]: Resumed from .* after epoch 1' "$work/two_again.log" || fail "rank 0 did not resume"
grep -q '^\[rank1\]: Resumed from .* after epoch 1' "$work/two_again.log" && fail "rank 1 should be quiet"
grep -q '^\[rank0\]: epoch 2: ' "$work/two_again.log" || fail "2 ranks did not train epoch 2"
[ "$(grep -c . "$work/two_after_two/metrics.csv")" -ge 3 ] || fail "metrics.csv should hold epochs 1 and 2"
echo "ddp smoke: ok"

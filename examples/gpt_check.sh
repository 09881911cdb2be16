#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# train_gpt's smoke checks on one device (CI runs it for cpu:0 and opencl:0):
# a few iterations that train and sample; a run stopped at its checkpoint and
# resumed ends bit for bit where the straight run ends (the checkpoints are
# byte-identical); and, with VNN_RUN given, the --distributed and --fsdp runs
# on 2 ranks end at the one-process validation loss, and under a 14 MiB
# budget per rank a wider GPT runs out of memory with DDP and trains with FSDP.
# On a device whose index_add (the embedding gradient) adds with atomics in
# whatever order the threads reach them (OpenCL), runs differ in the last
# bits: there the resumed run must print the straight run's losses instead.
# usage: gpt_check.sh TRAIN_GPT DEVICE WORK_DIR [VNN_RUN]
set -eu
train=$1 device=$2 work=$3 run=${4:-}
rm -rf "$work"
mkdir -p "$work"
small="--device $device --n-layer 2 --n-head 2 --n-embd 32 --block-size 32 --batch-size 8 --eval-interval 10 --eval-iters 2 --warmup 5"
fail() { echo "FAIL: $*"; exit 1; }

# A first run fills the kernel caches: a device whose kernels are tuned at
# first use (OpenCL) may pick another kernel, with another summation order,
# before its tuning is cached; with the same cache every run is
# deterministic, which is what resuming bit for bit needs.
"$train" $small --max-iters 20 --stop-at 12 --sample-tokens 0 --out "$work/warm" > "$work/warm.log" 2>&1 ||
  { cat "$work/warm.log"; fail "the first run failed"; }
"$train" $small --max-iters 20 --sample-tokens 40 --out "$work/straight" > "$work/straight.log" 2>&1 ||
  { cat "$work/straight.log"; fail "the straight run failed"; }
cat "$work/straight.log"
grep -q '^iter 20: train loss [0-9.]*, val loss [0-9.]*' "$work/straight.log" || fail "no evaluation at iteration 20"
grep -q '^Sample (temperature' "$work/straight.log" || fail "no sample"
first=$(sed -n 's/^iter 10: train loss \([0-9.]*\),.*/\1/p' "$work/straight.log")
last=$(sed -n 's/^iter 20: train loss \([0-9.]*\),.*/\1/p' "$work/straight.log")
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a) }' || fail "the loss did not fall ($first -> $last)"

# Stopped at iteration 10 (--stop-at keeps the 20-iteration schedule),
# then resumed to 20: the same bytes as the straight run (see above for
# OpenCL).
"$train" $small --max-iters 20 --stop-at 10 --sample-tokens 0 --out "$work/resumed2" > "$work/part2.log" 2>&1 ||
  { cat "$work/part2.log"; fail "the run stopped at 10 failed"; }
"$train" $small --max-iters 20 --sample-tokens 0 --resume --out "$work/resumed2" > "$work/part3.log" 2>&1 ||
  { cat "$work/part3.log"; fail "resuming failed"; }
cat "$work/part3.log"
grep -q 'Resumed from .* at iteration 10' "$work/part3.log" || fail "did not resume at iteration 10"
case "$device" in
  opencl*)
    want=$(grep '^iter 20: ' "$work/straight.log")
    got=$(grep '^iter 20: ' "$work/part3.log")
    [ -n "$want" ] && [ "$want" = "$got" ] || fail "resumed: '$got', straight: '$want'" ;;
  *)
    cmp "$work/straight/checkpoint.safetensors" "$work/resumed2/checkpoint.safetensors" ||
      fail "the resumed run's checkpoint differs from the straight run's" ;;
esac

if [ -n "$run" ]; then
  "$run" --nproc-per-node 2 "$train" --distributed $small --max-iters 20 --sample-tokens 0 --out "$work/ddp" \
    > "$work/ddp.log" 2>&1 || { cat "$work/ddp.log"; fail "the 2-rank run failed"; }
  cat "$work/ddp.log"
  one=$(sed -n 's/^iter 20: train loss [0-9.]*, val loss \([0-9.]*\)/\1/p' "$work/straight.log")
  two=$(sed -n 's/^\[rank0\]: iter 20: train loss [0-9.]*, val loss \([0-9.]*\)/\1/p' "$work/ddp.log")
  [ -n "$two" ] || fail "no validation loss from rank 0"
  awk -v a="$one" -v b="$two" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.002) }' ||
    fail "2 ranks ended at val loss $two, one process at $one"
  # FSDP: the same run sharded ends at the same loss; and a wider model whose
  # AdamW training does not fit 14 MiB per rank under DDP trains under FSDP.
  "$run" --nproc-per-node 2 "$train" --fsdp $small --max-iters 20 --sample-tokens 0 --out "$work/fsdp" \
    > "$work/fsdp.log" 2>&1 || { cat "$work/fsdp.log"; fail "the 2-rank FSDP run failed"; }
  fsdp=$(sed -n 's/^\[rank0\]: iter 20: train loss [0-9.]*, val loss \([0-9.]*\)/\1/p' "$work/fsdp.log")
  awk -v a="$one" -v b="$fsdp" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b != "" && d <= 0.002) }' ||
    fail "FSDP on 2 ranks ended at val loss '$fsdp', one process at $one"
  wide="--device $device --n-layer 4 --n-head 4 --n-embd 128 --block-size 32 --batch-size 4 --max-iters 10"
  wide="$wide --eval-interval 10 --eval-iters 2 --warmup 5 --sample-tokens 20"
  if VNN_MEMORY_LIMIT=$device=14M "$run" --nproc-per-node 2 "$train" --distributed $wide --out "$work/ddp-14m" \
    > "$work/ddp-14m.log" 2>&1; then cat "$work/ddp-14m.log"; fail "DDP fitted in 14 MiB per rank"; fi
  grep -q "out of memory on $device" "$work/ddp-14m.log" || { cat "$work/ddp-14m.log"; fail "DDP: no OutOfMemory"; }
  VNN_MEMORY_LIMIT=$device=14M "$run" --nproc-per-node 2 "$train" --fsdp $wide --out "$work/fsdp-14m" \
    > "$work/fsdp-14m.log" 2>&1 || { cat "$work/fsdp-14m.log"; fail "FSDP did not train in 14 MiB per rank"; }
  cat "$work/fsdp-14m.log"
  grep -q '^\[rank0\]: Sample (temperature' "$work/fsdp-14m.log" || fail "FSDP: no sample"
fi
echo "gpt_check: passed on $device"

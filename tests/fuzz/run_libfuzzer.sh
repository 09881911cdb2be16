#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds one fuzz target with clang's libFuzzer + ASan + UBSan and runs it for
# a bounded time. The library code it reaches (src/io, module state loading,
# optimizer and scheduler state, the IDX reader) is compiled into the target,
# instrumented; the rest of vnn comes from the built libvnn.so. Seeds come from
# the target's own generator (corpus_<target> --write-seeds); the regression
# corpus tests/fuzz/regressions/<target>/ is read as a second corpus. A crash
# is copied into that regression corpus (so the normal suite replays it) and
# fails the test. Exit 77 (skipped) when no clang with libFuzzer exists here.
# usage: run_libfuzzer.sh <source dir> <work dir> <target> <seconds> <corpus_<target> exe> <libvnn dir>
set -eu
src=$1 work=$2/$3 target=$3 secs=$4 seeder=$5 libdir=$6
cxx=$(command -v clang++ || command -v clang++-14 || true)
if [ -z "$cxx" ]; then echo "skip: no clang++ (Debian: clang, libclang-rt-14-dev)"; exit 77; fi
io="$src/src/io/safetensors.cpp $src/src/io/safetensors_header.cpp $src/src/io/json.cpp"
case $target in
  safetensors) code="$io" ;;
  checkpoint) code="$io $src/src/io/checkpoint.cpp $src/src/nn/module.cpp $src/src/optim/optimizer.cpp $src/src/optim/scheduler.cpp" ;;
  idx) code="$src/src/data/readers.cpp" ;;
  *) echo "unknown target $target"; exit 2 ;;
esac
mkdir -p "$work/corpus" "$src/tests/fuzz/regressions/$target"
# shellcheck disable=SC2086
if ! "$cxx" -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$src/include" -I"$src/src" -I"$src/tests/fuzz" -I"$libdir/../include" \
    "$src/tests/fuzz/${target}_fuzz.cpp" $code -L"$libdir" -Wl,-rpath,"$libdir" -lvnn -lz \
    -o "$work/fuzz" 2>"$work/build.log"; then
  if grep -q "fuzzer" "$work/build.log"; then cat "$work/build.log"; echo "skip: clang has no libFuzzer runtime"; exit 77; fi
  cat "$work/build.log"; exit 1
fi
"$seeder" --write-seeds "$work/corpus"
rm -f "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*
status=0
ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 "$work/fuzz" -max_total_time="$secs" -rss_limit_mb=2048 \
  -timeout=10 -max_len=65536 -print_final_stats=1 -artifact_prefix="$work/" \
  "$work/corpus" "$src/tests/fuzz/regressions/$target" >"$work/fuzz.log" 2>&1 || status=$?
tail -n 30 "$work/fuzz.log"
for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
  [ -e "$f" ] && cp "$f" "$src/tests/fuzz/regressions/$target/" && echo "kept $f in tests/fuzz/regressions/$target/"
done
# The figures for the note: executions and coverage at the end of the run.
grep -E "^#[0-9]+[[:space:]]+DONE" "$work/fuzz.log" | tail -n 1 | sed "s/^/$target: /" || true
grep -E "stat::number_of_executed_units" "$work/fuzz.log" | sed "s/^/$target: /" || true
exit $status

#!/bin/sh
# Builds the fuzz target with clang's libFuzzer + ASan and runs it for a
# bounded time. Exit 77 (skipped) when no clang with libFuzzer exists here.
# usage: run_libfuzzer.sh <source dir> <work dir> <seconds>
set -eu
src=$1 work=$2 secs=$3
cxx=$(command -v clang++ || command -v clang++-14 || true)
if [ -z "$cxx" ]; then echo "skip: no clang++ (Debian: clang, libclang-rt-14-dev)"; exit 77; fi
mkdir -p "$work/corpus"
if ! "$cxx" -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -I"$src/include" -I"$src/src" \
    "$src/tests/fuzz/safetensors_fuzz.cpp" "$src/src/io/safetensors_header.cpp" "$src/src/io/json.cpp" \
    -o "$work/safetensors_fuzz" 2>"$work/build.log"; then
  if grep -q "fuzzer" "$work/build.log"; then cat "$work/build.log"; echo "skip: clang has no libFuzzer runtime"; exit 77; fi
  cat "$work/build.log"; exit 1
fi
printf '\020\000\000\000\000\000\000\000{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}x' > "$work/corpus/seed1" 2>/dev/null || true
exec "$work/safetensors_fuzz" -max_total_time="$secs" -rss_limit_mb=2048 -max_len=4096 "$work/corpus"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# vnn's Conv1d, Conv3d and ConvTranspose2d forward + backward
# (bench/conv_bench.cpp, cpu:0) beside PyTorch 2.x's CPU
# (bench/conv_bench_torch.py), same shapes, threads and run.
#   bench/conv_compare.sh CONV_BENCH [SAMPLES]
#     CONV_BENCH: the conv_bench binary (e.g. build/bin/conv_bench)
# Prints one table: per op and case, ms and GFLOP/s of each, the copy GB/s
# measured in the same run, and torch / vnn time ratios (> 1: vnn faster).
exec "$(cd "$(dirname "$0")" && pwd)/op_compare.sh" conv GFLOP/s "$@"

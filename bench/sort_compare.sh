#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# vnn's sort and unique (bench/sort_bench.cpp on cpu:0 and opencl:0) beside
# PyTorch 2.x's CPU (bench/sort_bench_torch.py), same sizes, threads and run.
#   bench/sort_compare.sh SORT_BENCH [SAMPLES]
#     SORT_BENCH: the sort_bench binary (e.g. build/bin/sort_bench)
# Prints one table: per op and n, each device's ms and Melem/s, the copy
# GB/s measured in the same run, and torch / vnn time ratios (> 1: vnn faster).
exec "$(cd "$(dirname "$0")" && pwd)/op_compare.sh" sort Melem/s "$@"

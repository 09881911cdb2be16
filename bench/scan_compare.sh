#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# vnn's scans (bench/scan_bench.cpp on cpu:0 and opencl:0) beside PyTorch
# 2.x's CPU (bench/scan_bench_torch.py), same sizes, threads and run.
#   bench/scan_compare.sh SCAN_BENCH [SAMPLES]
#     SCAN_BENCH: the scan_bench binary (e.g. build/bin/scan_bench)
# Prints one table: per op and n, each device's ms and GB/s, the copy GB/s
# measured in the same run, and torch / vnn time ratios (> 1: vnn faster).
exec "$(cd "$(dirname "$0")" && pwd)/op_compare.sh" scan GB/s "$@"

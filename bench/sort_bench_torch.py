#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch 2.x's CPU peer of bench/sort_bench.cpp: sort (one row, rows of
1024) and unique (about n / 8 distinct values) of 1M and 16M float32
elements, the same shapes and the same timing rule (one warm-up call, the
median over --samples of the mean time of the calls in a repetition).
Threads: --threads, else OMP_NUM_THREADS, else 2. Run it with the python
bench/torch2_venv.sh prints. Prints one line per (op, n): cpu op n ms
Melem/s copy_GB/s, as sort_bench does."""
import argparse
import os

import torch

from scan_bench_torch import median_seconds  # the shared timing rule (bench/timing.hpp's)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--max-n", type=int, default=1 << 24)
    ap.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", "2")))
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    print(f"# torch {torch.__version__} cpu, {torch.get_num_threads()} threads")
    g = torch.Generator().manual_seed(7)
    for n in (1 << 20, 1 << 24):
        if n > a.max_n:
            continue
        iters = 5 if n <= 1 << 20 else 1
        x = torch.rand(n, generator=g)
        repeats = torch.floor(x * (n // 8))
        dst = torch.empty(n)
        copy_gbs = 8.0 * n / median_seconds(a.samples, iters * 4, lambda: dst.copy_(x)) / 1e9

        def report(op, s):
            print(f"cpu {op} {n} {s * 1e3:.3f} {n / s / 1e6:.1f} {copy_gbs:.2f}", flush=True)

        report("sort", median_seconds(a.samples, iters, lambda: torch.sort(x)))
        rows = x.view(n // 1024, 1024)
        report("sort_rows1024", median_seconds(a.samples, iters, lambda: torch.sort(rows, 1)))
        report("unique", median_seconds(a.samples, iters, lambda: torch.unique(repeats)))


if __name__ == "__main__":
    main()

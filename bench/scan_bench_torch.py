#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch 2.x's CPU peer of bench/scan_bench.cpp: cumsum (1-D and rows of
1024) and nonzero on 1M and 16M float32 elements, the same inputs' shapes
and the same timing rule (one warm-up call, the median over --samples of the
mean time of the calls in a repetition), with a plain copy of the same bytes
for the machine's bandwidth. Threads: --threads, else OMP_NUM_THREADS, else
2. Run it with the python bench/torch2_venv.sh prints. Prints one line per
(op, n): cpu op n ms GB/s copy_GB/s, as scan_bench does."""
import argparse
import os
import time

import torch


def median_seconds(samples, iters, body):
    body()
    t = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(iters):
            body()
        t.append((time.perf_counter() - t0) / iters)
    t.sort()
    return t[len(t) // 2]


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
        iters = 20 if n <= 1 << 20 else 3
        x = torch.rand(n, generator=g) * 2 - 1
        sparse = torch.relu(x)
        dst = torch.empty(n)
        fbytes = 4.0 * n
        copy_s = median_seconds(a.samples, iters, lambda: dst.copy_(x))
        copy_gbs = 2 * fbytes / copy_s / 1e9

        def report(op, s, nbytes):
            print(f"cpu {op} {n} {s * 1e3:.3f} {nbytes / s / 1e9:.2f} {copy_gbs:.2f}", flush=True)

        report("copy", copy_s, 2 * fbytes)
        report("cumsum", median_seconds(a.samples, iters, lambda: torch.cumsum(x, 0)), 2 * fbytes)
        rows = x.view(n // 1024, 1024)
        report("cumsum_rows1024", median_seconds(a.samples, iters, lambda: torch.cumsum(rows, 1)), 2 * fbytes)
        hits = torch.nonzero(sparse).shape[0]
        report("nonzero", median_seconds(a.samples, iters, lambda: torch.nonzero(sparse)), fbytes + 8.0 * hits)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch 2.x's CPU peer of bench/conv_bench.cpp: conv1d, conv3d and
conv_transpose2d forward + backward (input, weight and bias gradients) in
float32, the same shapes and the same timing rule (one warm-up call, the
median over --samples of the mean time of the calls in a repetition), with a
plain copy of the input for the machine's bandwidth. Threads: --threads,
else OMP_NUM_THREADS, else 2. Run it with the python bench/torch2_venv.sh
prints. Prints one line per case: cpu op case ms GFLOP/s copy_GB/s, as
conv_bench does."""
import argparse
import os

import torch
import torch.nn.functional as F
from scan_bench_torch import median_seconds  # the timing rule, shared with the other peers


CASES = [
    ("conv1d", "N8_C32_L2048_O64_k5", (8, 32, 2048), (64, 32, 5), 8.0 * 64 * 2048 * 32 * 5, 64,
     lambda x, w, b: F.conv1d(x, w, b, padding=2)),
    ("conv3d", "N2_C16_D16_H32_W32_O32_k3", (2, 16, 16, 32, 32), (32, 16, 3, 3, 3), 2.0 * 32 * 16384 * 16 * 27, 32,
     lambda x, w, b: F.conv3d(x, w, b, padding=1)),
    ("conv_transpose2d", "N8_C32_H32_W32_O16_k4_s2", (8, 32, 32, 32), (32, 16, 4, 4), 8.0 * 32 * 1024 * 16 * 16, 16,
     lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1)),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", "2")))
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    print(f"# torch {torch.__version__} cpu, {torch.get_num_threads()} threads")
    g = torch.Generator().manual_seed(7)
    for op, name, xs, ws, macs, out_channels, f in CASES:
        x = torch.rand(xs, generator=g).requires_grad_()
        w = torch.rand(ws, generator=g).requires_grad_()
        b = torch.rand(out_channels, generator=g).requires_grad_()
        grad = torch.rand(f(x, w, b).shape, generator=g)
        dst = torch.empty(xs)
        copy_s = median_seconds(a.samples, 10, lambda: dst.copy_(x.detach()))

        def step():
            x.grad = w.grad = b.grad = None
            f(x, w, b).backward(grad)

        s = median_seconds(a.samples, 3, step)
        print(f"cpu {op} {name} {s * 1e3:.3f} {6 * macs / s / 1e9:.2f} {2 * 4.0 * x.numel() / copy_s / 1e9:.2f}",
              flush=True)


if __name__ == "__main__":
    main()

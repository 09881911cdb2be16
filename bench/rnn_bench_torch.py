#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch 2.x's torch.nn.LSTM and GRU on the CPU, the peer of
bench/rnn_bench.cpp: 2 layers, input = hidden = 512, sequence 128, float32;
one training step (forward, a sum loss, backward, SGD) at batch 32 and the
batch-1 inference latency (eval, no_grad), the same timing rule (warm-up,
then the median of --samples repetitions). Threads: --threads, else
OMP_NUM_THREADS, else 2. Run it with the python bench/torch2_venv.sh prints.
Prints one line per module: kind train_ms infer_ms, and '#' lines."""
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
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", "2")))
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    print(f"# torch {torch.__version__} nn.LSTM / nn.GRU on cpu, 2 layers, input = hidden = {a.hidden}, seq {a.seq}, "
          f"train batch {a.batch}, inference batch 1, float32, {torch.get_num_threads()} threads, "
          f"median of {a.samples}")
    print("# kind train_ms infer_ms")
    for kind, cls in (("LSTM", torch.nn.LSTM), ("GRU", torch.nn.GRU)):
        m = cls(a.hidden, a.hidden, num_layers=2)
        x = torch.rand(a.seq, a.batch, a.hidden)
        x1 = torch.rand(a.seq, 1, a.hidden)
        opt = torch.optim.SGD(m.parameters(), lr=1e-3)

        def step():
            opt.zero_grad()
            m(x)[0].sum().backward()
            opt.step()

        m.train()
        train = median_seconds(a.samples, 1, step)
        m.eval()
        with torch.no_grad():
            infer = median_seconds(a.samples, 3, lambda: m(x1))
        print(f"{kind} {train * 1e3:.2f} {infer * 1e3:.3f}", flush=True)


main()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch's figures for the work bench/cuda_bench.cpp and
`train_bench --device cuda:0` measure for vnn: the GPU peer, run by
ci/gpu-check.sh in the same session on the same GPU.

  torch_gpu_bench.py [--data DIR] [--batches N] [--only gemm|ops|copy|train]

(a) GEMM n x n x n TFLOP/s, float32 (TF32 off, PyTorch's default) and
    bfloat16; (b) per-op overhead of a 64-float add; (c) 256 MiB copies
    GB/s, pinned and pageable; (d) MLP and CNN training samples/s with the
    models, optimiser, batch size, warm-up and batch gathering train_bench
    uses (data resident on the GPU, index_select per batch).
"""
import argparse
import gzip
import os
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def median_seconds(samples, iters, body, sync):
    body()
    sync()
    times = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(iters):
            body()
        sync()
        times.append((time.perf_counter() - t0) / iters)
    return statistics.median(times)


def gemm(dev):
    torch.backends.cuda.matmul.allow_tf32 = False
    print("\n## (a) GEMM n x n x n, TFLOP/s (PyTorch)\n")
    print("| dtype | n | PyTorch |\n|---|---|---|")
    for dt, name in ((torch.float32, "float32"), (torch.bfloat16, "bfloat16")):
        for n in (1024, 2048, 4096, 8192):
            a = torch.ones(n, n, device=dev, dtype=dt)
            b = torch.ones(n, n, device=dev, dtype=dt)
            s = median_seconds(5, 5 if n >= 4096 else 20, lambda: torch.mm(a, b), torch.cuda.synchronize)
            print(f"| {name} | {n} | {2.0 * n ** 3 / s / 1e12:.1f} |", flush=True)


def ops(dev):
    print("\n## (b) per-op overhead, 64-float add, microseconds per op (PyTorch)\n")
    a = torch.ones(64, device=dev)
    b = torch.ones(64, device=dev)
    sync = torch.cuda.synchronize
    oop = median_seconds(5, 20000, lambda: a + b, sync)
    inp = median_seconds(5, 20000, lambda: a.add_(b), sync)

    def add_sync():
        a.add_(b)
        sync()

    synced = median_seconds(5, 2000, add_sync, lambda: None)
    print(f"| op | PyTorch us |\n|---|---|\n| a + b (queued) | {oop * 1e6:.2f} |\n"
          f"| a.add_(b) (queued) | {inp * 1e6:.2f} |\n| a.add_(b) + synchronize | {synced * 1e6:.2f} |")


def copies(dev):
    print("\n## (c) copies of 256 MiB, GB/s (PyTorch)\n")
    print("| direction | memory | PyTorch |\n|---|---|---|")
    n = 64 << 20
    d = torch.empty(n, device=dev)
    for to_device in (True, False):
        for pinned in (True, False):
            h = torch.ones(n, pin_memory=pinned)
            if to_device:
                body = lambda: d.copy_(h, non_blocking=pinned)  # noqa: E731
            else:
                body = lambda: h.copy_(d, non_blocking=pinned)  # noqa: E731
            s = median_seconds(5, 3, body, torch.cuda.synchronize)
            print(f"| {'host->device' if to_device else 'device->host'} | {'pinned' if pinned else 'pageable'} "
                  f"| {n * 4 / s / 1e9:.1f} |", flush=True)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2, self.l3 = nn.Linear(784, 256), nn.Linear(256, 128), nn.Linear(128, 10)

    def forward(self, x):
        return self.l3(F.relu(self.l2(F.relu(self.l1(x.reshape(x.shape[0], 784))))))


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.c2 = nn.Conv2d(1, 32, 3), nn.Conv2d(32, 64, 3)
        self.f1, self.f2 = nn.Linear(64 * 5 * 5, 128), nn.Linear(128, 10)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.c1(x)), 2)
        h = F.max_pool2d(F.relu(self.c2(h)), 2)
        return self.f2(F.relu(self.f1(h.reshape(h.shape[0], 64 * 5 * 5))))


def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    return torch.frombuffer(bytearray(raw[4 + 4 * ndim:]), dtype=torch.uint8).reshape(dims)


def load_data(root):
    if root and os.path.exists(os.path.join(root, "train-images-idx3-ubyte.gz")):
        x = read_idx(os.path.join(root, "train-images-idx3-ubyte.gz")).float() / 255.0
        y = read_idx(os.path.join(root, "train-labels-idx1-ubyte.gz")).long()
        tx = read_idx(os.path.join(root, "t10k-images-idx3-ubyte.gz")).float() / 255.0
        ty = read_idx(os.path.join(root, "t10k-labels-idx1-ubyte.gz")).long()
        norm = lambda t: ((t - 0.2860) / 0.3530).reshape(t.shape[0], 1, 28, 28)  # noqa: E731
        return norm(x), y, norm(tx), ty, "Fashion-MNIST"
    g = torch.Generator().manual_seed(0)
    return (torch.randn(60000, 1, 28, 28, generator=g), torch.randint(0, 10, (60000,), generator=g),
            torch.randn(10000, 1, 28, 28, generator=g), torch.randint(0, 10, (10000,), generator=g),
            "synthetic (no Fashion-MNIST found)")


def train(dev, root, batches):
    x, y, tx, ty, what = load_data(root)
    print(f"\n## (d) training, Adam lr 1e-3, batch 64, {what}, {batches} timed batches after 5 warm-up (PyTorch)\n")
    print("| model | PyTorch samples/s | test acc | last loss |\n|---|---|---|---|")
    X, Y, TX, TY = x.to(dev), y.to(dev), tx.to(dev), ty.to(dev)
    order = torch.randperm(X.shape[0], generator=torch.Generator().manual_seed(7)).to(dev)
    for name, cls in (("MLP 784-256-128-10", Mlp), ("CNN c32-p-c64-p-fc128-fc10", Cnn)):
        torch.manual_seed(0)
        net = cls().to(dev)
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)

        def step(b):
            start = (b * 64) % (X.shape[0] - 63)
            idx = order.narrow(0, start, 64)
            xb, yb = X.index_select(0, idx), Y.index_select(0, idx)
            opt.zero_grad()
            loss = F.cross_entropy(net(xb), yb)
            loss.backward()
            opt.step()
            return loss

        for b in range(5):
            step(batches + b)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for b in range(batches):
            loss = step(b)
        last = loss.item()
        sps = batches * 64 / (time.perf_counter() - t0)
        net.eval()
        with torch.no_grad():
            correct = sum(int((net(TX[s:s + 1000]).argmax(1) == TY[s:s + 1000]).sum()) for s in range(0, TX.shape[0], 1000))
        print(f"| {name} | {sps:.0f} | {correct / TX.shape[0]:.4f} | {last:.3f} |", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--batches", type=int, default=300)
    p.add_argument("--only", choices=["gemm", "ops", "copy", "train"])
    a = p.parse_args()
    if not torch.cuda.is_available():
        print("torch_gpu_bench: skipped: torch.cuda.is_available() is False")
        return 77
    dev = torch.device("cuda:0")
    print(f"# torch_gpu_bench: PyTorch {torch.__version__} on {torch.cuda.get_device_name(0)}")
    if a.only in (None, "gemm"):
        gemm(dev)
    if a.only in (None, "ops"):
        ops(dev)
    if a.only in (None, "copy"):
        copies(dev)
    if a.only in (None, "train"):
        train(dev, a.data, a.batches)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

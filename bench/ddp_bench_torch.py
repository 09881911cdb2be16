#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""torch DDP (gloo) beside bench/ddp_bench.cpp: the same models, Adam, the
same per-rank batch on in-memory random batches, one thread per rank.
Run under any torchrun-style launcher, e.g.
  vnn-run --nproc-per-node 2 python3 bench/ddp_bench_torch.py --model cnn
Rank 0 prints: torch ddp <model> ranks <n> batch <b> samples/s <total>"""
import argparse
import time

import torch
import torch.distributed as dist
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--model", default="mlp", choices=["mlp", "cnn"])
p.add_argument("--batch", type=int, default=64)
p.add_argument("--steps", type=int, default=60)
p.add_argument("--warmup", type=int, default=5)
a = p.parse_args()

torch.set_num_threads(1)
dist.init_process_group("gloo")  # MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE from the launcher
rank, world = dist.get_rank(), dist.get_world_size()

if a.model == "mlp":
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                          nn.Linear(128, 10))
else:
    model = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))
ddp = nn.parallel.DistributedDataParallel(model)
opt = torch.optim.Adam(ddp.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(100 + rank)
xs = [torch.randn(a.batch, 1, 28, 28, generator=g) for _ in range(8)]
ys = [torch.randint(0, 10, (a.batch,), generator=g) for _ in range(8)]
loss_fn = nn.CrossEntropyLoss()


def step(k):
    opt.zero_grad()
    loss = loss_fn(ddp(xs[k % 8]), ys[k % 8])
    loss.backward()
    opt.step()
    return loss


for k in range(a.warmup):
    step(k).item()
dist.barrier()
t0 = time.perf_counter()
for k in range(a.steps):
    last = step(k)
last.item()
dist.barrier()
secs = time.perf_counter() - t0
if rank == 0:
    print(f"torch ddp {a.model} ranks {world} batch {a.batch} samples/s {a.steps * a.batch * world / secs:.1f}")
dist.destroy_process_group()

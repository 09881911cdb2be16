#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch 2.x FSDP2 (torch.distributed.fsdp.fully_shard, gloo, CPU) beside
bench/fsdp_bench.cpp: the same nanoGPT model (bench/train_gpt_torch.py's),
each block a unit then the root, Adam, float32, random tokens, the same
shapes and steps. Run under a launcher that sets RANK / WORLD_SIZE /
MASTER_ADDR / MASTER_PORT (vnn-run or torchrun). Rank 0 prints
  torch fsdp ranks <n> params <P> step_ms <median> peak_rss_mib <max over ranks>
peak_rss_mib: the growth of the resident set from just before the model is
built to the end, as fsdp_bench measures vnn's.
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_gpt_torch import GPT  # noqa: E402


def status_bytes(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return float(line.split(":")[1].split()[0]) * 1024
    return 0.0


def main():
    p = argparse.ArgumentParser()
    for name, default in [("n-layer", 4), ("n-embd", 192), ("n-head", 4), ("block-size", 64), ("batch", 4),
                          ("steps", 10), ("warmup", 2)]:
        p.add_argument("--" + name, type=int, default=default)
    a = p.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    dist.init_process_group("gloo")
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    rank, world = dist.get_rank(), dist.get_world_size()
    mesh = init_device_mesh("cpu", (world,))
    vocab = 96
    g = torch.Generator().manual_seed(100 + rank)
    xs = [torch.randint(vocab, (a.batch, a.block_size), generator=g) for _ in range(4)]
    ys = [torch.randint(vocab, (a.batch, a.block_size), generator=g) for _ in range(4)]
    dist.barrier()
    rss0 = status_bytes("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")

    class C:
        pass
    c = C()
    c.vocab, c.block_size, c.n_layer, c.n_head, c.n_embd, c.dropout = vocab, a.block_size, a.n_layer, a.n_head, \
        a.n_embd, 0.0
    torch.manual_seed(0)
    model = GPT(c)
    params = sum(p.numel() for p in model.parameters())
    for block in model.transformer.h:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    times = []
    for s in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        logits = model(xs[s % 4])
        torch.nn.functional.cross_entropy(logits.view(-1, vocab), ys[s % 4].view(-1)).backward()
        opt.step()
        if s >= a.warmup:
            times.append(time.perf_counter() - t0)
    t = torch.tensor(times, dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    v = sorted(t.tolist())
    peak = torch.tensor([status_bytes("VmHWM") - rss0], dtype=torch.float64)
    dist.all_reduce(peak, op=dist.ReduceOp.MAX)
    if rank == 0:
        print("torch fsdp ranks %d params %d step_ms %.1f peak_rss_mib %.1f" %
              (world, params, 1e3 * v[len(v) // 2], peak.item() / 1048576.0), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

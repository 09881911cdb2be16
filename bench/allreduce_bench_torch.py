#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""torch.distributed (gloo) allreduce bus bandwidth, the peer of allreduce_bench.

    python3 bench/allreduce_bench_torch.py --nproc 2 [--max-mib 256]

Same sizes, repetitions and busbw formula as bench/allreduce_bench.cpp.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def rank_main(rank, nproc, max_mib, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=nproc)
    if rank == 0:
        print(f"# torch {torch.__version__} gloo, {nproc} ranks\n# bytes us busbw_GBps", flush=True)
    nbytes = 4096
    while nbytes <= max_mib * 1024 * 1024:
        t = torch.ones(nbytes // 4)
        dist.all_reduce(t)
        iters = int(min(max(2e9 / 4 / nbytes, 3), 200))
        times = []
        for _ in range(3):
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(iters):
                dist.all_reduce(t)
            times.append((time.perf_counter() - t0) / iters)
        best = min(times)
        if rank == 0:
            print(f"{nbytes} {best * 1e6:.1f} {nbytes / best * 2 * (nproc - 1) / nproc / 1e9:.3f}", flush=True)
        nbytes *= 4
    dist.destroy_process_group()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--max-mib", type=float, default=256)
    a = p.parse_args()
    mp.spawn(rank_main, args=(a.nproc, a.max_mib, 20000 + os.getpid() % 20000 + 1), nprocs=a.nproc)

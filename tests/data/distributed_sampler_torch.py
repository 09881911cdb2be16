#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Prints torch.utils.data.DistributedSampler's partitions for the cases the
vnn test checks, one line per (case, rank, epoch):

  n replicas rank shuffle seed drop_last epoch : count fnv64 i0 i1 ...

Indices are listed in full for small datasets; fnv64 (FNV-1a over the int64
values) covers all of them. Run with torch 1.13 (python3-torch):
  python3 tests/data/distributed_sampler_torch.py > tests/data/distributed_sampler_torch.txt
Exits 77 when torch is missing (ctest reads it as skipped)."""
import sys

try:
    import torch
    from torch.utils.data import DistributedSampler
except ImportError:
    print("SKIP: no torch for python3", file=sys.stderr)
    sys.exit(77)

CASES = [
    # n, replicas, shuffle, seed, drop_last
    (10, 3, True, 0, False),
    (10, 3, False, 0, False),
    (10, 3, True, 7, True),
    (10, 3, False, 0, True),
    (12, 4, True, 1, False),
    (2, 5, True, 3, False),     # padding longer than the list
    (2, 5, False, 0, False),
    (3, 4, True, 0, True),      # fewer examples than replicas, dropped: empty
    (0, 2, True, 0, False),
    (1, 1, True, 0, False),
    (1000, 2, True, 0, False),
    (1001, 4, True, 123456789, True),
    (997, 8, True, 2**32 + 5, False),  # only the low 32 bits seed the generator
    (60000, 2, True, 0, False),        # Fashion-MNIST's training set
]
EPOCHS = [0, 1, 5]
FULL_UP_TO = 2000


def fnv(values):
    h = 1469598103934665603
    for v in values:
        h = ((h ^ (v & 0xFFFFFFFFFFFFFFFF)) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


class Sized:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n


for n, replicas, shuffle, seed, drop_last in CASES:
    for rank in range(replicas):
        s = DistributedSampler(Sized(n), num_replicas=replicas, rank=rank, shuffle=shuffle, seed=seed,
                               drop_last=drop_last)
        for epoch in EPOCHS:
            s.set_epoch(epoch)
            idx = list(s)
            assert len(idx) == len(s)
            head = f"{n} {replicas} {rank} {int(shuffle)} {seed} {int(drop_last)} {epoch} : {len(idx)} {fnv(idx)}"
            print(head + ("".join(f" {i}" for i in idx) if n <= FULL_UP_TO else ""))

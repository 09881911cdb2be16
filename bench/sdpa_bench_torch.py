#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch 2.x's torch.nn.functional.scaled_dot_product_attention on the CPU,
the peer of bench/sdpa_bench.cpp: float32, (B, H, E) = (8, 12, 64), L = S,
causal and not, forward and forward + backward (autograd), the same timing
rule (median of --samples calls after one warm-up call, the warm-up skipped
for calls of several seconds). Threads: --threads, else OMP_NUM_THREADS,
else 2. Run it with the python bench/torch2_venv.sh prints.
Prints one line per (L, causal): L causal fwd_ms fb_ms, and '#' lines."""
import argparse
import os
import time

import torch
import torch.nn.functional as F


def median_call(samples, body):
    t0 = time.perf_counter()
    body()
    first = time.perf_counter() - t0
    t = []
    if first > 3.0:
        t.append(first)
        samples -= 1
    for _ in range(samples):
        t0 = time.perf_counter()
        body()
        t.append(time.perf_counter() - t0)
    t.sort()
    return t[len(t) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--l", type=int, action="append")
    ap.add_argument("--max-l", type=int, default=8192)
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", "2")))
    ap.add_argument("--no-backward", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    B, H, E = 8, 12, 64
    ls = a.l or [128, 512, 1024, 2048, 4096, 8192]
    print(f"# torch {torch.__version__} F.scaled_dot_product_attention on cpu, float32, B {B}, H {H}, E {E}, "
          f"L = S, {torch.get_num_threads()} threads, median of {a.samples}; "
          f"capability {torch.backends.cpu.get_cpu_capability()}")
    print("# L causal fwd_ms fb_ms")
    for L in ls:
        if L > a.max_l:
            continue
        g = torch.Generator().manual_seed(1234)
        q, k, v, grad = (torch.randn(B, H, L, E, generator=g) for _ in range(4))
        for causal in (False, True):
            def fwd():
                with torch.no_grad():
                    F.scaled_dot_product_attention(q, k, v, is_causal=causal)

            def fb():
                qg, kg, vg = (x.detach().requires_grad_() for x in (q, k, v))
                F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal).backward(grad)

            t_fwd = median_call(a.samples, fwd)
            t_fb = 0.0 if a.no_backward else median_call(a.samples, fb)
            flops = 4.0 * B * H * L * L * E * (0.5 if causal else 1.0)
            print(f"{L} {int(causal)} {t_fwd * 1e3:.3f} {t_fb * 1e3:.3f}")
            print(f"#   L {L} {'causal' if causal else 'full'}: fwd {flops / t_fwd / 1e9:.1f} GFLOP/s, fwd+bwd "
                  f"{(3.5 * flops / t_fb / 1e9) if t_fb > 0 else 0.0:.1f} GFLOP/s", flush=True)


if __name__ == "__main__":
    main()

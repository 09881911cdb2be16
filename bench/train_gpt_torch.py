#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The PyTorch 2.x twin of examples/train_gpt.cpp: the same corpus, vocabulary,
split, batches (splitmix64 of seed, step, row), model (nanoGPT's), initial
weights (loaded from the safetensors file train_gpt --save-init wrote),
optimizer (AdamW, decay on matrices, warm-up + cosine) and evaluation
batches. Prints tokens/s and the validation losses so bench/gpt_compare.sh can
set them beside vnn's.

  python3 bench/train_gpt_torch.py --init init.safetensors [--max-iters N] [...]
Takes the same model and schedule flags as train_gpt.
"""
import argparse
import json
import math
import os
import struct
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

MASK64 = (1 << 64) - 1


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def read_corpus(d):
    names = sorted(n for n in os.listdir(d) if not n.startswith(".") and "." not in n and "art" not in n)
    out = []  # line by line with std::getline's semantics, as the C++ does
    for n in names:
        with open(os.path.join(d, n), "rb") as f:
            data = f.read()
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines = lines[:-1]
        for line in lines:
            if line == b"%":
                out.append("\n")
                continue
            s = "".join(" " if b == 9 else chr(b) for b in line if b == 9 or 32 <= b < 127)
            out.append(s + "\n")
    return "".join(out)


def get_batch(data, seed, split, step, row0, rows, T):
    span = len(data) - T - 1
    xs, ys = [], []
    for r in range(rows):
        inner = splitmix64(((split << 62) & MASK64) ^ ((step << 20) & MASK64) ^ (row0 + r))
        h = splitmix64(seed ^ inner)
        s = h % span
        xs.append(data[s:s + T])
        ys.append(data[s + 1:s + T + 1])
    return torch.from_numpy(np.stack(xs)), torch.from_numpy(np.stack(ys))


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        blob = f.read()
    out = {}
    kinds = {"F32": np.float32, "F64": np.float64, "I64": np.int64}
    for k, v in header.items():
        if k == "__metadata__":
            continue
        a, b = v["data_offsets"]
        out[k] = torch.from_numpy(np.frombuffer(blob[a:b], dtype=kinds[v["dtype"]]).reshape(v["shape"]).copy())
    return out


class CausalSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_attn = nn.Linear(c.n_embd, 3 * c.n_embd)
        self.c_proj = nn.Linear(c.n_embd, c.n_embd)
        self.resid_dropout = nn.Dropout(c.dropout)
        self.n_head, self.dropout = c.n_head, c.dropout

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = nn.Linear(c.n_embd, 4 * c.n_embd)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * c.n_embd, c.n_embd)
        self.dropout = nn.Dropout(c.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = nn.LayerNorm(c.n_embd)
        self.attn = CausalSelfAttention(c)
        self.ln_2 = nn.LayerNorm(c.n_embd)
        self.mlp = MLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(c.vocab, c.n_embd), wpe=nn.Embedding(c.block_size, c.n_embd), drop=nn.Dropout(c.dropout),
            h=nn.ModuleList([Block(c) for _ in range(c.n_layer)]), ln_f=nn.LayerNorm(c.n_embd)))
        self.lm_head = nn.Linear(c.n_embd, c.vocab, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied, as nanoGPT

    def forward(self, idx):
        pos = torch.arange(idx.size(1), dtype=torch.long)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for b in self.transformer.h:
            x = b(x)
        return self.lm_head(self.transformer.ln_f(x))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--init", required=True)
    p.add_argument("--data", default="/usr/share/games/fortunes")
    for name, default in [("max-iters", 1500), ("batch-size", 16), ("block-size", 128), ("n-layer", 4),
                          ("n-head", 4), ("n-embd", 128), ("eval-interval", 250), ("eval-iters", 20),
                          ("warmup", 100), ("seed", 1337)]:
        p.add_argument("--" + name, type=int, default=default)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--threads", type=int, default=0)
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    min_lr = a.lr / 10
    text = read_corpus(a.data)
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    ids = np.array([stoi[ch] for ch in text], dtype=np.int64)
    n_train = len(text) * 9 // 10
    train, val = ids[:n_train], ids[n_train:]

    class C:
        pass

    c = C()
    c.vocab, c.block_size, c.n_layer, c.n_head, c.n_embd, c.dropout = (
        len(chars), a.block_size, a.n_layer, a.n_head, a.n_embd, a.dropout)
    model = GPT(c)
    sd = load_safetensors(a.init)
    missing, unexpected = model.load_state_dict(sd, strict=False)
    assert not unexpected, unexpected
    assert all(k in ("transformer.wte.weight", "lm_head.weight") for k in missing), missing
    decay = [q for q in model.parameters() if q.dim() >= 2]
    no_decay = [q for q in model.parameters() if q.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.99))

    def lr_at(it):
        if it < a.warmup:
            return a.lr * (it + 1) / (a.warmup + 1)
        if it >= a.max_iters:
            return min_lr
        r = (it - a.warmup) / max(a.max_iters - a.warmup, 1)
        return min_lr + 0.5 * (1 + math.cos(math.pi * r)) * (a.lr - min_lr)

    def estimate():
        model.eval()
        out = []
        with torch.no_grad():
            for split, data in ((0, train), (1, val)):
                s = 0.0
                for i in range(a.eval_iters):
                    x, y = get_batch(data, a.seed + 1, split + 2, i, 0, a.batch_size, a.block_size)
                    logits = model(x)
                    s += F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1)).item()
                out.append(s / a.eval_iters)
        model.train()
        return out

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{sum(q.numel() for q in model.parameters()) / 1e6:.3f} M parameters")
    t0 = time.time()
    train_time = 0.0
    val_loss = float("nan")
    for it in range(a.max_iters):
        ts = time.time()
        for g in opt.param_groups:
            g["lr"] = lr_at(it)
        x, y = get_batch(train, a.seed, 0, it, 0, a.batch_size, a.block_size)
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        train_time += time.time() - ts
        if (it + 1) % a.eval_interval == 0 or it + 1 == a.max_iters:
            tl, val_loss = estimate()
            print(f"iter {it + 1}: train loss {tl:.4f}, val loss {val_loss:.4f}", flush=True)
    tokens = a.max_iters * a.batch_size * a.block_size
    print(f"torch: {a.max_iters} iterations, {tokens / train_time:.0f} tokens/s (training steps only), "
          f"final val loss {val_loss:.4f}, wall {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()

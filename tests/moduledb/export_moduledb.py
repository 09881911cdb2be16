#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Exports PyTorch's module test database (module_db) as references for vnn's module_db test.

For each module_db entry (torch.nn modules with sample constructor arguments
and forward inputs), in float32 and float64, in training and in evaluation
mode where the entry says they differ, it builds the module with a fixed
seed and writes one safetensors file per entry under tests/moduledb/data/:
per sample the module's state_dict (PyTorch's keys), the forward inputs and
outputs, the buffers after the forward (running statistics), and for float64
the output cotangents with the gradients of sum(out * cot) with respect to
the inputs and the parameters; the constructor and forward arguments go as
JSON in the file's metadata. The C++ runner (tests/moduledb/runner.cpp)
replays them on every device.

  python3 tests/moduledb/export_moduledb.py [--out DIR] [--only NAME,...]

Run it with the venv that bench/torch2_venv.sh makes. Samples are capped per
entry, dtype and mode (spread over the entry's list), so the data stay
small; the seed is fixed, so a rerun with the same PyTorch writes the same
files. The argument encoding, the safetensors writer and the tolerance rule
are tests/opdb/export_opdb.py's.
"""
import argparse
import json
import os
import sys
import warnings

import torch
from torch.testing._internal.common_modules import module_db

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "opdb"))
from export_opdb import (DTYPE_NAMES, Sample, TooLarge, Unsupported, flat_tensors,  # noqa: E402
                         tolerances, write_safetensors)

DTYPES = (torch.float32, torch.float64)
MAX_SAMPLES = 5              # per entry, dtype and mode, spread over the entry's samples
MAX_ENTRY_BYTES = 160 << 10  # an entry's samples past this many bytes are left out
# Whole entries that cannot apply, with the reason the index records.
NOT_APPLICABLE = {
    "nn.LinearCrossEntropyLoss": "PyTorch-only module (no LibTorch counterpart)",
}
# Activations a Transformer layer may be given as a function: the string
# PyTorch accepts for the same function.
ACTIVATIONS = {torch.nn.functional.relu: "relu", torch.nn.functional.gelu: "gelu"}


def random_in_training(m):
    """Why the module's training-mode output is random, or None."""
    for sub in m.modules():
        if isinstance(sub, torch.nn.modules.dropout._DropoutNd) and sub.p > 0:
            return f"random in training (Dropout p={sub.p})"
        if isinstance(sub, torch.nn.MultiheadAttention) and sub.dropout > 0:
            return f"random in training (attention dropout {sub.dropout})"
        if isinstance(sub, torch.nn.RNNBase) and sub.dropout > 0 and sub.num_layers > 1:
            return f"random in training (dropout {sub.dropout} between layers)"
    return None


def encode_layer(rec, name, layer, kwargs):
    """A Transformer layer passed to a constructor (TransformerEncoder): its
    class name as the argument, its options as kwargs "NAME.option"."""
    if not isinstance(layer, (torch.nn.TransformerEncoderLayer, torch.nn.TransformerDecoderLayer)):
        raise Unsupported(f"constructor argument {type(layer).__name__}")
    act = layer.activation
    act = ACTIVATIONS.get(act, type(act).__name__.lower())
    opts = {"d_model": layer.self_attn.embed_dim, "nhead": layer.self_attn.num_heads,
            "dim_feedforward": layer.linear1.out_features, "dropout": layer.dropout.p, "activation": act,
            "layer_norm_eps": layer.norm1.eps, "batch_first": layer.self_attn.batch_first,
            "norm_first": layer.norm_first, "bias": layer.linear1.bias is not None}
    for k, v in opts.items():
        kwargs[f"{name}.{k}"] = rec.encode(v)
    return {"s": type(layer).__name__}


def encode_ctor(rec, args, kwargs):
    out_args, out_kwargs = [], {}
    for i, a in enumerate(args):
        out_args.append(encode_layer(rec, f"args[{i}]", a, out_kwargs) if isinstance(a, torch.nn.Module)
                        else rec.encode(ACTIVATIONS.get(a, a) if callable(a) else a))
    for k, v in kwargs.items():
        if isinstance(v, torch.nn.Module):
            out_kwargs[k] = encode_layer(rec, k, v, out_kwargs)
        elif callable(v) and not isinstance(v, torch.Tensor):
            if v not in ACTIVATIONS:
                raise Unsupported(f"constructor argument {k} = {getattr(v, '__name__', v)}")
            out_kwargs[k] = {"s": ACTIVATIONS[v]}
        else:
            out_kwargs[k] = rec.encode(v)
    return out_args, out_kwargs


def export_sample(info, dtype, mode, index, mi, gen):
    rec = Sample(f"{DTYPE_NAMES[dtype]}.{mode}.{index}")
    entry = {"dtype": DTYPE_NAMES[dtype], "mode": mode, "desc": mi.desc}
    entry["ctor_args"], entry["ctor_kwargs"] = encode_ctor(rec, mi.constructor_input.args,
                                                           mi.constructor_input.kwargs)
    if info.module_cls.__name__.startswith("FractionalMaxPool") and "_random_samples" not in mi.constructor_input.kwargs:
        raise Unsupported("random output (pooling regions drawn per call, no _random_samples)")
    torch.manual_seed(index)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = info.module_cls(*mi.constructor_input.args, **mi.constructor_input.kwargs).to(dtype)
    m.train(mode == "train")
    if mode == "train" and (why := random_in_training(m)):
        raise Unsupported(why)
    entry["state"] = {k: rec.encode(v)["t"] for k, v in m.state_dict().items()}
    fwd = mi.forward_input
    entry["args"] = [rec.encode(a) for a in fwd.args]
    entry["kwargs"] = {k: rec.encode(v) for k, v in fwd.kwargs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = m(*fwd.args, **fwd.kwargs)
    entry["out"] = rec.encode(out, "out")
    if mode == "train":
        entry["buffers_after"] = {k: rec.encode(b, "buf")["t"] for k, b in m.named_buffers()
                                  if b.is_floating_point()}
    if dtype == torch.float64:
        inputs = [t for t in flat_tensors([list(fwd.args), fwd.kwargs]) if t.requires_grad]
        params = list(m.named_parameters())
        outs = [t for t in flat_tensors(out) if t.requires_grad and t.is_floating_point()]
        if outs and (inputs or params):
            cots = [torch.randn(o.shape, dtype=o.dtype, generator=gen) for o in outs]
            grads = torch.autograd.grad(outs, inputs + [p for _, p in params], cots, allow_unused=True)
            entry["cot"] = [rec.encode(c, "cot") for c in cots]
            entry["grad"] = [[rec.by_id[id(i)], rec.encode(g, "grad") if g is not None else None]
                             for i, g in zip(inputs, grads)]
            entry["param_grad"] = [[k, rec.encode(g, "grad") if g is not None else None]
                                   for (k, _), g in zip(params, grads[len(inputs):])]
    return entry, rec.tensors


def spread(items, n):
    """n items evenly spread over the list (all of them when fewer)."""
    if len(items) <= n:
        return list(enumerate(items))
    return [(i * len(items) // n, items[i * len(items) // n]) for i in range(n)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
    ap.add_argument("--only", default="", help="comma-separated entry names")
    opts = ap.parse_args()
    os.makedirs(opts.out, exist_ok=True)
    only = set(filter(None, opts.only.split(",")))
    index = {"torch": torch.__version__, "entries": {}}
    index_path = os.path.join(opts.out, "index.json")
    if only and os.path.exists(index_path):  # a partial export updates the others' index
        with open(index_path) as f:
            index["entries"] = json.load(f)["entries"]
    for info in module_db:
        key = info.name
        if only and key not in only:
            continue
        if info.is_lazy:
            index["entries"][key] = {"status": "not applicable", "why": "Lazy module: LibTorch has none"}
            continue
        if key in NOT_APPLICABLE:
            index["entries"][key] = {"status": "not applicable", "why": NOT_APPLICABLE[key]}
            continue
        gen = torch.Generator().manual_seed(1)
        samples, tensors, skipped, capped, nbytes = [], {}, [], 0, 0
        modes = ("train", "eval") if info.train_and_eval_differ else ("eval",)
        for dtype in DTYPES:
            if dtype not in info.dtypes:
                continue
            for mode in modes:
                torch.manual_seed(0)
                try:
                    inputs = info.module_inputs_func(info, device="cpu", dtype=dtype,
                                                     requires_grad=dtype == torch.float64,
                                                     training=mode == "train")
                except Exception as e:  # a generator that needs CUDA
                    skipped.append({"dtype": DTYPE_NAMES[dtype], "mode": mode,
                                    "why": f"sample generator: {type(e).__name__}"})
                    continue
                picked = spread(inputs, MAX_SAMPLES)
                capped += len(inputs) - len(picked)
                for i, mi in picked:
                    if nbytes > MAX_ENTRY_BYTES:
                        capped += 1
                        continue
                    try:
                        entry, ts = export_sample(info, dtype, mode, i, mi, gen)
                    except TooLarge:
                        capped += 1
                        continue
                    except Unsupported as e:
                        skipped.append({"dtype": DTYPE_NAMES[dtype], "mode": mode, "sample": i, "why": str(e)})
                        continue
                    except Exception as e:  # PyTorch itself refuses the sample
                        skipped.append({"dtype": DTYPE_NAMES[dtype], "mode": mode, "sample": i,
                                        "why": f"torch: {type(e).__name__}"})
                        continue
                    rtol, atol = tolerances(info, dtype)
                    entry.update(index=i, rtol=rtol, atol=atol)
                    samples.append(entry)
                    tensors.update(ts)
                    nbytes += sum(t.numel() * t.element_size() for t in ts.values())
        meta = {"module": key, "samples": json.dumps(samples, separators=(",", ":")),
                "skipped": json.dumps(skipped, separators=(",", ":"))}
        fname = key.replace("/", "_") + ".safetensors"
        write_safetensors(os.path.join(opts.out, fname), tensors, meta)
        index["entries"][key] = {"status": "exported", "file": fname, "samples": len(samples),
                                "skipped": len(skipped), "capped": capped}
        print(f"{key}: {len(samples)} samples, {len(skipped)} skipped, {capped} capped", file=sys.stderr)
    with open(index_path, "w") as f:
        json.dump(index, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()

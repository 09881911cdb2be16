#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Exports PyTorch's OpInfo database (op_db) as references for vnn's op_db test.

For each op_db entry in scope (everything but linalg, fft, sparse, complex-only
and internal entries) and each dtype that both PyTorch's CPU and vnn's
safetensors support, it runs the entry's sample inputs through PyTorch and
writes one safetensors file per entry under tests/opdb/data/: the tensors of
every sample (inputs, outputs, the output cotangents and the input gradients,
the latter in float64), with the samples' arguments as JSON in the file's
metadata. The C++ runner (tests/opdb/runner.cpp) replays them on every device.

  python3 tests/opdb/export_opdb.py [--out DIR] [--only NAME,...]

Run it with the venv that bench/torch2_venv.sh makes. Samples are capped per
entry and dtype to keep the committed data small; the cap and the seed are
fixed (and the hash seed pinned), so a rerun with the same PyTorch writes
the same files byte for byte.
"""
import argparse
import json
import math
import os
import struct
import sys
import warnings

# Some sample generators iterate sets of strings (meshgrid's indexing modes),
# whose order follows the per-process hash seed: pinned, so that a rerun
# writes the same files byte for byte.
if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

import torch  # noqa: E402 (after the re-exec)
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_device_type import toleranceOverride

OUT_OF_SCOPE = ("linalg.", "fft.", "sparse.", "_", "torch.", "jiterator", "signal.", "masked.")
# op_db names whose entries are about complex numbers, sparse layouts,
# PyTorch-internal kernels or memory layout only: no vnn counterpart exists
# by design (docs/ops.md, "Checked against PyTorch's op_db").
NOT_APPLICABLE = {
    "conj", "conj_physical", "resolve_conj", "resolve_neg", "view_as_real", "view_as_complex", "complex",
    "imag", "real", "angle", "polar", "isreal", "cdouble", "cfloat", "chalf", "to_sparse", "stft", "istft",
    "geqrf", "ormqr", "lu", "lu_solve", "lu_unpack", "svd", "svd_lowrank", "pca_lowrank", "pinverse",
    "cholesky_inverse", "cholesky_solve", "triangular_solve", "matrix_exp", "logdet", "native_group_norm",
    "native_layer_norm", "native_batch_norm", "native_dropout_backward", "max_pool2d_with_indices_backward",
    "resize_", "resize_as_", "hash_tensor", "nonzero_static", "empty_permuted", "histogramdd",
    "new_empty_strided", "empty_strided", "as_strided_scatter", "unsafe_chunk", "unsafe_split", "alias_copy",
    "mH", "H", "item",
}
# Entries whose values are random or uninitialised: the runner checks the
# result's shape and dtype only.
SHAPE_ONLY = {
    "empty", "empty_like", "new_empty", "bernoulli", "normal", "uniform", "cauchy", "exponential", "geometric",
    "log_normal", "randn", "randn_like", "rand_like", "randint", "randint_like", "multinomial",
    "nn.functional.dropout", "nn.functional.dropout2d", "nn.functional.dropout3d", "nn.functional.alpha_dropout",
    "nn.functional.feature_alpha_dropout", "nn.functional.rrelu", "nn.functional.fractional_max_pool2d",
    "nn.functional.fractional_max_pool3d",
}
# SHAPE_ONLY entries whose result is uninitialised memory: written as zeros.
UNINITIALISED = {"empty", "empty_like", "new_empty"}
# The sample dtypes (both PyTorch's CPU and vnn have them), in export order:
# a dtype added at the end leaves the earlier dtypes' samples as they were
# (the seed is set per entry, and the byte cap is spent in this order) ...
DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64", torch.int32: "I32",
          torch.uint8: "U8", torch.bool: "BOOL", torch.int8: "I8", torch.int16: "I16"}
# ... and the further dtypes an output may have (half(), bfloat16()).
OUTPUT_DTYPES = {**DTYPES, torch.float16: "F16", torch.bfloat16: "BF16"}
DTYPE_NAMES = {torch.float32: "float32", torch.float64: "float64", torch.int64: "int64", torch.int32: "int32",
               torch.uint8: "uint8", torch.bool: "bool", torch.float16: "float16", torch.bfloat16: "bfloat16",
               torch.int8: "int8", torch.int16: "int16"}
# torch.testing.assert_close's defaults.
DEFAULT_TOL = {torch.float32: (1.3e-6, 1e-5), torch.float64: (1e-7, 1e-7)}
MAX_SAMPLES = 6             # per entry and dtype
MAX_ELEMENTS = 20000        # a sample with a larger tensor is left out (data size) ...
MAX_ENTRY_BYTES = 192 << 10  # ... as are an entry's samples past this many bytes


class Unsupported(Exception):
    """An argument the export format has no form for (the sample is listed as skipped)."""


class TooLarge(Exception):
    """A sample over the size caps: left out of the data, counted as capped."""


def entry_key(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def tolerances(op, dtype):
    """PyTorch's tolerance for the op and dtype: the default, widened by the
    op's own toleranceOverride decorators (the largest over its tests, except
    the Inductor and MPS ones, which concern other compilers)."""
    rtol, atol = DEFAULT_TOL.get(dtype, (0.0, 0.0))
    for info in getattr(op, "decorators", ()):
        cls = getattr(info, "cls_name", "") or ""
        if "Inductor" in cls or "MPS" in cls:
            continue
        for d in getattr(info, "decorators", ()):
            if isinstance(d, toleranceOverride) and dtype in d.d:
                t = d.d[dtype]
                rtol, atol = max(rtol, t.rtol), max(atol, t.atol)
    return rtol, atol


class Sample:
    def __init__(self, prefix):
        self.prefix = prefix
        self.tensors = {}   # name -> contiguous CPU tensor
        self.by_id = {}     # id(tensor) -> name, so an argument passed twice is one tensor

    def add(self, t, kind):
        if t.is_complex() or t.dtype not in (OUTPUT_DTYPES if kind != "in" else DTYPES):
            raise Unsupported(f"dtype {t.dtype}")
        if t.layout != torch.strided:
            raise Unsupported(f"layout {t.layout}")
        if t.numel() > MAX_ELEMENTS:
            raise TooLarge()
        name = f"{self.prefix}.{kind}{len(self.tensors)}"
        self.tensors[name] = t.detach().contiguous().clone()
        return name

    def encode(self, v, kind="in"):
        if isinstance(v, torch.Tensor):
            if kind == "in" and id(v) in self.by_id:
                return {"t": self.by_id[id(v)]}
            name = self.add(v, kind)
            if kind == "in":
                self.by_id[id(v)] = name
            return {"t": name}
        if isinstance(v, bool):
            return {"b": v}
        if isinstance(v, int):
            return {"i": v}
        if isinstance(v, float):
            return {"f": repr(v) if not math.isfinite(v) else v}
        if isinstance(v, complex):
            raise Unsupported("complex scalar")
        if v is None:
            return None
        if isinstance(v, str):
            return {"s": v}
        if isinstance(v, torch.dtype):
            if v not in DTYPE_NAMES:
                raise Unsupported(f"dtype argument {v}")
            return {"dtype": DTYPE_NAMES[v]}
        if isinstance(v, torch.Size):
            return [{"i": int(x)} for x in v]
        if isinstance(v, (list, tuple)):
            return [self.encode(x, kind) for x in v]
        if isinstance(v, torch.device):
            return {"device": str(v)}
        if isinstance(v, torch.memory_format):
            return {"memory_format": str(v).replace("torch.", "")}
        raise Unsupported(f"argument of type {type(v).__name__}")


def flat_tensors(v):
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (list, tuple)):
        return [t for x in v for t in flat_tensors(x)]
    if isinstance(v, dict):
        return [t for x in v.values() for t in flat_tensors(x)]
    return []


def export_sample(op, dtype, index, sample, gen):
    rec = Sample(f"{DTYPE_NAMES[dtype]}.{index}")
    entry = {"dtype": DTYPE_NAMES[dtype]}
    entry["input"] = rec.encode(sample.input)
    entry["args"] = [rec.encode(a) for a in sample.args]
    entry["kwargs"] = {k: rec.encode(v) for k, v in sample.kwargs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = op(sample.input, *sample.args, **sample.kwargs)
    if isinstance(out, tuple) and hasattr(out, "_fields"):
        out = tuple(out)
    if op.name in UNINITIALISED:  # shape and dtype are what counts; fixed bytes keep reruns identical
        out = torch.zeros_like(out)
    entry["out"] = rec.encode(out, "out")
    # Gradients (float64 only): d(sum(out * cot)) / d(inputs) for every
    # differentiable floating output.
    if dtype == torch.float64 and op.supports_autograd:
        inputs = [t for t in flat_tensors([sample.input, list(sample.args), sample.kwargs])
                  if t.requires_grad]
        outs = [t for t in flat_tensors(out) if t.requires_grad and t.is_floating_point()]
        if inputs and outs:
            cots = [torch.randn(o.shape, dtype=o.dtype, generator=gen) for o in outs]
            grads = torch.autograd.grad(outs, inputs, cots, allow_unused=True)
            entry["cot"] = [rec.encode(c, "cot") for c in cots]
            entry["grad"] = [[rec.by_id[id(i)], rec.encode(g, "grad") if g is not None else None]
                             for i, g in zip(inputs, grads)]
    return entry, rec.tensors


def write_safetensors(path, tensors, metadata):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        data = t.to(torch.uint8) if t.dtype == torch.bool else t.view(torch.int16) if t.dtype == torch.bfloat16 else t
        data = data.numpy().tobytes()  # C order, whatever the strides
        header[name] = {"dtype": OUTPUT_DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    text += b" " * (-len(text) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
    ap.add_argument("--only", default="", help="comma-separated entry keys")
    opts = ap.parse_args()
    os.makedirs(opts.out, exist_ok=True)
    only = set(filter(None, opts.only.split(",")))
    index = {"torch": torch.__version__, "entries": {}}
    for op in op_db:
        key = entry_key(op)
        if op.name.startswith(OUT_OF_SCOPE) or (only and key not in only):
            continue
        if op.name in NOT_APPLICABLE:
            index["entries"][key] = {"status": "not applicable"}
            continue
        torch.manual_seed(0)
        gen = torch.Generator().manual_seed(1)
        samples, tensors, skipped, capped, nbytes = [], {}, [], 0, 0
        supported = op.supported_dtypes("cpu")
        for dtype in DTYPES:
            if dtype not in supported:
                continue
            try:
                inputs = list(op.sample_inputs("cpu", dtype, requires_grad=dtype == torch.float64
                                               and op.supports_autograd))
            except Exception as e:  # an entry whose generator needs CUDA or SciPy
                skipped.append({"dtype": DTYPE_NAMES[dtype], "why": f"sample generator: {type(e).__name__}"})
                continue
            taken = 0
            for i, s in enumerate(inputs):
                if taken == MAX_SAMPLES or nbytes > MAX_ENTRY_BYTES:
                    capped += len(inputs) - i
                    break
                try:
                    entry, ts = export_sample(op, dtype, i, s, gen)
                except TooLarge:
                    capped += 1
                    continue
                except Unsupported as e:
                    skipped.append({"dtype": DTYPE_NAMES[dtype], "sample": i, "why": str(e)})
                    continue
                except Exception as e:  # PyTorch itself refuses the sample
                    skipped.append({"dtype": DTYPE_NAMES[dtype], "sample": i, "why": f"torch: {type(e).__name__}"})
                    continue
                rtol, atol = tolerances(op, dtype)
                entry.update(index=i, rtol=rtol, atol=atol)
                samples.append(entry)
                tensors.update(ts)
                nbytes += sum(t.numel() * t.element_size() for t in ts.values())
                taken += 1
        meta = {"op": op.name, "variant": op.variant_test_name, "shape_only": str(op.name in SHAPE_ONLY).lower(),
                "samples": json.dumps(samples, separators=(",", ":")),
                "skipped": json.dumps(skipped, separators=(",", ":"))}
        fname = key.replace("/", "_") + ".safetensors"
        write_safetensors(os.path.join(opts.out, fname), tensors, meta)
        index["entries"][key] = {"status": "exported", "file": fname, "samples": len(samples),
                                "skipped": len(skipped), "capped": capped}
        print(f"{key}: {len(samples)} samples, {len(skipped)} skipped", file=sys.stderr)
    with open(os.path.join(opts.out, "index.json"), "w") as f:
        json.dump(index, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()

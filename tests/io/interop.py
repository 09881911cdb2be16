# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Cross-checks vnn's safetensors files with PyTorch (or Python's safetensors).
# usage: interop.py probe | check <vnn file> | write <file> | module <file>
# With torch the format is read and written here directly (it is a JSON
# header and raw little-endian data), so python3-torch alone is enough.
import json
import struct
import sys

try:
    import torch
except ImportError:
    torch = None
try:
    from safetensors.numpy import load_file as np_load, save_file as np_save
    import numpy as np
except ImportError:
    np_load = None

if torch is None and np_load is None:
    print("skip: neither torch nor safetensors is importable by", sys.executable)
    sys.exit(77)

DTYPES = {} if torch is None else {
    "F32": torch.float32, "F64": torch.float64, "I32": torch.int32, "I64": torch.int64,
    "U8": torch.uint8, "BOOL": torch.bool, "F16": torch.float16, "BF16": torch.bfloat16}


def torch_load(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        t = torch.frombuffer(bytearray(data[b:e]), dtype=DTYPES[info["dtype"]]) if e > b else \
            torch.empty(0, dtype=DTYPES[info["dtype"]])
        out[name] = t.reshape(info["shape"])
    return out


def torch_save(tensors, path, metadata):
    names = {v: k for k, v in DTYPES.items()}
    header, blobs, at = {"__metadata__": metadata}, [], 0
    for name, t in tensors.items():
        b = t.contiguous().numpy().tobytes() if t.dtype != torch.bfloat16 else t.view(torch.int16).numpy().tobytes()
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


what = sys.argv[1]
if what == "probe":
    print("python", sys.executable, "with", "torch " + torch.__version__ if torch else "safetensors.numpy")
    sys.exit(0)
path = sys.argv[2]
if what == "check":
    t = torch_load(path) if torch else np_load(path)
    assert list(t["a"].shape) == [2, 3], t["a"].shape
    assert [float(x) for x in t["a"].reshape(-1).tolist()] == [0, 1, 2, 3, 4, 5]
    assert [int(x) for x in t["i"].reshape(-1).tolist()] == [-1, 1 << 40]
    print("python read the vnn file")
elif what == "write":
    if torch:
        torch_save({"x": torch.arange(6, dtype=torch.float64).reshape(3, 2),
                    "y": torch.tensor([7, -8], dtype=torch.int32)}, path, {"from": "python"})
    else:
        np_save({"x": np.arange(6, dtype=np.float64).reshape(3, 2), "y": np.array([7, -8], dtype=np.int32)},
                path, metadata={"from": "python"})
    print("python wrote", path)
elif what == "module":
    if torch is None:
        print("skip: training a model needs torch")
        sys.exit(77)
    # A model trained in PyTorch, its weights and its output on a fixed input.
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    x, y = torch.randn(32, 4), torch.randint(0, 3, (32,))
    for _ in range(20):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    probe = torch.randn(5, 4)
    with torch.no_grad():
        state = {k: v.detach() for k, v in model.state_dict().items()}
        state["probe_input"], state["probe_output"] = probe, model(probe)
    torch_save(state, path, {"from": "pytorch"})
    print("pytorch trained and saved", path)

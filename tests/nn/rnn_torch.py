# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Fixtures for vnn's recurrent modules against torch.nn (test_nn_rnn_parity).
# usage: rnn_torch.py write <dir>
# For each case <dir>/<case>.safetensors holds the module's state_dict
# ("param.<key>"), its inputs ("input.<name>"), its outputs ("output.<name>"),
# a weighting of each output ("weight.<name>"; the loss is the sum over the
# outputs of sum(output * weight)) and the gradients of that loss with
# respect to the inputs ("grad.input.<name>") and every parameter
# ("grad.param.<key>"). float32, seed 0, dropout 0. Written directly (a JSON
# header and raw little-endian data), so torch alone is enough. Exits 77
# without torch.
import json
import struct
import sys

try:
    import torch
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
except ImportError:
    print("skip: torch is not importable by", sys.executable)
    sys.exit(77)

DTYPES = {torch.float32: "F32", torch.int64: "I64"}


def write_safetensors(tensors, path):
    header, blobs, at = {}, [], 0
    for name, t in tensors.items():
        b = t.detach().contiguous().numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def case(path, module, inputs, grad_inputs, call):
    """call(module, inputs) -> dict of outputs."""
    for n in grad_inputs:
        inputs[n].requires_grad_(True)
    outs = call(module, inputs)
    weights = {k: torch.randn(v.shape) for k, v in outs.items()}
    sum((outs[k] * weights[k]).sum() for k in outs).backward()
    data = {"param." + k: v for k, v in module.state_dict().items()}
    data.update({"input." + k: v for k, v in inputs.items()})
    data.update({"output." + k: v for k, v in outs.items()})
    data.update({"weight." + k: v for k, v in weights.items()})
    data.update({"grad.input." + n: inputs[n].grad for n in grad_inputs})
    data.update({"grad.param." + k: p.grad for k, p in module.named_parameters()})
    write_safetensors(data, path)


def write(d):
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(5, 8, num_layers=2, bidirectional=True, proj_size=3, batch_first=True)
    case(f"{d}/lstm_proj_bi.safetensors", lstm,
         {"x": torch.randn(3, 6, 5), "h0": torch.randn(4, 3, 3), "c0": torch.randn(4, 3, 8)}, ["x", "h0", "c0"],
         lambda m, i: dict(zip(["out", "hn", "cn"], [m(i["x"], (i["h0"], i["c0"]))[0], *m(i["x"], (i["h0"], i["c0"]))[1]])))
    gru = torch.nn.GRU(5, 8, num_layers=2, bidirectional=True)
    case(f"{d}/gru_bi.safetensors", gru, {"x": torch.randn(6, 3, 5), "h0": torch.randn(4, 3, 8)}, ["x", "h0"],
         lambda m, i: dict(zip(["out", "hn"], m(i["x"], i["h0"]))))
    rnn = torch.nn.RNN(5, 8, num_layers=2, nonlinearity="relu")
    case(f"{d}/rnn_relu.safetensors", rnn, {"x": torch.randn(6, 3, 5)}, ["x"],
         lambda m, i: dict(zip(["out", "hn"], m(i["x"]))))
    packed = torch.nn.LSTM(5, 8, bidirectional=True)

    def run_packed(m, i):
        p = pack_padded_sequence(i["x"], i["lengths"], enforce_sorted=False)
        out, (hn, cn) = m(p)
        return {"out": pad_packed_sequence(out)[0], "hn": hn, "cn": cn}

    case(f"{d}/lstm_packed.safetensors", packed, {"x": torch.randn(6, 3, 5), "lengths": torch.tensor([2, 6, 4])},
         ["x"], run_packed)
    cell = torch.nn.LSTMCell(5, 8)
    case(f"{d}/lstm_cell.safetensors", cell,
         {"x": torch.randn(3, 5), "h": torch.randn(3, 8), "c": torch.randn(3, 8)}, ["x", "h", "c"],
         lambda m, i: dict(zip(["h1", "c1"], m(i["x"], (i["h"], i["c"])))))
    gcell = torch.nn.GRUCell(5, 8)
    case(f"{d}/gru_cell.safetensors", gcell, {"x": torch.randn(3, 5), "h": torch.randn(3, 8)}, ["x", "h"],
         lambda m, i: {"h1": m(i["x"], i["h"])})


if len(sys.argv) == 3 and sys.argv[1] == "write":
    write(sys.argv[2])
    sys.exit(0)
print("usage: rnn_torch.py write <dir>")
sys.exit(2)

# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Fixtures for vnn's Transformer modules against torch.nn (test_nn_transformer_parity).
# usage: transformer_torch.py probe | write <dir>
# For each case a safetensors file <dir>/<case>.safetensors holding the
# module's state_dict ("param.<key>"), its inputs ("input.<name>", masks
# included, and "input.grad_output", the weighting of the output in the
# loss), its outputs ("output.<name>") and the gradients of the loss
# sum(output * grad_output) with respect to the inputs ("grad.input.<name>")
# and to every parameter ("grad.param.<key>"). float32, seed 0, dropout 0.
# The file is written here directly (a JSON header and raw little-endian
# data), so python3-torch alone is enough. Exits 77 without torch.
import json
import struct
import sys

try:
    import torch
except ImportError:
    print("skip: torch is not importable by", sys.executable)
    sys.exit(77)

NAMES = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64", torch.bool: "BOOL"}


def save(tensors, path):
    header, blobs, at = {"__metadata__": {"torch": torch.__version__}}, [], 0
    for name, t in tensors.items():
        b = t.detach().contiguous().numpy().tobytes()
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def causal(n):
    return torch.triu(torch.full((n, n), float("-inf")), diagonal=1)


def run_case(path, module, inputs, call, grad_inputs):
    """call(module, inputs) -> dict of outputs; the first is the loss's."""
    for name in grad_inputs:
        inputs[name].requires_grad_(True)
    outs = call(module, inputs)
    first = next(iter(outs.values()))
    grad_output = torch.randn(first.shape)
    (first * grad_output).sum().backward()
    data = {}
    for k, v in module.state_dict().items():
        data["param." + k] = v
    for k, v in inputs.items():
        data["input." + k] = v
    data["input.grad_output"] = grad_output
    for k, v in outs.items():
        data["output." + k] = v
    for name in grad_inputs:
        data["grad.input." + name] = inputs[name].grad
    for k, p in module.named_parameters():
        data["grad.param." + k] = p.grad
    save(data, path)


def mha_call(kpm=None, need_weights=False, average=True, attn_mask=None, self_attn=False):
    def call(m, x):
        q = x["x"] if self_attn else x["query"]
        k = x["x"] if self_attn else x["key"]
        v = x["x"] if self_attn else x["value"]
        out, w = m(q, k, v, key_padding_mask=x.get(kpm) if kpm else None, need_weights=need_weights,
                   attn_mask=x.get(attn_mask) if attn_mask else None, average_attn_weights=average)
        outs = {"out": out}
        if need_weights:
            outs["weights"] = w
        return outs
    return call


def write(d):
    torch.manual_seed(0)
    # Self-attention, [L, N, E], float causal attn_mask and a bool key_padding_mask, the SDPA path.
    m = torch.nn.MultiheadAttention(16, 4)
    kpm = torch.zeros(3, 5, dtype=torch.bool)
    kpm[1, 4] = True
    kpm[2, 3:] = True
    with torch.no_grad():
        m.in_proj_bias.normal_(0, 0.1)
        m.out_proj.bias.normal_(0, 0.1)
    run_case(d + "/mha_self.safetensors", m, {"x": torch.randn(5, 3, 16), "attn_mask": causal(5), "kpm": kpm},
             mha_call(kpm="kpm", attn_mask="attn_mask", self_attn=True), ["x"])

    # Cross-attention with kdim / vdim, batch_first, a bool [N * H, L, S] mask, per-head weights.
    m = torch.nn.MultiheadAttention(16, 2, kdim=12, vdim=8, batch_first=True)
    with torch.no_grad():
        m.in_proj_bias.normal_(0, 0.1)
    mask = torch.rand(2 * 2, 4, 6) < 0.3
    mask[:, :, 0] = False  # every query keeps a key
    run_case(d + "/mha_kv_weights.safetensors", m,
             {"query": torch.randn(2, 4, 16), "key": torch.randn(2, 6, 12), "value": torch.randn(2, 6, 8),
              "attn_mask": mask},
             mha_call(need_weights=True, average=False, attn_mask="attn_mask"), ["query", "key", "value"])

    # Packed weights, different key and value tensors, averaged weights, no bias.
    m = torch.nn.MultiheadAttention(8, 2, bias=False)
    kpm = torch.zeros(2, 3, dtype=torch.bool)
    kpm[0, 2] = True
    run_case(d + "/mha_avg_weights.safetensors", m,
             {"query": torch.randn(4, 2, 8), "key": torch.randn(3, 2, 8), "value": torch.randn(3, 2, 8), "kpm": kpm},
             mha_call(kpm="kpm", need_weights=True, average=True), ["query", "key", "value"])

    # Encoder layers: norm_first both ways, relu and gelu, batch_first both ways.
    for name, norm_first, act, batch_first in [("enc_post_relu", False, "relu", False),
                                               ("enc_pre_gelu", True, "gelu", True),
                                               ("enc_post_gelu", False, "gelu", True),
                                               ("enc_pre_relu", True, "relu", False)]:
        layer = torch.nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0, activation=act,
                                                 layer_norm_eps=1e-6 if norm_first else 1e-5,
                                                 batch_first=batch_first, norm_first=norm_first)
        with torch.no_grad():
            for k, p in layer.named_parameters():
                if k.startswith("norm"):
                    p.add_(torch.randn(p.shape) * 0.1)
                if k.endswith("in_proj_bias") or k.endswith("out_proj.bias"):
                    p.normal_(0, 0.1)
        src = torch.randn(2, 6, 16) if batch_first else torch.randn(6, 2, 16)
        kpm = torch.zeros(2, 6, dtype=torch.bool)
        kpm[1, 5] = True

        def call(mod, x):
            return {"out": mod(x["src"], src_mask=x["src_mask"], src_key_padding_mask=x["kpm"])}
        run_case(d + "/" + name + ".safetensors", layer, {"src": src, "src_mask": causal(6), "kpm": kpm}, call,
                 ["src"])

    # Decoder layers, post-norm [T, N, E] relu and pre-norm batch_first gelu.
    for name, norm_first, act, batch_first in [("dec_post_relu", False, "relu", False),
                                               ("dec_pre_gelu", True, "gelu", True)]:
        layer = torch.nn.TransformerDecoderLayer(16, 2, dim_feedforward=24, dropout=0.0, activation=act,
                                                 batch_first=batch_first, norm_first=norm_first)
        with torch.no_grad():
            for k, p in layer.named_parameters():
                if k.startswith("norm") or k.endswith("in_proj_bias"):
                    p.add_(torch.randn(p.shape) * 0.1)
        tgt = torch.randn(2, 5, 16) if batch_first else torch.randn(5, 2, 16)
        memory = torch.randn(2, 7, 16) if batch_first else torch.randn(7, 2, 16)
        mkpm = torch.zeros(2, 7, dtype=torch.bool)
        mkpm[0, 6] = True
        mkpm[1, 4:] = True

        def call(mod, x):
            return {"out": mod(x["tgt"], x["memory"], tgt_mask=x["tgt_mask"], memory_key_padding_mask=x["mkpm"])}
        run_case(d + "/" + name + ".safetensors", layer,
                 {"tgt": tgt, "memory": memory, "tgt_mask": causal(5), "mkpm": mkpm}, call, ["tgt", "memory"])

    # The whole model: 2 + 2 layers, final norms, xavier init.
    model = torch.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16,
                                 dropout=0.0)

    def call(mod, x):
        return {"out": mod(x["src"], x["tgt"], tgt_mask=x["tgt_mask"])}
    run_case(d + "/transformer.safetensors", model,
             {"src": torch.randn(6, 2, 8), "tgt": torch.randn(4, 2, 8), "tgt_mask": causal(4)}, call, ["src", "tgt"])


what = sys.argv[1]
if what == "probe":
    print("python", sys.executable, "with torch", torch.__version__)
    sys.exit(0)
if what == "write":
    write(sys.argv[2])
    sys.exit(0)
print("usage: transformer_torch.py probe | write <dir>")
sys.exit(2)

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes the issue-21 reproducers into tests/fuzz/regressions/<target>/, so
the normal suite (corpus_<target>) replays them. Checkpoint reproducers are
edits of a valid checkpoint seed (from `corpus_checkpoint --write-seeds DIR`).
usage: make_regressions.py <regressions dir> <checkpoint seed file>"""
import json
import struct
import sys


def pack(header, data=b""):
    h = json.dumps(header, separators=(",", ":")).encode() if not isinstance(header, bytes) else header
    return struct.pack("<Q", len(h)) + h + data


def unpack(blob):
    (n,) = struct.unpack("<Q", blob[:8])
    return json.loads(blob[8:8 + n]), blob[8 + n:]


def main():
    out, ckpt_seed = sys.argv[1], sys.argv[2]
    u8 = {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}
    st = {
        # the old run_libfuzzer.sh seed: 16-byte length for 55 bytes of JSON
        "issue21-old-seed": struct.pack("<Q", 16) + b'{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}x',
        "issue21-bool-byte-2": pack({"b": {"dtype": "BOOL", "shape": [2], "data_offsets": [0, 2]}}, b"\x01\x02"),
        "issue21-bool-byte-255": pack({"b": {"dtype": "BOOL", "shape": [1], "data_offsets": [0, 1]}}, b"\xff"),
        "issue21-shape-overflow": pack({"a": {"dtype": "F32", "shape": [2**63 - 1, 2**63 - 1, 0], "data_offsets": [0, 0]}}),
        "issue21-name-nul": pack(b'{"a\\u0000b":' + json.dumps(u8).encode() + b"}", b"x"),
        "issue21-name-bad-utf8": pack(b'{"a\xff":' + json.dumps(u8).encode() + b"}", b"x"),
        "issue21-nine-dims": pack({"a": {"dtype": "U8", "shape": [1] * 9, "data_offsets": [0, 1]}}, b"x"),
        "issue21-duplicate-keys": pack(b'{"a":' + json.dumps(u8).encode() + b',"a":' + json.dumps(u8).encode() + b"}", b"x"),
    }
    for name, blob in st.items():
        open(f"{out}/safetensors/{name}", "wb").write(blob)

    header, data = unpack(open(ckpt_seed, "rb").read())
    meta = header["__metadata__"]
    edits = {
        "issue21-rng-seed-negative": ("rng.seed", "-5"),
        "issue21-rng-seed-text": ("rng.seed", "seed"),
        "issue21-rng-offset-missing": ("rng.offset", None),
        "issue21-epoch-garbage": ("epoch", "3x"),
        "issue21-step-overflow": ("step", "99999999999999999999"),
    }
    for name, (key, value) in edits.items():
        m = dict(meta)
        if value is None:
            m.pop(key)
        else:
            m[key] = value
        h = dict(header)
        h["__metadata__"] = m
        open(f"{out}/checkpoint/{name}", "wb").write(pack(h, data))
    # A model tensor of the wrong shape after valid metadata: applied first
    # by the old loader, before it failed.
    h = json.loads(json.dumps(header))
    key = next(k for k in h if k.startswith("model.") and k.endswith("weight"))
    h[key]["shape"] = [h[key]["shape"][0] * h[key]["shape"][1]]
    open(f"{out}/checkpoint/issue21-model-shape", "wb").write(pack(h, data))

    idx = {
        "issue21-idx-truncated": b"\x00\x00\x08\x02\x00\x00\x00\x03\x00\x00\x00\x03abc",
        "issue21-idx-huge-dims": b"\x00\x00\x08\x03\xff\xff\xff\xff\xff\xff\xff\xff\x00\x00\x00\x10",
        "issue21-idx-bad-type": b"\x00\x00\x0b\x01\x00\x00\x00\x01\x00\x00",
    }
    for name, blob in idx.items():
        open(f"{out}/idx/{name}", "wb").write(blob)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Lists the AMD GPU code objects a HIP binary carries, per target ID, by
reading its clang offload bundles (one per translation unit, in
.hip_fatbin), for machines without roc-obj-ls / clang-offload-bundler.

  ci/hip-code-objects.py build/lib/vnn/libvnn-backend-hip.so [--require gfx908,gfx90a]

Prints e.g. "16 bundles: gfx908 x16, gfx90a x16". With --require, exits 1
unless every bundle has a non-empty code object for each listed target: the
HIP runtime runs a translation unit's kernels only from a code object of the
device's processor, and Kokkos aborts at its first launch otherwise (see
backends/hip/hip_arch.hpp).
"""
import struct
import sys

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
DEVICE_PREFIX = "hipv4-amdgcn-amd-amdhsa--"


def bundles(data):
    """[{target_id: code object size}] for each bundle found in data."""
    found = []
    i = 0
    while True:
        i = data.find(MAGIC, i)
        if i < 0:
            return found
        (count,) = struct.unpack_from("<Q", data, i + len(MAGIC))
        p = i + len(MAGIC) + 8
        entries = {}
        for _ in range(count):
            if p + 24 > len(data):
                break
            offset, size, id_len = struct.unpack_from("<QQQ", data, p)
            name = data[p + 24 : p + 24 + id_len].decode("ascii", "replace")
            p += 24 + id_len
            if name.startswith(DEVICE_PREFIX):
                entries[name[len(DEVICE_PREFIX) :]] = size
        found.append(entries)
        i = p


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    found = bundles(open(sys.argv[1], "rb").read())
    counts = {}
    for b in found:
        for target, size in b.items():
            if size > 0:
                counts[target] = counts.get(target, 0) + 1
    listed = ", ".join(f"{t} x{n}" for t, n in sorted(counts.items()))
    print(f"{len(found)} bundles: {listed}" if found else "no HIP offload bundle found")
    if "--require" in sys.argv:
        want = sys.argv[sys.argv.index("--require") + 1].split(",")
        missing = [w for w in want if counts.get(w, 0) != len(found) or not found]
        if missing:
            print("missing in some bundle: " + ", ".join(missing))
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

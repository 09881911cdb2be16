#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Lists the GPU code a CUDA binary carries (SASS per sm_XY, PTX per
compute_XY) by reading its fat binaries, for machines without cuobjdump.

  ci/fatbin-archs.py build/lib/vnn/libvnn-backend-cuda.so [--require 80,90]

Prints e.g. "sass sm_80 x16, sass sm_90 x16, ptx compute_80 x15". With
--require, exits 1 unless SASS for every listed sm_XY is there (Kokkos 3.4
aborts on a device whose major version has no SASS; see
backends/cuda/cuda_arch.hpp).
"""
import struct
import sys

FATBIN_MAGIC = struct.pack("<I", 0xBA55ED50)


def archs(data):
    found = {}
    i = 0
    while True:
        i = data.find(FATBIN_MAGIC, i)
        if i < 0:
            return found
        _version, header_size, body_size = struct.unpack_from("<HHQ", data, i + 4)
        p, end = i + header_size, i + header_size + body_size
        while p + 32 <= end <= len(data):
            kind, _ver, entry_header, entry_size = struct.unpack_from("<HHIQ", data, p)
            arch = struct.unpack_from("<I", data, p + 28)[0]
            key = ("ptx" if kind == 1 else "sass", arch)
            found[key] = found.get(key, 0) + 1
            if entry_header == 0:
                break
            p += entry_header + entry_size
        i += 4


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    found = archs(open(sys.argv[1], "rb").read())
    names = [f"{k} {'compute' if k == 'ptx' else 'sm'}_{a} x{n}" for (k, a), n in sorted(found.items())]
    print(", ".join(names) if names else "no CUDA fat binary found")
    if "--require" in sys.argv:
        want = [int(s) for s in sys.argv[sys.argv.index("--require") + 1].split(",")]
        missing = [w for w in want if ("sass", w) not in found]
        if missing:
            print("missing SASS: " + ", ".join(f"sm_{m}" for m in missing))
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

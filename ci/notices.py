#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""THIRD-PARTY-NOTICES against what a build links.

    python3 ci/notices.py BUILD_DIR

Reads, in BUILD_DIR, the NEEDED entries (readelf -d) of libvnn.so,
vnn-devices, vnn-run and every plugin in lib/vnn, and the link lists CMake
wrote into the build.ninja files for those targets (static archives such as
Kokkos's show only there). Fails when
  - a library there has no entry ("Libraries:" line) in THIRD-PARTY-NOTICES;
  - a library there is GPL-only: its entry's License names a GPL without an
    exception or an alternative, or it is a known GPL-only library (FFTW,
    GSL, readline, ...): vnn's default build must not link one.
Prints each binary with what it links and the entry that covers it.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTICES = os.environ.get("VNN_NOTICES_FILE") or os.path.join(ROOT, "THIRD-PARTY-NOTICES")

# Libraries under the GPL alone (no linking exception, no permissive
# alternative): none may enter a default build.
GPL_ONLY = {
    "libfftw3", "libfftw3f", "libfftw3l", "libfftw3q", "libfftw3_omp", "libfftw3f_omp", "libfftw3_threads",
    "libfftw3f_threads", "libfftw3_mpi", "libfftw3f_mpi", "libgsl", "libgslcblas", "libreadline", "libumfpack",
    "libspqr", "libcholmod_gpl", "libqd", "libmpfi", "libarpack_gpl", "libgmp_gpl", "libpari", "libflint",
}

# The binaries a build makes that vnn's packages carry.
TARGET_RE = re.compile(r"(^|/)(lib/libvnn\.so[.0-9]*|lib/vnn/libvnn-backend-[^ /:]+\.so|bin/vnn-devices|bin/vnn-run)$")


def base_name(lib):
    """libopenblas.so.0 -> libopenblas, /x/libkokkoscore.a -> libkokkoscore, -lz -> libz."""
    lib = os.path.basename(lib)
    if lib.startswith("-l"):
        return "lib" + lib[2:]
    lib = re.sub(r"\.so(\.[0-9.]+)?$", "", lib)
    lib = re.sub(r"\.a$", "", lib)
    return lib


def read_notices():
    entries = []  # (title, set of libraries, license text)
    title, libs, lic, field = None, set(), "", None
    with open(NOTICES, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^([0-9]+)\. (.+)$", line)
        if m and i + 1 < len(lines) and re.match(r"^-+$", lines[i + 1]):
            if title:
                entries.append((title, libs, lic))
            title, libs, lic, field = m.group(2), set(), "", None
            continue
        if title is None:
            continue
        fm = re.match(r"^([A-Z][A-Za-z ]*):\s+(.*)$", line)
        if fm:
            field = fm.group(1)
            if field == "Libraries":
                libs |= set(fm.group(2).split())
            elif field == "License":
                lic = fm.group(2)
            continue
        if field == "License" and line.startswith(" ") and line.strip():
            lic += " " + line.strip()
        else:
            field = None if not line.startswith(" ") else field
    if title:
        entries.append((title, libs, lic))
    return entries


def gpl_only(lic):
    if not re.search(r"\bA?GPL-?[0-9]", lic):
        return False
    if re.search(r"\bLGPL|\bWITH [A-Za-z0-9.-]*exception", lic, re.I):
        return False
    return not re.search(r" OR ", lic)  # an SPDX alternative, "GPL-2.0-only OR BSD-2-Clause"


def needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def ninja_link_lists(build):
    """{output: [libraries]} for vnn's binaries in every build.ninja under build."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(build):
        dirnames[:] = [d for d in dirnames if d not in ("CMakeFiles", "Testing", "_deps") and not d.startswith(".")]
        if dirpath.count(os.sep) - build.count(os.sep) > 4:
            dirnames[:] = []
        if "build.ninja" not in filenames:
            continue
        current = None
        with open(os.path.join(dirpath, "build.ninja"), encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("build "):
                    outs = line[6:].split(":", 1)[0].split()
                    current = next((o for o in outs if TARGET_RE.search(o)), None)
                    if current:
                        current = re.sub(r"libvnn\.so[.0-9]+$", "libvnn.so", current)
                elif current and line.startswith("  LINK_LIBRARIES = "):
                    toks = line.split("=", 1)[1].split()
                    libs = [t for t in toks if re.search(r"\.(a|so)(\.[0-9.]+)?$", t) or
                            (t.startswith("-l") and not t.startswith("-l:"))]
                    found.setdefault(os.path.relpath(os.path.join(dirpath, current), build), []).extend(libs)
                elif not line.startswith(" "):
                    current = None
    return found


def main():
    if len(sys.argv) != 2:
        print("usage: ci/notices.py BUILD_DIR", file=sys.stderr)
        return 2
    build = os.path.abspath(sys.argv[1])
    lib = os.path.join(build, "lib", "libvnn.so")
    if not os.path.exists(lib):
        print(f"notices: no {lib}: build vnn there first (cmake --build {build} --target vnn vnn-devices ...)",
              file=sys.stderr)
        return 2
    entries = read_notices()
    by_lib = {}
    for title, libs, lic in entries:
        for l in libs:
            by_lib[l] = (title, lic)

    binaries = [lib]
    plugdir = os.path.join(build, "lib", "vnn")
    if os.path.isdir(plugdir):
        binaries += sorted(os.path.join(plugdir, p) for p in os.listdir(plugdir)
                           if p.startswith("libvnn-backend-") and p.endswith(".so"))
    binaries += [p for p in (os.path.join(build, "bin", "vnn-devices"), os.path.join(build, "bin", "vnn-run"))
                 if os.path.exists(p)]

    uses = {}  # binary -> set of library names as seen
    for b in binaries:
        uses.setdefault(os.path.relpath(b, build), set()).update(needed(b))
    for out, libs in ninja_link_lists(build).items():
        uses.setdefault(out, set()).update(os.path.basename(l) for l in libs)

    failures = []
    for b in sorted(uses):
        parts = []
        for l in sorted(uses[b]):
            n = base_name(l)
            if n == "libvnn":
                continue  # vnn itself
            if n in GPL_ONLY:
                failures.append(f"{b} links {l}, a GPL-only library: vnn's default build must not link it")
            entry = by_lib.get(n)
            if not entry:
                failures.append(f"{b} links {l} ({n}), which has no entry in THIRD-PARTY-NOTICES "
                                "(add one: Libraries, Used by, License, From)")
                parts.append(f"{l} -> ?")
                continue
            if gpl_only(entry[1]):
                failures.append(f"{b} links {l}, whose entry '{entry[0]}' is GPL-only ({entry[1]})")
            parts.append(f"{l} -> {entry[0]}")
        print(f"notices: {b}: " + ("; ".join(parts) if parts else "nothing but vnn"))
    if failures:
        for f in failures:
            print("notices: FAIL: " + f, file=sys.stderr)
        return 1
    print(f"notices: every library {len(uses)} binaries link has its entry; none is GPL-only")
    return 0


if __name__ == "__main__":
    sys.exit(main())

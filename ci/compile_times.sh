#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Prints the slowest compiles of the last build from its .ninja_log (wall
# seconds per output, the latest build of each) and, with a limit, fails when
# one took longer: a guard against a kernel piece growing back into the
# quick start's critical path (issue 34).
#   ci/compile_times.sh [BUILD_DIR] [COUNT] [LIMIT_SECONDS]
# e.g. after ci/quickstart.sh:  ci/compile_times.sh build 15 120
set -euo pipefail
build="${1:-build}"
count="${2:-15}"
limit="${3:-0}"
log="$build/.ninja_log"
[ -f "$log" ] || { echo "compile_times: no $log (build first)" >&2; exit 2; }
# .ninja_log v5: start_ms end_ms mtime output hash; a rebuilt output appears
# again later: keep its last line.
awk -v n="$count" -v limit="$limit" '
  /^#/ { next }
  { t[$4] = ($2 - $1) / 1000.0 }
  END {
    for (o in t) if (o ~ /\.o$/) { total += t[o]; objs++ }
    cmd = "sort -rn | head -n " n
    for (o in t) if (o ~ /\.o$/) printf "%8.1f s  %s\n", t[o], o | cmd
    close(cmd)
    printf "%8.1f s  in %d objects (sum of wall times; the build ran them in parallel)\n", total, objs
    bad = 0
    if (limit > 0) for (o in t) if (o ~ /\.o$/ && t[o] > limit) { printf "compile_times: %s took %.1f s, over %s s\n", o, t[o], limit > "/dev/stderr"; bad = 1 }
    exit bad
  }' "$log"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# OpenCL's first run (issue 34): each workload from empty caches (vnn's
# program/tuning cache and PoCL's kernel cache, both in a temporary
# directory), then again warm. Prints per run the wall seconds to the first
# training batch's progress line and to the end, the CPU seconds, the
# plugin's counters (VNN_OPENCL_STATS=1) and how many stderr lines are not
# vnn's own (a compiler's chatter would be counted there).
#   bench/opencl_cold_start.sh [BUILD_DIR] [DEVICE]     (default build, opencl:0)
# Run it on an idle machine; `uptime` is printed first.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="${1:-$here/../build}"
device="${2:-opencl:0}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "opencl_cold_start: $(nproc) cores, device $device, commit $(git -C "$here" rev-parse --short HEAD);$(uptime | sed 's/.*load/ load/')"

# run NAME FIRST_LINE_REGEX COMMAND...: one cold and one warm run.
run() {
  local name="$1" first="$2"
  shift 2
  rm -rf "$tmp/vnn" "$tmp/pocl"
  mkdir -p "$tmp/vnn" "$tmp/pocl"
  for state in cold warm; do
    VNN_OPENCL_CACHE_DIR="$tmp/vnn" POCL_CACHE_DIR="$tmp/pocl" VNN_OPENCL_STATS=1 FIRST="$first" \
      /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$@" 2> "$tmp/err" | FIRST="$first" perl -e '
        use Time::HiRes qw(time);
        my $t0 = time; my $first = -1; my $buf = "";
        while (sysread(STDIN, my $chunk, 4096)) {
          $buf .= $chunk; $buf = substr($buf, -512) if length($buf) > 512;
          if ($first < 0 && $buf =~ /$ENV{FIRST}/) { $first = time - $t0; }
        }
        printf "%.1f\n", $first;' > "$tmp/first"
    read -r wall user sys < "$tmp/time"
    local stats others
    stats=$(grep -h "^vnn-opencl:" "$tmp/err" | tail -1 || true)
    others=$(grep -c -v -E "^(vnn|\[vnn)" "$tmp/err" || true)
    # PoCL compiles a kernel once per work-group size (and grid class) it
    # runs with: its cache holds one .so per compile, counted in first
    # launches only once per kernel.
    local compiled
    compiled=$(find "$tmp/pocl" -name '*.so' 2> /dev/null | wc -l)
    printf '%-28s %-5s first batch %6s s, end %6.1f s, CPU %6.1f s, stderr lines not vnn%s: %s\n    %s, PoCL kernel binaries %s\n' \
      "$name" "$state" "$(cat "$tmp/first")" "$wall" "$(echo "$user + $sys" | bc)" "'s" "$others" "$stats" "$compiled"
    if [ "$others" != 0 ]; then grep -v -E "^(vnn|\[vnn)" "$tmp/err" | head -3 | sed 's/^/    stderr: /'; fi
    # The kernels PoCL compiled most often, with the group shapes (and grid
    # classes) it compiled them for: <cache>/<program>/<kernel>/<shape>/*.so.
    if [ "$state" = cold ]; then
      find "$tmp/pocl" -name '*.so' 2> /dev/null | awk -F/ '{print $(NF-2), $(NF-1)}' | sort |
        awk '{n[$1]++; s[$1] = s[$1] " " $2} END {for (k in n) print n[k], k ":" s[k]}' | sort -rn | head -3 |
        sed 's/^/    most compiled: /' | cut -c1-160
    fi
  done
}

run "main example, 1280 images" '\] *[1-9][0-9]*/1280' \
  "$build/bin/train_fashion_mnist" --device "$device" --epochs 1 --limit 1280 --out "$tmp/fm"
run "nanoGPT 2 layers, T = 64" 'iter 1/1 ' \
  "$build/bin/train_gpt" --device "$device" --max-iters 1 --n-layer 2 --block-size 64 --sample-tokens 20 \
  --out "$tmp/gpt"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Times the README's quick start as a new user meets it (issue 34): a fresh
# clone of this repository's HEAD in a temporary directory, HOME pointed at
# an empty directory (an empty ~/.cache/vnn: Kokkos is built too), the
# Debian packages already installed, then `ci/quickstart.sh --epochs 1`.
# Prints the seconds from the start to the end of the build and to the first
# epoch's progress bar, then the per-object compile times (compile_times.sh).
#   ci/quickstart_timing.sh [example arguments, default --epochs 1]
# Run it on an idle machine; `uptime` is printed before and after.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
tmp="$(mktemp -d /tmp/vnn-quickstart-XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
git clone -q "$root" "$tmp/vnn"
mkdir -p "$tmp/home"
[ $# -gt 0 ] || set -- --epochs 1
echo "quickstart_timing: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), commit $(git -C "$tmp/vnn" rev-parse --short HEAD); uptime:$(uptime | sed 's/.*load/ load/')"
start=$(date +%s.%N)
cd "$tmp/vnn"
HOME="$tmp/home" ci/quickstart.sh "$@" 2>&1 | START="$start" perl -e '
  use Time::HiRes qw(time);
  $| = 1; my ($built, $bar, $buf) = (0, 0, "");
  while (sysread(STDIN, my $chunk, 4096)) {
    print $chunk; $buf .= $chunk; $buf = substr($buf, -256) if length($buf) > 256;
    my $t = time - $ENV{START};
    if (!$built && $buf =~ /ci\/build\.sh: configured and built/) { $built = 1; printf STDERR "\nquickstart_timing: build done at %.0f s\n", $t; }
    if (!$bar && $buf =~ /epoch 1\/\d+ \[/) { $bar = 1; printf STDERR "\nquickstart_timing: first epoch progress bar at %.0f s\n", $t; }
  }
  printf STDERR "\nquickstart_timing: finished at %.0f s\n", time - $ENV{START};'
echo "quickstart_timing: uptime:$(uptime | sed 's/.*load/ load/')"
"$here/compile_times.sh" "$tmp/vnn/build" 15

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# What a release of vnn promises beyond its tests, checked:
#   1. SPDX identifiers on vnn's sources (ci/spdx.sh --check);
#   2. THIRD-PARTY-NOTICES covers every library the build in BUILD_DIR links,
#      and no GPL-only library is linked (ci/notices.py);
#   3. README's first screen names the license and the version set in
#      CMakeLists.txt's project(), and CHANGELOG.md has that version;
#   4. docs/, README.md and CHANGELOG.md speak to users: no work-diary words
#      (sessions, tracker numbers such as "issue 34", ordinal rounds, who
#      measured).
#
#   ci/release-checks.sh [BUILD_DIR]      (default: $VNN_BUILD_DIR, else build/)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
build="${1:-${VNN_BUILD_DIR:-$root/build}}"
failed=0
fail() { echo "release-checks: FAIL: $*" >&2; failed=1; }

# 1. SPDX.
"$here/spdx.sh" --check || fail "SPDX identifiers missing (ci/spdx.sh --fix)"

# 2. Third-party notices against the build's binaries.
python3 "$here/notices.py" "$build" || fail "THIRD-PARTY-NOTICES does not cover what $build links"

# 3. License and version where a user looks first.
version="$(sed -nE 's/^project\(vnn VERSION ([0-9]+\.[0-9]+\.[0-9]+).*/\1/p' "$root/CMakeLists.txt")"
[ -n "$version" ] || fail "no project(vnn VERSION x.y.z) in CMakeLists.txt"
[ -f "$root/LICENSE" ] || fail "no LICENSE"
[ -f "$root/THIRD-PARTY-NOTICES" ] || fail "no THIRD-PARTY-NOTICES"
first_screen="$(head -n 25 "$root/README.md")"
grep -q "Apache-2.0 WITH LLVM-exception" <<<"$first_screen" || fail "README's first 25 lines do not name the license"
grep -qF "$version" <<<"$first_screen" || fail "README's first 25 lines do not name version $version (CMakeLists.txt)"
grep -qE "^## \[$version\]" "$root/CHANGELOG.md" || fail "CHANGELOG.md has no section ## [$version]"

# 4. Diary words in what users read.
ordinals='first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth'
ordinals="$ordinals|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth"
diary="\\bsessions?\\b|\\bissues? #?[0-9]+|\\bstop [0-9]+\\b|\\b($ordinals)[- ](round|sitting|session)\\b"
diary="$diary|\\bengineer [A-Z]\\b|\\bby the lead\\b|, lead[,)]"
hits="$(cd "$root" && grep -rniE "$diary" README.md CHANGELOG.md docs --include='*.md' || true)"
if [ -n "$hits" ]; then
  echo "$hits" | head -n 40 >&2
  fail "diary words in docs/, README.md or CHANGELOG.md ($(echo "$hits" | wc -l) lines): say what the text refers to"
fi

if [ "$failed" != 0 ]; then exit 1; fi
echo "release-checks: SPDX, notices ($build), license and version $version on README's first screen, no diary words: ok"

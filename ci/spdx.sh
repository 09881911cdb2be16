#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# SPDX license identifiers on vnn's own source files (see LICENSE).
#
#   ci/spdx.sh --check               fail, listing them, when files lack the identifier
#   ci/spdx.sh --fix                 add it where it is missing
#   ci/spdx.sh --fix --only-clean    ... only to files without uncommitted changes
#                                    (the others are listed, to fix once committed)
#   ci/spdx.sh --list                print the files the rule covers
#
# Covered: C and C++ sources and headers (.c .cpp .h .hpp .cu .h.in), OpenCL
# C (.cl), CMake (CMakeLists.txt, .cmake, .cmake.in), shell (.sh) and Python
# (.py) under src/ backends/ include/ tests/ examples/ bench/ ci/ cmake/, and
# the top-level CMakeLists.txt: the tracked files and the untracked ones git
# does not ignore. The identifier goes on the first line, or after a #! line
# (and a Python coding line), as a comment in the file's own syntax.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
cd "$root"

id="Apache-2.0 WITH LLVM-exception"
mode="" only_clean=0
for a in "$@"; do
  case "$a" in
    --check | --fix | --list) mode="$a" ;;
    --only-clean) only_clean=1 ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "spdx.sh: unknown argument $a (--check, --fix [--only-clean], --list)" >&2; exit 2 ;;
  esac
done
[ -n "$mode" ] || { echo "spdx.sh: say --check, --fix or --list" >&2; exit 2; }

files() {
  { git ls-files -- CMakeLists.txt src backends include tests examples bench ci cmake
    git ls-files --others --exclude-standard -- src backends include tests examples bench ci cmake; } |
    grep -E '(^|/)CMakeLists\.txt$|\.(c|cpp|h|hpp|cu|cl|cmake|sh|py)$|\.(h|cmake)\.in$' | sort -u
}

# The comment the file's syntax takes.
comment_for() {
  case "$1" in
    *.c | *.cpp | *.h | *.hpp | *.cu | *.cl | *.h.in) echo "// SPDX-License-Identifier: $id" ;;
    *) echo "# SPDX-License-Identifier: $id" ;;
  esac
}

has_id() { head -n 5 "$1" | grep -q 'SPDX-License-Identifier:'; }

if [ "$mode" = --list ]; then files; exit 0; fi

missing=() skipped=() fixed=0
while IFS= read -r f; do
  [ -f "$f" ] || continue
  has_id "$f" && continue
  if [ "$mode" = --check ]; then missing+=("$f"); continue; fi
  if [ "$only_clean" = 1 ] && [ -n "$(git status --porcelain -- "$f")" ]; then skipped+=("$f"); continue; fi
  line="$(comment_for "$f")"
  # After a #! line, and after a Python coding line right below it.
  after=0
  if head -n 1 "$f" | grep -q '^#!'; then after=1; fi
  if [[ "$f" == *.py ]] && sed -n "$((after + 1))p" "$f" | grep -qE '^#.*coding[:=]'; then after=$((after + 1)); fi
  tmp="$(mktemp)"
  { head -n "$after" "$f"; printf '%s\n' "$line"; tail -n +"$((after + 1))" "$f"; } >"$tmp"
  cat "$tmp" >"$f"  # keeps the file's mode (scripts stay executable)
  rm -f "$tmp"
  fixed=$((fixed + 1))
done < <(files)

if [ "$mode" = --check ]; then
  if [ "${#missing[@]}" -gt 0 ]; then
    printf 'spdx.sh: no SPDX-License-Identifier in the first lines of:\n' >&2
    printf '  %s\n' "${missing[@]}" >&2
    echo "spdx.sh: ci/spdx.sh --fix adds \"$id\"" >&2
    exit 1
  fi
  echo "spdx.sh: every covered file ($(files | wc -l)) has its SPDX identifier"
  exit 0
fi
echo "spdx.sh: added the identifier to $fixed file(s)"
if [ "${#skipped[@]}" -gt 0 ]; then
  echo "spdx.sh: skipped ${#skipped[@]} file(s) with uncommitted changes (run again once they are committed):"
  printf '  %s\n' "${skipped[@]}"
fi

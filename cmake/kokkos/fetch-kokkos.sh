#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Supplies a Kokkos source tree for vnn's configure-time Kokkos build.
#
#   cmake/kokkos/fetch-kokkos.sh <cache-dir> [<result-file>]
#
# Prints, as its last line of stdout, "<kokkos source dir>\t<origin text>"
# and writes the same line to <result-file> when given. Sources, in order:
#   a) $VNN_KOKKOS_SOURCE: a Kokkos source directory, a Kokkos tarball, a
#      directory holding packages/kokkos (a Trilinos tree) or a Trilinos
#      tarball (only packages/kokkos is extracted);
#   b) Debian's `trilinos` source package (Kokkos 3.4.01 on Debian 12): a
#      private deb-src list is derived from this machine's own
#      /etc/apt/sources.list.d/debian.sources and used through apt-get -o
#      options; the system's apt configuration is left untouched;
#   c) an upstream Kokkos release tarball ($VNN_KOKKOS_FETCH_VERSION,
#      default 4.7.01) from GitHub (needs internet).
# Extracted trees are kept under <cache-dir>/src and reused. CI can call this
# script ahead of time to pre-fetch; it is safe to run repeatedly.
set -euo pipefail

cache="${1:?usage: fetch-kokkos.sh <cache-dir> [<result-file>]}"
result_file="${2:-}"
mkdir -p "$cache/src"
cache="$(cd "$cache" && pwd)"
tried=()

log() { echo "fetch-kokkos: $*" >&2; }

finish() { # <dir> <origin>
  local line
  line="$(printf '%s\t%s' "$1" "$2")"
  if [ -n "$result_file" ]; then printf '%s\n' "$line" >"$result_file"; fi
  printf '%s\n' "$line"
  exit 0
}

is_kokkos_dir() { [ -f "$1/CMakeLists.txt" ] && [ -f "$1/core/src/Kokkos_Core.hpp" ]; }

kokkos_version_of() { # <dir> -> 3.4.01
  local f="$1/CMakeLists.txt" ma mi pa
  ma=$(sed -n 's/^ *set *( *Kokkos_VERSION_MAJOR *\([0-9]*\).*/\1/p' "$f" | head -1)
  mi=$(sed -n 's/^ *set *( *Kokkos_VERSION_MINOR *\([0-9]*\).*/\1/p' "$f" | head -1)
  pa=$(sed -n 's/^ *set *( *Kokkos_VERSION_PATCH *\([0-9]*\).*/\1/p' "$f" | head -1)
  printf '%s.%s.%02d' "${ma:-0}" "${mi:-0}" "$((10#${pa:-0}))"
}

# Extracts a tarball that holds Kokkos (plain release or Trilinos) into
# $cache/src/<name>; echoes the Kokkos directory.
extract_tarball() { # <tarball> <name>
  local tb="$1" name="$2" dest tmp top
  dest="$cache/src/$name"
  if is_kokkos_dir "$dest"; then echo "$dest"; return 0; fi
  tmp="$(mktemp -d "$cache/src/.extract.XXXXXX")"
  top="$(tar -tf "$tb" 2>/dev/null | head -1 | cut -d/ -f1)" || true
  if tar -tf "$tb" "$top/packages/kokkos/CMakeLists.txt" >/dev/null 2>&1; then
    log "extracting $top/packages/kokkos from $(basename "$tb")"
    tar -xf "$tb" -C "$tmp" --wildcards "$top/packages/kokkos/*"
    mv "$tmp/$top/packages/kokkos" "$tmp/kokkos.ready"
  else
    log "extracting $(basename "$tb")"
    tar -xf "$tb" -C "$tmp"
    mv "$tmp/$top" "$tmp/kokkos.ready"
  fi
  if ! is_kokkos_dir "$tmp/kokkos.ready"; then
    rm -rf "$tmp"; log "$tb holds no Kokkos source tree"; return 1
  fi
  rm -rf "$dest"; mv "$tmp/kokkos.ready" "$dest"; rm -rf "$tmp"
  echo "$dest"
}

# a) the user's source
if [ -n "${VNN_KOKKOS_SOURCE:-}" ]; then
  s="$VNN_KOKKOS_SOURCE"
  tried+=("VNN_KOKKOS_SOURCE=$s")
  if [ -d "$s" ] && is_kokkos_dir "$s"; then
    finish "$(cd "$s" && pwd)" "VNN_KOKKOS_SOURCE directory $s"
  elif [ -d "$s" ] && is_kokkos_dir "$s/packages/kokkos"; then
    finish "$(cd "$s/packages/kokkos" && pwd)" "VNN_KOKKOS_SOURCE Trilinos tree $s"
  elif [ -f "$s" ]; then
    name="user-$(sha256sum "$s" | cut -c1-12)"
    if d="$(extract_tarball "$s" "$name")"; then
      finish "$d" "VNN_KOKKOS_SOURCE tarball $s"
    fi
  fi
  echo "fetch-kokkos: VNN_KOKKOS_SOURCE=$s is neither a Kokkos/Trilinos source directory nor a tarball holding one" >&2
  exit 1
fi

# b) Debian's trilinos source package
debian_source() {
  local sys=/etc/apt/sources.list.d/debian.sources apt="$cache/apt" uris suite
  [ -r "$sys" ] || { log "no $sys: not a deb822 Debian system"; return 1; }
  command -v apt-get >/dev/null || { log "apt-get not found"; return 1; }
  # The first stanza names the main archive (URIs + first suite).
  uris="$(awk '/^URIs:/{sub(/^URIs:[ \t]*/,""); print; exit}' "$sys")"
  suite="$(awk '/^Suites:/{sub(/^Suites:[ \t]*/,""); print $1; exit}' "$sys")"
  [ -n "$uris" ] && [ -n "$suite" ] || { log "cannot read URIs/Suites from $sys"; return 1; }
  local tb
  tb="$(ls "$apt"/dl/trilinos_*.orig.tar.* 2>/dev/null | head -1 || true)"
  if [ -z "$tb" ]; then
    mkdir -p "$apt/sources.list.d" "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/dl"
    cat >"$apt/sources.list.d/vnn-deb-src.sources" <<SRC
Types: deb-src
URIs: $uris
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    : >"$apt/sources.list"
    local opts=(-o "Dir::Etc::SourceList=$apt/sources.list"
                -o "Dir::Etc::SourceParts=$apt/sources.list.d"
                -o "Dir::State::Lists=$apt/lists"
                -o "Dir::Cache=$apt/cache"
                -o "Debug::NoLocking=1"
                -o "APT::Sandbox::User=root")
    log "apt-get update (deb-src $suite, private lists in $apt/lists)"
    apt-get "${opts[@]}" -qq update >&2 || { log "apt-get update failed"; return 1; }
    log "apt-get source --download-only trilinos"
    (cd "$apt/dl" && apt-get "${opts[@]}" -qq source --download-only trilinos >&2) \
      || { log "apt-get source trilinos failed"; return 1; }
    tb="$(ls "$apt"/dl/trilinos_*.orig.tar.* 2>/dev/null | head -1 || true)"
    [ -n "$tb" ] || { log "no trilinos orig tarball downloaded"; return 1; }
  fi
  local ver; ver="$(basename "$tb" | sed 's/^trilinos_\(.*\)\.orig\.tar.*/\1/')"
  local d; d="$(extract_tarball "$tb" "trilinos-$ver")" || return 1
  finish "$d" "Debian trilinos $ver source"
}
tried+=("Debian source package trilinos (deb-src from /etc/apt/sources.list.d/debian.sources)")
debian_source || true

# c) upstream release tarball
ver="${VNN_KOKKOS_FETCH_VERSION:-4.7.01}"
url="https://github.com/kokkos/kokkos/archive/refs/tags/$ver.tar.gz"
tried+=("$url")
tb="$cache/src/kokkos-$ver.tar.gz"
if [ ! -s "$tb" ]; then
  log "downloading $url"
  if command -v curl >/dev/null; then
    curl -fsSL --connect-timeout 15 -o "$tb.part" "$url" && mv "$tb.part" "$tb" || rm -f "$tb.part"
  elif command -v wget >/dev/null; then
    wget -q -T 15 -O "$tb.part" "$url" && mv "$tb.part" "$tb" || rm -f "$tb.part"
  fi
fi
if [ -s "$tb" ] && d="$(extract_tarball "$tb" "kokkos-$ver")"; then
  finish "$d" "upstream Kokkos $ver release tarball"
fi

echo "fetch-kokkos: no Kokkos source could be supplied. Tried:" >&2
for t in "${tried[@]}"; do echo "  - $t" >&2; done
echo "Set VNN_KOKKOS_SOURCE to a Kokkos (or Trilinos) source directory or tarball, or Kokkos_DIR to an installed Kokkos." >&2
exit 1

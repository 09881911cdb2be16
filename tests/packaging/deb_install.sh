#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds the Debian packages of a vnn build (cpack -G DEB), checks their
# names, dependencies and contents, unpacks them into a scratch root
# (dpkg -x, no root needed) and builds + runs tests/consumer against that
# root twice: with find_package(vnn) and with pkg-config vnn.
#   deb_install.sh <build-dir> <source-dir> <work-dir> [generator]
set -euo pipefail
build="$1" src="$2" work="$3" gen="${4:-Ninja}"
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work/debs" "$work/root"

cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/debs" >"$work/cpack.log" 2>&1 \
  || { cat "$work/cpack.log"; fail "cpack -G DEB failed"; }
deb() { compgen -G "$work/debs/$1_*.deb" | head -1; }
runtime="$(deb libvnn)"; dev="$(deb libvnn-dev)"
[ -n "$runtime" ] || fail "no libvnn_*.deb in $work/debs: $(ls "$work/debs")"
[ -n "$dev" ] || fail "no libvnn-dev_*.deb in $work/debs"
# Every .deb must be one of the four named packages (no stray component).
for f in "$work"/debs/*.deb; do
  case "$(dpkg-deb -f "$f" Package)" in
    libvnn|libvnn-dev|libvnn-backend-cuda|libvnn-backend-hip) ;;
    *) fail "unexpected package $(basename "$f")" ;;
  esac
done

field() { dpkg-deb -f "$1" "$2"; }
contents() { dpkg-deb -c "$1" | awk '{print $6}'; }
has_file() { contents "$1" | grep -Eq "$2" || fail "$(basename "$1") lacks $2"; }
lacks_file() { if contents "$1" | grep -Eq "$2"; then fail "$(basename "$1") must not carry $2"; fi; }
needs_dep() { field "$1" Depends | grep -Eq "(^|, )$2" || fail "$(basename "$1") Depends lacks $2: $(field "$1" Depends)"; }

dpkg-deb -I "$runtime"
has_file "$runtime" '/lib/libvnn\.so\.[0-9]+$'
has_file "$runtime" '/bin/vnn-devices$'
if [ -f "$build/bin/vnn-run" ]; then has_file "$runtime" '/bin/vnn-run$'; fi
has_file "$runtime" '/lib/vnn/libvnn-backend-openmp\.so$'
lacks_file "$runtime" '/include/'
lacks_file "$runtime" 'libvnn-backend-(cuda|hip)\.so$'
needs_dep "$runtime" libgomp1
needs_dep "$runtime" 'libopenblas0'
needs_dep "$runtime" 'libc6'
needs_dep "$runtime" 'zlib1g'
if [ -f "$build/lib/vnn/libvnn-backend-opencl.so" ]; then
  has_file "$runtime" '/lib/vnn/libvnn-backend-opencl\.so$'
  needs_dep "$runtime" ocl-icd-libopencl1
fi
dpkg-deb -I "$dev"
has_file "$dev" '/include/vnn/vnn\.h$'
has_file "$dev" '/include/vnn/version\.h$'
has_file "$dev" '/cmake/vnn/vnnConfig\.cmake$'
has_file "$dev" '/pkgconfig/vnn\.pc$'
has_file "$dev" '/lib/libvnn\.so$'
# The license and the third-party notices in /usr/share/doc/<package>/ of each.
for f in "$work"/debs/*.deb; do
  p="$(field "$f" Package)"
  has_file "$f" "/share/doc/$p/LICENSE$"
  has_file "$f" "/share/doc/$p/THIRD-PARTY-NOTICES$"
done
# One version from CMakeLists.txt's project(): the packages, vnn.pc, the CMake version file, version.h.
version="$(sed -nE 's/^project\(vnn VERSION ([0-9.]+).*/\1/p' "$src/CMakeLists.txt")"
[ "$(field "$runtime" Version)" = "$version" ] || fail "libvnn's Version $(field "$runtime" Version) is not $version"
needs_dep "$dev" "libvnn \(= $(field "$runtime" Version)\)"
for gpu in cuda hip; do
  if [ -f "$build/lib/vnn/libvnn-backend-$gpu.so" ]; then
    g="$(deb libvnn-backend-$gpu)"
    [ -n "$g" ] || fail "the $gpu plugin was built but there is no libvnn-backend-$gpu package"
    has_file "$g" "/lib/vnn/libvnn-backend-$gpu\.so$"
    needs_dep "$g" "libvnn \(= "
  fi
done

root="$work/root"
for f in "$work"/debs/*.deb; do dpkg -x "$f" "$root"; done
prefix="$root/usr"

# 1. find_package(vnn), as tests/consumer does.
cmake -S "$src/tests/consumer" -B "$work/cmake-build" -G "$gen" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$work/cmake-configure.log" 2>&1 \
  || { cat "$work/cmake-configure.log"; fail "configuring the consumer against the packages failed"; }
grep -q "vnn_DIR:PATH=$prefix/" "$work/cmake-build/CMakeCache.txt" \
  || fail "find_package(vnn) did not pick the unpacked package: $(grep vnn_DIR "$work/cmake-build/CMakeCache.txt")"
cmake --build "$work/cmake-build" >"$work/cmake-build.log" 2>&1 \
  || { cat "$work/cmake-build.log"; fail "building the consumer (find_package) failed"; }

# 2. pkg-config vnn.
export PKG_CONFIG_PATH="" PKG_CONFIG_LIBDIR
PKG_CONFIG_LIBDIR="$(dirname "$(contents "$dev" | grep '/vnn\.pc$' | sed 's|^\./|'"$root"'/|')")"
cflags="$(pkg-config --cflags vnn)" libs="$(pkg-config --libs vnn)"
libdir="$(pkg-config --variable=libdir vnn)"
[ "$(pkg-config --modversion vnn)" = "$version" ] || fail "vnn.pc says $(pkg-config --modversion vnn), not $version"
grep -q "VNN_VERSION_STRING \"$version\"" "$root/usr/include/vnn/version.h" || fail "version.h is not $version"
grep -q "PACKAGE_VERSION \"$version\"" "$(find "$root" -name vnnConfigVersion.cmake | head -1)" \
  || fail "vnnConfigVersion.cmake is not $version"
case "$cflags" in *"$root"*) ;; *) fail "pkg-config --cflags vnn does not point into the scratch root: $cflags" ;; esac
# shellcheck disable=SC2086
c++ -std=c++17 -O1 -o "$work/consumer-pc" "$src/tests/consumer/main.cpp" $cflags $libs -Wl,-rpath,"$libdir" \
  || fail "building the consumer with pkg-config failed (cflags: $cflags, libs: $libs)"

# Both run away from every build tree: the plugins must come from the
# package's lib/vnn, next to its libvnn.so.
for exe in "$work/cmake-build/consumer" "$work/consumer-pc"; do
  out="$(cd / && env -u VNN_BACKEND_PATH "$exe" 2>&1)" || { echo "$out"; fail "$exe failed"; }
  echo "$out"
  echo "$out" | grep -q '^cpu:0 ok' || fail "$exe did not compute on cpu:0"
done
plugins="$(cd / && env -u VNN_BACKEND_PATH "$root/usr/bin/vnn-devices" --verbose | sed -n 's/^ *plugin: *//p')"
[ -n "$plugins" ] || fail "vnn-devices from the package found no device"
for p in $plugins; do
  case "$(realpath "$p")" in "$(realpath "$root")/usr/lib/vnn/"*) ;;
    *) fail "vnn-devices from the package loaded $p, not a plugin of the package" ;; esac
done
echo "packages OK: $(cd "$work/debs" && ls *.deb | tr '\n' ' ')"

#!/usr/bin/env bash
# Builds the shipped library (`cargo build --release -p supraseal-c2`) and
# installs it for C/C++ and Go callers:
#
#   scripts/install.sh PREFIX              e.g. scripts/install.sh /usr/local
#   scripts/install.sh --no-build PREFIX   installs the existing build
#   DESTDIR=/stage scripts/install.sh /usr stages into /stage/usr, for /usr
#
#   PREFIX/lib/libsupraseal_c2.so.0.1.3    the shared library, SONAME libsupraseal_c2.so.0
#   PREFIX/lib/libsupraseal_c2.so.0        -> libsupraseal_c2.so.0.1.3 (what executables load)
#   PREFIX/lib/libsupraseal_c2.so          -> libsupraseal_c2.so.0 (what -lsupraseal_c2 finds)
#   PREFIX/lib/libsupraseal_c2.a           the static library
#   PREFIX/include/supraseal_c2.h
#   PREFIX/lib/pkgconfig/supraseal-c2.pc          shared: pkg-config --cflags --libs supraseal-c2
#   PREFIX/lib/pkgconfig/supraseal-c2-static.pc   static: pkg-config --static --cflags --libs supraseal-c2-static
#   PREFIX/lib/cmake/supraseal_c2/         find_package(supraseal_c2): supraseal_c2::supraseal_c2 (shared),
#                                          supraseal_c2::supraseal_c2_static
#
# GPU or CPU-only: with NVCC set (a path to nvcc, e.g. from
# scripts/install-cuda-toolchain.sh) the build embeds the CUDA kernels;
# without it, install.sh builds CPU-only (NVCC=off), whatever nvcc is on
# PATH. It says which one it installed, and the .pc files record it
# (`pkg-config --variable=kernels supraseal-c2`: 1 or 0; CMake:
# supraseal_c2_KERNELS). Either library needs no CUDA library at link time:
# the GPU build loads libcuda.so.1 at run time (dlopen), so the static
# library needs only the system libraries of Libs.private.
#
# Run time: the .pc files set no run path. Executables linked with the shared
# library find libsupraseal_c2.so.0 through their run path (CMake adds one;
# with pkg-config pass -Wl,-rpath,PREFIX/lib), LD_LIBRARY_PATH or ldconfig.
# Honours CARGO_TARGET_DIR (default: target/ in the repository).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build=1
if [ "${1:-}" = "--no-build" ]; then build=0; shift; fi
if [ $# -ne 1 ] || [ -z "$1" ]; then
    echo "usage: [DESTDIR=DIR] [NVCC=/path/to/nvcc] $0 [--no-build] PREFIX" >&2
    exit 2
fi
# pkg-config splits its flags at whitespace, so the .pc files cannot name a
# prefix with any in it (CMake could, but one rule for both).
no_space() {
    case "$1" in
        *[[:space:]]*) echo "install.sh: PREFIX must not contain whitespace (pkg-config cannot quote it): got '$1'" >&2; exit 2 ;;
    esac
}
no_space "$1"
destdir="${DESTDIR:-}"
if [ -n "$destdir" ]; then
    # PREFIX is where the files will be used, so it must be absolute.
    case "$1" in
        /*) prefix="${1%/}" ;;
        *) echo "install.sh: with DESTDIR, PREFIX must be absolute (got $1)" >&2; exit 2 ;;
    esac
else
    mkdir -p "$1"
    prefix="$(cd "$1" && pwd)"
fi
no_space "$prefix"
stage="$destdir$prefix"
target="${CARGO_TARGET_DIR:-$repo/target}"
lib="$target/release/libsupraseal_c2.so"
archive="$target/release/libsupraseal_c2.a"

if [ "$build" = 1 ]; then
    (cd "$repo" && NVCC="${NVCC:-off}" cargo build --release -p supraseal-c2)
fi
for f in "$lib" "$archive"; do
    [ -f "$f" ] || { echo "install.sh: $f not found (build with cargo build --release -p supraseal-c2)" >&2; exit 1; }
done

# The package version: the first version = "..." of the root [package].
version="$(awk '/^\[package\]/{p=1; next} /^\[/{p=0} p && /^version *=/{gsub(/.*= *"|".*/, ""); print; exit}' "$repo/Cargo.toml")"
[[ "$version" =~ ^([0-9]+)\.([0-9]+)\.([0-9]+) ]] || { echo "install.sh: cannot read the version from Cargo.toml" >&2; exit 1; }
major="${BASH_REMATCH[1]}" minor="${BASH_REMATCH[2]}"

# The SONAME the build gave the library (build.rs): the name executables record.
soname="$(LC_ALL=C readelf -d "$lib" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
if [ -z "$soname" ]; then
    command -v readelf >/dev/null || { echo "install.sh: needs readelf (binutils)" >&2; exit 1; }
    echo "install.sh: $lib has no SONAME: it predates build.rs's -soname; rebuild it" >&2
    exit 1
fi
case "$soname" in
    libsupraseal_c2.so.[0-9]*) ;;
    *) echo "install.sh: unexpected SONAME $soname in $lib" >&2; exit 1 ;;
esac
realname="libsupraseal_c2.so.$version"

# GPU or CPU-only: the embedded fatbin starts with its header (magic
# 0xBA55ED50, version 1, header size 16, little-endian).
rc=0
LC_ALL=C grep -qaP '\x50\xed\x55\xba\x01\x00\x10\x00' "$lib" || rc=$?
case $rc in
    0) kernels=1 what="GPU build (CUDA kernels embedded; the GPU backend needs an NVIDIA driver at run time)" ;;
    1) kernels=0 what="CPU-only build (no CUDA kernels; NVCC=/path/to/nvcc $0 installs the GPU build)"
       if [ -n "${NVCC:-}" ] && [ "$NVCC" != off ]; then what="$what; NVCC=$NVCC was set but did not run (see the build's warning)"; fi ;;
    *) echo "install.sh: cannot search $lib (grep -P)" >&2; exit 1 ;;
esac

# sed replacement text: escape \, & and the | delimiter.
esc() { printf '%s' "$1" | sed -e 's/[\\&|]/\\&/g'; }
subst() { # template, destination
    sed -e "s|@PREFIX@|$(esc "$prefix")|g" -e "s|@VERSION@|$version|g" \
        -e "s|@VERSION_MAJOR@|$major|g" -e "s|@VERSION_MINOR@|$minor|g" \
        -e "s|@SONAME@|$soname|g" -e "s|@REALNAME@|$realname|g" -e "s|@KERNELS@|$kernels|g" "$1" > "$2.tmp"
    mv -f "$2.tmp" "$2"
}

install -d "$stage/lib" "$stage/include" "$stage/lib/cmake/supraseal_c2" "$stage/lib/pkgconfig"
# install(1) replaces the file (new inode): processes that have the old
# library mapped keep running.
install -m 0755 "$lib" "$stage/lib/$realname"
ln -sfn "$realname" "$stage/lib/$soname"
ln -sfn "$soname" "$stage/lib/libsupraseal_c2.so"
install -m 0644 "$archive" "$stage/lib/libsupraseal_c2.a"
install -m 0644 "$repo/include/supraseal_c2.h" "$stage/include/supraseal_c2.h"
subst "$repo/cmake/supraseal_c2-config.cmake.in" "$stage/lib/cmake/supraseal_c2/supraseal_c2-config.cmake"
subst "$repo/cmake/supraseal_c2-config-version.cmake.in" "$stage/lib/cmake/supraseal_c2/supraseal_c2-config-version.cmake"
subst "$repo/cmake/supraseal-c2.pc.in" "$stage/lib/pkgconfig/supraseal-c2.pc"
subst "$repo/cmake/supraseal-c2-static.pc.in" "$stage/lib/pkgconfig/supraseal-c2-static.pc"
echo "installed supraseal-c2 $version into $stage: $what"

#!/usr/bin/env bash
# Builds the release library and installs it for C/C++ and Go callers:
#
#   scripts/install.sh PREFIX            e.g. scripts/install.sh /usr/local
#   scripts/install.sh --no-build PREFIX installs the existing build
#
#   PREFIX/lib/libsupraseal_c2.so
#   PREFIX/include/supraseal_c2.h
#   PREFIX/lib/cmake/supraseal_c2/    find_package(supraseal_c2) -> supraseal_c2::supraseal_c2
#   PREFIX/lib/pkgconfig/supraseal-c2.pc
#
# CMake: cmake -DCMAKE_PREFIX_PATH=PREFIX ...; pkg-config/cgo:
# PKG_CONFIG_PATH=PREFIX/lib/pkgconfig. The library has no SONAME and the
# .pc sets no run path: at run time the loader finds it through the
# executable's run path (CMake adds one) or LD_LIBRARY_PATH / ldconfig.
# Honours CARGO_TARGET_DIR (default: target/ in the repository).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build=1
if [ "${1:-}" = "--no-build" ]; then build=0; shift; fi
if [ $# -ne 1 ] || [ -z "$1" ]; then
    echo "usage: $0 [--no-build] PREFIX" >&2
    exit 2
fi
mkdir -p "$1"
prefix="$(cd "$1" && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
lib="$target/release/libsupraseal_c2.so"

if [ "$build" = 1 ]; then
    (cd "$repo" && cargo build --release -p supraseal-c2)
fi
[ -f "$lib" ] || { echo "install.sh: $lib not found (build with cargo build --release -p supraseal-c2)" >&2; exit 1; }

# The package version: the first version = "..." of the root [package].
version="$(awk '/^\[package\]/{p=1; next} /^\[/{p=0} p && /^version *=/{gsub(/.*= *"|".*/, ""); print; exit}' "$repo/Cargo.toml")"
[[ "$version" =~ ^([0-9]+)\.([0-9]+)\.([0-9]+) ]] || { echo "install.sh: cannot read the version from Cargo.toml" >&2; exit 1; }
major="${BASH_REMATCH[1]}" minor="${BASH_REMATCH[2]}"

# sed replacement text: escape \, & and the | delimiter in the prefix.
esc() { printf '%s' "$1" | sed -e 's/[\\&|]/\\&/g'; }
subst() { # template, destination
    sed -e "s|@PREFIX@|$(esc "$prefix")|g" -e "s|@VERSION@|$version|g" \
        -e "s|@VERSION_MAJOR@|$major|g" -e "s|@VERSION_MINOR@|$minor|g" "$1" > "$2.tmp"
    mv -f "$2.tmp" "$2"
}

install -d "$prefix/lib" "$prefix/include" "$prefix/lib/cmake/supraseal_c2" "$prefix/lib/pkgconfig"
# install(1) replaces the file (new inode): processes that have the old
# library mapped keep running.
install -m 0755 "$lib" "$prefix/lib/libsupraseal_c2.so"
install -m 0644 "$repo/include/supraseal_c2.h" "$prefix/include/supraseal_c2.h"
install -m 0644 "$repo/cmake/supraseal_c2-config.cmake" "$prefix/lib/cmake/supraseal_c2/supraseal_c2-config.cmake"
subst "$repo/cmake/supraseal_c2-config-version.cmake.in" "$prefix/lib/cmake/supraseal_c2/supraseal_c2-config-version.cmake"
subst "$repo/cmake/supraseal-c2.pc.in" "$prefix/lib/pkgconfig/supraseal-c2.pc"
echo "installed supraseal-c2 $version into $prefix"

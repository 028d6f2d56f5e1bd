#!/usr/bin/env bash
# What scripts/install.sh installs, used as a C program would (issue 32,
# item 5). Uses the existing release build (`cargo build --release -p
# supraseal-c2`; it builds nothing) and needs cc, pkg-config, cmake, readelf:
#   1. installs into a fresh prefix, and stages a second install with DESTDIR,
#      and checks the files, the symlinks, the SONAME and the .pc prefix;
#   2. builds ffi-tests/install/app.c four times: shared library through
#      pkg-config and through CMake (supraseal_c2::supraseal_c2), static
#      library through pkg-config --static (supraseal-c2-static) and through
#      CMake (supraseal_c2::supraseal_c2_static);
#   3. checks each executable's dynamic section (the shared ones need
#      libsupraseal_c2.so.<N>, the static ones do not) and runs it: the ABI
#      functions come from where the link put them, an error comes back as
#      ENOENT with the path, and with FIXTURE_DIR the first fixture set's
#      proofs equal bellperson's.
#
#   ffi-tests/run-install.sh [FIXTURE_DIR]      (ffi-tests/run.sh passes its fixtures)
#
# Everything goes under $CARGO_TARGET_DIR/ffi/install (default target/).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
mkdir -p "$target"
target="$(cd "$target" && pwd)"
out="$target/ffi/install"
fixtures=()
if [ $# -ge 1 ]; then fixtures=("$(cd "$1" && pwd)"); fi
rm -rf "$out"
mkdir -p "$out"
prefix="$out/prefix" stage="$out/stage" bin="$out/bin" cbuild="$out/cmake-build"
mkdir -p "$bin"
start=$SECONDS

fail() { echo "run-install.sh: $*" >&2; exit 1; }

echo "=== install.sh into $prefix"
"$repo/scripts/install.sh" --no-build "$prefix"
version="$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --modversion supraseal-c2)"
soname="$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --variable=soname supraseal-c2)"
real="libsupraseal_c2.so.$version"
[ -f "$prefix/lib/$real" ] && [ ! -L "$prefix/lib/$real" ] || fail "$prefix/lib/$real is not a file"
[ "$(readlink "$prefix/lib/$soname")" = "$real" ] || fail "$soname does not point at $real"
[ "$(readlink "$prefix/lib/libsupraseal_c2.so")" = "$soname" ] || fail "libsupraseal_c2.so does not point at $soname"
got="$(LC_ALL=C readelf -d "$prefix/lib/$real" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
[ "$got" = "$soname" ] || fail "SONAME of $real is '$got', the .pc says '$soname'"
for f in libsupraseal_c2.a pkgconfig/supraseal-c2-static.pc cmake/supraseal_c2/supraseal_c2-config.cmake \
    cmake/supraseal_c2/supraseal_c2-config-version.cmake; do
    [ -f "$prefix/lib/$f" ] || fail "missing $prefix/lib/$f"
done
[ -f "$prefix/include/supraseal_c2.h" ] || fail "missing $prefix/include/supraseal_c2.h"
echo "SONAME $soname; kernels=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --variable=kernels supraseal-c2)"

echo "=== DESTDIR=$stage install.sh /opt/supraseal-c2"
DESTDIR="$stage" "$repo/scripts/install.sh" --no-build /opt/supraseal-c2
[ -f "$stage/opt/supraseal-c2/lib/$real" ] || fail "DESTDIR: $stage/opt/supraseal-c2/lib/$real missing"
grep -qx 'prefix=/opt/supraseal-c2' "$stage/opt/supraseal-c2/lib/pkgconfig/supraseal-c2.pc" ||
    fail "DESTDIR: the staged .pc does not say prefix=/opt/supraseal-c2"

cflags=(-std=c11 -O1 -Wall -Wextra -Werror -I"$here/c")
srcs=("$here/install/app.c" "$here/c/fixture.c")

echo "=== pkg-config: shared, then static"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc "${cflags[@]}" -o "$bin/pc_shared" "${srcs[@]}" $(pkg-config --cflags --libs supraseal-c2) -ldl \
    -Wl,-rpath,"$(pkg-config --variable=libdir supraseal-c2)"
# shellcheck disable=SC2046
cc "${cflags[@]}" -o "$bin/pc_static" "${srcs[@]}" $(pkg-config --static --cflags --libs supraseal-c2-static)

echo "=== CMake find_package(supraseal_c2): shared, then static"
cmake -S "$here/install" -B "$cbuild" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >"$out/cmake.log" ||
    { cat "$out/cmake.log"; fail "cmake configure failed"; }
grep 'supraseal_c2 ' "$out/cmake.log" || true
cmake --build "$cbuild" -j 2 >"$out/cmake-build.log" || { cat "$out/cmake-build.log"; fail "cmake build failed"; }
cp "$cbuild/app_shared" "$bin/cmake_shared"
cp "$cbuild/app_static" "$bin/cmake_static"

echo "=== dynamic sections and runs"
for exe in pc_shared cmake_shared pc_static cmake_static; do
    kind="${exe#*_}"
    needed="$(LC_ALL=C readelf -d "$bin/$exe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
    echo "$exe: NEEDED $needed"
    case "$kind:$needed" in
        shared:*"$soname "*) ;;
        shared:*) fail "$exe does not need $soname" ;;
        static:*libsupraseal_c2*) fail "$exe needs a shared libsupraseal_c2" ;;
        static:*) ;;
    esac
    # The shared ones find the library through their run path alone.
    env -u LD_LIBRARY_PATH "$bin/$exe" "$kind" "${fixtures[@]}"
done
ls -l "$bin"
echo "=== run-install.sh: 4 passed, 0 failed ($((SECONDS - start))s)"

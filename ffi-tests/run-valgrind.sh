#!/usr/bin/env bash
# Leaks and memory errors through the C ABI, under valgrind memcheck, on the
# CPU backend (issue 6, item 5). About 6 minutes on 2 cores (memcheck runs the key loads and proofs ~50x slower):
#   1. installs valgrind (apt-get) when missing;
#   2. builds the release library and the CLI (no-op when already built) and
#      writes a small fixture set (mimc-k10, 2 circuits; `supraseal-c2
#      fixture`, expected proofs from bellperson);
#   3. compiles ffi-tests/c/test_leaks.c against
#      include/supraseal_c2.h and target/release/libsupraseal_c2.so (run
#      path: a folder that gives it its SONAME);
#   4. checks that the run can fail: `test_leaks --leak-on-purpose` drops one
#      error message unfreed and valgrind must report it (exit status 1);
#   5. runs test_leaks (create/prove/drop cycles, every EINVAL input class,
#      every kind of bad params file, the split form with the caller's
#      buffers wiped and freed before finalize) under memcheck: any invalid read/write, use of freed or uninitialised
#      memory, or a definitely/indirectly lost block fails the run.
# "Possibly lost" blocks are reported but allowed: they are the stacks and
# thread-local blocks of rayon's worker threads, which live until the
# process exits (notes/RELIABILITY.md). Output goes to $CARGO_TARGET_DIR/valgrind.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"
target="${CARGO_TARGET_DIR:-$repo/target}"
mkdir -p "$target"
target="$(cd "$target" && pwd)"
out="$target/valgrind"
fixtures="$out/fixtures" bin="$out/bin" scratch="$out/scratch"
mkdir -p "$out" "$bin" "$scratch"
start=$SECONDS

if ! command -v valgrind >/dev/null; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    echo "installing valgrind"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends valgrind
fi
valgrind --version

cargo build --release -p supraseal-c2 -p supraseal-c2-cli
lib="$target/release"
[ -f "$fixtures/fixtures.txt" ] ||
    "$lib/supraseal-c2" fixture --out "$fixtures" --circuits 2

cflags=(-std=c11 -O1 -g -Wall -Wextra -Werror -I"$repo/include" -I"$here/c")
# The executable records the library's SONAME (libsupraseal_c2.so.0), a
# name cargo's output folder does not have: its run path is a folder that
# gives the build that name.
soname="$(LC_ALL=C readelf -d "$lib/libsupraseal_c2.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
[ -n "$soname" ] || { echo "$lib/libsupraseal_c2.so has no SONAME" >&2; exit 1; }
mkdir -p "$out/lib"
ln -sfn "$lib/libsupraseal_c2.so" "$out/lib/$soname"
ldflags=(-L"$lib" -lsupraseal_c2 -Wl,-rpath,"$out/lib" -ldl)
cc "${cflags[@]}" -o "$bin/test_leaks" "$here/c/test_leaks.c" "$here/c/fixture.c" "${ldflags[@]}"

export SUPRASEAL_C2_BACKEND=cpu RAYON_NUM_THREADS=2
memcheck=(valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect,possible
    --errors-for-leak-kinds=definite,indirect --error-exitcode=1 --track-origins=yes --num-callers=30)

# 4. The checker catches a leak through the library (else a pass means nothing).
set +e
"${memcheck[@]}" --log-file="$out/leak-on-purpose.log" "$bin/test_leaks" --leak-on-purpose
rc=$?
set -e
if [ $rc -ne 1 ] || ! grep -q "definitely lost: [1-9]" "$out/leak-on-purpose.log"; then
    echo "valgrind did not report the deliberate leak (exit $rc): see $out/leak-on-purpose.log" >&2
    exit 1
fi
echo "deliberate leak detected: $(grep 'definitely lost:' "$out/leak-on-purpose.log" | sed 's/^==[0-9]*== *//')"

# 5. The real runs.
run() { # name, command...
    local name="$1" t=$SECONDS
    shift
    echo "=== valgrind: $name"
    if ! "${memcheck[@]}" --log-file="$out/$name.log" "$@"; then
        cat "$out/$name.log" >&2
        echo "valgrind: $name FAILED (log: $out/$name.log)" >&2
        exit 1
    fi
    grep -E "ERROR SUMMARY|definitely lost|indirectly lost|possibly lost|still reachable|in use at exit" \
        "$out/$name.log" | sed 's/^==[0-9]*== */  /'
    echo "  ($((SECONDS - t))s)"
}
run test_leaks "$bin/test_leaks" "$fixtures" "$scratch"

echo "=== valgrind: all clean in $((SECONDS - start))s"

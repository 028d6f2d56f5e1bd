#!/usr/bin/env bash
# The C ABI from C/C++ (CMake package, ctest) and Go (cgo, pkg-config), as
# existing callers use it (issue 5, parts 1 and 2):
#   1. installs cmake, golang-go, pkg-config (apt-get) when missing;
#   2. builds the release library and the CLI, and a second (debug) build
#      of the library in its own target dir;
#   3. installs the release build into a prefix (scripts/install.sh);
#   4. writes fixtures with `supraseal-c2 fixture` (expected proofs from
#      bellperson);
#   5. builds ffi-tests/c against the installed CMake package and runs ctest
#      twice: with the installed library, then with only LD_LIBRARY_PATH
#      pointing at the debug build (same binaries, no relink: a folder that
#      has it under the SONAME the executables record);
#   6. runs `go test` in ffi-tests/go (pkg-config; standard library only,
#      offline), then builds and runs the README's Go program as printed;
#   7. ffi-tests/run-install.sh: a fresh install.sh prefix and a DESTDIR
#      stage, a C program linked with the shared and the static library
#      through pkg-config and CMake, each run (fixture proofs included).
# Everything goes under $CARGO_TARGET_DIR/ffi (default target/ffi).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"
target="${CARGO_TARGET_DIR:-$repo/target}"
mkdir -p "$target"
target="$(cd "$target" && pwd)"
out="$target/ffi"
prefix="$out/prefix" fixtures="$out/fixtures" cbuild="$out/c-build" alt="$out/alt" altlib="$out/alt-lib"
mkdir -p "$out"

start=$SECONDS
declare -a summary=()
step() { # name, command...
    local name="$1" t=$SECONDS
    shift
    echo "=== ffi-tests: $name"
    "$@"
    summary+=("$(printf '%-44s %4ds' "$name" $((SECONDS - t)))")
}

tools() {
    local -a need=()
    command -v cmake >/dev/null || need+=(cmake)
    command -v go >/dev/null || need+=(golang-go)
    command -v pkg-config >/dev/null || need+=(pkg-config)
    command -v make >/dev/null || need+=(make)
    command -v cc >/dev/null || need+=(gcc)
    command -v readelf >/dev/null || need+=(binutils)
    if [ ${#need[@]} -eq 0 ]; then
        echo "cmake, go, pkg-config, make, cc present"
        return
    fi
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    echo "installing ${need[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"
}

builds() {
    cargo build --release -p supraseal-c2 -p supraseal-c2-cli
    # The second library: a CPU-only build (no kernels: NVCC=off) with the dev
    # profile, in its own target dir.
    NVCC=off cargo build -p supraseal-c2 --target-dir "$alt"
    if cmp -s "$target/release/libsupraseal_c2.so" "$alt/debug/libsupraseal_c2.so"; then
        echo "the two library builds are identical: the swap test would prove nothing" >&2
        exit 1
    fi
    # The executables ask for the SONAME (libsupraseal_c2.so.0), which cargo's
    # output folder does not have: the swap folder links it to the debug build.
    local soname
    soname="$(LC_ALL=C readelf -d "$alt/debug/libsupraseal_c2.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
    [ -n "$soname" ] || { echo "$alt/debug/libsupraseal_c2.so has no SONAME" >&2; exit 1; }
    mkdir -p "$altlib"
    ln -sfn "$alt/debug/libsupraseal_c2.so" "$altlib/$soname"
}

gen_fixtures() {
    cargo run --release -p supraseal-c2-cli --bin supraseal-c2 -- fixture --out "$fixtures" --sha256
}

ctest_build() {
    cmake -S "$here/c" -B "$cbuild" -DCMAKE_PREFIX_PATH="$prefix" -DSUPRASEAL_C2_FIXTURES="$fixtures" \
        -DCMAKE_BUILD_TYPE=Release
    cmake --build "$cbuild" -j 2
}

ctest_run() { # extra env assignments (none: the library the run path names)
    env -u LD_LIBRARY_PATH "$@" ctest --test-dir "$cbuild" --output-on-failure
    # which library file was loaded (the c_library test checks it)
    env -u LD_LIBRARY_PATH "$@" "$cbuild/test_abi" library "$fixtures" | grep '^loaded'
}

go_test() {
    (
        cd "$here/go"
        export GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local CGO_ENABLED=1
        export GOCACHE="${GOCACHE:-$out/go-cache}" GOPATH="${GOPATH:-$out/go-path}"
        export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
        export LD_LIBRARY_PATH="$prefix/lib" SUPRASEAL_C2_FIXTURES="$fixtures"
        go version
        go vet ./...
        go test -count=1 -v ./...
    )
}

readme_go() { # the README's Go program, built and run as printed there
    local dir="$out/readme-go"
    rm -rf "$dir"
    mkdir -p "$dir"
    awk '/^```go$/ {p = 1; next} /^```/ {if (p) exit} p' "$repo/README.md" > "$dir/main.go"
    grep -q '^func main' "$dir/main.go" || { echo "README.md has no complete Go program" >&2; exit 1; }
    printf 'module app\n\ngo 1.19\n' > "$dir/go.mod"
    (
        cd "$dir"
        export GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local CGO_ENABLED=1
        export GOCACHE="${GOCACHE:-$out/go-cache}" GOPATH="${GOPATH:-$out/go-path}"
        export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
        go vet .
        CGO_LDFLAGS="-Wl,-rpath,$prefix/lib" go build -o app .
        # The run path alone finds the library, as the README says. The
        # params file: the first set's (FIXTURES.md: `<set> <params file> <circuits>`).
        local params
        params="$fixtures/$(awk 'NR == 1 {print $2}' "$fixtures/fixtures.txt")"
        env -u LD_LIBRARY_PATH ./app "$params" | grep -Fx "loaded $params"
        if env -u LD_LIBRARY_PATH ./app "$dir/missing.params" 2> err.txt; then
            echo "the README's Go program accepted a missing params file" >&2
            exit 1
        fi
        grep -F "(ENOENT)" err.txt || { cat err.txt >&2; exit 1; }
    )
}

step "tools (cmake, go, pkg-config)" tools
step "cargo build (release library + CPU-only debug library)" builds
step "scripts/install.sh $prefix" scripts/install.sh --no-build "$prefix"
step "supraseal-c2 fixture" gen_fixtures
step "cmake build ffi-tests/c" ctest_build
step "ctest: installed release library" ctest_run
step "ctest: LD_LIBRARY_PATH=CPU-only debug build" ctest_run LD_LIBRARY_PATH="$altlib"
step "go test ./... (cgo, pkg-config)" go_test
step "run-install.sh (shared/static; pkg-config/CMake)" "$here/run-install.sh" "$fixtures"
step "the README's Go program (go build, run path)" readme_go

echo "=== ffi-tests: all passed in $((SECONDS - start))s"
printf '  %s\n' "${summary[@]}"

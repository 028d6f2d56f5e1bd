#!/usr/bin/env bash
# Rust callers of issue 5, parts 3 and 4, each a standalone cargo workspace
# with its own target/ and Cargo.lock:
#   1. rust-bellperson/  bellperson 0.27 (groth16, cuda-supraseal) with
#      [patch.crates-io] supraseal-c2 = this repo: prove + verify via bellperson.
#   2. porep-2k/         Filecoin PoRep C2 for a 2 KiB sector through
#      filecoin-proofs 19.1 with our library patched in: verify_seal true,
#      tampered proof / wrong seed false.
#   3. porep-2k/ too     the same through filecoin-proofs-api 19.1 with its
#      `cuda-supraseal` feature: filecoin-ffi's (lotus') entry point (issue 32).
# The 2 KiB Groth16 params are generated once (about 10 min, 5 GiB, 1.1 GB)
# by the non-supraseal build and cached in $SUPRASEAL_C2_FIL_PARAMS
# (default ~/.cache/supraseal-c2/filecoin-params).
#
# Knobs: POREP_CPU_BASELINE=1 also times bellperson's own CPU C2 (the
# non-supraseal build) for comparison (default 0; ~2 min on 2 cores).
# SKIP_POREP=1 runs part 1 only (says so loudly).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
export SUPRASEAL_C2_FIL_PARAMS="${SUPRASEAL_C2_FIL_PARAMS:-${XDG_CACHE_HOME:-$HOME/.cache}/supraseal-c2/filecoin-params}"
export FIL_PROOFS_PARAMETER_CACHE="$SUPRASEAL_C2_FIL_PARAMS"
export FIL_PROOFS_PARENT_CACHE="$SUPRASEAL_C2_FIL_PARAMS"
mkdir -p "$SUPRASEAL_C2_FIL_PARAMS"
# These workspaces build our crate again (their own target dirs) and run on
# the CPU: build them CPU-only (the kernel build, minutes per architecture,
# is covered by the main build) unless NVCC is set for this script.
export NVCC="${RUST_CALLERS_NVCC:-off}"
# Their own target dirs, whatever the main build uses (each has its own Cargo.lock).
unset CARGO_TARGET_DIR

start=$SECONDS
declare -a summary=()
step() { # name, command...
    local name="$1" t=$SECONDS
    shift
    echo "=== run-rust: $name"
    "$@"
    summary+=("$(printf '%-52s %5ds' "$name" $((SECONDS - t)))")
}

# The patched supraseal-c2 must be this repo's package (0.1.3, by path).
check_patch() { # manifest dir, extra cargo args...
    local dir="$1"
    shift
    local line
    line="$(cd "$dir" && cargo tree "$@" -i supraseal-c2 --depth 0 2>/dev/null | head -n1)"
    echo "cargo tree -i supraseal-c2: $line"
    case "$line" in
    "supraseal-c2 v0.1."*"($repo)"*) ;;
    *)
        echo "run-rust: supraseal-c2 in $dir is not this repo's package: '$line'" >&2
        return 1
        ;;
    esac
}

# filecoin-ffi's route to our library, in porep-2k (cwd): its `supraseal`
# feature is filecoin-proofs-api/cuda-supraseal alone, and that must reach
# bellperson/cuda-supraseal through filecoin-proofs and storage-proofs-core,
# with neither bellperson's nor neptune's own CUDA/OpenCL kernels built.
check_fpapi_chain() {
    local tree need pkg
    tree="$(cargo tree --features supraseal -e features -i bellperson)"
    printf '%s\n' "$tree" | grep -E 'cuda|opencl' || true
    for need in 'bellperson feature "cuda-supraseal"' 'filecoin-proofs feature "cuda-supraseal"' \
        'storage-proofs-core feature "cuda-supraseal"' 'filecoin-proofs-api feature "cuda-supraseal"'; do
        grep -qF "$need" <<<"$tree" || { echo "run-rust: missing from the feature chain: $need" >&2; return 1; }
    done
    for pkg in bellperson neptune; do
        if cargo tree --features supraseal -e features -i "$pkg" | grep -E "$pkg feature \"(cuda|opencl)\""; then
            echo "run-rust: $pkg's own GPU kernels are on (they need nvcc and libcuda)" >&2
            return 1
        fi
    done
    if cargo tree --features supraseal -e normal --prefix none | grep -E '^(rust-gpu-tools|fil-rustacuda|cuda-driver-sys|opencl3) '; then
        echo "run-rust: a CUDA/OpenCL runtime crate is in the build" >&2
        return 1
    fi
}

# --- 1. bellperson [patch]
cd "$here/rust-bellperson"
step "bellperson [patch]: cargo tree" check_patch .
step "bellperson [patch]: build tests" cargo test --release --no-run
step "bellperson [patch]: cargo test" cargo test --release

# --- 2. Filecoin 2 KiB PoRep C2
if [ "${SKIP_POREP:-0}" = 1 ]; then
    echo "!!! run-rust: SKIP_POREP=1: the Filecoin 2 KiB PoRep C2 test was NOT run" >&2
else
    cd "$here/porep-2k"
    step "porep-2k: patch filecoin-hashers, filecoin-proofs" ./patch-cuda-features.sh
    step "porep-2k: cargo tree" check_patch . --features supraseal
    step "porep-2k: build, CPU prover (params generator)" cargo build --release
    # `cargo test --features supraseal` below rebuilds target/release/porep-2k
    # with the feature: keep the CPU build under its own name.
    cp target/release/porep-2k target/release/porep-2k-cpu
    step "porep-2k: Groth16 params (generated once, cached)" ./target/release/porep-2k-cpu params
    step "porep-2k: build, supraseal (our library)" cargo test --release --features supraseal --test porep_2k --no-run
    step "porep-2k: C2 through our library, verify_seal" cargo test --release --features supraseal --test porep_2k -- --nocapture
    if [ "${POREP_CPU_BASELINE:-0}" = 1 ]; then
        step "porep-2k: C2 with bellperson's CPU prover" ./target/release/porep-2k-cpu c2
    fi

    # --- 3. filecoin-ffi's entry point: filecoin-proofs-api (same workspace,
    # same dependency build and params as part 2; only the test binary is new).
    step "fpapi: cargo tree (cuda-supraseal chain)" check_fpapi_chain
    step "fpapi: build test" cargo test --release --features supraseal --test fpapi_2k --no-run
    step "fpapi: C2 via filecoin-proofs-api, verify_seal" \
        env SUPRASEAL_C2_LOG=supraseal_c2=info cargo test --release --features supraseal --test fpapi_2k -- --nocapture
fi

echo "=== run-rust: timings"
printf '  %s\n' "${summary[@]}"
echo "  total $((SECONDS - start))s"

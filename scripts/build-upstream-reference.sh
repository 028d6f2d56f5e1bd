#!/usr/bin/env bash
# Builds the reference for same-run comparisons: the published supraseal-c2
# 0.1.2 from the Rust registry (with sppark 0.1.16), wrapped by
# bench/upstream/ into libupstream_ref.so (exports upstream_create_srs,
# upstream_prove, upstream_drop_srs only). Runs on this GPU-less machine with
# the pinned nvcc from PyPI; adds sm_90 SASS (H100/H200) to sppark's own
# architecture list; links cudart statically, so the GPU machine needs only
# the driver. Prints the path of the library on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
nvcc=$(scripts/install-cuda-toolchain.sh | tail -n 1)
cu=$(dirname "$(dirname "$nvcc")")   # .../nvidia/cu13
export NVCC="$nvcc" PATH="$(dirname "$nvcc"):$PATH"
# nvcc itself appends NVCC_APPEND_FLAGS to every invocation (cc-rs would pass
# CXXFLAGS to the host compiler); the headers and cudart come from the
# wheels' tree.
export NVCC_APPEND_FLAGS="${NVCC_APPEND_FLAGS:-} -gencode arch=compute_90,code=sm_90 -I$cu/include -L$cu/lib"
export RUSTFLAGS="${RUSTFLAGS:-} -L native=$cu/lib"
# Its own target dir (absolute: the build runs in bench/upstream), whatever
# CARGO_TARGET_DIR the caller uses for our crate.
export CARGO_TARGET_DIR="${UPSTREAM_TARGET_DIR:-$PWD/target-upstream}"
(cd bench/upstream && cargo build --release 2>&1 | tail -n 20) >&2
lib="$CARGO_TARGET_DIR/release/libupstream_ref.so"
nm -D --defined-only "$lib" | grep -q ' T upstream_prove$' || { echo "upstream_prove not exported by $lib" >&2; exit 1; }
# A cdylib may keep undefined symbols that only fail at dlopen: every
# undefined one must come from the system libraries.
missing=$(nm -D --undefined-only "$lib" | awk '$1 == "U" {print $2}' | grep -v '@' || true)
[ -z "$missing" ] || { echo "$lib has unresolved symbols: $(echo $missing | head -c 400)" >&2; exit 1; }
if nm -D --defined-only "$lib" | grep -qE ' T (create_SRS|generate_groth16_proofs_c)$'; then
  echo "$lib exports the ABI's own names: it would clash with ours" >&2; exit 1
fi
echo "$lib"

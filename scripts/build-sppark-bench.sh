#!/usr/bin/env bash
# Builds bench/sppark/sppark_bench (sppark's MSM and NTT, for same-run
# comparison with examples/gpu_bench.rs) on this GPU-less machine with the
# pinned nvcc, against the sppark crate's headers and the blst crate's
# libblst.a from the cargo registry / a release build. Output: the path of the
# binary. Put it in gpu-pack/ and run it on the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
nvcc=$(scripts/install-cuda-toolchain.sh | tail -n 1)
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target-gpu}"
cargo build --release -p supraseal-c2 >/dev/null 2>&1 || true
reg=$(dirname "$(cargo metadata --format-version 1 | python3 -c 'import json,sys
m = json.load(sys.stdin)
print(next(p["manifest_path"] for p in m["packages"] if p["name"] == "sppark"))')")
blst=$(dirname "$(cargo metadata --format-version 1 | python3 -c 'import json,sys
m = json.load(sys.stdin)
print(next(p["manifest_path"] for p in m["packages"] if p["name"] == "blst"))')")
lib=$(ls -t "$CARGO_TARGET_DIR"/release/build/blst-*/out/libblst.a | head -n 1)
out="$CARGO_TARGET_DIR/sppark_bench"
"$nvcc" -O3 -std=c++17 -arch=sm_90 -DFEATURE_BLS12_381 -D__ADX__ \
  -I "$reg/sppark" -I "$blst/blst/src" -L "$(dirname "$(dirname "$nvcc")")/lib" \
  bench/sppark/sppark_bench.cu "$reg/sppark/util/all_gpus.cpp" "$lib" -o "$out"
echo "$out"

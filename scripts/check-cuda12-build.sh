#!/usr/bin/env bash
# The kernels built with nvcc 12 through build.rs (issue 32, item 5): installs
# nvcc 12.4 (scripts/install-cuda-toolchain.sh 12), runs `cargo check
# --release -p supraseal-c2` with it for one architecture (sm_90, or
# SUPRASEAL_C2_CUDA_ARCHS), and checks that build.rs made a GPU build with it:
# the build script's SUPRASEAL_C2_ARCHS is that list, and the fatbin it
# embeds holds a cubin for each (cuobjdump). `cargo check`
# compiles the kernels and type-checks the GPU code without building the
# library again; it changes the package's build-script output, so `.ci/run`
# runs this last.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
start=$SECONDS
nvcc=$(scripts/install-cuda-toolchain.sh 12 | tail -n 1)
"$nvcc" --version | tail -n 2
archs="${SUPRASEAL_C2_CUDA_ARCHS:-90}"
target="${CARGO_TARGET_DIR:-$repo/target}"
mkdir -p "$target"
json="$target/cuda12-check.json"
NVCC="$nvcc" SUPRASEAL_C2_CUDA_ARCHS="$archs" cargo check --release -p supraseal-c2 --message-format=json >"$json"
want="$(echo "$archs" | tr -d ' ' | sed -e 's/sm_//g' -e 's/\([0-9][0-9]*\)/sm_\1/g')"
got="$(grep -o '"SUPRASEAL_C2_ARCHS","[^"]*"' "$json" | tail -n 1 | cut -d'"' -f4)"
[ "$got" = "$want" ] || { echo "check-cuda12-build.sh: build.rs built '$got', wanted '$want' (no GPU build?)" >&2; exit 1; }
fatbin="$(grep -o '"SUPRASEAL_C2_FATBIN","[^"]*"' "$json" | tail -n 1 | cut -d'"' -f4)"
elfs="$("$(dirname "$nvcc")/cuobjdump" --list-elf "$fatbin")"
echo "$elfs"
for a in ${want//,/ }; do
    grep -q "\.$a\.cubin" <<<"$elfs" || { echo "check-cuda12-build.sh: no $a cubin in $fatbin" >&2; exit 1; }
done
echo "nvcc 12 kernel build: $got in $((SECONDS - start))s"

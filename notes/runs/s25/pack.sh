# Builds the GPU pack and trims it for notes/runs/s25/steps.sh: run from anywhere, then carry
# gpu-pack.tgz (git-ignored) and run on the device, e.g.
#   mkdir -p /tmp/w && tar xzf gpu-pack.tgz -C /tmp/w && bash /tmp/w/pk/steps.sh synth-bg tests ntt wait
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$PWD
bash scripts/gpu-pack.sh
rm -rf /tmp/pk && mkdir -p /tmp/pk
cp gpu-pack/{supraseal-c2,gpu,gpu_proofs,lock_protocol,gpu_params,batch_add_beside,gpu_bench,sppark_bench,libupstream_ref.so,run.sh,gpu-samples.py,COMMIT} /tmp/pk/
# Older or patched gpu_bench builds for same-run comparisons, built in target-old: in target-gpu
# their crate would overwrite main's, which cargo would then take for fresh. `tar x -m` gives the
# sources the current time, so the crate rebuilds here whichever variant built last.
# build_variant REV DIR OUT [SED_ARGS…]: gpu_bench of REV, patched by sed where given, as /tmp/pk/OUT.
build_variant() {
  local rev=$1 dir=$2 out=$3; shift 3
  rm -rf "$dir" && mkdir -p "$dir" && git archive "$rev" | tar x -m -C "$dir"
  if [ $# -gt 0 ]; then sed -i "$@" "$dir/cuda/ntt.cu"; fi
  (cd "$dir" && NVCC="$(cd "$root" && scripts/install-cuda-toolchain.sh | tail -n 1)" SUPRASEAL_C2_CUDA_ARCHS=90 \
    CARGO_TARGET_DIR="$root/target-old" cargo build --release -p supraseal-c2 --example gpu_bench)
  cp target-old/release/examples/gpu_bench "/tmp/pk/$out" && strip --strip-debug "/tmp/pk/$out"
}
# gpu_bench as of 69508fc (the G2 kernels before cuda/xyzz_add.cuh), for the `g2` step; BASE=none skips it.
base=${BASE:-69508fc}
if [ "$base" != none ]; then
  build_variant "$base" /tmp/ssc2-base gpu_bench_base
  echo "$base" > /tmp/pk/BASE
fi
# The CLI as of BASE_CLI (a revision; unset: none), as /tmp/pk/supraseal-c2-base, for a
# same-lease baseline of whole proofs (steps.sh's CLIS), built in target-old as above.
if [ -n "${BASE_CLI:-}" ]; then
  rm -rf /tmp/ssc2-base-cli && mkdir -p /tmp/ssc2-base-cli && git archive "$BASE_CLI" | tar x -m -C /tmp/ssc2-base-cli
  (cd /tmp/ssc2-base-cli && NVCC="$(cd "$root" && scripts/install-cuda-toolchain.sh | tail -n 1)" SUPRASEAL_C2_CUDA_ARCHS=90 \
    CARGO_TARGET_DIR="$root/target-old" cargo build --release -p supraseal-c2-cli --bin supraseal-c2)
  cp target-old/release/supraseal-c2 /tmp/pk/supraseal-c2-base && strip --strip-debug /tmp/pk/supraseal-c2-base
  git rev-parse --short "$BASE_CLI" > /tmp/pk/BASE_CLI
fi
cp notes/runs/s24/70cf2f7-proofs-upstream.txt notes/runs/s25/steps.sh /tmp/pk/
tar czf gpu-pack.tgz -C /tmp pk
ls -la gpu-pack.tgz && cat /tmp/pk/COMMIT

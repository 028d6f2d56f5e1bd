# Builds the GPU pack and trims it for notes/runs/s25/steps.sh: run from anywhere, then carry
# gpu-pack.tgz (git-ignored) and run on the device, e.g.
#   mkdir -p /tmp/w && tar xzf gpu-pack.tgz -C /tmp/w && bash /tmp/w/pk/steps.sh synth-bg tests ntt wait
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$PWD
bash scripts/gpu-pack.sh
rm -rf /tmp/pk && mkdir -p /tmp/pk
cp gpu-pack/{supraseal-c2,gpu,gpu_proofs,lock_protocol,gpu_params,batch_add_beside,gpu_bench,sppark_bench,libupstream_ref.so,run.sh,gpu-samples.py,COMMIT} /tmp/pk/
# gpu_bench as of 69508fc (the G2 kernels before cuda/xyzz_add.cuh), for the `g2` step's
# same-run comparison; BASE=none skips it. It builds in its own target directory: in target-gpu,
# cargo would take the same package's newer build for fresh (the archive's files keep their
# commit times).
base=${BASE:-69508fc}
if [ "$base" != none ]; then
  nvcc=$(scripts/install-cuda-toolchain.sh | tail -n 1)
  rm -rf /tmp/ssc2-base && mkdir -p /tmp/ssc2-base && git archive "$base" | tar x -C /tmp/ssc2-base
  (cd /tmp/ssc2-base && NVCC="$nvcc" SUPRASEAL_C2_CUDA_ARCHS=90 CARGO_TARGET_DIR="$root/target-old" \
    cargo build --release -p supraseal-c2 --example gpu_bench)
  cp target-old/release/examples/gpu_bench /tmp/pk/gpu_bench_base
  strip --strip-debug /tmp/pk/gpu_bench_base
  echo "$base" > /tmp/pk/BASE
fi
# LB=1: gpu_bench_lb, HEAD's gpu_bench with __launch_bounds__(256, 3) on the radix-4 NTT kernels
# only (ptxas sm_90: DIT 72, DIF 80 registers, no spills, against 68 and 90 unbounded; a bound
# on radix 2 or 8 raises theirs), for `NTT_BINS="gpu_bench gpu_bench_lb" steps.sh ntt`.
if [ "${LB:-0}" = 1 ]; then
  nvcc=$(scripts/install-cuda-toolchain.sh | tail -n 1)
  rm -rf /tmp/ssc2-lb && mkdir -p /tmp/ssc2-lb && git archive HEAD | tar x -m -C /tmp/ssc2-lb
  sed -i -e 's/^#define NTT_PASS_KERNELS(SUFFIX, RADIX_LG)/#define NTT_PASS_KERNELS(SUFFIX, RADIX_LG, BOUNDS)/' \
    -e 's/extern "C" __global__ void fr_ntt_pass/extern "C" __global__ void BOUNDS fr_ntt_pass/' \
    -e 's/^NTT_PASS_KERNELS(, 1)/NTT_PASS_KERNELS(, 1, )/' -e 's/^NTT_PASS_KERNELS(_r8, 3)/NTT_PASS_KERNELS(_r8, 3, )/' \
    -e 's/^NTT_PASS_KERNELS(_r4, 2)/NTT_PASS_KERNELS(_r4, 2, __launch_bounds__(256, 3))/' /tmp/ssc2-lb/cuda/ntt.cu
  [ "$(grep -c BOUNDS /tmp/ssc2-lb/cuda/ntt.cu)" = 3 ] || { echo "LB: cuda/ntt.cu did not take the patch"; exit 1; }
  (cd /tmp/ssc2-lb && NVCC="$nvcc" SUPRASEAL_C2_CUDA_ARCHS=90 CARGO_TARGET_DIR="$root/target-old" \
    cargo build --release -p supraseal-c2 --example gpu_bench)
  cp target-old/release/examples/gpu_bench /tmp/pk/gpu_bench_lb
  strip --strip-debug /tmp/pk/gpu_bench_lb
fi
cp notes/runs/s24/70cf2f7-proofs-upstream.txt notes/runs/s25/steps.sh /tmp/pk/
tar czf gpu-pack.tgz -C /tmp pk
ls -la gpu-pack.tgz && cat /tmp/pk/COMMIT

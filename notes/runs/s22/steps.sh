# The runs that measure 0a36813 and 86d81ec … main's head on the H200 (planned in sessions 22 and 23,
# which were lent no device). Pack: notes/runs/s22/pack.sh (here). Calls, each its own device call:
#   steps.sh kernels  # GPU tests, then the G1 MSM: sppark's, then ours with the launch sweep at 2^26
#   steps.sh hmsm     # the window sweep at the H-MSM's 2^27 points (gpu_bench BENCH_MSM_H_SWEEP=1)
#   steps.sh porep    # the porep-32g file, ours BATCH=1,3,10 WORKERS=2,3 PARTITIONS=3, resident and as a 16 GiB card
#   steps.sh upstream # upstream 0.1.2 BATCH=10 WORKERS=3 on the same file, same seed
# Same seed as s20/s21: every proof must be one of 8ecd408's (which equal upstream's).
set -u
cd "$(dirname "$0")"
export SUPRASEAL_C2_CACHE=/tmp/ssc2-cache
same_proofs() {  # every line of $1 is a line of 8ecd408's proofs
  extra=$(sort -u "$1" | comm -23 - <(sort -u 8ecd408-proofs-ours.txt) | wc -l)
  echo "$(basename "$1"): $(sort -u "$1" | wc -l) distinct proofs, $extra not among 8ecd408's $(wc -l < 8ecd408-proofs-ours.txt)"
}
case "${1:-}" in
kernels)
  L=$OUT/tests.log
  {
    echo "commit $(cat COMMIT)"; nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv; nproc; free -g | head -2
    for t in gpu gpu_proofs lock_protocol gpu_params; do
      echo "== $t"; s=$(date +%s)
      timeout 200 ./$t --test-threads=1 --nocapture
      echo "rc=$? ($t, $(( $(date +%s) - s )) s)"
    done
  } > $L 2>&1
  grep -E "^(== |rc=|test result|test .*FAILED|failures:|thread .* panicked)" $L
  K=$OUT/kernels.log
  {
    echo "== sppark 0.1.16"; timeout 120 ./sppark_bench 26 19; echo "rc=$?"
    echo "== ours"; BENCH_MSM_SWEEP_LOG=26 BENCH_NTT_MAX_LOG=19 BENCH_G2_MAX_LOG=17 BENCH_NTT_HOST=0 timeout 220 ./gpu_bench; echo "rc=$?"
  } > $K 2>&1
  grep -E "MSM|batch addition|rc=|panicked" $K
  ;;
hmsm)
  H=$OUT/hmsm.log
  BENCH_MSM_H_SWEEP=1 BENCH_MSM_MAX_LOG=20 BENCH_MSM_SWEEP_LOG=20 BENCH_NTT_MAX_LOG=20 BENCH_G2_MAX_LOG=18 BENCH_NTT_HOST=0 timeout 500 ./gpu_bench > $H 2>&1
  echo "rc=$?" >> $H
  grep -E "H-MSM shape|tail sweep|batch addition|rc=|panicked" $H
  ;;
porep)
  mkdir -p $OUT/ours
  env OUT=$OUT/ours BATCH=1,3,10 WORKERS=2,3 PARTITIONS=3 KEEP=1 SKIP_UPSTREAM=1 OURS_ENV="SUPRASEAL_C2_LOG=supraseal_c2::srs=info,supraseal_c2::gpu=info,supraseal_c2::gpu::stage=debug,supraseal_c2::pipeline::phases=debug,supraseal_c2::groth16=debug,supraseal_c2=warn" ./run.sh porep-same-run > /dev/null 2>&1
  grep -E "real|rc=" $OUT/ours/gpu-run-porep-same-run.log | head -4
  grep -v -E "^  [a-z_0-9]*: [0-9]* % of|DEBUG|^ *(at|in) |^ROW" $OUT/ours/gpu-run-porep-same-run.log | grep -E "^\||wall|rc=|GPU|busy|==|peak" | tail -n 40
  same_proofs $OUT/ours/proofs-porep-32g-ours.txt
  ;;
upstream)
  mkdir -p $OUT/upstream
  env OUT=$OUT/upstream BATCH=10 WORKERS=3 PARTITIONS=1 KEEP=1 SKIP_OURS=1 ./run.sh porep-same-run > /dev/null 2>&1
  grep -v -E "^ *(at|in) |^ROW" $OUT/upstream/gpu-run-porep-same-run.log | grep -E "^\||wall|rc=|GPU|busy|==|peak|load" | tail -n 20
  same_proofs $OUT/upstream/proofs-porep-32g-upstream.txt
  ;;
esac

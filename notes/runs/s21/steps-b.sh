# Lease 2 (the tiled bucket scan, c = 20 from 2^25 points, H over the resident key as one MSM,
# the compute pool trimmed before in-turn uploads). Three calls:
#   steps-b.sh kernels  # GPU tests, then the G1 MSM: sppark's, then ours with the launch sweep at 2^26
#   steps-b.sh porep    # the porep-32g file, ours BATCH=1,3,10 WORKERS=3, resident and as a 16 GiB card
#   steps-b.sh upstream # upstream 0.1.2 BATCH=10 (and W = 1) on the same file, same seed
# Same seed as s20/s21 lease 1: the proofs must equal 8ecd408's (which equal upstream's).
set -u
cd "$(dirname "$0")"
export SUPRASEAL_C2_CACHE=/tmp/ssc2-cache
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
    echo "== ours"; BENCH_MSM_SWEEP_LOG=26 BENCH_NTT_MAX_LOG=19 BENCH_G2_MAX_LOG=17 BENCH_NTT_HOST=0 timeout 200 ./gpu_bench; echo "rc=$?"
  } > $K 2>&1
  grep -E "MSM|rc=|panicked" $K
  ;;
porep)
  mkdir -p $OUT/ours
  env OUT=$OUT/ours BATCH=1,3,10 WORKERS=3 PARTITIONS=1 KEEP=1 SKIP_UPSTREAM=1 OURS_ENV="SUPRASEAL_C2_LOG=supraseal_c2::srs=info,supraseal_c2::gpu=info,supraseal_c2::gpu::stage=debug,supraseal_c2::pipeline::phases=debug,supraseal_c2::groth16=debug,supraseal_c2=warn" ./run.sh porep-same-run > /dev/null 2>&1
  grep -E "real|rc=" $OUT/ours/gpu-run-porep-same-run.log | head -4
  grep -v -E "^  [a-z_0-9]*: [0-9]* % of|DEBUG|^ *(at|in) |^ROW" $OUT/ours/gpu-run-porep-same-run.log | grep -E "^\||wall|rc=|GPU|busy|==|peak" | tail -n 30
  cmp $OUT/ours/proofs-porep-32g-ours.txt 8ecd408-proofs-ours.txt && echo "porep-32g: proofs byte-identical to 8ecd408's ($(wc -l < 8ecd408-proofs-ours.txt); those equal upstream 0.1.2's)"
  grep "next circuit staged ahead" $OUT/ours/gpu-run-porep-same-run.log | grep -o "vectors=[0-9]" | sort | uniq -c
  ;;
upstream)
  mkdir -p $OUT/upstream
  env OUT=$OUT/upstream BATCH=10 WORKERS=1 PARTITIONS=1 KEEP=1 SKIP_OURS=1 ./run.sh porep-same-run > /dev/null 2>&1
  grep -v -E "^ *(at|in) |^ROW" $OUT/upstream/gpu-run-porep-same-run.log | grep -E "^\||wall|rc=|GPU|busy|==|peak|load" | tail -n 20
  f=$OUT/upstream/proofs-porep-32g-upstream.txt
  grep -E "^(batch|w0 )" 8ecd408-proofs-ours.txt | sort | cmp - <(grep -E "^(batch|w0 )" $f | sort) && echo "upstream: its 10-circuit call and W = 1 proofs ($(grep -c -E "^(batch|w0 )" $f)) byte-identical to ours"
  ;;
esac

# Lease 2, call A: the GPU test set on the signed-digit MSM and the partial staging ahead,
# then the G1 MSM, sppark's then ours, in the same call (MSM rows only).
set -u
cd "$(dirname "$0")"
export SUPRASEAL_C2_CACHE=/tmp/ssc2-cache
L=$OUT/tests.log
{
  echo "commit $(cat COMMIT)"; nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv; nproc; free -g | head -2
  for t in gpu gpu_params gpu_proofs lock_protocol gpu_pinning prove_verify bad_input; do
    echo "== $t"; s=$(date +%s)
    case $t in
      prove_verify) timeout 120 ./$t --nocapture a_call_of_circuits_sharing_buffers ;;
      gpu|lock_protocol) timeout 240 ./$t --test-threads=1 --nocapture ;;
      gpu_params) timeout 200 ./$t --test-threads=1 --nocapture ;;
      *) timeout 150 ./$t --nocapture ;;
    esac
    echo "rc=$? ($t, $(( $(date +%s) - s )) s)"
  done
} > $L 2>&1
grep -E "^(== |rc=|test result|test .*FAILED|failures:|thread .* panicked)" $L
K=$OUT/kernels.log
{
  echo "== sppark 0.1.16"; timeout 120 ./sppark_bench 26 19; echo "rc=$?"
  echo "== ours"; BENCH_NTT_MAX_LOG=19 BENCH_G2_MAX_LOG=17 BENCH_NTT_HOST=0 timeout 200 ./gpu_bench; echo "rc=$?"
} > $K 2>&1
grep -E "MSM|rc=|panicked" $K

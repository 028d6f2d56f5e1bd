# Lease 3 (short): the final commit's GPU proofs (tails gathered in pieces) and the ENODEV reason.
set -u
cd "$(dirname "$0")"
export SUPRASEAL_C2_CACHE=/tmp/ssc2-cache
L=$OUT/tests.log
{
  echo "commit $(cat COMMIT)"; nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv
  for t in gpu_pinning prove_verify lock_protocol gpu_proofs bad_input; do
    echo "== $t"; s=$(date +%s)
    case $t in
      prove_verify) timeout 120 ./$t --nocapture a_call_of_circuits_sharing_buffers ;;
      lock_protocol) timeout 120 ./$t --test-threads=1 --nocapture ;;
      *) timeout 120 ./$t --nocapture ;;
    esac
    echo "rc=$? ($t, $(( $(date +%s) - s )) s)"
  done
  echo "== SUPRASEAL_C2_BACKEND=gpu with no GPU visible: ENODEV with the driver's reason"
  CUDA_VISIBLE_DEVICES= SUPRASEAL_C2_BACKEND=gpu SUPRASEAL_C2_LOG=warn timeout 60 ./supraseal-c2 bench --shape 2^14 --seed 1 --workers 1 --partitions 1 --modes two --witnesses 1 2>&1 | tail -n 2
  echo "== auto, GPU visible: the GPU backend"
  SUPRASEAL_C2_LOG=warn timeout 60 ./supraseal-c2 bench --shape 2^14 --seed 1 --workers 1 --partitions 1 --modes two --witnesses 1 2>&1 | grep -E "^\| two, W=1"
} > $L 2>&1
grep -E "^(== |rc=|test result|test .*FAILED|failures:|thread .* panicked|error|\| two)" $L

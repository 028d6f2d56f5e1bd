# Lease 1, call A: the GPU test set on 8ecd408 (into_compute_after, kernel table macro, gather thread cap, Room), then the porep-32g file.
set -u
cd "$(dirname "$0")"
export SUPRASEAL_C2_CACHE=/tmp/ssc2-cache
L=$OUT/tests.log
{
  echo "commit $(cat COMMIT)"; nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv; nproc; free -g | head -2
  for t in gpu_pinning prove_verify gpu lock_protocol gpu_proofs bad_input; do
    echo "== $t"; s=$(date +%s)
    case $t in
      prove_verify) timeout 300 ./$t --nocapture a_call_of_circuits_sharing_buffers ;;
      gpu|lock_protocol) timeout 300 ./$t --test-threads=1 --nocapture ;;
      *) timeout 300 ./$t --nocapture ;;
    esac
    echo "rc=$? ($t, $(( $(date +%s) - s )) s)"
  done
} > $L 2>&1
grep -E "^(== |rc=|test result|test .*FAILED|failures:|thread .* panicked)" $L
df -h /tmp | tail -n 1
( time ./supraseal-c2 params synth --shape porep-32g --seed 1 --out /tmp/p32.params ) > $OUT/synth.log 2>&1; echo "synth rc=$?"; tail -n 4 $OUT/synth.log

# Lease 1: the GPU test set on 08e5b68 (ring FIFO, circuit 0's fill between the locks,
# per-vector direct copies, fill-error fallback), then #32's GPU-host checks.
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
  echo "== staging threads 8, ring: gpu_pinning again"
  SUPRASEAL_C2_STAGING_THREADS=8 timeout 200 ./gpu_pinning; echo "rc=$?"
} > $L 2>&1
grep -E "^(== |rc=|test result|test .*FAILED|failures:|thread .* panicked)" $L
H=$OUT/host-checks.log
{
  b() { timeout 120 ./supraseal-c2 bench --shape 2^14 --seed 1 --workers 1 --partitions 1 --modes two --witnesses 1 2>&1 | grep -v -E "^ *$" | tail -n 12; echo "rc=$?"; }
  echo "== GPU build, no GPU visible (CUDA_VISIBLE_DEVICES=''): expect one WARN, CPU backend"
  CUDA_VISIBLE_DEVICES= SUPRASEAL_C2_LOG=warn b
  echo "== BELLMAN_NO_GPU=1 on a GPU host: expect the CPU backend, no WARN"
  BELLMAN_NO_GPU=1 SUPRASEAL_C2_LOG=warn b
  echo "== BELLMAN_NO_GPU=0: expect the GPU backend"
  BELLMAN_NO_GPU=0 SUPRASEAL_C2_LOG=warn b
  echo "== SUPRASEAL_C2_BACKEND=gpu with no GPU visible: expect ENODEV"
  CUDA_VISIBLE_DEVICES= SUPRASEAL_C2_BACKEND=gpu SUPRASEAL_C2_LOG=warn b
} > $H 2>&1
cat $H

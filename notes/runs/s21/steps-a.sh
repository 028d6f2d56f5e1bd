# Lease 1: the GPU tests on 40e44a5 (the quotient's spare b buffer for the staged a, msm_many's
# stream once per call, near-r MSM inputs), then the porep-32g file and ours BATCH=1,3,10 WORKERS=3
# (3 witnesses), key resident and as a 16 GiB card; same seed as s20, so the proofs must equal
# 8ecd408's (which equal upstream 0.1.2's). Call 1: `steps-a.sh tests` (tests, then the file); call 2: `steps-a.sh`.
set -u
cd "$(dirname "$0")"
export SUPRASEAL_C2_CACHE=/tmp/ssc2-cache
if [ "${1:-}" = tests ]; then
L=$OUT/tests.log
{
  echo "commit $(cat COMMIT)"; nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv; nproc; free -g | head -2
  for t in gpu gpu_proofs lock_protocol gpu_params; do
    echo "== $t"; s=$(date +%s)
    case $t in
      gpu|lock_protocol|gpu_params) timeout 200 ./$t --test-threads=1 --nocapture ;;
      *) timeout 150 ./$t --nocapture ;;
    esac
    echo "rc=$? ($t, $(( $(date +%s) - s )) s)"
  done
} > $L 2>&1
grep -E "^(== |rc=|test result|test .*FAILED|failures:|thread .* panicked)" $L
( time ./supraseal-c2 params synth --shape porep-32g --seed 1 --out /tmp/p32.params ) > $OUT/synth.log 2>&1; echo "synth rc=$?"; tail -n 4 $OUT/synth.log
exit 0
fi
mkdir -p $OUT/ours
env OUT=$OUT/ours BATCH=1,3,10 WORKERS=3 PARTITIONS=1 KEEP=1 SKIP_UPSTREAM=1 OURS_ENV="SUPRASEAL_C2_LOG=supraseal_c2::srs=info,supraseal_c2::gpu=info,supraseal_c2::gpu::stage=debug,supraseal_c2::pipeline::phases=debug,supraseal_c2=warn" ./run.sh porep-same-run > /dev/null 2>&1
grep -E "real|rc=" $OUT/ours/gpu-run-porep-same-run.log | head -4
grep -v -E "^  [a-z_0-9]*: [0-9]* % of|DEBUG|^ *(at|in) " $OUT/ours/gpu-run-porep-same-run.log | grep -E "^\||wall|rc=|GPU|busy|==|peak" | tail -n 40
cmp $OUT/ours/proofs-porep-32g-ours.txt 8ecd408-proofs-ours.txt && echo "porep-32g: proofs byte-identical to 8ecd408's ($(wc -l < 8ecd408-proofs-ours.txt); those equal upstream 0.1.2's)"
grep "next circuit staged ahead" $OUT/ours/gpu-run-porep-same-run.log | grep -o "vectors=[0-9]" | sort | uniq -c

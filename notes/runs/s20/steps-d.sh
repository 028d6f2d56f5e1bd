# Lease 2, call B: the porep-32g file, then ours BATCH=1,3,10 WORKERS=3 (3 witnesses), key resident and
# as a 16 GiB card; same seed as call B of lease 1, so the proofs must equal 8ecd408's (which equal upstream's).
set -u
cd "$(dirname "$0")"
export SUPRASEAL_C2_CACHE=/tmp/ssc2-cache
mkdir -p $OUT/ours
env OUT=$OUT/ours BATCH=1,3,10 WORKERS=3 PARTITIONS=1 KEEP=1 SKIP_UPSTREAM=1 OURS_ENV="SUPRASEAL_C2_LOG=supraseal_c2::srs=info,supraseal_c2::gpu=info,supraseal_c2::gpu::stage=debug,supraseal_c2::pipeline::phases=debug,supraseal_c2=warn" ./run.sh porep-same-run > /dev/null 2>&1
grep -E "real|rc=" $OUT/ours/gpu-run-porep-same-run.log | head -4
grep -v -E "^  [a-z_0-9]*: [0-9]* % of|DEBUG|^ *(at|in) " $OUT/ours/gpu-run-porep-same-run.log | grep -E "^\||wall|rc=|GPU|busy|==|peak" | tail -n 40
cmp $OUT/ours/proofs-porep-32g-ours.txt 8ecd408-proofs-ours.txt && echo "porep-32g: proofs byte-identical to 8ecd408's ($(wc -l < 8ecd408-proofs-ours.txt); those equal upstream 0.1.2's)"
grep -c "next circuit staged ahead" $OUT/ours/gpu-run-porep-same-run.log; grep "next circuit staged ahead" $OUT/ours/gpu-run-porep-same-run.log | grep -o "vectors=[0-9]" | sort | uniq -c

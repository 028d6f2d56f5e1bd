# Lease 1, call C: porep-32g same run, BATCH=10 WORKERS=1 (1 witness), ours then upstream, on the kept file.
set -u
cd "$(dirname "$0")"
export SUPRASEAL_C2_CACHE=/tmp/ssc2-cache
run() { tag=$1; shift; mkdir -p $OUT/$tag; env OUT=$OUT/$tag "$@" ./run.sh porep-same-run > /dev/null 2>&1; grep -v -E "^  [a-z_0-9]*: [0-9]* % of|DEBUG|^ *(at|in) " $OUT/$tag/gpu-run-porep-same-run.log | grep -E "^\||wall|rc=|GPU|busy|==|peak" | tail -n ${TAILN:-60}; }
run ours BATCH=10 WORKERS=1 PARTITIONS=1 KEEP=1 SKIP_UPSTREAM=1 OURS_ENV="SUPRASEAL_C2_LOG=supraseal_c2::srs=info,supraseal_c2::gpu=info,supraseal_c2::pipeline::phases=debug,supraseal_c2=warn"
run upstream BATCH=10 WORKERS=1 PARTITIONS=1 KEEP=1 SKIP_OURS=1
cmp $OUT/ours/proofs-porep-32g-ours.txt $OUT/upstream/proofs-porep-32g-upstream.txt && echo "porep-32g W=1 N=10: proofs byte-identical ($(wc -l < $OUT/ours/proofs-porep-32g-ours.txt))"

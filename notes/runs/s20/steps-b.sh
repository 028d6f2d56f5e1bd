# Lease 1, call B: porep-32g same run, ours BATCH=1,3,10 WORKERS=3 (3 witnesses), then upstream BATCH=1 WORKERS=3, on the kept file.
set -u
cd "$(dirname "$0")"
export SUPRASEAL_C2_CACHE=/tmp/ssc2-cache
run() { tag=$1; shift; mkdir -p $OUT/$tag; env OUT=$OUT/$tag "$@" ./run.sh porep-same-run > /dev/null 2>&1; grep -v -E "^  [a-z_0-9]*: [0-9]* % of|DEBUG|^ *(at|in) " $OUT/$tag/gpu-run-porep-same-run.log | grep -E "^\||wall|rc=|GPU|busy|==|peak" | tail -n ${TAILN:-60}; }
run ours BATCH=1,3,10 WORKERS=3 PARTITIONS=1 KEEP=1 SKIP_UPSTREAM=1 OURS_ENV="SUPRASEAL_C2_LOG=supraseal_c2::srs=info,supraseal_c2::gpu=info,supraseal_c2::pipeline::phases=debug,supraseal_c2=warn"
run upstream BATCH=1 WORKERS=3 PARTITIONS=1 KEEP=1 SKIP_OURS=1

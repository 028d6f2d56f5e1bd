# 2^24 N=10 one call: ring (default) vs register vs caller-pinned, then upstream; GPU samples.
set -u
cd "$(dirname "$0")"
export SUPRASEAL_C2_CACHE=/tmp/ssc2-cache
run() { tag=$1; shift; mkdir -p $OUT/$tag; env OUT=$OUT/$tag LOG_DOMAIN=24 BATCH=${NB:-10} WORKERS=${W:-1} PARTITIONS=1 MODES=${MODES:-two,two-limit=16384} KEEP=1 "$@" ./run.sh porep-same-run > /dev/null 2>&1; grep -v -E "^  [a-z_0-9]*: [0-9]* % of|DEBUG|^ *(at|in) " $OUT/$tag/gpu-run-porep-same-run.log | tail -${TAILN:-25}; }
run ring SKIP_UPSTREAM=1 OURS_ENV="SUPRASEAL_C2_LOG=supraseal_c2::srs=info,supraseal_c2::gpu=info,supraseal_c2::pipeline=debug,supraseal_c2::gpu::stage=debug,supraseal_c2=warn"
run register SKIP_UPSTREAM=1 OURS_ENV=SUPRASEAL_C2_HOST_STAGING=register
run pinned SKIP_UPSTREAM=1 CALLER_PINNED=1
run upstream SKIP_OURS=1
for t in register pinned; do cmp $OUT/ring/proofs-e24-ours.txt $OUT/$t/proofs-e24-ours.txt && echo "ring = $t proofs"; done
cmp $OUT/ring/proofs-e24-ours.txt $OUT/upstream/proofs-e24-upstream.txt && echo "ring = upstream proofs ($(wc -l < $OUT/ring/proofs-e24-ours.txt))"

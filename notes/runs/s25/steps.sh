# The runs that measure main's head on the H200 (session 24's logs in notes/runs/s24/ were made
# with this script's previous version: git log -- notes/runs/s24/steps.sh).
# Pack: notes/runs/s25/pack.sh. Each argument is one step, run in order, in one device call:
#   tests     GPU tests (gpu, gpu_proofs 500-proof loop, lock_protocol, gpu_params,        ~270 s
#             batch_add_beside: SHA-256 2^18 keys made there, ~1 min); TESTS="…" picks them
#   synth-bg  writes the porep-32g file (/tmp/p32.params) in the background; `wait` joins  ~270 s
#   ntt       the NTT 2^20 … 2^27: sppark 0.1.16's, then ours (DIT and DIF, radix 2, 4, 8, 2) ~130 s
#             (NTT_BINS="gpu_bench other_build" runs each build in turn, e.g. one from pack.sh's build_variant)
#   g2        G2 MSM and batch addition at 2^18, 2^20: gpu_bench of 69508fc (sppark's G2    ~150 s
#             mixed addition, out of line), then ours (cuda/xyzz_add.cuh, inline)
#   bench     the G1 MSM: sppark 0.1.16's, then ours (launch sweep at 2^26, tail sweep)    ~250 s
#   porep     ours BATCH=1,3,10 WORKERS=2,3 PARTITIONS=2, resident and as a 16 GiB card    ~280 s
#             (PBATCH, PWORKERS and MODES=two|two-limit=16384 narrow it)
#   upstream  upstream 0.1.2, the same shapes as porep, on the same file, same seed       ~310 s
#   porep16   ours as a 16 GiB card, W = 2 x 2: the defaults (8 staging threads, the batch    ~300 s
#             additions beside the last H-MSM), then 69f51b4's defaults (4 threads, after it)
#   porep16b  the same: the batch additions after the H-MSM, then caller-pinned buffers     ~300 s
#             (VARIANTS="default threads4 after beside threads8 beside8 pinned" picks and
#             orders them, ~150 s each; each names its variables, so a variant is the same
#             settings whatever the defaults)
#   resident  ours, the key resident (beside one pre-stage, so an 80 GB card holds       ~100 s each
#             porep-32g's), then streamed: W = 1, 2 one-circuit calls x 2 and one call of 10
#             circuits, per SUPRASEAL_C2_KEY_RESIDENT in RKEYS (default "auto off"); prints the
#             rows and each circuit's NTT and H-MSM times, and checks the proofs; needs /tmp/p32.params
#   prestage  ours, the key resident, W = 2, 3 one-circuit calls x RPARTS (3), in the bench's   ~60 s each
#             modes RMODES (default two,two-whole,two,two-whole: part of circuit 0 staged in phase 1
#             where no whole circuit fits, against whole circuits or nothing; two-noretry: no second
#             admission while waiting for the compute lock) in one process; prints the rows, the
#             phase-1 outcomes (prestage=ok|part|fallback, then how many vectors were staged while
#             waiting) and NTT steps; RBATCH=10 adds a 10-circuit call per mode, and two-beside
#             runs the batch additions beside the H-MSM (session 38: RWORKERS=1,3 RBATCH=10
#             RMODES=two,two-beside,two,two-beside); needs /tmp/p32.params
#   cache     ours, W = 2,3 one-circuit calls x 2 over a streamed key (SUPRASEAL_C2_KEY_RESIDENT=off),  ~70 s each
#             SUPRASEAL_C2_COMPUTE_CACHE per run in CACHES (default "resident busy resident busy"):
#             the compute pool trimmed after every call, then kept for the calls in flight; prints
#             the rows, each call's compute-pool allocation time and whether it kept the cache, and
#             checks the proofs; needs /tmp/p32.params (synth-bg, wait)
#   table     ours, W = 1 x 1 and one call of 10 circuits over a streamed key, once per     ~70 s each
#             SUPRASEAL_C2_STREAMED_MSM in FORMS (default "chunks table chunks table"; TMODES
#             adds two-limit=16384): prints the rows, each H-MSM's time, and checks the proofs;
#             needs /tmp/p32.params (synth-bg, wait)
#   tailk     the tails' K fitted to the device's waves against K = 32, gpu_bench's tail rows    ~60 s
#   msmab     the G1 MSM 2^20 … 2^26: sppark 0.1.16's, pack.sh's BASE build's, the head's     ~250 s
#   p16       a 16 GiB card, W = 2 x 3, head then base (CLIS; BASE_CLI pack)              ~90 s each
#   bundle    everything under $OUT but steps*.log into one bundle-HHMMSS.tgz (at most 8 files  ~1 s
#             come back from a call: run it last in a call whose steps write run directories)
#   hmsm      the H-MSM's 2^27 points in a streamed key's forms, kernels only (one MSM per  ~200 s
#             2^23-point chunk; the chunks into one shared table at c = 18..20 and K = 16, 64, 128;
#             one MSM per 2^25 points), then one MSM over them at c = 19..21 (BENCH_MSM_H_SWEEP=1)
#   call10    one call of 10 circuits, ours (key resident) and upstream 0.1.2 in turn, C10ORDER   ~65 s ours,
#             (default "ours upstream ours"), same file and card; needs /tmp/p32.params          ~130 s upstream
#             (C10ENV: more variables for ours, e.g. SUPRASEAL_C2_MSM_SORT_BESIDE=on)
#   msmtests  the GPU MSM tests alone (every launch choice with and without the sort beside)  ~100 s
#   hshape    the H-MSM's shape alone, the sort beside on, off, on, off, then (c, K) =       ~200 s
#             (20, 32), (20, 128), (20, 256), (22, 128), (22, 256), (24, 256) twice
#             (HSHAPE_BINS="gpu_bench gpu_bench_base": the head's build, then pack.sh's BASE build)  each
#   sortbeside  the GPU MSM tests, sppark's MSM, ours with the sort beside the accumulation  ~350 s
#             and without (2^20 … 2^26, and one MSM of the H-MSM's 2^27 points on, off, on, off)
#   (bench, hshape and sortbeside sample nvidia-smi beside the run: each MSM size's peak VRAM,
#   utilisation and peak RSS, sppark's and ours, are in $OUT/rows-STEP.txt)
#   radix     ours, W = 1 x 3 one-circuit calls, once per NTT radix (the key resident on a   ~75 s each
#             card over 80 GB), per CLI in CLIS (default "head"; "head base head base" with a pack
#             built with BASE_CLI=REV alternates with that revision's CLI, in the same lease), and
#             SUPRASEAL_C2_NTT_RADIX in RADICES (default "2 8 4 2": the
#             default first and last); prints each call's NTT step (ntt_ms) and hold, and
#             checks the proofs; needs /tmp/p32.params (synth-bg, wait); each radix runs once per
#             SUPRASEAL_C2_MSM_SORT_BESIDE value in SORTS (default "auto"; e.g. "off on off on")
# Planned calls on a warm machine (the file lives in /tmp while it stays warm):
#   (session 45 ran, on an H100 with a pack of BASE=3da1a11 BASE_CLI=3da1a11: TESTS="gpu
#               gpu_proofs" synth-bg tests msmab wait; RADICES=2 SORTS=auto CLIS="head base head
#               base" C10ORDER="ours ours" radix call10 (and a `tablefit` step since removed);
#               TESTS="lock_protocol gpu_params batch_add_beside" tests p16; CLIS="base head"
#               radix p16: ~1,660 s of device time with the start)
#   (session 46 planned, for a pack built on branch s46-kernels with BASE=3f0d5b4
#               BASE_CLI=3f0d5b4; no device could be started, so none ran: TESTS="gpu gpu_proofs"
#               synth-bg tests msmab wait; RADICES=2 SORTS=auto CLIS="head base head base"
#               C10ORDER="ours ours" hshape radix call10; TESTS="lock_protocol gpu_params
#               batch_add_beside" tests g2 p16)
#   (session 47 ran, on an H100 with the session-46 plan's pack and calls: ~1,650 s of device
#               time with one failed try; logs notes/runs/s47/)
#   (session 47 plans, for a pack of main with BASE=s47-g1-acc BASE_CLI=78ff5a3 (gpu_bench_base:
#               G1's accumulation without the record `one` and the scan in blocks of 256, so
#               that the sort can run beside the accumulation; the base CLI: K = 32 at the H-MSM):
#               TESTS="gpu gpu_proofs" synth-bg tests msmab wait; RADICES=2 SORTS=auto
#               CLIS="head base head base" C10ORDER="ours ours" HSHAPE_BINS="gpu_bench gpu_bench_base"
#               hshape radix call10 bundle: hshape twice, ~340 s, so radix and call10 may need a
#               call of their own)
#   (session 48 ran, on an H100 with that pack rebased (head: main with the branch, BASE=6f50038
#               BASE_CLI=6f50038): TESTS="gpu gpu_proofs" synth-bg tests msmab wait; RADICES=2
#               SORTS=auto CLIS="head base head base" HSHAPE_BINS="gpu_bench gpu_bench_base"
#               hshape radix bundle: ~965 s of calls, ~450 s of start, five failed tries ~300 s;
#               logs notes/runs/s48/)
#   (session 48 plans, for a pack of branch s48-scatter with BASE=da12813 BASE_CLI=da12813
#               (the scatter beside the accumulation in 2 blocks per SM): TESTS="gpu gpu_proofs
#               lock_protocol gpu_params batch_add_beside" synth-bg tests wait (~450 s);
#               HSHAPE_BINS="gpu_bench gpu_bench_base" hshape bundle (~400 s); by what hshape
#               shows, RADICES=2 SORTS=auto CLIS="head base head base" C10ORDER="ours upstream
#               ours" radix call10 bundle; p16 (CLIS="head base"))
#   on an H200 (issue 31's measurements are H200 targets; none lent since session 28):
#               steps.sh hshape radix (RADICES=2 SORTS=auto: the W = 1 resident hold, ≤ 1.5 s,
#               with the GPU busy within the holds) · sortbeside · call10 · prestage
#               (RWORKERS=2,3 RMODES=two,two) · upstream
#   (30 minutes of device time hold the start and about four such calls; a start can take ~6 min
#   of it, and a try that finds no machine costs 90–180 s)
# Same seed and shapes as session 24's run: every proof must equal the reference's proof of the
# same circuit (70cf2f7-proofs-upstream.txt: upstream 0.1.2's, equal to ours at 70cf2f7).
set -u
cd "$(dirname "$0")"
export SUPRASEAL_C2_CACHE=/tmp/ssc2-cache
same_proofs() {  # each proof of $1 against the reference's proof of the same circuit (first two fields)
  awk 'NR == FNR { ref[$1 " " $2] = $0; next }
       ($1 " " $2) in ref { n++; if (ref[$1 " " $2] != $0) { bad++; print "differs: " $1 " " $2 } next }
       { missing++ }
       END { printf "%d proofs compared with the reference, %d differ, %d without a reference\n", n, bad, missing }' \
    70cf2f7-proofs-upstream.txt "$1"
}
hshape() {  # $1: the gpu_bench build (default gpu_bench)
  BENCH_MSM_MAX_LOG=19 BENCH_MSM_SWEEP_LOG=0 BENCH_NTT_MAX_LOG=19 BENCH_G2_MAX_LOG=17 BENCH_NTT_HOST=0 BENCH_MSM_H_SWEEP=resident timeout 320 ./${1:-gpu_bench}; echo "rc=$?"
}
# Runs "$@" into LOG (the second argument) with nvidia-smi sampled beside it into
# $OUT/nvsmi-NAME.csv (NAME the first), then writes each ROW of LOG (the benches print one
# per MSM size on stderr) with its peak device memory, mean utilisation and peak host RSS
# (gpu-samples.py) to $OUT/rows-NAME.txt.
sampled() {
  local name=$1 log=$2; shift 2
  # UTC for both, so that the saved samples cut the same wherever they are read again.
  TZ=UTC nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu --format=csv,noheader,nounits -lms 100 > $OUT/nvsmi-$name.csv &
  local smi=$! i
  for i in $(seq 50); do [ -s $OUT/nvsmi-$name.csv ] && break; sleep 0.1; done  # the first sample before the run
  "$@" > $log 2>&1
  kill $smi; wait $smi 2>/dev/null
  TZ=UTC python3 gpu-samples.py $OUT/nvsmi-$name.csv $log > $OUT/rows-$name.txt
}
# /tmp/pkb: links to this pack whose ./supraseal-c2 is pack.sh's BASE_CLI build, where the pack has one.
base_dir() {
  if [ -x supraseal-c2-base ]; then
    rm -rf /tmp/pkb && mkdir -p /tmp/pkb && for f in *; do ln -s "$PWD/$f" /tmp/pkb/; done
    rm /tmp/pkb/supraseal-c2 /tmp/pkb/COMMIT && cp supraseal-c2-base /tmp/pkb/supraseal-c2 && cp BASE_CLI /tmp/pkb/COMMIT
  fi
}
LOGS="SUPRASEAL_C2_LOG=supraseal_c2::srs=info,supraseal_c2::gpu=info,supraseal_c2::gpu::stage=debug,supraseal_c2::pipeline::phases=debug,supraseal_c2::groth16=debug,supraseal_c2=warn"
for step in "$@"; do
  echo "### $step at $(date +%T)"
  case "$step" in
  tests)
    L=$OUT/tests.log
    {
      echo "commit $(cat COMMIT)"; nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv; nproc; free -g | head -2
      for t in ${TESTS:-gpu gpu_proofs lock_protocol gpu_params batch_add_beside}; do
        echo "== $t"; s=$(date +%s)
        timeout 300 ./$t --test-threads=1 --nocapture
        echo "rc=$? ($t, $(( $(date +%s) - s )) s)"
      done
    } > $L 2>&1
    grep -E "^(== |rc=|test result|test .*FAILED|failures:|thread .* panicked)" $L
    ;;
  synth-bg)
    df -h /tmp | tail -n 1
    if [ "$(stat -c %s /tmp/p32.params 2>/dev/null)" = 47373928632 ]; then echo "reusing /tmp/p32.params" > $OUT/synth.log
    else ( { time ./supraseal-c2 params synth --shape porep-32g --seed 1 --out /tmp/p32.params; echo "rc=$?"; } > $OUT/synth.log 2>&1 ) > /dev/null 2>&1 &
    fi
    ;;
  wait)
    wait; tail -n 5 $OUT/synth.log
    ;;
  ntt)
    N=$OUT/ntt.log
    {
      echo "== sppark 0.1.16"; timeout 150 ./sppark_bench 20 27; echo "rc=$?"
      for b in ${NTT_BINS:-gpu_bench}; do
        echo "== ours ($b)"; BENCH_MSM_MAX_LOG=20 BENCH_MSM_SWEEP_LOG=20 BENCH_NTT_MAX_LOG=27 BENCH_G2_MAX_LOG=17 BENCH_NTT_HOST=0 timeout 200 ./$b; echo "rc=$?"
      done
    } > $N 2>&1
    grep -E "NTT|tail sweep|rc=|panicked|^== " $N
    ;;
  g2)
    [ -x gpu_bench_base ] || { echo "g2: no gpu_bench_base in the pack (built with BASE=none)"; continue; }
    B=$OUT/g2.log
    for b in gpu_bench_base gpu_bench; do
      echo "== $b ($( [ $b = gpu_bench ] && cat COMMIT || cat BASE ))"
      BENCH_MSM_MAX_LOG=20 BENCH_MSM_SWEEP_LOG=20 BENCH_NTT_MAX_LOG=20 BENCH_G2_MAX_LOG=20 BENCH_NTT_HOST=0 timeout 150 ./$b
      echo "rc=$?"
    done > $B 2>&1
    grep -E "^== |G2|rc=|panicked" $B
    ;;
  bench)
    K=$OUT/kernels.log
    bench_run() {
      echo "== sppark 0.1.16"; timeout 120 ./sppark_bench 26 19; echo "rc=$?"
      echo "== ours"; BENCH_MSM_SWEEP_LOG=26 BENCH_NTT_MAX_LOG=19 BENCH_G2_MAX_LOG=17 BENCH_NTT_HOST=0 timeout 220 ./gpu_bench; echo "rc=$?"
    }
    sampled bench $K bench_run
    grep -E "MSM|batch addition|sweep|rc=|panicked" $K | grep -v '^ROW '; cat $OUT/rows-bench.txt
    ;;
  msmtests)
    # The GPU MSM tests alone (sortbeside's second part).
    timeout 200 ./gpu msm --test-threads=1 --nocapture > $OUT/msmtests.log 2>&1; echo "rc=$?"
    grep -E "test result|match|panicked|FAILED" $OUT/msmtests.log | tail -n 12
    ;;
  hshape)
    # The H-MSM's shape alone (one MSM of 2^27, c = 20) with the sort beside its accumulation and
    # without, on, off, on, off (sortbeside's first part; NO_HSHAPE=1 leaves it out there).
    # HSHAPE_BINS="gpu_bench gpu_bench_base" runs each build in turn (hshape.log, hshape-gpu_bench_base.log).
    for b in ${HSHAPE_BINS:-gpu_bench}; do
      n=hshape; [ "$b" = gpu_bench ] || n=hshape-$b
      echo "== $b"; sampled $n $OUT/$n.log hshape $b
      grep -E "MSM|match|rc=|panicked" $OUT/$n.log | grep -v '^ROW '; cat $OUT/rows-$n.txt
    done
    ;;
  sortbeside)
    # The MSM's sort beside its accumulation (MsmTuning::sort), in one run: the GPU MSM
    # tests (every launch choice with and without it), sppark 0.1.16's MSM, then ours at 2^20 …
    # 2^26 with a row each way, and the H-MSM's shape (one MSM of 2^27, c = 20) on, off, on, off.
    K=$OUT/sortbeside.log
    sortbeside_run() {
      [ -z "${NO_HSHAPE:-}" ] && { echo "== ours, the H-MSM's shape"; hshape; }
      echo "== gpu msm tests"; timeout 200 ./gpu msm --test-threads=1 --nocapture; echo "rc=$?"
      echo "== sppark 0.1.16"; timeout 120 ./sppark_bench 26 19; echo "rc=$?"
      echo "== ours"; BENCH_MSM_SWEEP_LOG=0 BENCH_NTT_MAX_LOG=19 BENCH_G2_MAX_LOG=17 BENCH_NTT_HOST=0 timeout 200 ./gpu_bench; echo "rc=$?"
    }
    sampled sortbeside $K sortbeside_run
    grep -E "MSM|test result|match|rc=|panicked|^== " $K | grep -v "tail sweep" | grep -v '^ROW '; cat $OUT/rows-sortbeside.txt
    ;;
  porep)
    mkdir -p $OUT/ours
    env OUT=$OUT/ours BATCH=${PBATCH:-1,3,10} WORKERS=${PWORKERS:-2,3} PARTITIONS=2 KEEP=1 SKIP_UPSTREAM=1 OURS_ENV="$LOGS" timeout 330 ./run.sh porep-same-run > /dev/null 2>&1
    echo "run.sh rc=$?"
    G=$OUT/ours/gpu-run-porep-same-run.log
    grep -E "real|rc=" $G | head -4
    grep -v -E "^  [a-z_0-9]*: [0-9]* % of|DEBUG|^ *(at|in) |^ROW" $G | grep -E "^\||wall|rc=|GPU|busy|==|peak" | tail -n 40
    grep -o "compute-pool allocations of the call.*" $G | head -3
    # Where a tail set's put-ahead time goes (setup, allocations, copies), and the tail MSMs' times.
    grep -o "a tail's set put ahead.*" $G | sed 's/.*copies enqueued //' | head -8
    grep -o "then the MSMs group=.*" $G | sed 's/then the MSMs //' | head -8
    same_proofs $OUT/ours/proofs-porep-32g-ours.txt
    ;;
  porep16|porep16b)
    variants="default threads4"; [ "$step" = porep16b ] && variants="after pinned"
    variants=${VARIANTS:-$variants}
    for variant in $variants; do
      mkdir -p $OUT/$variant
      case $variant in
      default) extra=; pinned= ;;
      beside) extra="SUPRASEAL_C2_BATCH_ADD_BESIDE=auto SUPRASEAL_C2_STAGING_THREADS=4"; pinned= ;;
      after) extra="SUPRASEAL_C2_BATCH_ADD_BESIDE=off"; pinned= ;;
      threads4) extra="SUPRASEAL_C2_BATCH_ADD_BESIDE=off SUPRASEAL_C2_STAGING_THREADS=4"; pinned= ;;
      threads8) extra="SUPRASEAL_C2_BATCH_ADD_BESIDE=off SUPRASEAL_C2_STAGING_THREADS=8"; pinned= ;;
      beside8) extra="SUPRASEAL_C2_BATCH_ADD_BESIDE=auto SUPRASEAL_C2_STAGING_THREADS=8"; pinned= ;;
      pinned) extra=; pinned=1 ;;
      esac
      env OUT=$OUT/$variant WORKERS=2 PARTITIONS=2 MODES=two-limit=16384 KEEP=1 SKIP_UPSTREAM=1 CALLER_PINNED=$pinned \
        OURS_ENV="$LOGS $extra" timeout 280 ./run.sh porep-same-run > /dev/null 2>&1
      echo "run.sh rc=$? ($variant)"
      grep -v -E "DEBUG|^ *(at|in) |^ROW" $OUT/$variant/gpu-run-porep-same-run.log | grep -E "^\||wall|rc=|peak" | tail -n 12
      grep -o -E "side_ms=[0-9.]+ waited_ms=[0-9.]+" $OUT/$variant/gpu-run-porep-same-run.log | sort | uniq -c | head -n 6
      same_proofs $OUT/$variant/proofs-porep-32g-ours.txt
    done
    ;;
  call10)
    # The shape lotus and Curio's FFI send: one call of 10 circuits, ours (the key resident, the
    # default) and upstream 0.1.2 in turn on the same file and card, in C10ORDER's order (each run
    # also proves one W = 1 partition, the bench's first row); prints the rows and checks the proofs.
    [ "$(stat -c %s /tmp/p32.params 2>/dev/null)" = 47373928632 ] || { echo "call10: no /tmp/p32.params (run synth-bg and wait first)"; exit 2; }
    i=0
    for lib in ${C10ORDER:-ours upstream ours}; do
      i=$((i + 1)); R=$OUT/call10-$lib-$i; mkdir -p $R
      if [ $lib = ours ]; then skip="SKIP_UPSTREAM=1"; else skip="SKIP_OURS=1"; fi
      env OUT=$R WORKERS=1 PARTITIONS=1 BATCH=10 MODES=two KEEP=1 $skip OURS_ENV="$LOGS ${C10ENV:-}" \
        timeout ${C10TIMEOUT:-200} ./run.sh porep-same-run > /dev/null 2>&1
      echo "run.sh rc=$? ($lib)"
      grep -v -E "DEBUG|^ *(at|in) |^ROW" $R/gpu-run-porep-same-run.log | grep -E "^\| (ours|upstream)|rc=|peak|wall|busy" | tail -n 8
      same_proofs $R/proofs-porep-32g-$lib.txt
    done
    # Every run's proofs against upstream's of this call, on the device (a call returns only so
    # many files): the same (row, partition) must give the same bytes.
    U=$(ls $OUT/call10-upstream-*/proofs-porep-32g-upstream.txt 2>/dev/null | head -n 1)
    for P in $OUT/call10-ours-*/proofs-porep-32g-ours.txt; do
      [ -n "$U" ] && [ -f "$P" ] || continue
      awk 'NR == FNR { u[$1 " " $2] = $3; next } ($1 " " $2) in u { n++; if (u[$1 " " $2] != $3) bad++ }
           END { printf "%s: %d proofs compared with upstream'"'"'s of this call, %d differ\n", FILENAME, n, bad }' "$U" "$P"
    done
    ;;
  upstream)
    mkdir -p $OUT/upstream
    env OUT=$OUT/upstream BATCH=1,3,10 WORKERS=2,3 PARTITIONS=2 KEEP=1 SKIP_OURS=1 timeout 420 ./run.sh porep-same-run > /dev/null 2>&1
    echo "run.sh rc=$?"
    grep -v -E "^ *(at|in) |^ROW" $OUT/upstream/gpu-run-porep-same-run.log | grep -E "^\||wall|rc=|GPU|busy|==|peak|load" | tail -n 20
    same_proofs $OUT/upstream/proofs-porep-32g-upstream.txt
    ;;
  radix)
    [ "$(stat -c %s /tmp/p32.params 2>/dev/null)" = 47373928632 ] || { echo "radix: no /tmp/p32.params (run synth-bg and wait first)"; exit 2; }
    # CLIS="head base head base" alternates the pack's CLI with pack.sh's BASE_CLI build
    # (supraseal-c2-base), each run from a directory of links whose ./supraseal-c2 is that CLI.
    base_dir
    i=0
    for cli in ${CLIS:-head}; do
    dir=$PWD; [ $cli = base ] && dir=/tmp/pkb
    [ -x $dir/supraseal-c2 ] || { echo "radix: no CLI for $cli (pack.sh with BASE_CLI=REV)"; exit 2; }
    for radix in ${RADICES:-2 8 4 2}; do
    for sort in ${SORTS:-auto}; do
      i=$((i + 1)); R=$OUT/radix$radix-sort$sort-$i; [ $cli = base ] && R=$R-base; mkdir -p $R
      env OUT=$R WORKERS=1 PARTITIONS=3 MODES=two KEEP=1 SKIP_UPSTREAM=1 \
        OURS_ENV="$LOGS SUPRASEAL_C2_NTT_RADIX=$radix SUPRASEAL_C2_MSM_SORT_BESIDE=$sort" \
        timeout 200 $dir/run.sh porep-same-run > /dev/null 2>&1
      echo "run.sh rc=$? (radix $radix, sort beside $sort, CLI $cli: $(cat $dir/COMMIT))"
      grep -o -E "ntt_ms=[0-9.]+ h_msm_ms=[0-9.]+" $R/gpu-run-porep-same-run.log | tr '\n' ' '; echo
      grep -v -E "DEBUG|^ *(at|in) |^ROW" $R/gpu-run-porep-same-run.log | grep -E "^\| ours|^\| two, W=1|rc=" | tail -n 4
      same_proofs $R/proofs-porep-32g-ours.txt
    done
    done
    done
    ;;
  resident)
    # The key resident beside one pre-stage (an 80 GB card holds porep-32g's), then streamed, in turn:
    # W = 1, 2 one-circuit calls x 2 and one call of 10 circuits each (RKEYS picks and orders them).
    [ "$(stat -c %s /tmp/p32.params 2>/dev/null)" = 47373928632 ] || { echo "resident: no /tmp/p32.params (run synth-bg and wait first)"; exit 2; }
    for keymode in ${RKEYS:-auto off}; do
      R=$OUT/key-$keymode; mkdir -p $R
      env OUT=$R WORKERS=${RWORKERS:-1,2} PARTITIONS=2 BATCH=10 MODES=two KEEP=1 SKIP_UPSTREAM=1 \
        OURS_ENV="$LOGS SUPRASEAL_C2_KEY_RESIDENT=$keymode" timeout 250 ./run.sh porep-same-run > /dev/null 2>&1
      echo "run.sh rc=$? (SUPRASEAL_C2_KEY_RESIDENT=$keymode)"
      G=$R/gpu-run-porep-same-run.log
      grep -o -E "key resident on the device.*|resident key released.*|key not made resident.*" $G | head -3
      grep -v -E "DEBUG|^ *(at|in) |^ROW" $G | grep -E "^\| ours|rc=|peak" | tail -n 8
      grep -o -E "ntt_ms=[0-9.]+ h_msm_ms=[0-9.]+" $G | tr '\n' ' '; echo
      same_proofs $R/proofs-porep-32g-ours.txt
    done
    ;;
  prestage)
    # The key resident (auto), W = 2, 3 one-circuit calls x RPARTS per mode; prints the rows, the
    # calls' phase-1 outcomes and NTT steps, and checks the proofs.
    [ "$(stat -c %s /tmp/p32.params 2>/dev/null)" = 47373928632 ] || { echo "prestage: no /tmp/p32.params (run synth-bg and wait first)"; exit 2; }
    i=0
    # The bench's modes set SUPRASEAL_C2_PRESTAGE (two: on; two-whole: whole), in RMODES's order, in one process.
    R=$OUT/prestage; mkdir -p $R
    env OUT=$R WORKERS=${RWORKERS:-2,3} PARTITIONS=${RPARTS:-3} ${RBATCH:+BATCH=$RBATCH} MODES=${RMODES:-two,two-whole,two,two-whole} KEEP=1 SKIP_UPSTREAM=1 \
      OURS_ENV="$LOGS,supraseal_c2::pipeline::report=info" timeout ${RTIMEOUT:-400} ./run.sh porep-same-run > /dev/null 2>&1
    echo "run.sh rc=$? (modes ${RMODES:-two,two-whole,two,two-whole})"
    G=$R/gpu-run-porep-same-run.log
    grep -o -E "resident key released.*" $G | head -2
    grep -v -E "DEBUG|^ *(at|in) |^ROW" $G | grep -E "^\| ours|rc=|peak" | tail -n 16
    # Per call, in order: its phase-1 outcome, compute-lock hold and NTT step (ms).
    grep "proving call" $G | sed -E 's/.*prestage="?([a-z]+)"?( restaged=([0-9]))?.*compute_hold_ms=([0-9.]+).*ntt_ms=([0-9.]+).*/\1\3 hold \4 ntt \5/' | tr '\n' ';'; echo
    same_proofs $R/proofs-porep-32g-ours.txt
    ;;
  cache)
    [ "$(stat -c %s /tmp/p32.params 2>/dev/null)" = 47373928632 ] || { echo "cache: no /tmp/p32.params (run synth-bg and wait first)"; exit 2; }
    i=0
    for cache in ${CACHES:-resident busy resident busy}; do
      i=$((i + 1)); R=$OUT/cache-$cache-$i; mkdir -p $R
      env OUT=$R WORKERS=2,3 PARTITIONS=2 MODES=two KEEP=1 SKIP_UPSTREAM=1 \
        OURS_ENV="$LOGS SUPRASEAL_C2_KEY_RESIDENT=off SUPRASEAL_C2_COMPUTE_CACHE=$cache" timeout 200 ./run.sh porep-same-run > /dev/null 2>&1
      echo "run.sh rc=$? (SUPRASEAL_C2_COMPUTE_CACHE=$cache)"
      grep -v -E "DEBUG|^ *(at|in) |^ROW" $R/gpu-run-porep-same-run.log | grep -E "^\| ours|rc=" | tail -n 4
      grep -o -E "allocations=[0-9]+ alloc_ms=[0-9.]+ trim_ms=[0-9.]+ cache_kept=[a-z]+" $R/gpu-run-porep-same-run.log | sed 's/allocations=[0-9]* //' | tr '\n' ';'; echo
      grep -o -E "ntt_ms=[0-9.]+ h_msm_ms=[0-9.]+" $R/gpu-run-porep-same-run.log | tr '\n' ' '; echo
      same_proofs $R/proofs-porep-32g-ours.txt
    done
    ;;
  table)
    [ "$(stat -c %s /tmp/p32.params 2>/dev/null)" = 47373928632 ] || { echo "table: no /tmp/p32.params (run synth-bg and wait first)"; exit 2; }
    i=0
    for form in ${FORMS:-chunks table chunks table}; do
      # The modes in the folder's name: a second `table` step in one call keeps the first's logs.
      i=$((i + 1)); R=$OUT/table-$form-$(echo "${TMODES:-two}" | tr -c 'A-Za-z0-9._\n-' _)-$i; mkdir -p $R
      env OUT=$R WORKERS=1 PARTITIONS=1 BATCH=10 MODES=${TMODES:-two} KEEP=1 SKIP_UPSTREAM=1 \
        OURS_ENV="$LOGS SUPRASEAL_C2_KEY_RESIDENT=off SUPRASEAL_C2_STREAMED_MSM=$form" timeout 250 ./run.sh porep-same-run > /dev/null 2>&1
      echo "run.sh rc=$? (SUPRASEAL_C2_STREAMED_MSM=$form)"
      grep -v -E "DEBUG|^ *(at|in) |^ROW" $R/gpu-run-porep-same-run.log | grep -E "^\| ours|rc=|peak" | tail -n 6
      grep -o -E "h_msm_ms=[0-9.]+" $R/gpu-run-porep-same-run.log | tr '\n' ' '; echo
      # One worker's witnesses: the reference (three workers') matches only circuits 0, 3, 6, 9
      # of the call; every form must give the first run's bytes.
      first=${first:-$R/proofs-porep-32g-ours.txt}
      cmp $first $R/proofs-porep-32g-ours.txt && echo "proofs byte-identical to the first run's ($(wc -l < $first))"
    done
    unset first
    ;;
  tailk)
    # The tails' K fitted to the device's waves (MsmTuning::fitted_to_waves): the tail rows of
    # gpu_bench (window sweep, then K = 32 and the fitted K in turn, twice, at 2,118,373 and
    # 1,538,054 points, each checked against the CPU).
    T=$OUT/tailk.log
    BENCH_MSM_MAX_LOG=20 BENCH_MSM_SWEEP_LOG=0 BENCH_NTT_MAX_LOG=20 BENCH_G2_MAX_LOG=18 BENCH_NTT_HOST=0 timeout 200 ./gpu_bench > $T 2>&1
    echo "rc=$?" >> $T
    grep -E "tail|resident at once|rc=|panicked" $T
    ;;
  msmab)
    # The G1 MSM rows of pack.sh's BASE build (gpu_bench_base) and of the head, beside sppark
    # 0.1.16's, in one sampled run (MSMAB orders the builds; default "gpu_bench_base gpu_bench").
    [ -x gpu_bench_base ] || { echo "msmab: no gpu_bench_base in the pack (built with BASE=none)"; continue; }
    K=$OUT/msmab.log
    msmab_run() {
      echo "== sppark 0.1.16"; timeout 120 ./sppark_bench 26 19; echo "rc=$?"
      for b in ${MSMAB:-gpu_bench_base gpu_bench}; do
        echo "== $b ($( [ $b = gpu_bench ] && cat COMMIT || cat BASE ))"
        BENCH_MSM_SWEEP_LOG=0 BENCH_NTT_MAX_LOG=19 BENCH_G2_MAX_LOG=17 BENCH_NTT_HOST=0 timeout 200 ./$b; echo "rc=$?"
      done
    }
    sampled msmab $K msmab_run
    grep -E "MSM|batch addition|rc=|panicked|^== " $K | grep -v '^ROW '; cat $OUT/rows-msmab.txt
    ;;
  p16)
    # A 16 GiB card (SUPRASEAL_C2_VRAM_LIMIT_MB=16384 through the bench's mode), W = 2 one-circuit
    # calls x RPARTS (3), per CLI in CLIS (default "head base": pack.sh's BASE_CLI build);
    # prints the rows, each call's hold and H-MSM, and checks the proofs.
    [ "$(stat -c %s /tmp/p32.params 2>/dev/null)" = 47373928632 ] || { echo "p16: no /tmp/p32.params (run synth-bg and wait first)"; exit 2; }
    base_dir
    i=0
    for cli in ${CLIS:-head base}; do
      dir=$PWD; [ $cli = base ] && dir=/tmp/pkb
      [ -x $dir/supraseal-c2 ] || { echo "p16: no CLI for $cli (pack.sh with BASE_CLI=REV)"; exit 2; }
      i=$((i + 1)); R=$OUT/p16-$cli-$i; mkdir -p $R
      env OUT=$R WORKERS=2 PARTITIONS=${RPARTS:-3} MODES=two-limit=16384 KEEP=1 SKIP_UPSTREAM=1 \
        OURS_ENV="$LOGS,supraseal_c2::pipeline::report=info" timeout 250 $dir/run.sh porep-same-run > /dev/null 2>&1
      echo "run.sh rc=$? (16 GiB, W = 2, CLI $cli: $(cat $dir/COMMIT))"
      G=$R/gpu-run-porep-same-run.log
      grep -v -E "DEBUG|^ *(at|in) |^ROW" $G | grep -E "^\| ours|rc=|peak" | tail -n 4
      grep "proving call" $G | sed -E 's/.*compute_hold_ms=([0-9.]+).*h_msm_ms=([0-9.]+).*/hold \1 h_msm \2/' | tr '\n' ';'; echo
      same_proofs $R/proofs-porep-32g-ours.txt
    done
    ;;
  hmsm)
    H=$OUT/hmsm.log
    BENCH_MSM_H_SWEEP=1 BENCH_MSM_MAX_LOG=20 BENCH_MSM_SWEEP_LOG=20 BENCH_NTT_MAX_LOG=20 BENCH_G2_MAX_LOG=18 BENCH_NTT_HOST=0 timeout 300 ./gpu_bench > $H 2>&1
    echo "rc=$?" >> $H
    grep -E "H-MSM shape|tail sweep|batch addition|rc=|panicked" $H
    ;;
  bundle)
    # At most 8 files come back from $OUT: everything but the calls' steps*.log into one archive.
    (cd $OUT && find . -mindepth 1 -maxdepth 1 ! -name 'steps*.log' ! -name "bundle-*.tgz" -printf '%P\n' > /tmp/bundle.list \
      && tar czf bundle-$(date +%H%M%S).tgz -T /tmp/bundle.list && xargs rm -rf < /tmp/bundle.list && ls -la)
    ;;
  *) echo "unknown step $step"; exit 2 ;;
  esac
done
echo "### done at $(date +%T)"

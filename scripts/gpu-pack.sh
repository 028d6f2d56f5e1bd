#!/usr/bin/env bash
# Builds the GPU test binaries and the CLI with kernels on this (GPU-less)
# machine and packs them, stripped, into gpu-pack/ with gpu-pack/run.sh,
# which runs them on the GPU machine (README, "The GPU"):
#   scripts/gpu-pack.sh            # here
#   (device) bash gpu-pack/run.sh  # there, with carry = ["gpu-pack"]; logs land in $OUT
# A separate target dir keeps the kernel build apart from CPU-only builds.
set -euo pipefail
cd "$(dirname "$0")/.."
nvcc=$(scripts/install-cuda-toolchain.sh | tail -n 1)
export NVCC="$nvcc" SUPRASEAL_C2_CUDA_ARCHS="${SUPRASEAL_C2_CUDA_ARCHS:-90}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target-gpu}"
rm -rf gpu-pack && mkdir -p gpu-pack
cargo build --release -p supraseal-c2-cli --bin supraseal-c2
cp "$CARGO_TARGET_DIR/release/supraseal-c2" gpu-pack/
cargo build --release -p supraseal-c2 --example gpu_bench
cp "$CARGO_TARGET_DIR/release/examples/gpu_bench" gpu-pack/
cp "$(scripts/build-sppark-bench.sh | tail -n 1)" gpu-pack/   # sppark's kernels, same-run reference
cp "$(scripts/build-upstream-reference.sh | tail -n 1)" gpu-pack/   # published supraseal-c2 0.1.2, same-run reference
cp scripts/gpu-samples.py gpu-pack/
list_tests() {
  cargo test --release "$@" --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        print(m["executable"])'
}
for exe in $(list_tests -p supraseal-c2 --test gpu) $(list_tests -p supraseal-c2 --test gpu_proofs) \
  $(list_tests -p supraseal-c2 --test lock_protocol) $(list_tests -p supraseal-c2 --test gpu_params) \
  $(list_tests -p supraseal-c2 --test batch_add_beside) \
  $(list_tests -p supraseal-c2 --test gpu_pinning) $(list_tests -p supraseal-c2 --test prove_verify) \
  $(list_tests -p supraseal-c2 --test bad_input); do
  name=$(basename "$exe" | sed 's/-[0-9a-f]*$//')
  cp "$exe" "gpu-pack/$name"
done
strip --strip-debug $(ls gpu-pack/* | grep -v "\.py$")
git rev-parse --short HEAD > gpu-pack/COMMIT
cat > gpu-pack/run.sh <<'RUN'
#!/usr/bin/env bash
# Runs on the GPU machine from the repository root. Writes logs to $OUT.
#   bash gpu-pack/run.sh tests   # GPU-vs-CPU tests, proofs, lock protocol + faults, 2^20 correctness bench
#   bash gpu-pack/run.sh quick   # 2^24: the key resident on the device vs streamed, proofs compared
#   bash gpu-pack/run.sh bench   # synthetic 2^24 throughput matrix (lock modes x workers)
#   bash gpu-pack/run.sh kernels # kernel timings (MSM, NTT), sppark's then ours
#   bash gpu-pack/run.sh load    # params loader: device subgroup check tests, a 2^24 file checked on GPU and CPU
#   bash gpu-pack/run.sh load-32g # params loader: the porep-32g file (writes 47 GB), checked on the GPU
#   bash gpu-pack/run.sh load-same-run # params load, ours vs upstream (until its points are decoded) vs cat, in turn
#   bash gpu-pack/run.sh reference      # ours vs upstream 0.1.2: SHA-256 2^20 bytes, 2^24 table
#   bash gpu-pack/run.sh porep-ours     # porep-32g, ours (key in memory)
#   bash gpu-pack/run.sh porep-upstream # porep-32g, upstream (writes and loads the 47 GB file)
#   bash gpu-pack/run.sh porep-file     # porep-32g, ours loading the 47 GB file (and the disk's floor)
#   bash gpu-pack/run.sh porep-same-run # porep-32g (or LOG_DOMAIN=D), ours and upstream proving from the same file in one call (BATCH=1,3,10: N-circuit calls)
set -u
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export SUPRASEAL_C2_CACHE=/tmp/ssc2-cache
what=${1:-tests}
{
  echo "commit $(cat COMMIT) ($what)"; nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv
  nproc; free -g | head -2
  case "$what" in
  tests)
    echo "== lib GPU tests (NTT, MSM, batch addition, quotient vs CPU)"
    ./gpu --test-threads=1 --nocapture; echo "rc=$?"
    echo "== whole proofs: GPU vs CPU bytes, bellperson verify, 200-proof VRAM loop"
    ./gpu_proofs --nocapture; echo "rc=$?"
    echo "== pinning: caller-pinned, shared and concurrent buffers; a call of circuits sharing buffers vs one-circuit calls"
    ./gpu_pinning --nocapture; echo "rc=$?"
    ./prove_verify --nocapture a_call_of_circuits_sharing_buffers; echo "rc=$?"
    echo "== lock protocol: 4 workers x 3 modes, phase-1/phase-2 faults, VRAM limit"
    ./lock_protocol --test-threads=1 --nocapture; echo "rc=$?"
    echo "== CLI default job on the GPU"
    ./supraseal-c2 prove --backend gpu --seed 7; echo "rc=$?"
    echo "== correctness bench: SHA-256 2^20, W = 1..4 x 20 proofs, three modes, every proof verified and compared"
    time ./supraseal-c2 bench --circuit sha256 --log-constraints 20 --workers 1,2,3,4 --partitions 20 --modes two,single,fallback; echo "rc=$?"
    ;;
  quick)
    echo "== 2^24 synthetic, ours: the key resident on the device (default) vs streamed per call (SUPRASEAL_C2_KEY_RESIDENT=off)"
    for kr in auto off; do
      SUPRASEAL_C2_KEY_RESIDENT=$kr SUPRASEAL_C2_LOG=supraseal_c2::gpu=info,supraseal_c2=warn ./supraseal-c2 bench --shape 2^24 --seed 1 --workers 1,2 --partitions 3 --modes two --witnesses 1 \
        --proofs-out "$OUT/proofs-24-resident-$kr.txt"; echo "rc=$?"
    done
    cmp "$OUT/proofs-24-resident-auto.txt" "$OUT/proofs-24-resident-off.txt" && echo "2^24: resident and streamed proofs byte-identical"
    ;;
  bench)
    echo "== throughput: synthetic 2^24 domain, single vs two locks, W = 1, 2, 3; two locks with a 16 GiB card"
    time ./supraseal-c2 bench --synthetic-log-domain ${LOG_DOMAIN:-24} --workers 1,2,3 --partitions ${PARTITIONS:-2} \
      --modes single,two,two-limit=16384; echo "rc=$?"
    ;;
  load|load-32g)
    drop() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null && echo "(page cache dropped)" || echo "(cannot drop the page cache: warm reads)"; }
    export SUPRASEAL_C2_LOG=supraseal_c2::srs=info
    if [ "$what" = load ]; then
      if [ -z "${SKIP_TESTS:-}" ]; then
        echo "== device subgroup check vs the host's combinations; a 2^19 file through the GPU check, with and without faults"
        ./gpu --test-threads=1 --nocapture; echo "rc=$?"
        ./gpu_params --nocapture; echo "rc=$?"
      fi
      f=/tmp/s24.params; ./supraseal-c2 params synth --log-domain ${LOG_DOMAIN:-24} --seed 1 --out $f; echo "rc=$?"
    else
      f="$PWD/p32.params"; df -h "$PWD" | tail -n 1
      time ./supraseal-c2 params synth --shape porep-32g --seed 1 --out $f; echo "rc=$?"
    fi
    if [ -n "${FLOOR:-}" ]; then
      drop; echo "== the disk's floor: cat FILE > /dev/null"; /usr/bin/time -f "cat: %e s wall, %U s user, %S s sys, %M KiB peak RSS" cat $f > /dev/null
    fi
    for on in ${CHECK_ON:-gpu cpu}; do
      drop; echo "== params check $f --check-on $on"
      /usr/bin/time -f "time: %e s wall, %U s user, %S s sys, %M KiB peak RSS" ./supraseal-c2 params check $f --check-on $on; echo "rc=$?"
    done
    if [ -n "${UPSTREAM:-}" ]; then
      drop; echo "== upstream 0.1.2 loads the same file (SRS::try_new; the bench then proves one partition)"
      shape=porep-32g; [ "$what" = load ] && shape=2^24
      ./supraseal-c2 bench --lib upstream --reference "$PWD/libupstream_ref.so" --shape $shape --params $f --seed 1 --workers 1 --partitions 1 --witnesses 1 2>&1 | grep -v "^  [a-z_0-9]*: [0-9]* % of"; echo "rc=$?"
    fi
    if [ -n "${LIMIT:-}" ]; then
      drop; echo "== params check $f --check-on gpu, SUPRASEAL_C2_VRAM_LIMIT_MB=$LIMIT"
      SUPRASEAL_C2_VRAM_LIMIT_MB=$LIMIT ./supraseal-c2 params check $f --check-on gpu; echo "rc=$?"
    fi
    rm -f $f
    ;;
  load-same-run)
    # Ours vs upstream 0.1.2 loading the same file in one call, in turn
    # ROUNDS times (default 2), the page cache dropped before each line:
    # `cat` (the disk's floor), upstream (create_SRS, then the end of its
    # background decode), ours (`params check`, GPU check, key page-locked
    # in the load). LOG_DOMAIN=D uses a 2^D file (and then proves 2
    # partitions with each library from it, proofs compared); unset, the
    # 47.4 GB porep-32g file.
    drop() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null && echo "(page cache dropped)" || echo "(cannot drop the page cache: warm reads)"; }
    export SUPRASEAL_C2_LOG=supraseal_c2::srs=info
    if [ -n "${LOG_DOMAIN:-}" ]; then f=/tmp/s$LOG_DOMAIN.params; shape=2^$LOG_DOMAIN; time ./supraseal-c2 params synth --log-domain $LOG_DOMAIN --seed 1 --out $f
    else f=/tmp/p32.params; shape=porep-32g; df -h /tmp | tail -n 1; time ./supraseal-c2 params synth --shape porep-32g --seed 1 --out $f; fi
    echo "rc=$?"
    for r in $(seq ${ROUNDS:-2}); do
      drop; echo "== round $r: cat FILE > /dev/null"
      /usr/bin/time -f "cat: %e s wall, %U s user, %S s sys, %M KiB peak RSS" cat $f > /dev/null
      drop; echo "== round $r: upstream 0.1.2"
      /usr/bin/time -f "time: %e s wall, %U s user, %S s sys, %M KiB peak RSS" ./supraseal-c2 params check $f --reference "$PWD/libupstream_ref.so"; echo "rc=$?"
      drop; echo "== round $r: ours, GPU check"
      /usr/bin/time -f "time: %e s wall, %U s user, %S s sys, %M KiB peak RSS" ./supraseal-c2 params check $f --check-on gpu; echo "rc=$?"
    done
    if [ -n "${LOG_DOMAIN:-}" ]; then
      for lib in ours upstream; do
        drop; echo "== $shape from the file, $lib: W = 1 x 2 partitions (the load, then proofs)"
        ./supraseal-c2 bench --lib $lib --reference "$PWD/libupstream_ref.so" --shape $shape --params $f --seed 1 --workers 1 --partitions 2 --modes two --witnesses 1 \
          --proofs-out "$OUT/proofs-$LOG_DOMAIN-file-$lib.txt" 2>&1 | grep -v "^  [a-z_0-9]*: [0-9]* % of"; echo "rc=$?"
      done
      cmp "$OUT/proofs-$LOG_DOMAIN-file-ours.txt" "$OUT/proofs-$LOG_DOMAIN-file-upstream.txt" && echo "$shape from the file: proofs byte-identical ($(wc -l < "$OUT/proofs-$LOG_DOMAIN-file-ours.txt") proofs)"
    fi
    rm -f $f
    ;;
  kernels)
    ./sppark_bench; echo "rc=$?"
    ./gpu_bench; echo "rc=$?"
    ;;
  reference|porep-ours|porep-upstream|porep-file|porep-same-run)
    # GPU samples beside the run: memory used (MiB) and utilisation every
    # 100 ms; gpu-samples.py cuts them into the bench rows' windows (both in UTC, so that the
    # saved samples cut the same wherever they are read again).
    TZ=UTC nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu --format=csv,noheader,nounits -lms 100 > "$OUT/nvsmi-$what.csv" &
    smi=$!
    ref="--reference $PWD/libupstream_ref.so"
    case "$what" in
    reference)
      for lib in ours upstream; do
        echo "== SHA-256 2^20, $lib: W = 1, 2 x 4 partitions + one call of 2 circuits, every proof verified"
        ./supraseal-c2 bench --lib $lib $ref --circuit sha256 --log-constraints 20 --workers 1,2 --partitions 4 --modes two --batch 2 \
          --proofs-out "$OUT/proofs-sha256-$lib.txt"; echo "rc=$?"
      done
      cmp "$OUT/proofs-sha256-ours.txt" "$OUT/proofs-sha256-upstream.txt" && echo "SHA-256 2^20: proofs byte-identical ($(wc -l < "$OUT/proofs-sha256-ours.txt") proofs)"
      ./supraseal-c2 params synth --log-domain 24 --seed 1 --out /tmp/s24.params; echo "rc=$?"
      for g2 in ${G2S:-cpu gpu}; do
        echo "== 2^24 synthetic, ours (key in memory, same points as the file), G2 MSM on $g2"
        modes=two; [ $g2 = gpu ] && modes=two,single
        SUPRASEAL_C2_G2_MSM=$g2 ./supraseal-c2 bench --shape 2^24 --seed 1 --workers 1,2,3 --partitions 4 --modes $modes --batch 3 --witnesses 1 \
          --proofs-out "$OUT/proofs-24-ours-$g2.txt" --trace "$OUT/trace-24-ours-$g2.json"; echo "rc=$?"
      done
      echo "== 2^24 synthetic, upstream (loads the file)"
      ./supraseal-c2 bench --lib upstream $ref --shape 2^24 --params /tmp/s24.params --seed 1 --workers 1,2,3 --partitions 4 --batch 3 --witnesses 1 \
        --proofs-out "$OUT/proofs-24-upstream.txt"; echo "rc=$?"
      cmp "$OUT/proofs-24-ours-gpu.txt" "$OUT/proofs-24-upstream.txt" && echo "2^24: proofs byte-identical"
      [ -f "$OUT/proofs-24-ours-cpu.txt" ] && cmp "$OUT/proofs-24-ours-cpu.txt" "$OUT/proofs-24-ours-gpu.txt" && echo "2^24: G2 on CPU and GPU byte-identical"
      ;;
    porep-ours)
      echo "== porep-32g, ours (key in memory), W = 1, 2 x 2 partitions + one call of 2 circuits, G2 MSM on the GPU"
      SUPRASEAL_C2_G2_MSM=gpu ./supraseal-c2 bench --shape porep-32g --seed 1 --workers 1,2 --partitions 2 --modes two --batch 2 --witnesses 1 \
        --proofs-out "$OUT/proofs-32g-ours.txt" --trace "$OUT/trace-32g-ours.json"; echo "rc=$?"
      ;;
    porep-upstream)
      df -h /tmp "$PWD" | tail -n 2
      time ./supraseal-c2 params synth --shape porep-32g --seed 1 --out "$PWD/p32.params"; echo "rc=$?"
      sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null && echo "(page cache dropped)" || echo "(cannot drop the page cache: warm reads)"
      echo "== porep-32g, upstream (loads the file), W = ${WORKERS:-1,2,3} x ${PARTITIONS:-1} partitions + one call of 2 circuits"
      ./supraseal-c2 bench --lib upstream $ref --shape porep-32g --params "$PWD/p32.params" --seed 1 --workers ${WORKERS:-1,2,3} --partitions ${PARTITIONS:-1} --batch 2 --witnesses 1 \
        --proofs-out "$OUT/proofs-32g-upstream.txt"; echo "rc=$?"
      rm -f "$PWD/p32.params"
      ;;
    porep-same-run)
      # ours and upstream 0.1.2 on the same file in one run: ours W = 1, 2
      # with and without a 16 GiB card, then upstream W = 1, 2; same seed,
      # so the proofs must be byte-identical. The file stays in /tmp with
      # KEEP=1, and a later call on the still-warm machine reuses it;
      # SKIP_OURS=1 or SKIP_UPSTREAM=1 leaves one library out. G2 unset: the
      # default placement (auto); OURS_ENV: extra VAR=value pairs for ours.
      # BATCH=1,3,10 adds one call of N circuits per N (the shape lotus and
      # Curio's FFI path send) to both libraries; LOG_DOMAIN=D uses a 2^D
      # synthetic file instead of porep-32g (quick turns); CALLER_PINNED=1 has
      # the bench page-lock the witnesses first, as a pinned-pool caller does.
      if [ -n "${LOG_DOMAIN:-}" ]; then p32=/tmp/s$LOG_DOMAIN.params; shape=2^$LOG_DOMAIN; size=0; synth="--log-domain $LOG_DOMAIN"
      else p32=/tmp/p32.params; shape=porep-32g; size=47373928632; synth="--shape porep-32g"; fi
      df -h /tmp | tail -n 1
      if [ -f $p32 ] && { [ $size = 0 ] || [ "$(stat -c %s $p32)" = $size ]; }; then echo "reusing $p32 (written by an earlier call on this machine)"
      else time ./supraseal-c2 params synth $synth --seed 1 --out $p32; echo "rc=$?"; fi
      batch=${BATCH:+--batch $BATCH}; tag=${shape/^/e}
      if [ -z "${SKIP_OURS:-}" ]; then
        sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null && echo "(page cache dropped)"
        echo "== $shape, ours loading the file, W = ${WORKERS:-1,2} x ${PARTITIONS:-2}, ${BATCH:+one call of N = $BATCH circuits, }modes ${MODES:-two,two-limit=16384}, G2 MSM ${G2:-default (auto)}, ${OURS_ENV:-default switches}"
        /usr/bin/time -f "ours: %e s wall, %M KiB peak RSS" env SUPRASEAL_C2_LOG=supraseal_c2::srs=info,supraseal_c2::gpu=info,supraseal_c2=warn ${G2:+SUPRASEAL_C2_G2_MSM=$G2} ${OURS_ENV:-} ./supraseal-c2 bench --shape $shape --params $p32 --seed 1 \
          --workers ${WORKERS:-1,2} --partitions ${PARTITIONS:-2} --modes ${MODES:-two,two-limit=16384} --witnesses 1 $batch ${CALLER_PINNED:+--caller-pinned} \
          --proofs-out "$OUT/proofs-$tag-ours.txt"; echo "rc=$?"
      fi
      if [ -z "${SKIP_UPSTREAM:-}" ]; then
        sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null && echo "(page cache dropped)"
        echo "== $shape, upstream (loads the same file), W = ${WORKERS:-1,2} x ${PARTITIONS:-2}${BATCH:+, one call of N = $BATCH circuits}"
        /usr/bin/time -f "upstream: %e s wall, %M KiB peak RSS" ./supraseal-c2 bench --lib upstream $ref --shape $shape --params $p32 --seed 1 --workers ${WORKERS:-1,2} --partitions ${PARTITIONS:-2} --witnesses 1 $batch ${CALLER_PINNED:+--caller-pinned} \
          --proofs-out "$OUT/proofs-$tag-upstream.txt"; echo "rc=$?"
      fi
      [ -n "${KEEP:-}" ] || rm -f $p32
      [ -f "$OUT/proofs-$tag-ours.txt" ] && [ -f "$OUT/proofs-$tag-upstream.txt" ] && cmp "$OUT/proofs-$tag-ours.txt" "$OUT/proofs-$tag-upstream.txt" && echo "$shape: proofs byte-identical ($(wc -l < "$OUT/proofs-$tag-ours.txt") proofs)"
      ;;
    porep-file)
      df -h "$PWD" | tail -n 1
      time ./supraseal-c2 params synth --shape porep-32g --seed 1 --out "$PWD/p32.params"; echo "rc=$?"
      drop() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null && echo "(page cache dropped)" || echo "(cannot drop the page cache: warm reads)"; }
      drop; echo "== the disk's floor: cat FILE > /dev/null"; /usr/bin/time -f "cat: %e s wall, %U s user, %S s sys, %M KiB peak RSS" cat "$PWD/p32.params" > /dev/null
      drop; echo "== porep-32g, ours loading the file, W = 1, 2, 3 x ${PARTITIONS:-2} partitions + one call of 2 circuits, G2 MSM on ${G2:-gpu}"
      SUPRASEAL_C2_LOG=supraseal_c2::srs=info,supraseal_c2=warn SUPRASEAL_C2_G2_MSM=${G2:-gpu} ./supraseal-c2 bench --shape porep-32g --params "$PWD/p32.params" --seed 1 \
        --workers 1,2,3 --partitions ${PARTITIONS:-2} --modes two --batch 2 --witnesses 1 \
        --proofs-out "$OUT/proofs-32g-ours-file.txt" --trace "$OUT/trace-32g-ours-file.json"; echo "rc=$?"
      rm -f "$PWD/p32.params"
      ;;
    esac
    kill $smi
    TZ=UTC python3 gpu-samples.py "$OUT/nvsmi-$what.csv" "$OUT/gpu-run-$what.log" || true
    ;;
  esac
} 2>&1 | tee "$OUT/gpu-run-$what.log"
RUN
chmod +x gpu-pack/run.sh
du -sh gpu-pack; ls -la gpu-pack

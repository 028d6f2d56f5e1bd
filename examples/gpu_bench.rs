//! GPU timing of the kernels as the pipeline calls them: G1 MSM at
//! 2^20..2^26 points (bases and scalars in page-locked host memory, uploads
//! and the result's download included, as for the key's pinned tail vectors)
//! and the forward Fr NTT at 2^20..2^27 (data already on the device, as in
//! the quotient, for each launch choice `NttTuning`, the default first and
//! last; twiddle-table build timed apart, and once more with host data in
//! and out, skipped with BENCH_NTT_HOST=0); G2 MSM and G2 batch
//! addition (half the bits set) at 2^18..2^22 points on the GPU, beside the
//! CPU backend's G2 MSM on the same host (rayon, blst); G1 batch additions
//! over 2^23 bases on the device, for 1 and for 10 circuits in one pass. The G1 MSM also runs
//! with its bases already on the device (like sppark's harness), with a
//! per-kernel profile, and a sweep of launch choices (`MsmTuning`) at
//! 2^BENCH_MSM_SWEEP_LOG (24; an odd size is added to the even ones; 0: none) whose
//! fastest is rerun at every size, and a window sweep at a porep-32g tail's
//! 2,118,373 points; every
//! variant's point is asserted equal to the first run's. Limits:
//! BENCH_MSM_MAX_LOG (26), BENCH_NTT_MAX_LOG (27), BENCH_G2_MAX_LOG (22).
//! BENCH_MSM_H_SWEEP=1 adds the H-MSM's 2^27 points in the forms a streamed
//! key runs them (one MSM per 2^23-point chunk, or every chunk into one
//! bucket table: `streamed_forms`) and a window sweep of one MSM over them
//! (`h_msm_sweep`: ~19 GB of host memory, ~18 GB of device memory), then that
//! MSM with its sort beside the accumulation (its stream at the default and at
//! the greatest priority) and without (`MsmTuning::sort`);
//! BENCH_MSM_H_SWEEP=resident runs only these last rows. Each MSM size also
//! has a row per way of sorting the windows (`WindowSort`: in turn, beside at
//! the default priority, beside first), the default among them.
//! Prints a table; without a GPU it says why
//! and exits 0. bench/sppark/sppark_bench prints the same rows for sppark.
//! Run: `cargo run --release --example gpu_bench` (build with NVCC set).

use std::time::Instant;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

use supraseal_c2::backend::Compute;
use supraseal_c2::curve::{G1, G2};
use supraseal_c2::cpu::ntt::Direction;
use supraseal_c2::gpu::tuning::WindowSort;
use supraseal_c2::gpu::{GpuBackendHandle, MsmProfile, MsmTuning, NttTuning};

fn scalars(n: usize) -> Vec<Scalar> {
    (0..n.div_ceil(1 << 16))
        .into_par_iter()
        .flat_map_iter(|c| {
            let mut rng = ChaCha20Rng::seed_from_u64(c as u64);
            (0..(1usize << 16).min(n - (c << 16))).map(move |_| Scalar::random(&mut rng)).collect::<Vec<_>>()
        })
        .collect()
}

fn points<P: Curve<AffineRepr = A> + Send, A: PrimeCurveAffine + Send + Copy>(n: usize) -> Vec<A> {
    (0..n.div_ceil(1 << 14))
        .into_par_iter()
        .flat_map_iter(|c| {
            let mut rng = ChaCha20Rng::seed_from_u64(1000 + c as u64);
            let len = (1usize << 14).min(n - (c << 14));
            let step = P::random(&mut rng);
            let mut p = P::random(&mut rng);
            let proj: Vec<P> = (0..len).map(|_| { p += step; p }).collect();
            let mut out = vec![A::identity(); len];
            P::batch_normalize(&proj, &mut out);
            out
        })
        .collect()
}

fn bases(n: usize) -> Vec<G1Affine> {
    points::<G1Projective, G1Affine>(n)
}

fn profile(p: &MsmProfile) -> String {
    format!(
        "profile ms: convert {:.1}, histogram {:.1}, sort {:.1}, accumulate {:.1}, fixup {:.1}, segments {:.1}, reduce {:.1}",
        p.convert_ms, p.histogram_ms, p.sort_ms, p.accumulate_ms, p.fixup_ms, p.segments_ms, p.reduce_ms
    )
}

/// A row's wall-clock window and the process's peak resident memory over
/// it, on stderr in the form scripts/gpu-samples.py cuts nvidia-smi's
/// samples by (`ROW lib=.. mode=.. W=.. t0_ms=.. t1_ms=.. peak_rss_bytes=..`),
/// so that a row gets its peak device memory beside its time. `start`
/// resets the peak (Linux `clear_refs` 5) and returns the window's start.
struct RowWindow {
    mode: String,
    t0_ms: u128,
}

impl RowWindow {
    fn start(mode: String) -> Self {
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        RowWindow { mode, t0_ms: epoch_ms() }
    }

    fn end(self) {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let hwm_kib = status.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
        eprintln!("ROW lib=ours mode={} W=1 t0_ms={} t1_ms={} peak_rss_bytes={}", self.mode, self.t0_ms, epoch_ms(), hwm_kib.unwrap_or(0) * 1024);
    }
}

fn epoch_ms() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis())
}

fn median_ms(mut f: impl FnMut()) -> f64 {
    let mut v: Vec<f64> = (0..3)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[1]
}

fn main() {
    let gpu = match GpuBackendHandle::open(0) {
        Ok(g) => g,
        Err(why) => {
            println!("skipped: {why}");
            return;
        }
    };
    let max_msm: u32 = std::env::var("BENCH_MSM_MAX_LOG").ok().and_then(|v| v.parse().ok()).unwrap_or(26);
    let max_ntt: u32 = std::env::var("BENCH_NTT_MAX_LOG").ok().and_then(|v| v.parse().ok()).unwrap_or(27);
    println!("| op | size | ms (median) | how |");
    println!("|---|---|---|---|");
    // 0: no launch-choice sweep.
    let sweep_log: u32 = std::env::var("BENCH_MSM_SWEEP_LOG").ok().and_then(|v| v.parse().ok()).unwrap_or(24);
    let mut msm_inputs = Vec::new();
    // Even sizes from 2^20, and the sweep's size where it is odd.
    let mut sizes: Vec<u32> = (20..=max_msm).step_by(2).collect();
    if sweep_log != 0 && !sizes.contains(&sweep_log) {
        sizes.push(sweep_log);
        sizes.sort_unstable();
    }
    for lg in sizes {
        let n = 1usize << lg;
        let (b, s) = (bases(n), scalars(n));
        // The size's rows before the sweep; the host's peak also holds the
        // smaller sizes' inputs, kept for the sweep's best rows.
        let row = RowWindow::start(format!("G1 MSM 2^{lg}, the size's rows before the sweep (host: the inputs of every size so far)"));
        let (ms, want) = gpu.with_pinned(&b, || {
            gpu.with_pinned(&s, || {
                let want = gpu.compute().msm::<G1>(&b, &s).unwrap(); // warm-up
                (median_ms(|| {
                    gpu.compute().msm::<G1>(&b, &s).unwrap();
                }), want)
            })
        });
        println!("| G1 MSM | 2^{lg} | {ms:.1} | pinned host bases and scalars in, point out (3 runs) |");
        let (ms, got, p) = gpu.with_pinned(&s, || gpu.msm_g1_resident_ms(&b, &s, MsmTuning::for_points(n), 3)).unwrap();
        assert_eq!(got, want, "resident-bases MSM differs at 2^{lg}");
        println!("| G1 MSM | 2^{lg} | {ms:.1} | bases on the device, pinned host scalars in, point out (3 runs); {} |", profile(&p));
        // The same MSM with its windows sorted each way (WindowSort), the
        // default above (`auto`; its profile sorts in turn) among them.
        for sort in [WindowSort::InTurn, WindowSort::Beside, WindowSort::BesideFirst] {
            let t = MsmTuning { sort, ..MsmTuning::for_points(n) };
            let (ms, got, _) = gpu.with_pinned(&s, || gpu.msm_g1_resident_ms(&b, &s, t, 3)).unwrap();
            assert_eq!(got, want, "resident-bases MSM with {t:?} differs at 2^{lg}");
            println!("| G1 MSM | 2^{lg} | {ms:.1} | bases on the device, pinned host scalars in, point out (3 runs); sort {sort:?} |");
        }
        if lg == 24 {
            // 90 % of the scalars equal: one bucket of window 0 holds most points.
            let skewed: Vec<Scalar> = s.iter().enumerate().map(|(i, r)| if i % 10 == 0 { *r } else { Scalar::from(3u64) }).collect();
            let (ms, _, p) = gpu.with_pinned(&skewed, || gpu.msm_g1_resident_ms(&b, &skewed, MsmTuning::for_points(n), 3)).unwrap();
            println!("| G1 MSM, 90 % of scalars equal to 3 | 2^{lg} | {ms:.1} | bases on the device, pinned host scalars in (3 runs); {} |", profile(&p));
        }
        row.end();
        msm_inputs.push((lg, b, s, want));
    }
    // Launch-choice sweep at 2^BENCH_MSM_SWEEP_LOG (24): every choice must give
    // the same point; the fastest is then rerun at every size.
    if let Some((_, b, s, want)) = msm_inputs.iter().find(|(lg, ..)| *lg == sweep_log) {
        let mut best: Option<(f64, MsmTuning)> = None;
        gpu.with_pinned(s, || {
            // A wider sweep (blocks 64/128/256 x K 16/32/64 x 2^15..2^17 buckets per window, and
            // register-capped kernel variants) puts blocks of 128 first
            // (notes/GPU.md); this one checks the window and K around it.
            for window_bits in [18, 19, 20, 21] {
                for points_per_thread in [32, 64] {
                    for block in [128, 256] {
                        let t = MsmTuning { window_bits, points_per_thread, block, sort: MsmTuning::for_points(1 << sweep_log).sort };
                        let (ms, got, p) = gpu.msm_g1_resident_ms(b, s, t, 2).unwrap();
                        assert_eq!(&got, want, "MSM with {t:?} differs");
                        println!("| G1 MSM sweep | 2^{sweep_log} | {ms:.1} | {t:?}; {} |", profile(&p));
                        if best.is_none_or(|(b, _)| ms < b) {
                            best = Some((ms, t));
                        }
                    }
                }
            }
        });
        let (_, t) = best.unwrap();
        for (lg, b, s, want) in &msm_inputs {
            let own = MsmTuning::for_points(1 << lg);
            let t = MsmTuning { window_bits: own.window_bits.min(t.window_bits), sort: own.sort, ..t };
            let (ms, got, p) = gpu.with_pinned(s, || gpu.msm_g1_resident_ms(b, s, t, 3)).unwrap();
            assert_eq!(&got, want, "MSM with {t:?} differs at 2^{lg}");
            println!("| G1 MSM best | 2^{lg} | {ms:.1} | bases on the device, {t:?}; {} |", profile(&p));
        }
    }
    drop(msm_inputs);
    // The tails' size: a porep-32g partition's L, A and B tails are MSMs of
    // ~1.5–2.1 M points (notes/GPU.md), below the sizes the sweep above
    // tunes. Windows around MsmTuning::for_points's choice there; every
    // choice must give the CPU backend's point.
    {
        let n = 2_118_373usize;
        let (b, s) = (bases(n), scalars(n));
        let want = supraseal_c2::cpu::msm::msm::<supraseal_c2::cpu::msm::G1>(&b, &s);
        window_sweep(&gpu, &b, &s, 14..=19, 3, want, ("G1 MSM tail sweep", &n.to_string(), "bases on the device"));
        let [w1, w2] = gpu.accumulation_waves();
        println!("| MSM accumulation, threads resident at once | blocks of 128 | - | G1 {w1}, G2 {w2} (one wave) |");
        // K = 32 against the K the device's waves fit (MsmTuning::fitted_to_waves,
        // what the pipeline runs), in turn twice, at this tail and at B's.
        for n in [n, 1_538_054] {
            let (b, s) = (&b[..n], &s[..n]);
            let want = supraseal_c2::cpu::msm::msm::<supraseal_c2::cpu::msm::G1>(b, s);
            let (unfitted, fitted) = (MsmTuning::for_points(n), gpu.msm_g1_tuning(n));
            gpu.with_pinned(s, || {
                for (t, how) in [(unfitted, "K of MsmTuning::for_points"), (fitted, "K fitted to the device's waves (the pipeline's)")].repeat(2) {
                    let (ms, got, p) = gpu.msm_g1_resident_ms(b, s, t, 5).unwrap();
                    assert_eq!(got, want, "tail of {n}: the MSM with {t:?} differs from the reference");
                    println!("| G1 MSM tail, K fit | {n} | {ms:.1} | bases on the device (5 runs), {how}: {t:?}; {} |", profile(&p));
                }
            });
        }
    }
    // G1 batch additions over one 2^23-base chunk already on the device (a
    // porep-32g L or A chunk), 7/8 of the bits set, for 1 and for 10
    // circuits in one pass: the per-circuit cost at both shapes. Circuit 0's
    // sum must not depend on the pass it is in.
    {
        let n = 1usize << 23;
        let b = bases(n);
        let maps: Vec<Vec<u64>> = (0..10u64).map(|c| (0..n.div_ceil(64) as u64).map(|i| !(0x0101_0101_0101_0101u64 << ((i + c) % 8))).collect()).collect();
        let views: Vec<&[u64]> = maps.iter().map(Vec::as_slice).collect();
        let (one, alone) = gpu.batch_add_g1_on_device_ms(&b, &views[..1], 3).unwrap();
        let (ten, all) = gpu.batch_add_g1_on_device_ms(&b, &views, 3).unwrap();
        assert_eq!(alone[0], all[0], "batch addition: circuit 0 alone vs in a pass of 10");
        println!("| G1 batch addition, 1 circuit | 2^23 | {one:.1} | bases on the device, 7/8 of the bits set (3 runs) |");
        println!("| G1 batch addition, 10 circuits | 2^23 | {ten:.1} | bases on the device, 7/8 of the bits set, {:.1} ms per circuit (3 runs) |", ten / 10.0);
    }
    for lg in 20..=max_ntt {
        let a = scalars(1 << lg);
        // Each launch choice in turn, the default first, then the default
        // again: its two medians bracket the others' drift on a shared card.
        let default = NttTuning::for_domain(lg, None);
        let others = NttTuning::CHOICES.into_iter().filter(|&t| t != default);
        for tuning in std::iter::once(default).chain(others).chain(std::iter::once(default)) {
            let (tw, on_device, dif) = gpu.ntt_on_device_ms(&a, 5, tuning).unwrap();
            let radix = 1u32 << tuning.radix_lg;
            let mark = if tuning == default { ", the default" } else { "" };
            println!("| Fr NTT forward, radix {radix}{mark} | 2^{lg} | {on_device:.2} | data on the device (5 runs); twiddle table {tw:.2} ms apart |");
            println!("| Fr NTT forward, DIF passes, radix {radix}{mark} | 2^{lg} | {dif:.2} | data on the device, bit-reversed order out: no bit-reversal pass (5 runs) |");
        }
        if std::env::var_os("BENCH_NTT_HOST").is_some_and(|v| v == "0") {
            continue;
        }
        let ms = median_ms(|| {
            gpu.ntt(&a, Direction::Forward, false).unwrap();
        });
        println!("| Fr NTT forward | 2^{lg} | {ms:.1} | pageable host data in and out (3 runs) |");
    }
    let max_g2: u32 = std::env::var("BENCH_G2_MAX_LOG").ok().and_then(|v| v.parse().ok()).unwrap_or(22);
    let g2 = GpuBackendHandle::open_with(0, supraseal_c2::config::Settings { g2_msm_on_device: true, ..Default::default() })
        .expect("opened above");
    for lg in (18..=max_g2).step_by(2) {
        let n = 1usize << lg;
        let (b, s) = (points::<G2Projective, G2Affine>(n), scalars(n));
        let bits: Vec<u64> = (0..n.div_ceil(64)).map(|i| 0x5555_5555_5555_5555u64.rotate_left(i as u32)).collect();
        let (msm, add) = g2.with_pinned(&b, || {
            g2.with_pinned(&s, || {
                g2.compute().msm::<G2>(&b, &s).unwrap(); // warm-up
                let msm = median_ms(|| {
                    g2.compute().msm::<G2>(&b, &s).unwrap();
                });
                let add = median_ms(|| {
                    g2.compute().batch_add::<G2>(&b, &bits).unwrap();
                });
                (msm, add)
            })
        });
        let cpu = median_ms(|| {
            supraseal_c2::cpu::msm::msm::<supraseal_c2::cpu::msm::G2>(&b, &s);
        });
        println!("| G2 MSM | 2^{lg} | {msm:.1} | GPU, pinned host bases and scalars in (3 runs); CPU backend on this host: {cpu:.1} ms |");
        println!("| G2 batch addition | 2^{lg} | {add:.1} | GPU, half the bits set, pinned bases (3 runs) |");
    }
    match std::env::var("BENCH_MSM_H_SWEEP").as_deref() {
        Ok("1") => h_msm_sweep(&gpu, true),
        Ok("resident") => h_msm_sweep(&gpu, false),
        _ => {}
    }
}

/// The H-MSM's shape: 2^27 points (a porep-32g partition's H query). The
/// bases are 2^24 random points repeated 8 times (building 2^27 distinct
/// ones would take minutes; the sort and the accumulation see the same
/// access pattern), the scalars 2^27 random ones. First the forms a
/// streamed key runs, kernels only (`streamed_forms`), then one MSM over
/// all of them, as over a resident key, at windows c = 19..21 around
/// MsmTuning::for_points's 20, then at 20 with the sort beside the
/// accumulation (its stream at the default priority, then at the greatest)
/// and without it in turn, twice, then at c = 20 with K = 32, 128 and 256
/// points per accumulation thread, c = 22 with K = 128 and 256, and c = 24
/// with K = 256, twice (`streamed` false: only these last eighteen rows).
/// Each must give the reference, Σ over the 8
/// blocks of the 2^24-point MSM at its default tuning. Host memory: ~19 GB;
/// device: the bases (12.9 GB), the scalars and one MSM's buffers (~4.5 GB
/// at c = 20, ~21 GB at c = 24).
fn h_msm_sweep(gpu: &GpuBackendHandle, streamed: bool) {
    const BLOCKS: usize = 8;
    let block = 1usize << 24;
    let n = BLOCKS * block;
    let base = bases(block);
    let s = scalars(n);
    let reference = gpu.with_pinned(&s, || {
        s.chunks(block).map(|part| gpu.msm_g1_resident_ms(&base, part, MsmTuning::for_points(block), 1).unwrap().1).sum::<G1Projective>()
    });
    let b: Vec<G1Affine> = (0..BLOCKS).flat_map(|_| base.iter().copied()).collect();
    drop(base);
    let how = "one MSM, bases on the device (2^24 repeated 8 times)";
    if streamed {
        streamed_forms(gpu, &b, &s, reference);
        window_sweep(gpu, &b, &s, 19..=21, 2, reference, ("G1 MSM, H-MSM shape", "2^27", how));
    }
    let chosen = MsmTuning::for_points(n);
    let row = RowWindow::start("G1 MSM, H-MSM shape 2^27, one MSM per sort".into());
    gpu.with_pinned(&s, || {
        for sort in [WindowSort::Beside, WindowSort::BesideFirst, WindowSort::InTurn, WindowSort::Beside, WindowSort::BesideFirst, WindowSort::InTurn] {
            let t = MsmTuning { sort, ..chosen };
            let (ms, got, _) = gpu.msm_g1_resident_ms(&b, &s, t, 2).unwrap();
            assert_eq!(got, reference, "H-MSM shape: the MSM with {t:?} differs from the reference");
            println!("| G1 MSM, H-MSM shape, sort {sort:?} | 2^27 | {ms:.1} | {how}, {t:?} |");
        }
    });
    row.end();
    // Points per accumulation thread: each thread leaves one or two partial
    // sums for the fix-up, so a larger K means fewer fix-up additions, and
    // fewer threads to fill the last wave. Windows: c = 22 and 24 take 12
    // and 11 windows against c = 20's 13 (fewer points summed, fewer
    // sorts) for 4 and 16 times the buckets (Σ d·B_d, the scan and the
    // fix-up grow; the bucket table is 4.8 and 17.7 GB). Alternated, twice.
    let shapes = [(20, 32), (20, 128), (20, 256), (22, 128), (22, 256), (24, 256)];
    let tunings: Vec<MsmTuning> = [shapes, shapes]
        .concat()
        .into_iter()
        .map(|(window_bits, points_per_thread)| MsmTuning { window_bits, points_per_thread, ..chosen })
        .collect();
    tuning_sweep(gpu, &b, &s, &tunings, 2, reference, ("G1 MSM, H-MSM shape, window and K sweep", "2^27", how));
}

/// The H-MSM as a streamed key runs it, kernels only (bases and scalars on
/// the device before the clock starts, no uploads): one MSM per chunk of
/// 2^23 points (the default 768 MiB chunk) with the chunk's window, as
/// `SUPRASEAL_C2_STREAMED_MSM=chunks` runs; the same chunks adding into one
/// shared bucket table (`=table`, the default) at the whole MSM's window (c = 20) and
/// narrower ones, and with 16, 64 or 128 points per accumulation thread; one
/// MSM per chunk of 2^25 points (3 GiB chunks); and chunks of 2^24 and 2^25
/// points into one table. Each must give `want`.
fn streamed_forms(gpu: &GpuBackendHandle, b: &[G1Affine], s: &[Scalar], want: G1Projective) {
    // gpu::msm::chunk_points: the power of two of 96-byte affine points that fits the chunk.
    let fit = supraseal_c2::config::GPU_CHUNK_DEFAULT / 96;
    let chunk = 1usize << (usize::BITS - 1 - fit.leading_zeros());
    let whole = MsmTuning::for_table(b.len(), chunk);
    let forms = [
        (chunk, MsmTuning::for_points(chunk), false, "one MSM per chunk (chunks)"),
        (chunk, whole, true, "chunks into one table (table, the default)"),
        (chunk, MsmTuning { window_bits: 19, ..whole }, true, "chunks into one table"),
        (chunk, MsmTuning { window_bits: 18, ..whole }, true, "chunks into one table"),
        (chunk, MsmTuning { points_per_thread: 16, ..whole }, true, "chunks into one table"),
        (chunk, MsmTuning { points_per_thread: 64, ..whole }, true, "chunks into one table"),
        (chunk, MsmTuning { points_per_thread: 128, ..whole }, true, "chunks into one table"),
        (4 * chunk, MsmTuning::for_points(4 * chunk), false, "one MSM per chunk of 4x the default"),
        (2 * chunk, whole, true, "chunks of 2x the default into one table"),
        (4 * chunk, whole, true, "chunks of 4x the default into one table"),
    ];
    gpu.with_pinned(s, || {
        for (points, tuning, table, how) in forms {
            let (ms, got, p) = gpu.msm_g1_chunks_ms(b, s, points, tuning, table, 2).unwrap();
            assert_eq!(got, want, "{how}, {points} points, {tuning:?}: differs from the reference");
            let chunks = b.len().div_ceil(points);
            println!("| G1 MSM, H-MSM shape | 2^27 | {ms:.1} | streamed form, kernels only: {how}, {chunks} chunks of {points} points, {tuning:?}; {} |", profile(&p));
        }
    });
}

/// The G1 MSM over `b`, `s` (bases on the device) at each window width of
/// `windows`, the rest of MsmTuning::for_points's choice kept
/// ([`tuning_sweep`]).
fn window_sweep(gpu: &GpuBackendHandle, b: &[G1Affine], s: &[Scalar], windows: std::ops::RangeInclusive<u32>, reps: usize, want: G1Projective, labels: (&str, &str, &str)) {
    let chosen = MsmTuning::for_points(b.len());
    let tunings: Vec<MsmTuning> = windows.map(|window_bits| MsmTuning { window_bits, ..chosen }).collect();
    tuning_sweep(gpu, b, s, &tunings, reps, want, labels);
}

/// The G1 MSM over `b`, `s` (bases on the device) at each of `tunings`, in
/// order; each must give `want`. Prints one row per tuning with its
/// profile, labelled `(op, size, how)`, MsmTuning::for_points's choice
/// marked.
fn tuning_sweep(gpu: &GpuBackendHandle, b: &[G1Affine], s: &[Scalar], tunings: &[MsmTuning], reps: usize, want: G1Projective, (op, size, how): (&str, &str, &str)) {
    let chosen = MsmTuning::for_points(b.len());
    gpu.with_pinned(s, || {
        for &t in tunings {
            let (ms, got, p) = gpu.msm_g1_resident_ms(b, s, t, reps).unwrap();
            assert_eq!(got, want, "{op}: the MSM with {t:?} differs from the reference");
            let mark = if t == chosen { " (the default)" } else { "" };
            println!("| {op} | {size} | {ms:.1} | {how}, {t:?}{mark}; {} |", profile(&p));
        }
    });
}

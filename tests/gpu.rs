//! GPU vs CPU, bit for bit, on fresh random inputs: NTTs (forward, inverse,
//! coset; every size 2^10..2^24), G1 and G2 MSM (random, mostly 0/1, zero
//! scalars, bases at infinity, repeated bases), G1 and G2 batch addition, and
//! the quotient.
//! In a build without kernels the tests are ignored; on a machine without a
//! usable GPU each prints why it is skipped and passes.
//! `GPU_TEST_MAX_LOG` (default 24) caps the largest size.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

use supraseal_c2::backend::{Backend, Compute};
use supraseal_c2::curve::{G1, G2};
use supraseal_c2::cpu::{msm as cpu_msm, ntt as cpu_ntt, CpuCompute};
use supraseal_c2::gpu::tuning::WindowSort;

/// The ways an MSM sorts its windows, each named in its tuning (whatever
/// `auto` chooses for the size): in turn, beside at the default priority,
/// beside first.
const SORTS: [WindowSort; 3] = [WindowSort::InTurn, WindowSort::Beside, WindowSort::BesideFirst];

fn max_log() -> u32 {
    std::env::var("GPU_TEST_MAX_LOG").ok().and_then(|v| v.parse().ok()).unwrap_or(24)
}

fn seed() -> u64 {
    let s = std::env::var("TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| rand::thread_rng().gen());
    eprintln!("TEST_SEED={s}");
    s
}

fn random_scalars(n: usize, seed: u64) -> Vec<Scalar> {
    (0..n.div_ceil(4096))
        .into_par_iter()
        .flat_map_iter(|c| {
            let mut rng = ChaCha20Rng::seed_from_u64(seed ^ (c as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let len = 4096.min(n - c * 4096);
            (0..len).map(move |_| Scalar::random(&mut rng)).collect::<Vec<_>>()
        })
        .collect()
}

/// Random-looking bases cheaply: per chunk, a random start point plus
/// multiples of a random step, normalized in one batch.
fn random_points<P: Curve<AffineRepr = A> + Send, A: PrimeCurveAffine + Send + Copy>(n: usize, seed: u64) -> Vec<A> {
    (0..n.div_ceil(4096))
        .into_par_iter()
        .flat_map_iter(|c| {
            let mut rng = ChaCha20Rng::seed_from_u64(seed ^ 0xba5e ^ (c as u64) << 20);
            let len = 4096.min(n - c * 4096);
            let step = P::random(&mut rng);
            let mut p = P::random(&mut rng);
            let proj: Vec<P> = (0..len)
                .map(|_| {
                    p += step;
                    p
                })
                .collect();
            let mut out = vec![A::identity(); len];
            P::batch_normalize(&proj, &mut out);
            out
        })
        .collect()
}

fn random_bases(n: usize, seed: u64) -> Vec<G1Affine> {
    random_points::<G1Projective, G1Affine>(n, seed)
}

fn random_g2_bases(n: usize, seed: u64) -> Vec<G2Affine> {
    random_points::<G2Projective, G2Affine>(n, seed)
}

/// Mostly 0/1 scalars with a few random ones (a hash circuit's aux values).
fn mostly_bits(n: usize, rng: &mut ChaCha20Rng) -> Vec<Scalar> {
    (0..n)
        .map(|_| match rng.gen_range(0..100) {
            0..=48 => Scalar::ZERO,
            49..=97 => Scalar::ONE,
            _ => Scalar::random(&mut *rng),
        })
        .collect()
}

macro_rules! gpu_or_skip {
    () => {{
        match supraseal_c2::gpu::GpuBackendHandle::open(0) {
            Ok(g) => g,
            Err(why) => {
                eprintln!("skipped: {why}");
                return;
            }
        }
    }};
}

#[test]
#[cfg_attr(not(supraseal_gpu), ignore = "built without GPU kernels (nvcc not found at build time)")]
fn gpu_ntt_matches_cpu_for_every_size_both_directions_and_coset() {
    let gpu = gpu_or_skip!();
    let s = seed();
    for lg in 10..=max_log() {
        let n = 1usize << lg;
        let a = random_scalars(n, s + lg as u64);
        // Every launch choice (radix 2, the default, 4 and 8), DIT and DIF
        // passes, against one CPU transform.
        let check = |dir: cpu_ntt::Direction, coset: bool, want: &[Scalar], name: &str| {
            for tuning in supraseal_c2::gpu::NttTuning::CHOICES {
                for dif in [false, true] {
                    let got = gpu.ntt_with(&a, dir, coset, dif, tuning).unwrap();
                    assert_eq!(got, want, "{name} NTT 2^{lg}, {} passes, {tuning:?}", if dif { "DIF" } else { "DIT" });
                }
            }
        };
        for (name, dir) in [("forward", cpu_ntt::Direction::Forward), ("inverse", cpu_ntt::Direction::Inverse)] {
            let mut want = a.clone();
            cpu_ntt::ntt(&mut want, dir);
            check(dir, false, &want, name);
        }
        let mut want = a.clone();
        cpu_ntt::coset_ntt(&mut want);
        check(cpu_ntt::Direction::Forward, true, &want, "coset");
        let mut want = a.clone();
        cpu_ntt::coset_intt(&mut want);
        check(cpu_ntt::Direction::Inverse, true, &want, "inverse coset");
        eprintln!("NTT 2^{lg}: forward, inverse, coset, inverse coset match, DIT and DIF passes, radix 2, 4 and 8");
    }
}

#[test]
#[cfg_attr(not(supraseal_gpu), ignore = "built without GPU kernels (nvcc not found at build time)")]
fn gpu_quotient_matches_cpu() {
    let gpu = gpu_or_skip!();
    let s = seed();
    // 2^19: later passes of 2 columns (9 stages), 2^20: of 4.
    for lg in [10u32, 16, 19.min(max_log()), 20.min(max_log())] {
        let n = 1usize << lg;
        let m = n - 3; // abc_size below the domain: zero padding exercised
        let (a, b, c) = (random_scalars(m, s), random_scalars(m, s + 1), random_scalars(m, s + 2));
        let want = CpuCompute.quotient([&a, &b, &c], n).unwrap();
        assert_eq!(gpu.compute().quotient([&a, &b, &c], n).unwrap(), want, "quotient 2^{lg}");
        // The radix from the settings (SUPRASEAL_C2_NTT_RADIX) reaches the quotient's passes.
        for radix_lg in [2, 3] {
            let settings = supraseal_c2::config::Settings { ntt_radix_lg: Some(radix_lg), ..Default::default() };
            let tuned = supraseal_c2::gpu::GpuBackendHandle::open_with(0, settings).unwrap();
            assert_eq!(tuned.compute().quotient([&a, &b, &c], n).unwrap(), want, "quotient 2^{lg}, radix 2^{radix_lg}");
        }
    }
}

/// A split plan's tail MSMs with their scalars put on the device ahead,
/// from another thread (as phase 2's tail-gather thread does), over a
/// resident key (the positions put ahead) and a streamed one (the bases
/// gathered on the host put ahead): in G1 and G2, for one circuit and for
/// three, positions repeated and out of order, each sum equal to the CPU's
/// over the gathered bases, and the MSM reading the copies put ahead.
#[test]
#[cfg_attr(not(supraseal_gpu), ignore = "built without GPU kernels (nvcc not found at build time)")]
fn gpu_tail_msms_with_scalars_put_ahead_match_cpu() {
    let gpu = gpu_or_skip!();
    let s = seed();
    let mut rng = ChaCha20Rng::seed_from_u64(s);
    fn check<G: supraseal_c2::backend::Group>(gpu: &supraseal_c2::gpu::GpuBackendHandle, bases: &[G::Affine], tail: usize, circuits: usize, rng: &mut ChaCha20Rng, s: u64) {
        let positions: Vec<u32> = (0..tail).map(|_| rng.gen_range(0..bases.len() as u32)).collect();
        let scalars: Vec<Vec<Scalar>> = (0..circuits as u64).map(|c| random_scalars(tail, s + 100 + c)).collect();
        let gathered: Vec<G::Affine> = positions.iter().map(|&q| bases[q as usize]).collect();
        let want: Vec<G::Projective> = scalars.iter().map(|sc| cpu_msm::msm::<G>(&gathered, sc)).collect();
        for resident in [true, false] {
            let (got, ahead) = gpu.tail_msm_ahead::<G>(bases, &positions, &scalars, resident).unwrap();
            assert_eq!(got, want, "{:?}: {circuits} circuit(s), tail of {tail}, key resident: {resident}", G::NAME);
            assert!(ahead, "{:?}: {circuits} circuit(s), key resident: {resident}: the MSM did not read the copies put ahead", G::NAME);
        }
    }
    let g1 = random_bases(1 << 14, s);
    let g2 = random_g2_bases(1 << 12, s + 1);
    // Tails below half their bases, as split plans make them (and so within
    // the chunk buffer of bases that bounds a set put ahead).
    for circuits in [1, 3] {
        check::<G1>(&gpu, &g1, 6_000, circuits, &mut rng, s);
        check::<G2>(&gpu, &g2, 1_500, circuits, &mut rng, s);
    }
    eprintln!("tail MSMs with scalars put ahead: G1 and G2, 1 and 3 circuits, key resident and streamed, equal to the CPU");
}

#[test]
#[cfg_attr(not(supraseal_gpu), ignore = "built without GPU kernels (nvcc not found at build time)")]
fn gpu_msm_matches_cpu_on_random_and_special_inputs() {
    let gpu = gpu_or_skip!();
    let s = seed();
    let max = max_log();
    for lg in (10..=max).step_by(2) {
        let n = 1usize << lg;
        let bases = random_bases(n, s + lg as u64);
        let scalars = random_scalars(n, s + 100 + lg as u64);
        let want = cpu_msm::msm::<cpu_msm::G1>(&bases, &scalars);
        assert_eq!(gpu.compute().msm::<G1>(&bases, &scalars).unwrap(), want, "MSM 2^{lg}, random scalars");
        eprintln!("MSM 2^{lg} random scalars: match");
        if lg + 2 > max {
            // Each way of sorting the windows, whatever the size's default
            // (`auto`: beside, its stream first, from 2^24 points): in turn,
            // and on a second stream while the window before accumulates
            // (there for milliseconds at this size), at the default
            // priority and at the greatest.
            for sort in SORTS {
                let t = supraseal_c2::gpu::MsmTuning { sort, ..supraseal_c2::gpu::MsmTuning::for_points(n) };
                let (_, got, _) = gpu.msm_g1_resident_ms(&bases, &scalars, t, 1).unwrap();
                assert_eq!(got, want, "MSM 2^{lg}, random scalars, {t:?}");
                eprintln!("MSM 2^{lg} random scalars, the windows sorted {sort:?}: match");
            }
        }
    }
    let lg = 16.min(max);
    let n = 1usize << lg;
    let mut rng = ChaCha20Rng::seed_from_u64(s + 7);
    let mut bases = random_bases(n, s + 3);
    let mostly_bits = mostly_bits(n, &mut rng);
    let zeros = vec![Scalar::ZERO; n];
    let random = random_scalars(n, s + 9);
    // Bases at infinity and repeated bases.
    for i in (0..n).step_by(17) {
        bases[i] = G1Affine::identity();
    }
    for i in (5..n).step_by(13) {
        bases[i] = bases[i - 5];
    }
    // 90 % of the scalars equal (one bucket of window 0 holds most points:
    // the merge levels, not one thread, sum it).
    let skewed: Vec<Scalar> =
        random.iter().enumerate().map(|(i, r)| if i % 10 == 0 { *r } else { Scalar::from(3u64) }).collect();
    // The signed-digit recoding's edges: r − 1 − i (every window's digit at
    // its extremes, the top window largest), 2^k − 1 and 2^k.
    let near_r: Vec<Scalar> = (0..n)
        .map(|i| match i % 3 {
            0 => -Scalar::from(1 + i as u64),
            1 => Scalar::from(2u64).pow_vartime([(i % 255) as u64]) - Scalar::ONE,
            _ => Scalar::from(2u64).pow_vartime([(i % 255) as u64]),
        })
        .collect();
    for (name, sc) in [
        ("mostly 0/1", &mostly_bits),
        ("all zero", &zeros),
        ("random, infinity + repeated bases", &random),
        ("90 % equal to 3", &skewed),
        ("near r, 2^k − 1 and 2^k", &near_r),
    ] {
        let want = cpu_msm::msm::<cpu_msm::G1>(&bases, sc);
        assert_eq!(gpu.compute().msm::<G1>(&bases, sc).unwrap(), want, "MSM 2^{lg}, {name}");
        eprintln!("MSM 2^{lg} {name}: match");
    }
    assert!(bool::from(gpu.compute().msm::<G1>(&bases, &zeros).unwrap().is_identity()));
    // Every scalar = 1 on one repeated base: a single huge bucket.
    let same = vec![bases[1]; n];
    let ones = vec![Scalar::ONE; n];
    assert_eq!(gpu.compute().msm::<G1>(&same, &ones).unwrap(), G1Projective::from(bases[1]) * Scalar::from(n as u64));
}

/// Every block size, K (a power of two or not) and window width (including K
/// larger than most buckets and a window wider than the default) gives the
/// CPU's point, on random scalars and on mostly-0/1 scalars over bases with
/// infinities and repeats.
#[test]
#[cfg_attr(not(supraseal_gpu), ignore = "built without GPU kernels (nvcc not found at build time)")]
fn gpu_msm_launch_choices_match_cpu() {
    let gpu = gpu_or_skip!();
    let s = seed();
    let n = (1usize << 15) - 3;
    let mut bases = random_bases(n, s + 11);
    for i in (0..n).step_by(29) {
        bases[i] = G1Affine::identity();
    }
    for i in (7..n).step_by(31) {
        bases[i] = bases[i - 7];
    }
    let mut rng = ChaCha20Rng::seed_from_u64(s + 12);
    let inputs = [("random", random_scalars(n, s + 13)), ("mostly 0/1", mostly_bits(n, &mut rng))];
    let wants: Vec<_> = inputs.iter().map(|(_, sc)| cpu_msm::msm::<cpu_msm::G1>(&bases, sc)).collect();
    for window_bits in [9, 17, 18] {
        // 42: the fitted K of a porep-32g tail (MsmTuning::fitted_to_waves), not a power of two;
        // 128: the K of MSMs from 2^26 points (MsmTuning::for_points).
        for points_per_thread in [1, 16, 42, 64, 128] {
            for block in [64, 128, 256] {
                // Each window sorted in turn, and beside the accumulation of
                // the one before (two sort buffers in turn, a second stream
                // at the default priority and at the greatest).
                for sort in SORTS {
                    let t = supraseal_c2::gpu::MsmTuning { window_bits, points_per_thread, block, sort };
                    for ((name, sc), want) in inputs.iter().zip(&wants) {
                        let (_, got, _) = gpu.msm_g1_resident_ms(&bases, sc, t, 1).unwrap();
                        assert_eq!(&got, want, "MSM {n} points, {name}, {t:?}");
                    }
                }
            }
        }
    }
    eprintln!("MSM {n} points, 45 launch choices x 3 sorts x (random, mostly 0/1): match");
    // Wide windows: the bucket scan over 257 tiles of counts (c = 20),
    // 1,025 (c = 22) and 4,097 (c = 24), each more tiles than the totals'
    // block has threads (256). c = 24's bucket table takes 11 × (2^23 + 1)
    // × 192 B = 16.5 GiB, so it runs only where ~20 GiB are free.
    let free = gpu.free_bytes().unwrap();
    for window_bits in [20, 22, 24] {
        if window_bits == 24 && free < 20 << 30 {
            eprintln!("MSM with windows of 24 bits skipped: {free} B free on the device, ~20 GiB needed");
            continue;
        }
        // c = 20 with K = 128: MsmTuning::for_points' choice from 2^26
        // points; K = 256 and c = 22, the H-MSM's shapes gpu_bench sweeps.
        let ks: &[u32] = match window_bits {
            20 => &[32, 128, 256],
            22 => &[128, 256],
            _ => &[32],
        };
        for &points_per_thread in ks {
            for sort in SORTS {
                let t = supraseal_c2::gpu::MsmTuning { window_bits, points_per_thread, block: 128, sort };
                for ((name, sc), want) in inputs.iter().zip(&wants) {
                    let (_, got, _) = gpu.msm_g1_resident_ms(&bases, sc, t, 1).unwrap();
                    assert_eq!(&got, want, "MSM {n} points, {name}, {t:?}");
                }
            }
        }
        eprintln!("MSM {n} points, windows of {window_bits} bits x (random, mostly 0/1): match");
    }
    // A skewed input at the default choice, big enough for three merge levels.
    let n = 1 << 18;
    let bases = random_bases(n, s + 14);
    let skewed: Vec<Scalar> = random_scalars(n, s + 15)
        .into_iter()
        .enumerate()
        .map(|(i, r)| if i % 10 == 0 { r } else { Scalar::from(2u64) })
        .collect();
    let want = cpu_msm::msm::<cpu_msm::G1>(&bases, &skewed);
    assert_eq!(gpu.compute().msm::<G1>(&bases, &skewed).unwrap(), want, "MSM 2^18, 90 % equal to 2");
    eprintln!("MSM 2^18, 90 % of scalars equal to 2: match");
}

#[test]
#[cfg_attr(not(supraseal_gpu), ignore = "built without GPU kernels (nvcc not found at build time)")]
fn gpu_batch_addition_matches_cpu() {
    let gpu = gpu_or_skip!();
    let s = seed();
    let mut rng = ChaCha20Rng::seed_from_u64(s);
    for lg in [10u32, 17, 20.min(max_log())] {
        let n = (1usize << lg) - 7;
        let mut bases = random_bases(n, s + lg as u64);
        bases[3] = G1Affine::identity();
        bases[10] = bases[9];
        let bitmap: Vec<u64> = (0..n.div_ceil(64)).map(|_| rng.gen()).collect();
        let want = cpu_msm::batch_add::<cpu_msm::G1>(&bases, &bitmap);
        assert_eq!(gpu.compute().batch_add::<G1>(&bases, &bitmap).unwrap(), want, "G1 batch addition 2^{lg} - 7");
        let mut g2 = random_g2_bases(n, s + 50 + lg as u64);
        g2[3] = G2Affine::identity();
        g2[10] = g2[9];
        let want2 = cpu_msm::batch_add::<cpu_msm::G2>(&g2, &bitmap);
        assert_eq!(gpu.compute().batch_add::<G2>(&g2, &bitmap).unwrap(), want2, "G2 batch addition 2^{lg} - 7");
        eprintln!("batch addition 2^{lg} - 7: G1 and G2 match");
    }
    // 1,001 threads of 64 bases, reduced in 256 groups for one circuit (85
    // each for three): the slots past the threads hold the identity.
    let n = 1000 * 64 + 5;
    let bases = random_bases(n, s + 60);
    let bitmaps: Vec<Vec<u64>> = (0..3).map(|_| (0..n.div_ceil(64)).map(|_| rng.gen()).collect()).collect();
    let views: Vec<&[u64]> = bitmaps.iter().map(Vec::as_slice).collect();
    let want: Vec<G1Projective> = views.iter().map(|b| cpu_msm::batch_add::<cpu_msm::G1>(&bases, b)).collect();
    assert_eq!(gpu.compute().batch_add::<G1>(&bases, views[0]).unwrap(), want[0], "G1 batch addition of {n} bases, padded slots");
    assert_eq!(gpu.compute().batch_add_many::<G1>(&bases, &views).unwrap(), want, "G1 batch additions of 3 circuits over {n} bases, padded slots");
    eprintln!("batch addition of {n} bases with padded reduction slots, 1 and 3 circuits: match");
    // Every bit set on one repeated base: doublings all the way.
    let same = vec![random_g2_bases(1, s + 77)[0]; 1000];
    let all = vec![u64::MAX; 1000usize.div_ceil(64)];
    let want = G2Projective::from(same[0]) * Scalar::from(1000u64);
    assert_eq!(gpu.compute().batch_add::<G2>(&same, &all).unwrap(), want, "G2 batch addition of one repeated base");
}

#[test]
#[cfg_attr(not(supraseal_gpu), ignore = "built without GPU kernels (nvcc not found at build time)")]
fn gpu_g2_msm_matches_cpu_on_random_and_special_inputs() {
    let gpu = match supraseal_c2::gpu::GpuBackendHandle::open_with(
        0,
        supraseal_c2::config::Settings { g2_msm_on_device: true, g2_msm_auto: false, ..Default::default() },
    ) {
        Ok(g) => g,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    assert_eq!(gpu.call().placement().g2_msm, supraseal_c2::backend::Place::Device);
    let s = seed();
    for lg in (10..=max_log().min(20)).step_by(2) {
        let n = 1usize << lg;
        let bases = random_g2_bases(n, s + lg as u64);
        let scalars = random_scalars(n, s + 200 + lg as u64);
        let want = cpu_msm::msm::<cpu_msm::G2>(&bases, &scalars);
        assert_eq!(gpu.compute().msm::<G2>(&bases, &scalars).unwrap(), want, "G2 MSM 2^{lg}, random scalars");
        eprintln!("G2 MSM 2^{lg} random scalars: match");
    }
    let n = 1usize << 14.min(max_log());
    let mut rng = ChaCha20Rng::seed_from_u64(s + 8);
    let mut bases = random_g2_bases(n, s + 4);
    for i in (0..n).step_by(17) {
        bases[i] = G2Affine::identity();
    }
    for i in (5..n).step_by(13) {
        bases[i] = bases[i - 5];
    }
    let zeros = vec![Scalar::ZERO; n];
    for (name, sc) in [("mostly 0/1", mostly_bits(n, &mut rng)), ("all zero", zeros.clone()), ("random, infinity + repeated bases", random_scalars(n, s + 10))] {
        let want = cpu_msm::msm::<cpu_msm::G2>(&bases, &sc);
        assert_eq!(gpu.compute().msm::<G2>(&bases, &sc).unwrap(), want, "G2 MSM {n}, {name}");
        eprintln!("G2 MSM {n} {name}: match");
    }
    assert!(bool::from(gpu.compute().msm::<G2>(&bases, &zeros).unwrap().is_identity()));
}

#[test]
#[cfg_attr(not(supraseal_gpu), ignore = "built without GPU kernels (nvcc not found at build time)")]
fn gpu_memory_is_returned_after_operations() {
    let gpu = gpu_or_skip!();
    let before = gpu.free_bytes().unwrap();
    let bases = random_bases(1 << 16, 1);
    let scalars = random_scalars(1 << 16, 2);
    for _ in 0..5 {
        gpu.compute().msm::<G1>(&bases, &scalars).unwrap();
        gpu.compute().quotient([&scalars, &scalars, &scalars], 1 << 16).unwrap();
    }
    // What the pipeline does at the end of every phase 2: wait, then return
    // the pool's cached memory (what is still allocated stays).
    let locks = supraseal_c2::locks::GpuLocks::default();
    gpu.call().end_compute(&locks.compute_only()).unwrap();
    let after = gpu.free_bytes().unwrap();
    eprintln!("free VRAM before {before} after {after}");
    assert!(after + (64 << 20) >= before, "free VRAM dropped from {before} to {after}");
}

/// The params loader's device check: bucket sums from the device, combined
/// into the 88 rounds on the host, equal the host's own combinations of the
/// same vector, key and digits (exactly, as group elements), for G1 and G2,
/// in one chunk and in many unaligned ones, on vectors holding infinity,
/// duplicates, negations and points outside the subgroup; the rounds fail
/// exactly when a point is outside it.
#[test]
#[cfg_attr(not(supraseal_gpu), ignore = "built without GPU kernels (nvcc not found at build time)")]
fn gpu_subgroup_bucket_sums_match_the_host_combinations() {
    use supraseal_c2::cpu::msm::{G1 as C1, G2 as C2};
    use supraseal_c2::srs::subgroup::{self, testing, Key};
    if supraseal_c2::gpu::subgroup_device().unwrap().is_none() {
        eprintln!("skipped: no usable GPU");
        return;
    }
    let s = seed();
    let mut rng = ChaCha20Rng::seed_from_u64(s);
    let digits = 8;
    let (groups, buckets) = (subgroup::groups_for(digits), 3u32.pow(digits));
    for (n, max_chunk, bad) in [(1usize, 1 << 24, false), (70_001, 1 << 24, false), (70_001, 5_003, true), (300_000, 1 << 24, true), (300_000, 65_536, false)] {
        let dev = supraseal_c2::gpu::subgroup_device_with_chunk(max_chunk).unwrap().expect("a GPU");
        let mut v = random_bases(n, rng.gen());
        if n > 10 {
            v[3] = G1Affine::identity();
            v[7] = v[5];
            v[9] = -v[8];
        }
        if bad {
            let at = rng.gen_range(0..n);
            v[at] = testing::g1_with_torsion(rng.gen_range(0..testing::G1_PRIMES), &mut rng).0;
        }
        let mut k = [0u8; 32];
        rng.fill(&mut k);
        let key = Key::fixed(k);
        let section = rng.gen_range(0..6);
        let sums = dev.g1(&v, &key.words(), subgroup::stream_of(section, 0), groups, buckets).unwrap();
        let on_device = subgroup::combinations_from_sums::<C1>(&sums, digits);
        let on_host = subgroup::host_combinations::<C1>(&v, &key, section, digits);
        assert_eq!(on_device.len(), groups * digits as usize);
        assert!(on_device == on_host, "G1 n {n} chunk {max_chunk}: device and host combinations differ");
        assert_eq!(subgroup::all_in_group::<C1>(&on_device), !bad, "G1 n {n}: verdict");
        eprintln!("G1 n {n} chunk {max_chunk} bad {bad}: equal");
    }
    // A full chunk of 2^24 points puts ~2,560 points in each bucket, past
    // the merge levels' threshold: the verdict on both sides of one bad point.
    let n = (1 << 24) + 17;
    let mut v = random_bases(n, rng.gen());
    let dev = supraseal_c2::gpu::subgroup_device().unwrap().expect("a GPU");
    let at = rng.gen_range(0..n);
    let good = v[at];
    for bad in [true, false] {
        v[at] = if bad { testing::g1_with_torsion(rng.gen_range(0..testing::G1_PRIMES), &mut rng).0 } else { good };
        let key = Key::fixed(rng.gen());
        let sums = dev.g1(&v, &key.words(), subgroup::stream_of(1, 0), groups, buckets).unwrap();
        let verdict = subgroup::all_in_group::<C1>(&subgroup::combinations_from_sums::<C1>(&sums, digits));
        assert_eq!(verdict, !bad, "G1 n {n}, bad point at {at}: {bad}");
        eprintln!("G1 n {n} (merge levels) bad {bad}: verdict right");
    }
    for (n, max_chunk, bad) in [(65_537usize, 1 << 24, true), (65_537, 9_999, false), (131_072, 1 << 24, false)] {
        let dev = supraseal_c2::gpu::subgroup_device_with_chunk(max_chunk).unwrap().expect("a GPU");
        let mut v = random_g2_bases(n, rng.gen());
        v[1] = G2Affine::identity();
        v[4] = v[2];
        v[6] = -v[5];
        if bad {
            let at = rng.gen_range(0..n);
            v[at] = testing::g2_with_torsion(rng.gen_range(0..testing::G2_PRIMES), &mut rng).0;
        }
        let mut k = [0u8; 32];
        rng.fill(&mut k);
        let key = Key::fixed(k);
        let sums = dev.g2(&v, &key.words(), subgroup::stream_of(4, 0), groups, buckets).unwrap();
        let on_device = subgroup::combinations_from_sums::<C2>(&sums, digits);
        let on_host = subgroup::host_combinations::<C2>(&v, &key, 4, digits);
        assert!(on_device == on_host, "G2 n {n} chunk {max_chunk}: device and host combinations differ");
        assert_eq!(subgroup::all_in_group::<C2>(&on_device), !bad, "G2 n {n}: verdict");
        eprintln!("G2 n {n} chunk {max_chunk} bad {bad}: equal");
    }
}

fn gpu_with(settings: supraseal_c2::config::Settings) -> Option<supraseal_c2::gpu::GpuBackendHandle> {
    match supraseal_c2::gpu::GpuBackendHandle::open_with(0, settings) {
        Ok(g) => Some(g),
        Err(why) => {
            eprintln!("skipped: {why}");
            None
        }
    }
}

/// With 1 MiB chunks (2^13 G1 and 2^12 G2 points), MSMs and batch additions
/// over several chunks, the last one partial, give the CPU's points.
#[test]
#[cfg_attr(not(supraseal_gpu), ignore = "built without GPU kernels (nvcc not found at build time)")]
fn gpu_chunked_msm_and_batch_addition_match_cpu() {
    let settings = supraseal_c2::config::Settings { gpu_chunk: 1 << 20, g2_msm_on_device: true, g2_msm_auto: false, ..Default::default() };
    let Some(gpu) = gpu_with(settings) else { return };
    let s = seed();
    let mut rng = ChaCha20Rng::seed_from_u64(s + 31);
    let n = 3 * 8192 + 5;
    let mut bases = random_bases(n, s + 32);
    bases[8191] = G1Affine::identity();
    bases[8192] = bases[8191 - 100];
    for (name, sc) in [("random", random_scalars(n, s + 33)), ("mostly 0/1", mostly_bits(n, &mut rng))] {
        assert_eq!(gpu.compute().msm::<G1>(&bases, &sc).unwrap(), cpu_msm::msm::<cpu_msm::G1>(&bases, &sc), "G1 MSM over 4 chunks, {name}");
    }
    // Three circuits' MSMs over the same bases (their scalars copied on a
    // stream of their own, two buffers in turn), one of them all zero.
    let sets = [random_scalars(n, s + 36), vec![Scalar::ZERO; n], random_scalars(n, s + 37)];
    let views: Vec<&[Scalar]> = sets.iter().map(Vec::as_slice).collect();
    let got = gpu.compute().msm_many::<G1>(&bases, &views).unwrap();
    for (i, sc) in sets.iter().enumerate() {
        assert_eq!(got[i], cpu_msm::msm::<cpu_msm::G1>(&bases, sc), "G1 MSM of circuit {i} of 3 over 4 chunks");
    }
    let bitmap: Vec<u64> = (0..n.div_ceil(64)).map(|_| rng.gen()).collect();
    assert_eq!(gpu.compute().batch_add::<G1>(&bases, &bitmap).unwrap(), cpu_msm::batch_add::<cpu_msm::G1>(&bases, &bitmap), "G1 batch addition over 4 chunks");
    let m = 2 * 4096 + 3;
    let g2 = random_g2_bases(m, s + 34);
    let sc = random_scalars(m, s + 35);
    assert_eq!(gpu.compute().msm::<G2>(&g2, &sc).unwrap(), cpu_msm::msm::<cpu_msm::G2>(&g2, &sc), "G2 MSM over 3 chunks");
    assert_eq!(gpu.compute().batch_add::<G2>(&g2, &bitmap).unwrap(), cpu_msm::batch_add::<cpu_msm::G2>(&g2, &bitmap), "G2 batch addition over 3 chunks");
    // The batch additions of 17 circuits over the same bases (two passes: 16
    // circuits, then 1), one bitmap repeated and one empty.
    let mut bitmaps: Vec<Vec<u64>> = (0..17).map(|_| (0..n.div_ceil(64)).map(|_| rng.gen()).collect()).collect();
    bitmaps[5] = bitmaps[2].clone();
    bitmaps[9] = vec![0; n.div_ceil(64)];
    let views: Vec<&[u64]> = bitmaps.iter().map(Vec::as_slice).collect();
    let got = gpu.compute().batch_add_many::<G1>(&bases, &views).unwrap();
    let got2 = gpu.compute().batch_add_many::<G2>(&g2, &views).unwrap();
    assert_eq!((got.len(), got2.len()), (17, 17));
    for (i, m) in views.iter().enumerate() {
        assert_eq!(got[i], cpu_msm::batch_add::<cpu_msm::G1>(&bases, m), "G1 batch addition of circuit {i} of 17, 4 chunks");
        assert_eq!(got2[i], cpu_msm::batch_add::<cpu_msm::G2>(&g2, m), "G2 batch addition of circuit {i} of 17, 3 chunks");
    }
    eprintln!("chunked MSMs and batch additions (G1 {n} points, G2 {m} points, 1 MiB chunks, 1 and 17 circuits): match");
}

/// The batch additions on a second stream of the call while an MSM runs on
/// its own stream, as the pipeline runs them beside the last H-MSM
/// (`SUPRASEAL_C2_BATCH_ADD_BESIDE`): every point is the CPU's. 1 MiB
/// chunks, so that both upload their bases chunk by chunk, each on an
/// upload stream of its own; three circuits.
#[cfg(supraseal_gpu)]
#[test]
fn gpu_batch_additions_on_a_second_stream_beside_an_msm_match_cpu() {
    let settings = supraseal_c2::config::Settings { gpu_chunk: 1 << 20, g2_msm_on_device: true, g2_msm_auto: false, ..Default::default() };
    let Some(gpu) = gpu_with(settings) else { return };
    let side = supraseal_c2::gpu::exec::Exec::new(gpu.call().exec().gpu.clone(), settings).unwrap();
    let s = seed();
    let mut rng = ChaCha20Rng::seed_from_u64(s + 90);
    let n = (1usize << 18.min(max_log())) + 5;
    let bases = random_bases(n, s + 91);
    let scalars = random_scalars(n, s + 92);
    let g2 = random_g2_bases(n / 4, s + 93);
    let bitmaps: Vec<Vec<u64>> = (0..3).map(|_| (0..n.div_ceil(64)).map(|_| rng.gen()).collect()).collect();
    let views: Vec<&[u64]> = bitmaps.iter().map(Vec::as_slice).collect();
    let (msm, (sums, sums2)) = std::thread::scope(|scope| {
        let beside = scope.spawn(|| (side.batch_add_many::<G1>(&bases, &views).unwrap(), side.batch_add_many::<G2>(&g2, &views).unwrap()));
        let msm = gpu.compute().msm::<G1>(&bases, &scalars).unwrap();
        (msm, beside.join().unwrap())
    });
    side.stream.synchronize().unwrap();
    assert_eq!(msm, cpu_msm::msm::<cpu_msm::G1>(&bases, &scalars), "the G1 MSM beside the batch additions");
    for (i, m) in views.iter().enumerate() {
        assert_eq!(sums[i], cpu_msm::batch_add::<cpu_msm::G1>(&bases, m), "G1 batch addition of circuit {i} on the second stream");
        assert_eq!(sums2[i], cpu_msm::batch_add::<cpu_msm::G2>(&g2, m), "G2 batch addition of circuit {i} on the second stream");
    }
    eprintln!("batch additions on a second stream beside an MSM ({n} G1 points, 1 MiB chunks, 3 circuits): match");
}

/// `SUPRASEAL_C2_STREAMED_MSM=table` (and `table-ramp`, the default, with
/// growing chunks): the chunks of an MSM over streamed bases add into one
/// bucket table of the whole MSM's windows. 96 MiB chunks (2^20 G1 points)
/// and 2^22 + 77 points: 5 chunks, the last partial, into c = 17 (16 points
/// per bucket and chunk, as at porep-32g), where one chunk's MSM takes
/// c = 16. Random scalars; mostly 0 and 1 (the bucket of 1 holds half the
/// points: the merge levels run); all zero; a base at infinity and repeated
/// bases. Each equals the CPU's and the one-MSM-per-chunk form's, also with
/// `table-ramp` (chunks of 2^20, 2^21 and the last 2^20 + 77 points; within
/// a budget a byte short of that, 2^20, 2^21 − 2^14 and 2^20 + 2^14 + 77).
/// (Only G1's H-MSM takes the table: every other MSM's budget holds one
/// chunk's MSM.)
#[cfg(supraseal_gpu)]
#[test]
fn gpu_msm_chunks_sharing_one_bucket_table_match_cpu() {
    use supraseal_c2::gpu::msm::{msm_device_scalars, shared_table_tuning};
    use supraseal_c2::gpu::words::limbs;
    if max_log() < 22 {
        eprintln!("skipped: GPU_TEST_MAX_LOG below 22");
        return;
    }
    let chunk_bytes = 96 << 20;
    let settings = supraseal_c2::config::Settings { gpu_chunk: chunk_bytes, key_resident: false, streamed_msm_table: false, ..Default::default() };
    let Some(gpu) = gpu_with(supraseal_c2::config::Settings { streamed_msm_table: true, streamed_msm_ramp: false, ..settings }) else { return };
    let chunks = gpu_with(settings).expect("opened above");
    let ramp = gpu_with(supraseal_c2::config::Settings { streamed_msm_table: true, streamed_msm_ramp: true, ..settings }).expect("opened above");
    let s = seed();
    let mut rng = ChaCha20Rng::seed_from_u64(s + 120);
    let within = |gpu: &supraseal_c2::gpu::GpuBackendHandle, bases: &[G1Affine], sc: &[Scalar], budget: usize| -> G1Projective {
        let exec = gpu.compute();
        let mut d = exec.upload(limbs(sc), "test scalars").unwrap();
        msm_device_scalars::<G1>(exec, bases, &mut d, budget).unwrap()
    };
    let sum = |gpu: &supraseal_c2::gpu::GpuBackendHandle, bases: &[G1Affine], sc: &[Scalar]| within(gpu, bases, sc, usize::MAX);
    let n = (1 << 22) + 77;
    // A byte short of the ramp's 2^21-point buffers: its largest chunk
    // shrinks to 2^21 − 2^14 points (chunks of 2^20, 2^21 − 2^14, 2^20 + 2^14 + 77).
    let short = supraseal_c2::gpu::msm::h_msm_streamed_bytes(n, chunk_bytes, true, true, usize::MAX) - 1;
    // The short budget still ramps (bytes between the plain table's and the
    // budget): else its case would pass as a plain table.
    let (plain, shrunk) = (supraseal_c2::gpu::msm::h_msm_streamed_bytes(n, chunk_bytes, true, false, short), supraseal_c2::gpu::msm::h_msm_streamed_bytes(n, chunk_bytes, true, true, short));
    assert!(plain < shrunk && shrunk <= short, "the short budget's ramp: {shrunk} B against the plain table's {plain} and the budget {short}");
    assert_eq!(shared_table_tuning::<G1>(n, chunk_bytes, usize::MAX).map(|t| t.window_bits), Some(17), "the table's window");
    let mut bases = random_bases(n, s + 121);
    bases[(1 << 20) - 1] = G1Affine::identity();
    bases[1 << 20] = bases[(1 << 20) - 100];
    bases[(3 << 20) + 5] = bases[17];
    let tables = || supraseal_c2::gpu::msm::SHARED_TABLES.load(std::sync::atomic::Ordering::Relaxed);
    let ramps = || supraseal_c2::gpu::msm::RAMPS.load(std::sync::atomic::Ordering::Relaxed);
    for (name, sc) in [("random", random_scalars(n, s + 122)), ("mostly 0/1", mostly_bits(n, &mut rng)), ("zero", vec![Scalar::ZERO; n])] {
        let want = cpu_msm::msm::<cpu_msm::G1>(&bases, &sc);
        let before = tables();
        assert_eq!(sum(&gpu, &bases, &sc), want, "5 chunks into one table, {name} scalars");
        assert!(tables() > before, "{name} scalars: the MSM did not take the shared table");
        let (before, ramped) = (tables(), ramps());
        assert_eq!(sum(&ramp, &bases, &sc), want, "chunks of 2^20, 2^21, 2^20 + 77 into one table (table-ramp), {name} scalars");
        assert!(tables() > before && ramps() > ramped, "{name} scalars: table-ramp did not ramp in the shared table");
        let (before, ramped) = (tables(), ramps());
        assert_eq!(within(&ramp, &bases, &sc, short), want, "chunks of 2^20, 2^21 − 2^14, 2^20 + 2^14 + 77 (table-ramp within a budget), {name} scalars");
        assert!(tables() > before && ramps() > ramped, "{name} scalars: table-ramp within a budget did not ramp in the shared table");
        let before = tables();
        assert_eq!(sum(&chunks, &bases, &sc), want, "one MSM per chunk, {name} scalars");
        assert_eq!(tables(), before, "{name} scalars: SUPRASEAL_C2_STREAMED_MSM=chunks took the table");
    }
    // Twice the points: the ramp reaches its cap (chunks of 2^20, 2^21, 2^22, 2^20 + 77).
    if max_log() >= 23 {
        let n = (1 << 23) + 77;
        let bases = random_bases(n, s + 125);
        let sc = random_scalars(n, s + 126);
        let want = cpu_msm::msm::<cpu_msm::G1>(&bases, &sc);
        let (before, ramped) = (tables(), ramps());
        assert_eq!(sum(&ramp, &bases, &sc), want, "2^23 + 77 points, table-ramp");
        assert_eq!(sum(&gpu, &bases, &sc), want, "2^23 + 77 points, table");
        assert_eq!((tables(), ramps()), (before + 2, ramped + 1), "both took the table, one ramped");
    }
    eprintln!("an MSM whose chunks share one bucket table ({n} G1 points, 96 MiB chunks, c = 17; and the ramp): matches");
}

/// The peak formula admission reserves (`compute_peak_bytes`) covers what
/// phase 2's steps hold on the device, and is not far above it: every step
/// of a 2^20-domain circuit in turn (quotient and H-MSM, a G1 MSM, G1 and G2
/// batch additions, a G2 MSM), 16 MiB chunks, the device's use sampled from
/// another thread; and at the porep-32g shape it stays within 13.5 GiB.
#[cfg(supraseal_gpu)]
#[test]
fn gpu_phase2_peak_is_within_the_formula() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use supraseal_c2::gpu::stage::{compute_peak_bytes, KeyShape};
    let porep = KeyShape { h: 134_217_727, l: 130_169_893, a: 129_753_620, b_g1: 33_112_282, b_g2: 33_112_282 };
    for g2_msm_on_device in [false, true] {
        let settings = supraseal_c2::config::Settings { g2_msm_on_device, g2_msm_auto: false, ..Default::default() };
        let peak = compute_peak_bytes(1 << 27, &porep, &settings);
        eprintln!("porep-32g phase-2 peak (G2 MSM on device: {g2_msm_on_device}): {:.2} GiB", peak as f64 / (1u64 << 30) as f64);
        assert!(peak <= 27 << 29, "porep-32g peak {peak} B exceeds 13.5 GiB");
    }

    let settings = supraseal_c2::config::Settings { gpu_chunk: 16 << 20, g2_msm_on_device: true, g2_msm_auto: false, ..Default::default() };
    let Some(gpu) = gpu_with(settings) else { return };
    let s = seed();
    let n = 1usize << 20.min(max_log());
    let key = KeyShape { h: n - 1, l: n, a: n, b_g1: n / 4, b_g2: n / 4 };
    let want = compute_peak_bytes(n, &key, &settings);
    let abc: Vec<Vec<Scalar>> = (0..3).map(|i| random_scalars(n, s + 40 + i)).collect();
    let bases = random_bases(n, s + 43);
    let g2 = random_g2_bases(n / 4, s + 44);
    let scalars = random_scalars(n, s + 45);
    let mut rng = ChaCha20Rng::seed_from_u64(s + 46);
    let bitmap: Vec<u64> = (0..n.div_ceil(64)).map(|_| rng.gen()).collect();
    let locks = supraseal_c2::locks::GpuLocks::default();
    let compute = locks.compute_only();
    let steps = || {
        let (b, c) = (gpu.call(), gpu.compute());
        b.quotient_msm(&compute, [&abc[0], &abc[1], &abc[2]], n, None, &bases[..n - 1], &mut || {}).unwrap();
        c.msm::<G1>(&bases, &scalars).unwrap();
        c.batch_add::<G1>(&bases, &bitmap).unwrap();
        c.batch_add::<G2>(&g2, &bitmap).unwrap();
        c.msm::<G2>(&g2, &scalars[..n / 4]).unwrap();
        b.end_compute(&compute).unwrap();
    };
    // Once unmeasured: the driver reserves a kernel's local memory (its
    // stack frame for every thread the device can hold: ptxas gives the G2
    // merge levels 976 B a thread, ~260 MB over an H100's 132 SMs) at its
    // first launch in the process and keeps it, so the high-water would
    // depend on which test launched it first; the formula counts buffers.
    steps();
    let base = gpu.used_bytes().unwrap();
    let (stop, high) = (AtomicBool::new(false), AtomicUsize::new(base));
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                high.fetch_max(gpu.used_bytes().unwrap(), Ordering::Relaxed);
            }
        });
        steps();
        stop.store(true, Ordering::Relaxed);
    });
    let got = high.load(Ordering::Relaxed) - base;
    eprintln!("2^{} steps: measured high-water {got} B above the idle device, formula {want} B", n.trailing_zeros());
    // Pool mappings come in 2 MiB granules, a few dozen buffers at once.
    assert!(got <= want + (64 << 20), "measured {got} B above the formula's {want} B");
    assert!(got >= want / 2, "measured {got} B, under half the formula's {want} B: the formula overstates the peak");
}

/// The GPU call's quotient and H-MSM from each placement of a, b, c: all
/// uploaded in turn (the fallback path: each vector on the upload stream
/// beside the transforms of the ones before it), and part of them staged
/// ahead in phase 2 where the card has room for some of the next circuit
/// but not all of it (a VRAM limit of four vectors and 16 MiB above the
/// device's use):
/// the CPU's point both times, and the staging rule stages one or two of
/// the three vectors, not none or all.
#[cfg(supraseal_gpu)]
#[test]
fn gpu_quotient_msm_matches_cpu_with_inputs_staged_in_part() {
    use supraseal_c2::config::Settings;
    let n = 1usize << 20.min(max_log());
    // The probe's call ends before the tested one opens: staging ahead
    // happens only while one call is in flight on the device.
    let Some(used) = gpu_with(Settings::default()).map(|g| g.used_bytes().unwrap()) else { return };
    // 1 MiB chunks keep the H-MSM's bases and buckets small beside the
    // quotient's three vectors; 16 MiB above four vectors cover them.
    let settings = Settings { vram_margin: 0, vram_limit: Some(used + 4 * 32 * n + (16 << 20)), gpu_chunk: 1 << 20, ..Default::default() };
    let Some(gpu) = gpu_with(settings) else { return };
    let s = seed();
    let abc: Vec<Vec<Scalar>> = (0..3).map(|i| random_scalars(n - 5, s + 50 + i)).collect();
    let inputs = [&abc[0][..], &abc[1][..], &abc[2][..]];
    let bases = random_bases(n - 1, s + 53);
    let coeffs = CpuCompute.quotient(inputs, n).unwrap();
    let want = cpu_msm::msm::<cpu_msm::G1>(&bases, &coeffs[..n - 1]);
    let locks = supraseal_c2::locks::GpuLocks::default();
    let compute = locks.compute_only();
    let call = gpu.call();
    assert_eq!(Backend::pin(call, 1, inputs), None, "circuit 1 stageable");
    // Circuit 1 is staged where the pipeline stages it: between circuit 0's
    // quotient (which hands back its b buffer for circuit 1's a) and H-MSM.
    let mut ahead = None;
    let got = call.quotient_msm(&compute, inputs, n, None, &bases, &mut || ahead = call.prefetch(&compute, 1, inputs, n)).unwrap();
    assert_eq!(got, want, "a, b, c uploaded in turn");
    let staged = ahead.expect("room for part of circuit 1");
    let k = staged.staged();
    assert!((1..=2).contains(&k), "{k} of 3 vectors staged ahead under a limit of 4 vectors");
    let got = call.quotient_msm(&compute, inputs, n, Some(staged), &bases, &mut || {}).unwrap();
    assert_eq!(got, want, "{k} vectors staged ahead, the rest uploaded in turn");
    Backend::unpin_circuit(call, 1);
    call.end_compute(&compute).unwrap();
    eprintln!("2^{}: quotient and H-MSM match the CPU with a, b, c uploaded in turn and with {k} staged ahead", n.trailing_zeros());
}

//! GPU timing of the kernels as the pipeline calls them (host data in, host
//! result out, uploads included): G1 MSM at 2^20..2^26 points and one forward
//! Fr NTT at 2^20..2^27. Prints a table; without a GPU it says why and exits 0.
//! Run: `cargo run --release --example gpu_bench` (build with NVCC set).

use std::time::Instant;

use blstrs::{G1Affine, G1Projective, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

use supraseal_c2::cpu::ntt::Direction;
use supraseal_c2::gpu::GpuBackendHandle;

fn scalars(n: usize) -> Vec<Scalar> {
    (0..n.div_ceil(1 << 16))
        .into_par_iter()
        .flat_map_iter(|c| {
            let mut rng = ChaCha20Rng::seed_from_u64(c as u64);
            (0..(1usize << 16).min(n - (c << 16))).map(move |_| Scalar::random(&mut rng)).collect::<Vec<_>>()
        })
        .collect()
}

fn bases(n: usize) -> Vec<G1Affine> {
    (0..n.div_ceil(1 << 14))
        .into_par_iter()
        .flat_map_iter(|c| {
            let mut rng = ChaCha20Rng::seed_from_u64(1000 + c as u64);
            let len = (1usize << 14).min(n - (c << 14));
            let step = G1Projective::random(&mut rng);
            let mut p = G1Projective::random(&mut rng);
            let proj: Vec<G1Projective> = (0..len).map(|_| { p += step; p }).collect();
            let mut out = vec![G1Affine::identity(); len];
            G1Projective::batch_normalize(&proj, &mut out);
            out
        })
        .collect()
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
    println!("| op | size | median of 3 (ms), host in/out |");
    println!("|---|---|---|");
    for lg in (20..=max_msm).step_by(2) {
        let n = 1usize << lg;
        let (b, s) = (bases(n), scalars(n));
        gpu.backend().msm_g1(&b, &s).unwrap(); // warm-up
        let ms = median_ms(|| {
            gpu.backend().msm_g1(&b, &s).unwrap();
        });
        println!("| G1 MSM | 2^{lg} | {ms:.1} |");
    }
    for lg in 20..=max_ntt {
        let a = scalars(1 << lg);
        gpu.ntt(&a, Direction::Forward, false).unwrap();
        let ms = median_ms(|| {
            gpu.ntt(&a, Direction::Forward, false).unwrap();
        });
        println!("| Fr NTT forward | 2^{lg} | {ms:.1} |");
    }
    let _ = G1Projective::identity().to_affine();
}

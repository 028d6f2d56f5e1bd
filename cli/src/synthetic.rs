//! A synthetic proving key and witness of a chosen domain size, for
//! throughput benchmarks at shapes where generating real parameters with
//! bellperson would take hours (a 2^24 domain, as a 512 MiB sector's partition
//! has; 2^27 for 32 GiB). The work per proof is the real work (same NTTs, MSM
//! sizes and split-MSM plans); the proofs do not verify, because the points
//! are not from one trusted setup. Correctness is tested with real keys.

use std::path::PathBuf;
use std::sync::Arc;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

use supraseal_c2::srs::Srs;

use crate::collector::{BitVec, Witness};

/// Public inputs of the synthetic circuit (input 0 is the constant one).
pub const NUM_INPUTS: usize = 21;

/// The sizes of a synthetic circuit with a domain of 2^`log_domain` elements.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub log_domain: u32,
    /// Constraints (`abc_size`): the domain minus a little slack.
    pub constraints: usize,
    pub num_aux: usize,
}

impl Shape {
    /// Shape for a 2^`log_domain` domain (log_domain ≥ 10).
    pub fn new(log_domain: u32) -> Shape {
        let n = 1usize << log_domain;
        Shape { log_domain, constraints: n - n / 64, num_aux: n - n / 32 }
    }
}

/// A bit vector of `len` bits, each set with probability `p`.
fn density(len: usize, p: f64, rng: &mut impl Rng) -> BitVec {
    let mut words = vec![0u64; len.div_ceil(64)];
    for i in 0..len {
        if rng.gen_bool(p) {
            words[i / 64] |= 1 << (i % 64);
        }
    }
    BitVec { words, len }
}

/// `len` distinct points P, P+Q, P+2Q, … per chunk (one addition each, then a
/// batch normalisation), in parallel chunks with their own random P and Q.
fn points<P: Group + Curve<AffineRepr = A> + Send + Sync, A: PrimeCurveAffine + Send + Sync + Copy>(
    len: usize,
    seed: u64,
) -> Vec<A> {
    const CHUNK: usize = 1 << 14;
    (0..len.div_ceil(CHUNK))
        .into_par_iter()
        .flat_map_iter(|c| {
            let mut rng = ChaCha20Rng::seed_from_u64(seed.wrapping_mul(1 << 20) + c as u64);
            let step = P::random(&mut rng);
            let mut p = P::random(&mut rng);
            let proj: Vec<P> = (0..CHUNK.min(len - c * CHUNK))
                .map(|_| {
                    p += step;
                    p
                })
                .collect();
            let mut out = vec![A::identity(); proj.len()];
            P::batch_normalize(&proj, &mut out);
            out
        })
        .collect()
}

/// A synthetic witness: dense random a, b, c; aux values mostly 0 or 1 (as in
/// hash circuits, so that the split-MSM path is taken) with a share of full
/// random values; A-density about 90 %, B-density about 20 % of the aux
/// variables, every input in B.
pub fn witness(shape: Shape, seed: u64) -> Witness {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let full = |len: usize, seed: u64| -> Vec<Scalar> {
        (0..len.div_ceil(1 << 16))
            .into_par_iter()
            .flat_map_iter(|c| {
                let mut rng = ChaCha20Rng::seed_from_u64(seed.wrapping_mul(1 << 20) + c as u64);
                (0..(1usize << 16).min(len - (c << 16))).map(move |_| Scalar::random(&mut rng)).collect::<Vec<_>>()
            })
            .collect()
    };
    let mut inputs = full(NUM_INPUTS, seed ^ 1);
    inputs[0] = Scalar::ONE;
    let aux = (0..shape.num_aux.div_ceil(1 << 16))
        .into_par_iter()
        .flat_map_iter(|c| {
            let mut rng = ChaCha20Rng::seed_from_u64(seed.wrapping_mul(1 << 20) + 7 + c as u64);
            (0..(1usize << 16).min(shape.num_aux - (c << 16)))
                .map(move |_| match rng.gen_range(0..10) {
                    0..=4 => Scalar::ZERO,
                    5..=7 => Scalar::ONE,
                    _ => Scalar::random(&mut rng),
                })
                .collect::<Vec<_>>()
        })
        .collect();
    Witness {
        a_aux_density: density(shape.num_aux, 0.9, &mut rng),
        b_inp_density: density(NUM_INPUTS, 1.0, &mut rng),
        b_aux_density: density(shape.num_aux, 0.2, &mut rng),
        a: full(shape.constraints, seed ^ 2),
        b: full(shape.constraints, seed ^ 3),
        c: full(shape.constraints, seed ^ 4),
        inputs,
        aux,
    }
}

/// A synthetic key matching `w` (same densities) for `shape`.
pub fn key(shape: Shape, w: &Witness, seed: u64) -> Arc<Srs> {
    let n = 1usize << shape.log_domain;
    let g1 = |len: usize, s: u64| points::<G1Projective, G1Affine>(len, seed.wrapping_add(s));
    let g2 = |len: usize, s: u64| points::<G2Projective, G2Affine>(len, seed.wrapping_add(s));
    let one1 = |s: u64| g1(1, s)[0];
    let one2 = |s: u64| g2(1, s)[0];
    let b_len = w.b_inp_density.popcount() + w.b_aux_density.popcount();
    Arc::new(Srs::from_parts(
        PathBuf::from(format!("<synthetic 2^{}>", shape.log_domain)),
        one1(1),
        one1(2),
        one2(3),
        one1(4),
        one2(5),
        g1(n - 1, 10),
        g1(shape.num_aux, 11),
        g1(NUM_INPUTS + w.a_aux_density.popcount(), 12),
        g1(b_len, 13),
        g2(b_len, 14),
    ))
}

//! A valid params file of any shape, built in memory (tests and fuzzers).

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::Group;

/// A valid params file with the given section counts (`ic` has 1 point).
/// Points are small multiples of the generators, so every point is decoded
/// and subgroup-checked like a real file's. Used by tests, the fuzzers' seed
/// corpora and their prover harness.
pub fn tiny_params(h: usize, l: usize, a: usize, b: usize) -> Vec<u8> {
    // Six encodings, made once: a scalar multiplication per point would cost
    // seconds for the 2^16-point vectors of the loader's tests.
    let g1s: Vec<_> = (0..6u64).map(|i| G1Affine::from(G1Projective::generator() * Scalar::from(i + 1)).to_uncompressed()).collect();
    let g2s: Vec<_> = (0..6u64).map(|i| G2Affine::from(G2Projective::generator() * Scalar::from(i + 1)).to_uncompressed()).collect();
    let g1 = |i: usize| g1s[i];
    let g2 = |i: usize| g2s[i];
    let mut out = Vec::new();
    out.extend_from_slice(&g1(0)); // alpha_g1
    out.extend_from_slice(&g1(1)); // beta_g1
    out.extend_from_slice(&g2(2)); // beta_g2
    out.extend_from_slice(&g2(3)); // gamma_g2
    out.extend_from_slice(&g1(4)); // delta_g1
    out.extend_from_slice(&g2(5)); // delta_g2
    for count in [1, h, l, a, b] {
        out.extend_from_slice(&(count as u32).to_be_bytes());
        (0..count).for_each(|i| out.extend_from_slice(&g1(i % 5)));
    }
    out.extend_from_slice(&(b as u32).to_be_bytes());
    (0..b).for_each(|i| out.extend_from_slice(&g2(i % 5)));
    out
}

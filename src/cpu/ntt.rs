//! Radix-2 number-theoretic transform over Fr (blstrs `Scalar`), parallel with
//! rayon.
//!
//! Forward: `A_i = Σ_j a_j ω^{ij}` for ω a primitive n-th root of unity
//! (n = 2^k). Inverse divides by n and uses ω⁻¹. The coset variants evaluate
//! on / interpolate from `g·⟨ω⟩` with g = 7, Fr's multiplicative generator
//! ([`crate::curve::COSET_GENERATOR`]), the coset bellperson uses. Inputs and
//! outputs are in natural order; the bit-reversal is done internally.
//!
//! Algorithm: bit-reversal permutation, then log n in-place Cooley–Tukey
//! (decimation-in-time) stages with a precomputed table of ω^i (i < n/2).
//! Early stages have many small blocks and are split over blocks; late stages
//! have few large blocks and are split inside each block.

use blstrs::Scalar;
use ff::{Field, PrimeField};
use rayon::prelude::*;

/// Below this many elements work is done on one thread.
const PAR_MIN: usize = 1 << 12;

pub use crate::curve::{root_of_unity, Direction};

/// `[base^0, base^1, ..., base^(len-1)]`, computed in parallel chunks.
pub fn powers(base: Scalar, len: usize) -> Vec<Scalar> {
    let mut out = vec![Scalar::ZERO; len];
    out.par_chunks_mut(PAR_MIN).enumerate().for_each(|(ci, chunk)| {
        let mut acc = base.pow_vartime([(ci * PAR_MIN) as u64]);
        for v in chunk.iter_mut() {
            *v = acc;
            acc *= base;
        }
    });
    out
}

/// Multiplies `data[i]` by `base^i` (in place, parallel).
pub fn distribute_powers(data: &mut [Scalar], base: Scalar) {
    data.par_chunks_mut(PAR_MIN).enumerate().for_each(|(ci, chunk)| {
        let mut acc = base.pow_vartime([(ci * PAR_MIN) as u64]);
        for v in chunk.iter_mut() {
            *v *= acc;
            acc *= base;
        }
    });
}

fn bit_reverse_permute(data: &mut [Scalar]) {
    let n = data.len();
    if n <= 2 {
        return;
    }
    let shift = usize::BITS - n.trailing_zeros();
    // Swap each pair once (i < rev(i)). Writes from different i touch disjoint
    // pairs, so a raw pointer shared across threads is sound.
    let ptr = SendPtr(data.as_mut_ptr());
    (0..n).into_par_iter().with_min_len(PAR_MIN).for_each(|i| {
        let j = i.reverse_bits() >> shift;
        if i < j {
            let p = &ptr;
            // SAFETY: i, j < n and each unordered pair {i, j} is swapped by
            // exactly one iteration, so no two threads touch the same slot.
            unsafe { std::ptr::swap(p.0.add(i), p.0.add(j)) };
        }
    });
}

struct SendPtr(*mut Scalar);
// SAFETY: used only for the disjoint swaps in `bit_reverse_permute`.
unsafe impl Sync for SendPtr {}

/// In-place NTT of `data` (length a power of two, ≤ 2^32), natural order in
/// and out. `Direction::Inverse` includes the 1/n scaling.
pub fn ntt(data: &mut [Scalar], dir: Direction) {
    let n = data.len();
    assert!(n.is_power_of_two(), "NTT length {n} is not a power of two");
    if n == 1 {
        return;
    }
    let k = n.trailing_zeros();
    let omega = match dir {
        Direction::Forward => root_of_unity(k),
        Direction::Inverse => root_of_unity(k).invert().unwrap(),
    };
    let twiddles = powers(omega, n / 2);
    bit_reverse_permute(data);

    let mut half = 1;
    while half < n {
        let stride = n / (2 * half); // twiddle index step for this stage
        if n / (2 * half) >= rayon::current_num_threads() * 4 || n < PAR_MIN {
            // Many blocks: one task per group of blocks.
            let block = 2 * half;
            let per_task = (PAR_MIN / block).max(1) * block;
            data.par_chunks_mut(per_task).for_each(|chunk| {
                for blk in chunk.chunks_mut(block) {
                    let (lo, hi) = blk.split_at_mut(half);
                    butterflies(lo, hi, &twiddles, 0, stride);
                }
            });
        } else {
            // Few big blocks: split each block's butterflies across tasks.
            for blk in data.chunks_mut(2 * half) {
                let (lo, hi) = blk.split_at_mut(half);
                lo.par_chunks_mut(PAR_MIN)
                    .zip(hi.par_chunks_mut(PAR_MIN))
                    .enumerate()
                    .for_each(|(ci, (l, h))| butterflies(l, h, &twiddles, ci * PAR_MIN, stride));
            }
        }
        half *= 2;
    }

    if dir == Direction::Inverse {
        let n_inv = Scalar::from(n as u64).invert().unwrap();
        data.par_iter_mut().with_min_len(PAR_MIN).for_each(|v| *v *= n_inv);
    }
}

/// `lo[j], hi[j] = lo[j] + w·hi[j], lo[j] − w·hi[j]` with `w = tw[(j0 + j)·stride]`.
#[inline]
fn butterflies(lo: &mut [Scalar], hi: &mut [Scalar], tw: &[Scalar], j0: usize, stride: usize) {
    for (j, (l, h)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
        let idx = (j0 + j) * stride;
        let t = if idx == 0 { *h } else { *h * tw[idx] };
        *h = *l - t;
        *l += t;
    }
}

/// Evaluates the polynomial with coefficients `data` on the coset g·⟨ω⟩.
pub fn coset_ntt(data: &mut [Scalar]) {
    distribute_powers(data, crate::curve::COSET_GENERATOR);
    ntt(data, Direction::Forward);
}

/// Interpolates evaluations on the coset g·⟨ω⟩ back to coefficients.
pub fn coset_intt(data: &mut [Scalar]) {
    ntt(data, Direction::Inverse);
    distribute_powers(data, Scalar::MULTIPLICATIVE_GENERATOR.invert().unwrap());
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn naive(a: &[Scalar], w: Scalar) -> Vec<Scalar> {
        (0..a.len())
            .map(|i| {
                let wi = w.pow_vartime([i as u64]);
                let mut acc = Scalar::ZERO;
                let mut x = Scalar::ONE;
                for v in a {
                    acc += *v * x;
                    x *= wi;
                }
                acc
            })
            .collect()
    }

    fn random(n: usize, seed: u64) -> Vec<Scalar> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..n).map(|_| Scalar::random(&mut rng)).collect()
    }

    #[test]
    fn forward_matches_naive_dft_for_small_sizes() {
        for k in 0..=7 {
            let a = random(1 << k, 100 + k as u64);
            let mut b = a.clone();
            ntt(&mut b, Direction::Forward);
            assert_eq!(b, naive(&a, root_of_unity(k)), "k = {k}");
        }
    }

    #[test]
    fn forward_matches_horner_evaluation_on_the_parallel_path() {
        let k = 14;
        let a = random(1 << k, 11);
        let mut b = a.clone();
        ntt(&mut b, Direction::Forward);
        let w = root_of_unity(k);
        for i in [0usize, 1, 2, 777, (1 << k) - 1] {
            let x = w.pow_vartime([i as u64]);
            let want = a.iter().rev().fold(Scalar::ZERO, |acc, c| acc * x + c);
            assert_eq!(b[i], want, "i = {i}");
        }
    }

    #[test]
    fn inverse_undoes_forward_across_parallel_sizes() {
        for k in [1u32, 5, 12, 13, 16] {
            let a = random(1 << k, 7 + k as u64);
            let mut b = a.clone();
            ntt(&mut b, Direction::Forward);
            assert_ne!(a, b);
            ntt(&mut b, Direction::Inverse);
            assert_eq!(a, b, "k = {k}");
        }
    }

    #[test]
    fn coset_ntt_evaluates_on_the_shifted_domain() {
        let k = 6;
        let a = random(1 << k, 3);
        let mut b = a.clone();
        coset_ntt(&mut b);
        let g = Scalar::MULTIPLICATIVE_GENERATOR;
        let w = root_of_unity(k);
        for (i, got) in b.iter().enumerate() {
            let x = g * w.pow_vartime([i as u64]);
            let want = a.iter().rev().fold(Scalar::ZERO, |acc, c| acc * x + c);
            assert_eq!(*got, want, "i = {i}");
        }
        coset_intt(&mut b);
        assert_eq!(a, b);
    }
}

//! The random combinations of the batched subgroup check: the per-load key,
//! each point's bucket per group of rounds (drawn from ChaCha8 streams), and
//! the rounds Sⱼ formed from bucket sums, the host's or the device's.

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::buckets::NEGATED;
use super::group::{Digits, Subgroup, ROUNDS};

/// The secret that the digits are drawn from (one per load).
#[derive(Clone)]
pub struct Key([u8; 32]);

impl Key {
    /// 256 bits from the OS (`getrandom(2)`).
    pub fn from_os() -> std::io::Result<Key> {
        let mut k = [0u8; 32];
        let mut got = 0;
        while got < k.len() {
            // SAFETY: the pointer and length describe the unfilled tail of `k`.
            let n = unsafe { libc::getrandom(k[got..].as_mut_ptr().cast(), k.len() - got, 0) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            got += n as usize;
        }
        Ok(Key(k))
    }

    /// The key as ChaCha's eight state words (little-endian, as rand_chacha
    /// reads the seed), for the device's copy of the stream.
    pub fn words(&self) -> [u32; 8] {
        std::array::from_fn(|i| u32::from_le_bytes(self.0[4 * i..4 * i + 4].try_into().expect("4 bytes")))
    }

    /// A fixed key, for tests that need repeatable digits.
    #[cfg(any(test, feature = "tools"))]
    pub fn fixed(seed: [u8; 32]) -> Key {
        Key(seed)
    }
}

/// The ChaCha8 stream of `section`'s digits in `group`.
pub fn stream_of(section: u64, group: usize) -> u64 {
    section * ROUNDS as u64 + group as u64
}

/// Groups of `digits` rounds that cover [`ROUNDS`].
pub fn groups_for(digits: u32) -> usize {
    ROUNDS.div_ceil(digits as usize)
}

/// Bucket indices of points `first .. first + n` of `section` in `group`:
/// the bucket in the low 15 bits, and bit 15 set for a point that enters
/// its bucket negated (signed digits only).
fn bucket_indices(key: &Key, section: u64, group: usize, first: usize, digits: Digits, out: &mut [u16]) {
    let mut rng = ChaCha8Rng::from_seed(key.0);
    rng.set_stream(stream_of(section, group));
    rng.set_word_pos(first as u128);
    let draws = digits.draws() as u64;
    let half = (draws / 2) as i64;
    debug_assert!(digits.buckets() <= NEGATED as usize, "bucket indices fit in 15 bits");
    for b in out.iter_mut() {
        // Multiply-shift: each value's probability is within 2⁻³² of
        // 1/draws. For a bad point, at most one digit vector lets a whole
        // group of rounds pass, so a group passes with probability
        // ≤ 3^-g + 2⁻³², and the 9–81 groups together stay below 2⁻¹²⁸.
        let v = (rng.next_u32() as u64 * draws) >> 32;
        *b = if digits.signed {
            // w ∈ [−M, M]: its balanced-ternary digits are the point's.
            let w = v as i64 - half;
            w.unsigned_abs() as u16 | if w < 0 { NEGATED } else { 0 }
        } else {
            v as u16
        };
    }
}

/// The combinations Sⱼ of `points` (points `first ..` of `section`), in
/// groups of `digits.count` rounds: ⌈81 / count⌉ · count ≥ [`ROUNDS`] of them.
pub(super) fn combinations<C: Subgroup>(points: &[C::Affine], key: &Key, section: u64, first: usize, digits: Digits) -> Vec<C::Projective> {
    let n = points.len();
    let groups = groups_for(digits.count);
    let mut out = Vec::with_capacity(groups * digits.count as usize);
    let mut index = vec![0u16; n];
    let mut raw_sums = vec![C::Raw::default(); digits.buckets()];
    for group in 0..groups {
        bucket_indices(key, section, group, first, digits, &mut index);
        super::buckets::accumulate::<C::Raw>(C::raw(points), &index, &mut raw_sums);
        let sums: Vec<C::Affine> = raw_sums.iter().map(|&s| C::from_raw(s)).collect();
        rounds::<C>(&sums, digits, &mut out);
    }
    out
}

/// Appends the `digits.count` rounds' Sⱼ = Σ_b digitⱼ(b)·S_b of one group,
/// from its bucket sums `sums[b]` (infinity for an empty bucket).
fn rounds<C: Subgroup>(sums: &[C::Affine], digits: Digits, out: &mut Vec<C::Projective>) {
    // Bucket 0 has all digits 0: it enters no round. Infinity is all zero.
    let raw = C::raw(sums);
    let filled: Vec<usize> = (1..sums.len()).filter(|&b| raw[b] != C::Raw::default()).collect();
    let negated: Vec<C::Affine> = if digits.signed { filled.iter().map(|&b| C::from_raw(super::buckets::negate(&raw[b]))).collect() } else { Vec::new() };
    let count = digits.count as usize;
    let mut of = vec![0i8; filled.len() * count];
    for (k, &b) in filled.iter().enumerate() {
        digits.of(b, &mut of[k * count..(k + 1) * count]);
    }
    let mut terms: Vec<&C::Affine> = Vec::with_capacity(2 * filled.len());
    for j in 0..count {
        terms.clear();
        for (k, &b) in filled.iter().enumerate() {
            match of[k * count + j] {
                -1 => terms.push(&negated[k]),
                d => (0..d).for_each(|_| terms.push(&sums[b])),
            }
        }
        out.push(C::sum(&terms));
    }
}

/// The combinations of a whole vector from its bucket sums, as the device
/// computes them: `sums` holds `groups_for(digits)` groups of 3^digits
/// bucket sums, group-major, with the digits of stream [`stream_of`]
/// (section, group) from word 0 on. Equal to the host's combinations of the
/// same vector, key and digits as one range.
pub fn combinations_from_sums<C: Subgroup>(sums: &[C::Projective], digits: u32) -> Vec<C::Projective> {
    let scheme = Digits::unsigned(digits);
    let buckets = scheme.buckets();
    assert_eq!(sums.len(), groups_for(digits) * buckets, "bucket sums: groups × buckets");
    sums.par_chunks_exact(buckets)
        .flat_map_iter(|group| {
            let mut out = Vec::with_capacity(digits as usize);
            rounds::<C>(&C::normalize(group), scheme, &mut out);
            out
        })
        .collect()
}

/// Whether every combination is in the subgroup (the vector then is, but
/// with probability ≤ 3⁻⁸¹).
pub fn all_in_group<C: Subgroup>(combinations: &[C::Projective]) -> bool {
    combinations.par_iter().all(C::in_group)
}

/// The host's combinations of a whole vector as one range, with the
/// device's unsigned digits (tests compare the device's with them).
#[doc(hidden)]
#[cfg(any(test, feature = "tools"))]
pub fn host_combinations<C: Subgroup>(points: &[C::Affine], key: &Key, section: u64, digits: u32) -> Vec<C::Projective> {
    combinations::<C>(points, key, section, 0, Digits::unsigned(digits))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::msm;
    use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
    use group::{Curve as _, Group as _};

    #[test]
    fn signed_digits_are_the_balanced_ternary_of_the_bucket() {
        for count in 1..=9 {
            let d = Digits { count, signed: true };
            let mut of = vec![0i8; count as usize];
            for b in 0..d.buckets() {
                d.of(b, &mut of);
                let value: i64 = of.iter().rev().fold(0, |v, &x| 3 * v + x as i64);
                assert_eq!(value, b as i64, "count {count}, bucket {b}: {of:?}");
                assert!(of.iter().all(|x| (-1..=1).contains(x)));
            }
            // The largest bucket is M = (3^count − 1) / 2: all digits 1.
            d.of(d.buckets() - 1, &mut of);
            assert!(of.iter().all(|&x| x == 1));
        }
    }

    /// Σⱼ dᵢⱼ·Pᵢ term by term, with each point's digits recomputed from the
    /// stream as w's balanced-ternary digits (signed) or v's base-3 digits.
    fn direct<P: group::Group + Copy>(points: &[P], key: &Key, section: u64, first: usize, digits: Digits) -> Vec<P> {
        let mut out = Vec::new();
        for group in 0..groups_for(digits.count) {
            let mut rng = ChaCha8Rng::from_seed(key.0);
            rng.set_stream(stream_of(section, group));
            rng.set_word_pos(first as u128);
            let mut sums = vec![P::identity(); digits.count as usize];
            for p in points {
                let v = (rng.next_u32() as u64 * digits.draws() as u64) >> 32;
                let mut ds = vec![0i8; digits.count as usize];
                if digits.signed {
                    let w = v as i64 - (digits.draws() / 2) as i64;
                    Digits { count: digits.count, signed: true }.of(w.unsigned_abs() as usize, &mut ds);
                    if w < 0 {
                        ds.iter_mut().for_each(|x| *x = -*x);
                    }
                } else {
                    digits.of(v as usize, &mut ds);
                }
                for (s, &x) in sums.iter_mut().zip(&ds) {
                    match x {
                        -1 => *s -= *p,
                        1 => *s += *p,
                        2 => *s += p.double(),
                        _ => {}
                    }
                }
            }
            out.extend(sums);
        }
        out
    }

    #[test]
    fn the_bucketed_rounds_equal_the_direct_sums() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5eed);
        let key = Key::fixed([7; 32]);
        let g1: Vec<G1Projective> = (0..700).map(|_| G1Projective::random(&mut rng)).collect();
        let mut g1a = vec![G1Affine::default(); g1.len()];
        G1Projective::batch_normalize(&g1, &mut g1a);
        // Duplicates and an opposite pair exercise doubling and cancelling.
        g1a[5] = g1a[4];
        g1a[9] = -g1a[8];
        let g1: Vec<G1Projective> = g1a.iter().map(G1Projective::from).collect();
        let g2: Vec<G2Projective> = (0..200).map(|_| G2Projective::random(&mut rng)).collect();
        let g2a: Vec<G2Affine> = g2.iter().map(|p| p.to_affine()).collect();
        for digits in [Digits { count: 3, signed: true }, Digits { count: 9, signed: true }, Digits::unsigned(8), Digits::unsigned(2)] {
            let got = combinations::<msm::G1>(&g1a, &key, 2, 1000, digits);
            assert_eq!(got, direct(&g1, &key, 2, 1000, digits), "G1, {digits:?}");
            let got = combinations::<msm::G2>(&g2a, &key, 4, 0, digits);
            assert_eq!(got, direct(&g2, &key, 4, 0, digits), "G2, {digits:?}");
        }
    }
}

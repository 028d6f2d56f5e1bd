//! The random combinations of the batched subgroup check: the per-load key,
//! each point's bucket per group of rounds (drawn from ChaCha8 streams), and
//! the rounds Sⱼ formed from bucket sums, the host's or the device's.

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::group::{Subgroup, ROUNDS};

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

/// Bucket indices (of `buckets`) of points `first .. first + n` of `section` in `group`.
fn bucket_indices(key: &Key, section: u64, group: usize, first: usize, buckets: usize, out: &mut [u16]) {
    let mut rng = ChaCha8Rng::from_seed(key.0);
    rng.set_stream(stream_of(section, group));
    rng.set_word_pos(first as u128);
    for b in out.iter_mut() {
        // Multiply-shift: each bucket's probability is within 2⁻³² of
        // 1/buckets. For a bad point, at most one of the buckets lets a
        // whole group of rounds pass, so a group passes with probability
        // ≤ 3^-g + 2⁻³², and the 9–81 groups together stay below 2⁻¹²⁸.
        *b = ((rng.next_u32() as u64 * buckets as u64) >> 32) as u16;
    }
}

/// The combinations Sⱼ of `points` (points `first ..` of `section`), in
/// groups of `digits` rounds: ⌈81 / digits⌉ · digits ≥ [`ROUNDS`] of them.
pub(super) fn combinations<C: Subgroup>(points: &[C::Affine], key: &Key, section: u64, first: usize, digits: u32) -> Vec<C::Projective> {
    let n = points.len();
    let buckets = 3usize.pow(digits);
    let groups = groups_for(digits);
    let mut out = Vec::with_capacity(groups * digits as usize);
    let mut index = vec![0u16; n];
    let mut raw_sums = vec![C::Raw::default(); buckets];
    for group in 0..groups {
        bucket_indices(key, section, group, first, buckets, &mut index);
        super::buckets::accumulate::<C::Raw>(C::raw(points), &index, &mut raw_sums);
        let sums: Vec<C::Affine> = raw_sums.iter().map(|&s| C::from_raw(s)).collect();
        rounds::<C>(&sums, digits, &mut out);
    }
    out
}

/// Appends the `digits` rounds' Sⱼ = Σ_b digitⱼ(b)·S_b of one group, from
/// its bucket sums `sums[b]` (b < 3^digits; infinity for an empty bucket).
fn rounds<C: Subgroup>(sums: &[C::Affine], digits: u32, out: &mut Vec<C::Projective>) {
    // Bucket 0 has all digits 0: it enters no round. Infinity is all zero.
    let raw = C::raw(sums);
    let filled: Vec<usize> = (1..sums.len()).filter(|&b| raw[b] != C::Raw::default()).collect();
    let mut terms: Vec<&C::Affine> = Vec::with_capacity(2 * filled.len());
    let mut weight = 1;
    for _ in 0..digits {
        terms.clear();
        for &b in &filled {
            let d = (b / weight) % 3;
            for _ in 0..d {
                terms.push(&sums[b]);
            }
        }
        out.push(C::sum(&terms));
        weight *= 3;
    }
}

/// The combinations of a whole vector from its bucket sums, as the device
/// computes them: `sums` holds `groups_for(digits)` groups of 3^digits
/// bucket sums, group-major, with the digits of stream [`stream_of`]
/// (section, group) from word 0 on. Equal to the host's combinations of the
/// same vector, key and digits as one range.
pub fn combinations_from_sums<C: Subgroup>(sums: &[C::Projective], digits: u32) -> Vec<C::Projective> {
    let buckets = 3usize.pow(digits);
    assert_eq!(sums.len(), groups_for(digits) * buckets, "bucket sums: groups × buckets");
    sums.par_chunks_exact(buckets)
        .flat_map_iter(|group| {
            let mut out = Vec::with_capacity(digits as usize);
            rounds::<C>(&C::normalize(group), digits, &mut out);
            out
        })
        .collect()
}

/// Whether every combination is in the subgroup (the vector then is, but
/// with probability ≤ 3⁻⁸¹).
pub fn all_in_group<C: Subgroup>(combinations: &[C::Projective]) -> bool {
    combinations.par_iter().all(C::in_group)
}

/// The host's combinations of a whole vector as one range (tests compare
/// the device's with them).
#[doc(hidden)]
pub fn host_combinations<C: Subgroup>(points: &[C::Affine], key: &Key, section: u64, digits: u32) -> Vec<C::Projective> {
    combinations::<C>(points, key, section, 0, digits)
}

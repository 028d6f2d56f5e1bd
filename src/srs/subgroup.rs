//! Batched prime-order-subgroup check for the params file's point vectors.
//!
//! A point decoded from the file is known to be on the curve; it may still
//! carry a component in the cofactor part of the group, E = G ⊕ C, where
//! |C| is the cofactor (G1: 3 · 11² · 10177² · 859267² · 52437899²; G2: 13² ·
//! 23² · 2713 · 11953 · 262069 · a 448-bit prime). Checking every point with
//! blst's `in_g1`/`in_g2` costs ~50 µs each; this module checks a whole
//! vector with random linear combinations instead.
//!
//! **The test.** For each round j, every point Pᵢ gets a secret random digit
//! dᵢⱼ ∈ {0, 1, 2} and the round checks Sⱼ = Σᵢ dᵢⱼ·Pᵢ ∈ G. If some Pᵢ has
//! a nonzero C-component T, fix every digit but dᵢⱼ: the C-component of Sⱼ is
//! dᵢⱼ·T + R for a fixed R, and because every prime factor of |C| is ≥ 3 the
//! values 0, T, 2T are distinct, so at most one of the three digits makes it
//! zero. A round passes a bad vector with probability ≤ 1/3, and [`ROUNDS`]
//! independent rounds with probability ≤ 3⁻⁸¹ < 2⁻¹²⁸. (One combination with
//! large random scalars is not enough: P + T with T of order 3 would pass it
//! with probability 1/3.)
//!
//! **The cost.** Rounds come in groups of g (up to 9): per group each point
//! draws w uniform in [−M, M], M = (3^g − 1) / 2, whose balanced-ternary
//! digits (each in {−1, 0, 1}) are its digits for the group's g rounds, and
//! goes into bucket |w|, negated when w < 0 (a digit vector and its negation
//! share a bucket, so a group has M + 1 buckets, not 3^g). For a point with
//! a component T of odd order, −T, 0 and T are distinct, so the argument
//! above holds digit by digit. The points of each bucket are summed with
//! affine additions whose inversions are batched across buckets
//! (`buckets.rs`: one addition per point), then each round's Sⱼ is
//! Σ_b digitⱼ(b)·S_b over the bucket sums (blst's bulk addition). A point so
//! costs ⌈81/g⌉ affine additions (9 for large vectors: 9 groups of 9 digits
//! over 9,842 buckets) instead of 81, plus about 81 full subgroup checks per
//! vector; g is chosen from the range size so that combining the buckets
//! stays small beside the additions. Vectors of at most 96 points are
//! checked point by point instead, which is cheaper.
//!
//! **On the GPU.** The bucket sums are the bulk of the cost, and an MSM's
//! bucket accumulation on the device computes exactly them: `gpu::subgroup`
//! draws every point's bucket from the same ChaCha8 words on the device,
//! sorts and sums the points there (unsigned digits in {0, 1, 2}: 3⁸ buckets,
//! 11 groups), and the host forms and checks the rounds from the bucket sums
//! ([`combinations_from_sums`]), equal to the host's with the same digits
//! ([`host_combinations`]). The loader sends
//! vectors of 2^16 points or more there when a GPU is usable
//! (`SUPRASEAL_C2_LOAD_CHECK`), while it decodes the next vector; a vector
//! that fails there is checked again here, which names the bad point.
//!
//! **The randomness.** The digits come from ChaCha8 keyed with 256 bits from
//! the OS (`getrandom`) per load and never revealed, so a file cannot be
//! crafted against them; the digit of point i in group g of a
//! section is word i of stream (section, g), so any range can be recomputed
//! (`combine.rs`: the key, the bucket indices and the rounds).
//!
//! **On failure** the failing range is bisected (fresh combinations over
//! sub-ranges, then blst's per-point check on a small range; `bisect.rs`), so
//! the error names the first bad point of the range that failed.
//!
//! This is the bucketed method of batch subgroup membership (see Bowe, ePrint
//! 2019/814, and Scott, ePrint 2021/1130, for the per-point checks it batches).

use group::Group;
use rayon::prelude::*;

use super::bisect::{bisect, first_bad};
use super::combine::combinations;
pub use super::combine::{all_in_group, combinations_from_sums, groups_for, stream_of, Key};
#[cfg(any(test, feature = "tools"))]
pub use super::combine::host_combinations;

pub use super::group::{Subgroup, ROUNDS};
use super::group::{digits_for, MIN_RANGE, RANGE};

/// Vectors up to this length are checked point by point: cheaper than the
/// ~81 full checks of the combinations.
const PER_POINT: usize = 96;

/// Checks that every point of `points` (section number `section`, used to
/// separate digit streams) is in the prime-order subgroup: point by point
/// for short vectors, else [`batched`]. Runs on the current rayon pool.
/// Returns the index of a bad point on failure.
pub fn check<C: Subgroup>(points: &[C::Affine], key: &Key, section: u64) -> Result<(), usize> {
    if points.len() <= PER_POINT {
        return first_bad::<C>(points).map_or(Ok(()), Err);
    }
    batched::<C>(points, key, section)
}

/// The batched test of the module docs on any non-empty or empty vector;
/// on failure the index of the first bad point of the smallest failing range.
pub fn batched<C: Subgroup>(points: &[C::Affine], key: &Key, section: u64) -> Result<(), usize> {
    if points.is_empty() {
        return Ok(());
    }
    let threads = rayon::current_num_threads().max(1);
    // At least MIN_RANGE points per task: a range pays ~81 full checks and
    // the combination of its buckets, whatever its size.
    let range = points.len().div_ceil(threads).clamp(MIN_RANGE, RANGE);
    let digits = digits_for(range);
    let per_range: Vec<Vec<C::Projective>> = points
        .par_chunks(range)
        .enumerate()
        .map(|(r, chunk)| combinations::<C>(chunk, key, section, r * range, digits))
        .collect();
    let mut total = vec![C::Projective::identity(); per_range[0].len()];
    for combos in &per_range {
        for (t, c) in total.iter_mut().zip(combos) {
            *t += c;
        }
    }
    if total.iter().all(C::in_group) {
        return Ok(());
    }
    // Some range holds a bad point: its own combinations fail (a sum of
    // subgroup points is in the subgroup, so the failing total has a failing term).
    let bad = per_range.iter().position(|c| !c.iter().all(C::in_group)).expect("a failing total has a failing range");
    let start = bad * range;
    let end = (start + range).min(points.len());
    Err(start + bisect::<C>(&points[start..end], key, section, start))
}

/// Points outside the subgroup, for tests of the check (here and in
/// `tests/srs_errors.rs`; made in `torsion.rs`). Not a supported API.
#[doc(hidden)]
#[cfg(any(test, feature = "tools"))]
pub mod testing {
    pub use super::super::torsion::{g1_with_torsion, g2_with_torsion, G1_PRIMES, G2_PRIMES};
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;
    use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
    use group::Curve as _;
    use rand::{Rng, SeedableRng};

    use crate::cpu::msm;

    fn rng() -> rand_chacha::ChaCha8Rng {
        let seed = rand::random::<u64>();
        eprintln!("seed {seed}");
        rand_chacha::ChaCha8Rng::seed_from_u64(seed)
    }

    fn g1_points(n: usize, rng: &mut impl Rng) -> Vec<G1Affine> {
        let g = G1Projective::random(&mut *rng);
        let mut p = G1Projective::random(&mut *rng);
        let proj: Vec<G1Projective> = (0..n).map(|_| { p += g; p }).collect();
        let mut out = vec![G1Affine::default(); n];
        G1Projective::batch_normalize(&proj, &mut out);
        out
    }

    fn g2_points(n: usize, rng: &mut impl Rng) -> Vec<G2Affine> {
        let g = G2Projective::random(&mut *rng);
        let mut p = G2Projective::random(&mut *rng);
        let proj: Vec<G2Projective> = (0..n).map(|_| { p += g; p }).collect();
        let mut out = vec![G2Affine::default(); n];
        G2Projective::batch_normalize(&proj, &mut out);
        out
    }

    fn key(rng: &mut impl Rng) -> Key {
        Key::fixed(rng.gen())
    }

    #[test]
    fn valid_vectors_pass_with_infinity_duplicates_and_negations() {
        let mut rng = rng();
        for n in [1, 2, 3, 17, 100, 5000] {
            let mut v = g1_points(n, &mut rng);
            let mut w = g2_points(n.min(300), &mut rng);
            if n >= 3 {
                v[1] = G1Affine::default(); // infinity
                v[2] = v[0];
                v.push(-v[0]);
                w[1] = G2Affine::default();
                w[2] = w[0];
                w.push(-w[0]);
            }
            assert_eq!(batched::<msm::G1>(&v, &key(&mut rng), 0), Ok(()), "G1 n {n}");
            assert_eq!(batched::<msm::G2>(&w, &key(&mut rng), 4), Ok(()), "G2 n {n}");
        }
        // Many copies of one point: every bucket addition is a doubling.
        let p = g1_points(1, &mut rng)[0];
        assert_eq!(batched::<msm::G1>(&vec![p; 3000], &key(&mut rng), 1), Ok(()));
    }

    /// Every prime order of each cofactor, at random indices, in vectors of
    /// every size from 1 to 24 and a few larger ones: the bad point is found.
    #[test]
    fn a_point_with_torsion_of_each_prime_order_is_found_in_every_batch_size() {
        let mut rng = rng();
        for which in 0..G1_PRIMES {
            let (bad, q) = g1_with_torsion(which, &mut rng);
            for n in (1..=24).chain([257, 3000]) {
                let mut v = g1_points(n, &mut rng);
                let at = rng.gen_range(0..n);
                v[at] = bad;
                assert_eq!(batched::<msm::G1>(&v, &key(&mut rng), which as u64), Err(at), "G1 q = 0x{q}, n {n}");
            }
        }
        for which in 0..G2_PRIMES {
            let (bad, q) = g2_with_torsion(which, &mut rng);
            for n in (1..=12).chain([100]) {
                let mut v = g2_points(n, &mut rng);
                let at = rng.gen_range(0..n);
                v[at] = bad;
                assert_eq!(batched::<msm::G2>(&v, &key(&mut rng), 4), Err(at), "G2 q = 0x{q}, n {n}");
            }
        }
    }

    /// Past the point-by-point size and over several ranges (a 4-thread
    /// pool), the bisection still names the bad point; two bad points: the
    /// first one of the failing range.
    #[test]
    fn bisection_over_ranges_names_the_bad_point() {
        let mut rng = rng();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        let n = 40_000;
        let good = g1_points(n, &mut rng);
        for which in [0, 1] {
            let (bad, _) = g1_with_torsion(which, &mut rng);
            let mut v = good.clone();
            let at = rng.gen_range(0..n);
            v[at] = bad;
            assert_eq!(pool.install(|| batched::<msm::G1>(&v, &key(&mut rng), 2)), Err(at));
        }
        let (bad, _) = g1_with_torsion(0, &mut rng);
        let mut v = good;
        v[100] = bad;
        v[101] = bad;
        assert_eq!(pool.install(|| batched::<msm::G1>(&v, &key(&mut rng), 3)), Err(100));
    }

    /// The per-point check agrees: a vector passes exactly when every point passes blst's check.
    #[test]
    fn agrees_with_the_per_point_check_on_mixed_vectors() {
        let mut rng = rng();
        for _ in 0..20 {
            let n = rng.gen_range(1..200);
            let mut v = g1_points(n, &mut rng);
            let bad = rng.gen_bool(0.5);
            if bad {
                let at = rng.gen_range(0..n);
                v[at] = g1_with_torsion(rng.gen_range(0..G1_PRIMES), &mut rng).0;
            }
            let first_bad = v.iter().position(|p| !<msm::G1 as Subgroup>::point_in_group(p));
            assert_eq!(batched::<msm::G1>(&v, &key(&mut rng), 0).err(), first_bad);
            assert_eq!(check::<msm::G1>(&v, &key(&mut rng), 0).err(), first_bad, "check (point by point up to {PER_POINT})");
        }
    }
}

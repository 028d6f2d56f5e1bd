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
//! **The cost.** Rounds come in groups of g (up to 8): each point draws one
//! bucket index b ∈ [0, 3^g) per group, whose base-3 digits are its digits
//! for the group's g rounds. The points of each bucket are summed with affine
//! additions whose inversions are batched across buckets (`buckets.rs`: one
//! addition per point), then each round's Sⱼ is Σ_b digitⱼ(b)·S_b over the
//! bucket sums (blst's bulk addition). A point so costs ⌈81/g⌉ affine
//! additions (11 for large vectors) instead of 81, plus about 81 full subgroup
//! checks per vector; g is chosen from the range size so that combining the
//! 3^g bucket sums stays small beside the additions. Vectors of at most 96
//! points are checked point by point instead, which is cheaper.
//!
//! **On the GPU.** The bucket sums are the bulk of the cost, and an MSM's
//! bucket accumulation on the device computes exactly them: `gpu::subgroup`
//! draws every point's bucket from the same ChaCha8 words on the device,
//! sorts and sums the points there (3⁸ buckets, 11 groups), and the host
//! forms and checks the rounds from the bucket sums
//! ([`combinations_from_sums`]), equal to the host's own. The loader sends
//! vectors of 2^16 points or more there when a GPU is usable
//! (`SUPRASEAL_C2_LOAD_CHECK`), while it decodes the next vector; a vector
//! that fails there is checked again here, which names the bad point.
//!
//! **The randomness.** The digits come from ChaCha8 keyed with 256 bits from
//! the OS (`getrandom`) per load and never revealed, so a file cannot be
//! crafted against them; the digit of point i in group g of a
//! section is word i of stream (section, g), so any range can be recomputed.
//!
//! **On failure** the failing range is bisected (fresh combinations over
//! sub-ranges, then blst's per-point check on a small range), so the error
//! names the first bad point of the range that failed.
//!
//! This is the bucketed method of batch subgroup membership (see Bowe, ePrint
//! 2019/814, and Scott, ePrint 2021/1130, for the per-point checks it batches).

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
use group::{Curve as _, Group};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::cpu::msm::{self, Curve};

/// Rounds needed: a bad vector passes all of them with probability ≤ 3⁻⁸¹ < 2⁻¹²⁸.
pub const ROUNDS: usize = 81;
/// The most ternary digits per bucket index (3⁸ = 6,561 buckets: measured
/// faster than 3⁹ on a 2-core EPYC, the buckets staying in cache).
const MAX_DIGITS: u32 = 8;
/// The most points per task (a task's bucket indices and work lists are
/// a few bytes per point).
const RANGE: usize = 1 << 22;
/// The fewest points per task (more threads than that leave some idle).
const MIN_RANGE: usize = 1 << 14;
/// Ranges at or below this size are checked point by point when bisecting.
const SCAN: usize = 1 << 12;

/// Digits per group (rounds per group) for ranges of `n` points: more
/// digits mean fewer groups (additions per point) but 3^digits buckets whose
/// combination costs about digits · 3^digits additions per group and range.
fn digits_for(n: usize) -> u32 {
    (1..=MAX_DIGITS)
        .min_by_key(|&g| {
            let groups = ROUNDS.div_ceil(g as usize);
            groups * n + groups * g as usize * 3usize.pow(g)
        })
        .expect("non-empty range")
}

/// A curve group whose affine points can be checked for subgroup membership.
pub trait Subgroup: Curve {
    /// blst's per-point check (`blst_p{1,2}_affine_in_g{1,2}`).
    fn point_in_group(p: &Self::Affine) -> bool;
    /// blst's check on a projective point.
    fn in_group(p: &Self::Projective) -> bool;
    /// blst's affine type, which the bucket accumulation works on.
    type Raw: super::buckets::Affine + PartialEq;
    fn raw(p: &[Self::Affine]) -> &[Self::Raw];
    fn from_raw(p: Self::Raw) -> Self::Affine;
    /// Affine forms of projective points (one batched inversion).
    fn normalize(p: &[Self::Projective]) -> Vec<Self::Affine>;
}

impl Subgroup for msm::G1 {
    fn point_in_group(p: &G1Affine) -> bool {
        // SAFETY: G1Affine is repr(transparent) over blst_p1_affine.
        unsafe { blst::blst_p1_affine_in_g1((p as *const G1Affine).cast()) }
    }
    fn in_group(p: &G1Projective) -> bool {
        // SAFETY: G1Projective is repr(transparent) over blst_p1.
        unsafe { blst::blst_p1_in_g1((p as *const G1Projective).cast()) }
    }
    type Raw = blst::blst_p1_affine;
    fn raw(p: &[G1Affine]) -> &[blst::blst_p1_affine] {
        // SAFETY: G1Affine is repr(transparent) over blst_p1_affine.
        unsafe { std::slice::from_raw_parts(p.as_ptr().cast(), p.len()) }
    }
    fn normalize(p: &[G1Projective]) -> Vec<G1Affine> {
        let mut out = vec![G1Affine::default(); p.len()];
        G1Projective::batch_normalize(p, &mut out);
        out
    }
    fn from_raw(p: blst::blst_p1_affine) -> G1Affine {
        // SAFETY: as above; the sums of subgroup candidates are curve points.
        unsafe { std::mem::transmute::<blst::blst_p1_affine, G1Affine>(p) }
    }
}

impl Subgroup for msm::G2 {
    fn point_in_group(p: &G2Affine) -> bool {
        // SAFETY: G2Affine is repr(transparent) over blst_p2_affine.
        unsafe { blst::blst_p2_affine_in_g2((p as *const G2Affine).cast()) }
    }
    fn in_group(p: &G2Projective) -> bool {
        // SAFETY: G2Projective is repr(transparent) over blst_p2.
        unsafe { blst::blst_p2_in_g2((p as *const G2Projective).cast()) }
    }
    type Raw = blst::blst_p2_affine;
    fn raw(p: &[G2Affine]) -> &[blst::blst_p2_affine] {
        // SAFETY: G2Affine is repr(transparent) over blst_p2_affine.
        unsafe { std::slice::from_raw_parts(p.as_ptr().cast(), p.len()) }
    }
    fn normalize(p: &[G2Projective]) -> Vec<G2Affine> {
        let mut out = vec![G2Affine::default(); p.len()];
        G2Projective::batch_normalize(p, &mut out);
        out
    }
    fn from_raw(p: blst::blst_p2_affine) -> G2Affine {
        // SAFETY: as above.
        unsafe { std::mem::transmute::<blst::blst_p2_affine, G2Affine>(p) }
    }
}

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
fn combinations<C: Subgroup>(points: &[C::Affine], key: &Key, section: u64, first: usize, digits: u32) -> Vec<C::Projective> {
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

/// Index (within `points`) of a bad point of a range known to fail.
fn bisect<C: Subgroup>(points: &[C::Affine], key: &Key, section: u64, first: usize) -> usize {
    if points.len() <= SCAN {
        return scan::<C>(points);
    }
    let part = points.len().div_ceil(16);
    let digits = digits_for(part);
    let failing: Vec<usize> = points
        .par_chunks(part)
        .enumerate()
        .filter(|(i, chunk)| !combinations::<C>(chunk, key, section, first + i * part, digits).iter().all(C::in_group))
        .map(|(i, _)| i)
        .collect();
    // With probability ≤ 3⁻⁸¹ no part fails although one holds the bad
    // point; the whole range is then scanned point by point.
    match failing.first() {
        Some(&i) => {
            let s = i * part;
            let e = (s + part).min(points.len());
            s + bisect::<C>(&points[s..e], key, section, first + s)
        }
        None => scan::<C>(points),
    }
}

/// The first point that fails blst's per-point check, in a range whose
/// combinations failed (a range of subgroup points cannot fail them).
fn scan<C: Subgroup>(points: &[C::Affine]) -> usize {
    first_bad::<C>(points).expect("a range whose combinations fail holds a point outside the subgroup")
}

/// The first point that fails blst's per-point check, if any.
fn first_bad<C: Subgroup>(points: &[C::Affine]) -> Option<usize> {
    points.par_iter().position_first(|p| !C::point_in_group(p))
}

/// Points outside the subgroup, for tests of the check (here and in
/// `cli/tests/srs_errors.rs`): a subgroup point plus a point of exact prime
/// order q for each prime q dividing the cofactor. Not a supported API.
#[doc(hidden)]
pub mod testing {
    use blst::*;
    use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
    use group::Group;
    use rand_chacha::rand_core::RngCore;

    /// (q, #E with every factor q removed) for each prime q dividing G1's cofactor (#E = h·r).
    const G1_TORSION: [(&str, &str); 5] = [
        ("3", "8ab05f8bdd54cde190937e76bc3e447cc27c3d6fbd7063fcd104635a790520c0a395554e5c6aaaad955555555558e39"),
        ("b", "3704612471307385e8f4b11c0f6f71e98ebcebf11641bde11e05f8de12635b461258dc05b269c8ff0a941963702343"),
        ("27c1", "4365bf803428bdeec60fd2e926108ec4349c3ed6101355fc141ebb62934a3754bcaa7f4893a24a99528dca02b"),
        ("d1c83", "26b97e14f9a9bfc6a1d68e51940e20533818e49972d05a4b963f8399f9c8df3382e9555b8e0c186760b113"),
        ("320238b", "2a97289d2f199a7fe442ea79eb7aa6cc575f3bb074193d880722109579598622c3f85f4e51b4a558443"),
    ];
    /// The same for G2 (the last q is the 448-bit prime factor of the cofactor).
    const G2_TORSION: [(&str, &str); 6] = [
        ("d", "4005449cda731a7136c440a0c65b728ba1c1fa6b6708356f3b9bdc84396cab33907d71557a7d33677f5d45f7cedb8cfdac10ff1fc5b48d6461e907737d78e96568f2d18c750b4b3ca5c33c3fd8ff8a70629888281914529f4e3380941cfdd"),
        ("17", "1473e413236dd889cb5381880d0a576821c578a6e8c7952f26668aaed6d2623f6a2afa96b5e43f5d126da598b99dbb518655c33a8b236b990d5fbd2d9b42b21fe9e0346d3c23104b06fb96e09de2555c861790a3cc012b5540aa5804bb595"),
        ("a99", "3fcee61e74c25c987842842a1a26de4d74f74f14543213da8777344b8bfcf67fd34a2a90a45b3170df91252e784da8bcaa5cfea7bc15ce204c72df226dc50975962d2d53a875b1ef426ad51a2cbb2185cf414efe8a6ae0d520ee8ae8bc2d"),
        ("2eb1", "e7b91d864fd7d4c0c79957105c92b89ec85bf8e8a7d594110346483f17da69c7cf3a9d7278d9937c64966acc866446ec1db5dcd51748de61764329a3e70094768767f1e6cc339643949c93915d33844c5ab2047701878fab9632ed78275"),
        ("3ffb5", "a91a4bdb3f26d1ead4914c4ce26b0fd01fa28a6b3f6c924d7093911c08709252e11d3c29df83baa337c6a28ec630c4603c694e666410999452285c21b6cb6bb5ecb4478b228299bce84d8ec6ce12616966d30f7f44cbf41ccb9be93271"),
        ("8d9f503deeeb5d5c423572788bea4d6ae0490c5afca1eeb2a9d75bb98b95878afab9c0da5cf222c377d87384d026cd73826d177200c0d3b1", "4c658e1d2a19cb91a3a9afea1c3245a3111bcf284ae2370fdb442fbe4bc7f9dc256f97848344975"),
    ];

    /// How many primes divide G1's cofactor (the `which` of [`g1_with_torsion`]).
    pub const G1_PRIMES: usize = G1_TORSION.len();
    /// How many primes divide G2's cofactor (the `which` of [`g2_with_torsion`]).
    pub const G2_PRIMES: usize = G2_TORSION.len();

    /// Big-endian hex to the bits of the number, most significant first.
    fn bits(hex: &str) -> Vec<bool> {
        hex.chars().flat_map(|c| {
            let v = c.to_digit(16).expect("hex digit");
            (0..4).rev().map(move |i| (v >> i) & 1 == 1)
        }).collect()
    }

    macro_rules! curve {
        ($name:ident, $torsion:ident, $affine:ty, $proj:ty, $raw:ty, $raw_affine:ty, $bytes:expr,
         $uncompress:ident, $from_affine:ident, $to_affine:ident, $double:ident, $add:ident, $is_inf:ident, $in_group:ident) => {
            /// G + T with G a random subgroup point and T of exact order
            /// `q` = the `which`-th prime of the cofactor (returned, in hex).
            pub fn $name(which: usize, rng: &mut impl RngCore) -> ($affine, &'static str) {
                let (q, cof) = $torsion[which];
                let mul = |p: &$raw, hex: &str| {
                    let mut acc = <$raw>::default();
                    for b in bits(hex) {
                        // SAFETY: valid points in and out (blst allows aliasing).
                        unsafe { $double(&mut acc, &acc) };
                        if b {
                            unsafe { $add(&mut acc, &acc, p) };
                        }
                    }
                    acc
                };
                let t = loop {
                    // A random curve point: a random x with the compression
                    // flag, decompressed (blst checks the curve, not the subgroup).
                    let mut enc = [0u8; $bytes];
                    rng.fill_bytes(&mut enc);
                    enc[0] = (enc[0] & 0x1f) | 0x80 | (enc[0] & 0x20);
                    for i in (0..$bytes).step_by(48) {
                        enc[i] &= if i == 0 { 0xbf } else { 0x0f };
                    }
                    let mut a = <$raw_affine>::default();
                    // SAFETY: `enc` holds the compressed size.
                    if unsafe { $uncompress(&mut a, enc.as_ptr()) } != BLST_ERROR::BLST_SUCCESS {
                        continue;
                    }
                    let mut r = <$raw>::default();
                    unsafe { $from_affine(&mut r, &a) };
                    // The q-primary part of R; then multiplied by q until
                    // the next multiple would vanish: order exactly q.
                    let mut t = mul(&r, cof);
                    if unsafe { $is_inf(&t) } {
                        continue;
                    }
                    loop {
                        let tq = mul(&t, q);
                        if unsafe { $is_inf(&tq) } {
                            break;
                        }
                        t = tq;
                    }
                    break t;
                };
                assert!(unsafe { $is_inf(&mul(&t, q)) }, "T has order q");
                assert!(!unsafe { $in_group(&t) });
                let g: $proj = <$proj>::random(&mut *rng);
                // SAFETY: the blstrs types are repr(transparent) over blst's.
                let g: $raw = unsafe { std::mem::transmute::<$proj, $raw>(g) };
                let mut bad = <$raw>::default();
                unsafe { $add(&mut bad, &g, &t) };
                let mut out = <$raw_affine>::default();
                unsafe { $to_affine(&mut out, &bad) };
                (unsafe { std::mem::transmute::<$raw_affine, $affine>(out) }, q)
            }
        };
    }

    curve!(g1_with_torsion, G1_TORSION, G1Affine, G1Projective, blst_p1, blst_p1_affine, 48,
        blst_p1_uncompress, blst_p1_from_affine, blst_p1_to_affine, blst_p1_double, blst_p1_add_or_double, blst_p1_is_inf, blst_p1_in_g1);
    curve!(g2_with_torsion, G2_TORSION, G2Affine, G2Projective, blst_p2, blst_p2_affine, 96,
        blst_p2_uncompress, blst_p2_from_affine, blst_p2_to_affine, blst_p2_double, blst_p2_add_or_double, blst_p2_is_inf, blst_p2_in_g2);
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;
    use rand::{Rng, SeedableRng};

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

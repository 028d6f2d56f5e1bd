//! The groups the params loader checks points of ([`Subgroup`], blst's
//! per-point and projective checks on the [`crate::curve`] markers) and the
//! batched check's sizes: rounds, digits per group, points per task.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};

use group::Curve as _;

use crate::cpu::msm::{self, Curve};

/// Rounds needed: a bad vector passes all of them with probability ≤ 3⁻⁸¹ < 2⁻¹²⁸.
pub const ROUNDS: usize = 81;
/// The most digits per bucket index on the host: 9 balanced-ternary digits
/// give 9 groups of 9 rounds (exactly 81) over (3⁹ + 1) / 2 = 9,842 buckets.
const MAX_DIGITS: u32 = 9;
/// The most points per task (a task's bucket indices and work lists are
/// a few bytes per point).
pub(super) const RANGE: usize = 1 << 22;
/// The fewest points per task (more threads than that leave some idle).
pub(super) const MIN_RANGE: usize = 1 << 14;

/// How a point's bucket index encodes its digits for one group of rounds.
///
/// - **Unsigned** (the device's): bucket b ∈ [0, 3^count) has the base-3
///   digits of b, each in {0, 1, 2}.
/// - **Signed** (the host's): a point draws w uniform in [−M, M], M =
///   (3^count − 1) / 2, whose balanced-ternary digits (each in {−1, 0, 1})
///   are its digits; it goes to bucket |w| with the sign of w, i.e. negated
///   when w < 0. A digit vector and its negation share a bucket, so there
///   are M + 1 buckets instead of 3^count. Soundness is the same: for a point
///   with a component T of odd order, −T, 0 and T are distinct, so at most
///   one of a round's three digits lets it pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Digits {
    pub count: u32,
    pub signed: bool,
}

impl Digits {
    /// The device's scheme: `count` unsigned digits.
    pub fn unsigned(count: u32) -> Digits {
        Digits { count, signed: false }
    }
    /// Buckets per group.
    pub fn buckets(self) -> usize {
        let all = 3usize.pow(self.count);
        if self.signed {
            all / 2 + 1
        } else {
            all
        }
    }
    /// Bucket index values drawn per group (the range w or b is drawn from).
    pub fn draws(self) -> usize {
        3usize.pow(self.count)
    }
    /// The digits of bucket `b` (`count` of them, least significant first).
    pub fn of(self, mut b: usize, out: &mut [i8]) {
        for d in out.iter_mut().take(self.count as usize) {
            let r = (b % 3) as i8;
            b /= 3;
            *d = if self.signed && r == 2 {
                b += 1;
                -1
            } else {
                r
            };
        }
    }
}

/// Digits per group (rounds per group) for ranges of `n` points on the host:
/// more digits mean fewer groups (additions per point) but more buckets, whose
/// combination costs about digits · buckets additions per group and range.
pub(super) fn digits_for(n: usize) -> Digits {
    (1..=MAX_DIGITS)
        .map(|count| Digits { count, signed: true })
        .min_by_key(|d| {
            let groups = ROUNDS.div_ceil(d.count as usize);
            groups * n + groups * d.count as usize * d.buckets()
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


//! Multi-scalar multiplication and batch addition on the CPU.
//!
//! MSM uses blst's Pippenger (`blst_p{1,2}s_mult_pippenger`) on contiguous
//! affine bases; the input is split into one chunk per rayon thread and the
//! partial sums are added. Scalars arrive in Montgomery form (blstrs `Scalar`)
//! and are converted to blst's canonical little-endian bytes per chunk.
//! Batch addition sums the bases whose bit is set in a bitmap with blst's
//! affine bulk addition (one batched inversion per tree level), also split
//! over threads.

use blst::{blst_fr, blst_scalar, blst_scalar_from_fr, limb_t};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::Group;
use rayon::prelude::*;

/// Points per task below which splitting further does not pay.
const MIN_CHUNK: usize = 1 << 10;

/// A group the CPU backend runs MSMs in: G1 or G2 of BLS12-381.
pub trait Curve: Points {
    /// One single-threaded blst Pippenger over contiguous arrays of equal length ≥ 1.
    fn pippenger(bases: &[Self::Affine], scalars: &[blst_scalar]) -> Self::Projective;
    /// Σ of the points (blst's `blst_p{1,2}s_add`: affine additions in a
    /// tree with one batched inversion per level; points at infinity, equal
    /// and opposite points handled); single-threaded.
    fn sum(points: &[&Self::Affine]) -> Self::Projective;
}

pub use crate::curve::{Points, G1, G2};

macro_rules! blst_pippenger {
    ($bases:expr, $scalars:expr, $affine:ty, $proj:ty, $raw:ty, $raw_affine:ty, $mult:path, $sizeof:path) => {{
        let (bases, scalars) = ($bases, $scalars);
        // SAFETY: the query takes only a count.
        let scratch_bytes = unsafe { $sizeof(bases.len()) };
        let mut scratch = vec![0 as limb_t; scratch_bytes.div_ceil(std::mem::size_of::<limb_t>())];
        // A NULL second pointer tells blst the arrays are contiguous.
        let points: [*const $raw_affine; 2] = [bases.as_ptr() as *const $raw_affine, std::ptr::null()];
        let scals: [*const u8; 2] = [scalars.as_ptr() as *const u8, std::ptr::null()];
        let mut out = <$raw>::default();
        // SAFETY: the blstrs affine type is repr(transparent) over the blst one;
        // both arrays hold `bases.len()` contiguous elements; scratch has the
        // size blst asked for.
        unsafe { $mult(&mut out, points.as_ptr(), bases.len(), scals.as_ptr(), 255, scratch.as_mut_ptr()) };
        // SAFETY: the blstrs projective type is repr(transparent) over the blst one.
        unsafe { std::mem::transmute::<$raw, $proj>(out) }
    }};
}

macro_rules! blst_sum {
    ($points:expr, $proj:ty, $raw:ty, $raw_affine:ty, $add:path) => {{
        let points = $points;
        let mut out = <$raw>::default();
        if !points.is_empty() {
            // SAFETY: `&T` and `*const T` have the same layout, and the blstrs affine type is
            // repr(transparent) over the blst one; every pointer is non-NULL (blst walks the
            // list until a NULL, which it would take as "the rest is contiguous").
            unsafe { $add(&mut out, points.as_ptr() as *const *const $raw_affine, points.len()) };
        }
        // SAFETY: the blstrs projective type is repr(transparent) over the blst one; an
        // all-zero blst point (the empty sum) is the point at infinity.
        unsafe { std::mem::transmute::<$raw, $proj>(out) }
    }};
}

impl Curve for G1 {
    fn pippenger(bases: &[G1Affine], scalars: &[blst_scalar]) -> G1Projective {
        blst_pippenger!(bases, scalars, G1Affine, G1Projective, blst::blst_p1, blst::blst_p1_affine,
            blst::blst_p1s_mult_pippenger, blst::blst_p1s_mult_pippenger_scratch_sizeof)
    }
    fn sum(points: &[&G1Affine]) -> G1Projective {
        blst_sum!(points, G1Projective, blst::blst_p1, blst::blst_p1_affine, blst::blst_p1s_add)
    }
}

impl Curve for G2 {
    fn pippenger(bases: &[G2Affine], scalars: &[blst_scalar]) -> G2Projective {
        blst_pippenger!(bases, scalars, G2Affine, G2Projective, blst::blst_p2, blst::blst_p2_affine,
            blst::blst_p2s_mult_pippenger, blst::blst_p2s_mult_pippenger_scratch_sizeof)
    }
    fn sum(points: &[&G2Affine]) -> G2Projective {
        blst_sum!(points, G2Projective, blst::blst_p2, blst::blst_p2_affine, blst::blst_p2s_add)
    }
}

fn chunk_len(n: usize) -> usize {
    let threads = rayon::current_num_threads().max(1);
    n.div_ceil(threads).max(MIN_CHUNK)
}

/// Canonical little-endian bytes of each scalar, as blst's Pippenger takes them.
fn canonical_scalars(scalars: &[Scalar]) -> Vec<blst_scalar> {
    scalars
        .iter()
        .map(|s| {
            let fr: blst_fr = (*s).into();
            let mut out = blst_scalar::default();
            // SAFETY: both are valid, initialised values of the right type.
            unsafe { blst_scalar_from_fr(&mut out, &fr) };
            out
        })
        .collect()
}

/// Σ scalars[i]·bases[i]. `bases` and `scalars` have equal length (element
/// counts; panics otherwise); bases at infinity (all-zero affine) are allowed.
pub fn msm<C: Curve>(bases: &[C::Affine], scalars: &[Scalar]) -> C::Projective {
    assert_eq!(bases.len(), scalars.len(), "msm: bases vs scalars");
    let step = chunk_len(bases.len());
    bases
        .par_chunks(step)
        .zip(scalars.par_chunks(step))
        .map(|(b, s)| C::pippenger(b, &canonical_scalars(s)))
        .reduce(C::Projective::identity, |a, b| a + b)
}

/// [`msm`] on the calling thread, without rayon: for MSMs too small to be
/// worth the pool, on a thread that must not wait behind the pool's other
/// work (the one holding a device's compute lock).
pub fn msm_here<C: Curve>(bases: &[C::Affine], scalars: &[Scalar]) -> C::Projective {
    assert_eq!(bases.len(), scalars.len(), "msm_here: bases vs scalars");
    if bases.is_empty() {
        return C::Projective::identity();
    }
    C::pippenger(bases, &canonical_scalars(scalars))
}

/// Whether bit `i` of a u64-word bit vector is set.
#[inline]
pub fn bit(bits: &[u64], i: usize) -> bool {
    (bits[i / 64] >> (i % 64)) & 1 == 1
}

/// Σ bases[i] over the i with bit i set in `bitmap` (u64 words, bit i = bit
/// i % 64 of word i / 64; at least `bases.len()` bits).
pub fn batch_add<C: Curve>(bases: &[C::Affine], bitmap: &[u64]) -> C::Projective {
    let step = chunk_len(bases.len()).next_multiple_of(64);
    bases
        .par_chunks(step)
        .enumerate()
        .map(|(ci, chunk)| {
            let selected: Vec<&C::Affine> =
                chunk.iter().enumerate().filter(|&(j, _)| bit(bitmap, ci * step + j)).map(|(_, p)| p).collect();
            C::sum(&selected)
        })
        .reduce(C::Projective::identity, |a, b| a + b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use group::Curve as _;
    use group::prime::PrimeCurveAffine;
    use rand::SeedableRng;

    fn naive<C: Curve>(bases: &[C::Affine], scalars: &[Scalar]) -> C::Projective
    where
        C::Projective: From<C::Affine> + std::ops::Mul<Scalar, Output = C::Projective>,
    {
        bases.iter().zip(scalars).fold(C::Projective::identity(), |acc, (b, s)| acc + C::Projective::from(*b) * *s)
    }

    #[test]
    fn msm_matches_naive_sum_with_zero_one_and_infinity_cases() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for n in [1usize, 3, 100, 3000] {
            let mut bases: Vec<G1Affine> = (0..n).map(|_| G1Projective::random(&mut rng).to_affine()).collect();
            let mut scalars: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
            bases[0] = G1Affine::identity();
            if n > 2 {
                scalars[1] = Scalar::ZERO;
                scalars[2] = Scalar::ONE;
                bases[n - 1] = bases[n / 2];
            }
            assert_eq!(msm::<G1>(&bases, &scalars), naive::<G1>(&bases, &scalars), "n = {n}");
            assert_eq!(msm_here::<G1>(&bases, &scalars), naive::<G1>(&bases, &scalars), "n = {n}, on this thread");
        }
        assert_eq!(msm_here::<G1>(&[], &[]), G1Projective::identity());
        let bases: Vec<G2Affine> = (0..50).map(|_| G2Projective::random(&mut rng).to_affine()).collect();
        let scalars: Vec<Scalar> = (0..50).map(|_| Scalar::random(&mut rng)).collect();
        assert_eq!(msm::<G2>(&bases, &scalars), naive::<G2>(&bases, &scalars));
        assert_eq!(msm_here::<G2>(&bases, &scalars), naive::<G2>(&bases, &scalars));
    }

    #[test]
    fn batch_add_sums_exactly_the_selected_bases() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        let n: usize = 2500;
        let mut bases: Vec<G1Affine> = (0..n).map(|_| G1Projective::random(&mut rng).to_affine()).collect();
        bases[5] = G1Affine::identity();
        let bitmap: Vec<u64> = (0..n.div_ceil(64)).map(|_| rand::Rng::gen(&mut rng)).collect();
        let want = (0..n).filter(|&i| bit(&bitmap, i)).fold(G1Projective::identity(), |a, i| a + bases[i]);
        assert_eq!(batch_add::<G1>(&bases, &bitmap), want);
        let g2: Vec<G2Affine> = (0..300).map(|_| G2Projective::random(&mut rng).to_affine()).collect();
        let want2 = (0..300).filter(|&i| bit(&bitmap, i)).fold(G2Projective::identity(), |a, i| a + g2[i]);
        assert_eq!(batch_add::<G2>(&g2, &bitmap), want2);
    }

    /// The cases an affine addition tree must special-case: equal points
    /// (doubling), opposite points (sum at infinity), points at infinity,
    /// all selected and none selected.
    #[test]
    fn batch_add_handles_doubling_opposites_and_infinity() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let p = G1Projective::random(&mut rng).to_affine();
        let q = G1Projective::random(&mut rng).to_affine();
        let mut bases = vec![p; 700];
        for i in (0..700).step_by(3) {
            bases[i] = -p;
        }
        bases[10] = G1Affine::identity();
        bases[11] = q;
        bases[12] = -q;
        let naive = |b: &[G1Affine], m: &[u64]| {
            (0..b.len()).filter(|&i| bit(m, i)).fold(G1Projective::identity(), |a, i| a + b[i])
        };
        let all = vec![u64::MAX; 11];
        assert_eq!(batch_add::<G1>(&bases, &all), naive(&bases, &all));
        let none = vec![0u64; 11];
        assert_eq!(batch_add::<G1>(&bases, &none), G1Projective::identity());
        let some: Vec<u64> = (0..11).map(|_| rand::Rng::gen(&mut rng)).collect();
        assert_eq!(batch_add::<G1>(&bases, &some), naive(&bases, &some));
        let pair = [p, -p];
        assert_eq!(batch_add::<G1>(&pair, &[3]), G1Projective::identity());
        let g = G2Projective::random(&mut rng).to_affine();
        let g2 = vec![g; 100];
        let want = (0..100).fold(G2Projective::identity(), |a, _| a + g);
        assert_eq!(batch_add::<G2>(&g2, &[u64::MAX, u64::MAX]), want);
    }
}

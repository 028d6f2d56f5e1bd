//! Bucket accumulation with affine additions whose inversions are batched
//! across buckets (Montgomery's trick: one inversion per batch of up to
//! [`BATCH`] additions into distinct buckets). Summing each bucket on its
//! own (blst's bulk addition) pays one inversion per bucket and tree level,
//! which dominates when buckets hold tens of points.

use blst::{blst_fp, blst_fp2, blst_p1_affine, blst_p2_affine};

/// Bit 15 of a bucket index: the point enters its bucket negated.
pub(super) const NEGATED: u16 = 1 << 15;

/// Additions per batched inversion.
const BATCH: usize = 1024;

/// A base field (Fp or Fp2) through blst.
pub trait Field: Copy + Default {
    fn mul(&self, b: &Self) -> Self;
    fn sqr(&self) -> Self;
    fn add(&self, b: &Self) -> Self;
    fn sub(&self, b: &Self) -> Self;
    /// 1/self (self ≠ 0); variable time: the points are public.
    fn inv(&self) -> Self;
    fn is_zero(&self) -> bool;
    fn eq(&self, b: &Self) -> bool;
    fn one() -> Self;
}

macro_rules! field {
    ($t:ty, $mul:ident, $sqr:ident, $add:ident, $sub:ident, $inv:ident, $one:expr) => {
        impl Field for $t {
            #[inline]
            fn mul(&self, b: &Self) -> Self {
                let mut r = Self::default();
                // SAFETY: valid field elements in, a valid location out.
                unsafe { blst::$mul(&mut r, self, b) };
                r
            }
            #[inline]
            fn sqr(&self) -> Self {
                let mut r = Self::default();
                // SAFETY: as above.
                unsafe { blst::$sqr(&mut r, self) };
                r
            }
            #[inline]
            fn add(&self, b: &Self) -> Self {
                let mut r = Self::default();
                // SAFETY: as above.
                unsafe { blst::$add(&mut r, self, b) };
                r
            }
            #[inline]
            fn sub(&self, b: &Self) -> Self {
                let mut r = Self::default();
                // SAFETY: as above.
                unsafe { blst::$sub(&mut r, self, b) };
                r
            }
            fn inv(&self) -> Self {
                let mut r = Self::default();
                // SAFETY: as above.
                unsafe { blst::$inv(&mut r, self) };
                r
            }
            #[inline]
            fn is_zero(&self) -> bool {
                *self == Self::default()
            }
            #[inline]
            fn eq(&self, b: &Self) -> bool {
                self == b
            }
            fn one() -> Self {
                $one
            }
        }
    };
}

/// 1 in Montgomery form (R mod p), from blst's generator arithmetic: x/x.
fn fp_one() -> blst_fp {
    // SAFETY: blst's generator is a static, valid point.
    let x = unsafe { (*blst::blst_p1_affine_generator()).x };
    x.mul(&x.inv())
}

field!(blst_fp, blst_fp_mul, blst_fp_sqr, blst_fp_add, blst_fp_sub, blst_fp_eucl_inverse, fp_one());
field!(blst_fp2, blst_fp2_mul, blst_fp2_sqr, blst_fp2_add, blst_fp2_sub, blst_fp2_eucl_inverse, blst_fp2 { fp: [fp_one(), blst_fp::default()] });

/// An affine point of blst (all-zero coordinates: the point at infinity).
pub trait Affine: Copy + Default {
    type F: Field;
    fn x(&self) -> &Self::F;
    fn y(&self) -> &Self::F;
    fn new(x: Self::F, y: Self::F) -> Self;
}

impl Affine for blst_p1_affine {
    type F = blst_fp;
    fn x(&self) -> &blst_fp {
        &self.x
    }
    fn y(&self) -> &blst_fp {
        &self.y
    }
    fn new(x: blst_fp, y: blst_fp) -> Self {
        blst_p1_affine { x, y }
    }
}

impl Affine for blst_p2_affine {
    type F = blst_fp2;
    fn x(&self) -> &blst_fp2 {
        &self.x
    }
    fn y(&self) -> &blst_fp2 {
        &self.y
    }
    fn new(x: blst_fp2, y: blst_fp2) -> Self {
        blst_p2_affine { x, y }
    }
}

fn is_inf<A: Affine>(p: &A) -> bool {
    p.x().is_zero() && p.y().is_zero()
}

/// Sums of the points that fall in each bucket: `sums[b]` is Σ ±points[i]
/// over the i whose `index[i]` names bucket b in its low 15 bits, the point
/// negated where bit 15 is set (the point at infinity for an empty bucket). Bucket 0 is skipped (its sum is left at infinity). Curves of odd
/// order only (no point with y = 0), as BLS12-381's G1 and G2 curves are.
pub fn accumulate<A: Affine>(points: &[A], index: &[u16], sums: &mut [A]) {
    // 1 costs an inversion to make (`fp_one`): once per call, not per batch.
    let one = A::F::one();
    let two = one.add(&one);
    let c = Consts { one, two, three: two.add(&one) };
    sums.iter_mut().for_each(|s| *s = A::default());
    // Which batch a bucket is in (0: none yet); a second point for a bucket
    // already in the batch waits for the next one.
    let mut stamp = vec![0u32; sums.len()];
    let mut batch: Vec<(u16, usize)> = Vec::with_capacity(BATCH);
    let mut num: Vec<A::F> = vec![A::F::default(); BATCH];
    let mut den: Vec<A::F> = vec![A::F::default(); BATCH];
    let mut prefix: Vec<A::F> = vec![A::F::default(); BATCH];
    let mut cancel: Vec<bool> = vec![false; BATCH];
    let mut pending: Vec<usize> = (0..points.len()).collect();
    let mut waiting: Vec<usize> = Vec::new();
    let mut round = 0u32;
    while !pending.is_empty() {
        for &i in &pending {
            let b = (index[i] & !NEGATED) as usize;
            let p = &points[i];
            if b == 0 || is_inf(p) {
                continue;
            }
            if stamp[b] == round + 1 {
                waiting.push(i);
                continue;
            }
            if is_inf(&sums[b]) {
                sums[b] = signed(p, index[i]);
                continue;
            }
            stamp[b] = round + 1;
            batch.push((b as u16, i));
            if batch.len() == BATCH {
                flush(points, index, sums, &mut batch, &mut num, &mut den, &mut prefix, &mut cancel, &c);
                round += 1;
            }
        }
        flush(points, index, sums, &mut batch, &mut num, &mut den, &mut prefix, &mut cancel, &c);
        round += 1;
        std::mem::swap(&mut pending, &mut waiting);
        waiting.clear();
    }
}

/// `p`, negated when `index` has the [`NEGATED`] bit.
#[inline]
fn signed<A: Affine>(p: &A, index: u16) -> A {
    if index & NEGATED == 0 {
        *p
    } else {
        negate(p)
    }
}

/// −p (infinity stays infinity: its y is 0).
pub(super) fn negate<A: Affine>(p: &A) -> A {
    A::new(*p.x(), A::F::default().sub(p.y()))
}

/// 1, 2 and 3 in the field (Montgomery form).
struct Consts<F> {
    one: F,
    two: F,
    three: F,
}

/// Adds each batched point into its bucket (distinct buckets, neither at infinity).
#[allow(clippy::too_many_arguments)]
fn flush<A: Affine>(
    points: &[A],
    index: &[u16],
    sums: &mut [A],
    batch: &mut Vec<(u16, usize)>,
    num: &mut [A::F],
    den: &mut [A::F],
    prefix: &mut [A::F],
    cancel: &mut [bool],
    c: &Consts<A::F>,
) {
    if batch.is_empty() {
        return;
    }
    let mut acc = c.one;
    for (k, &(b, i)) in batch.iter().enumerate() {
        let (q, p) = (&sums[b as usize], &signed(&points[i], index[i]));
        cancel[k] = false;
        if q.x().eq(p.x()) {
            if q.y().eq(p.y()) {
                // Doubling: λ = 3x² / 2y.
                num[k] = c.three.mul(&q.x().sqr());
                den[k] = c.two.mul(q.y());
            } else {
                // P + (−P): the bucket empties.
                cancel[k] = true;
                num[k] = A::F::default();
                den[k] = c.one;
            }
        } else {
            num[k] = p.y().sub(q.y());
            den[k] = p.x().sub(q.x());
        }
        prefix[k] = acc;
        acc = acc.mul(&den[k]);
    }
    let mut inv = acc.inv();
    for k in (0..batch.len()).rev() {
        let (b, i) = batch[k];
        let d_inv = inv.mul(&prefix[k]);
        inv = inv.mul(&den[k]);
        let q = sums[b as usize];
        if cancel[k] {
            sums[b as usize] = A::default();
            continue;
        }
        let p = &signed(&points[i], index[i]);
        let lambda = num[k].mul(&d_inv);
        let x3 = lambda.sqr().sub(q.x()).sub(p.x());
        let y3 = lambda.mul(&q.x().sub(&x3)).sub(q.y());
        sums[b as usize] = A::new(x3, y3);
    }
    batch.clear();
}

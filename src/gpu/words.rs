//! Host buffers as the device sees them: field elements and affine points
//! viewed as their u64 limbs (blst's layouts), and scalars back from limbs.

use blstrs::{G1Affine, G2Affine, Scalar};

/// Types that are plain arrays of u64 limbs (blst layouts).
pub trait Limbs: Copy {
    const WORDS: usize;
}
impl Limbs for Scalar {
    const WORDS: usize = 4;
}
impl Limbs for G1Affine {
    const WORDS: usize = 12;
}
impl Limbs for G2Affine {
    const WORDS: usize = 24;
}

/// Views field elements or affine points as their u64 limbs (for upload).
pub fn limbs<T: Limbs>(v: &[T]) -> &[u64] {
    assert_eq!(std::mem::size_of::<T>(), 8 * T::WORDS);
    // SAFETY: T is repr(transparent) over blst structs made only of u64 limb
    // arrays (size checked above), so its bytes are T::WORDS aligned u64s.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u64, v.len() * T::WORDS) }
}

/// Scalars from limbs (for download).
pub fn from_limbs(words: &[u64]) -> Vec<Scalar> {
    words
        .chunks_exact(4)
        .map(|w| Scalar::from(blst::blst_fr { l: [w[0], w[1], w[2], w[3]] }))
        .collect()
}


//! The groups the GPU kernels are instantiated for ([`DeviceGroup`] on the
//! shared [`crate::curve`] markers): host types, device point sizes, the
//! kernels of each group, and how a Jacobian result comes back to blst.

use blstrs::{G1Projective, G2Projective};

use super::kernels::{Kernel, PointKernel};
use super::words::Limbs;
pub use crate::curve::{Points, G1, G2};

/// A group the kernels are instantiated for: its host types, the sizes of
/// its device points in u64 words and its instances of the per-group kernels.
/// (Affine bases: blst's layout, infinity all zero, read as u64 limbs.)
pub trait DeviceGroup: Points<Affine: Limbs> {
    /// u64 words of an xyzz point (4 coordinates) and of a Jacobian one (3).
    const XYZZ_WORDS: usize;
    const JAC_WORDS: usize;
    /// One Jacobian point from its `JAC_WORDS` words (x, y, z, Montgomery form).
    fn from_jacobian(words: &[u64]) -> Self::Projective;
    /// This group's instance of `k`.
    fn kernel(k: PointKernel) -> Kernel {
        k.of(Self::NAME)
    }
}


impl DeviceGroup for G1 {
    const XYZZ_WORDS: usize = 24;
    const JAC_WORDS: usize = 18;
    fn from_jacobian(w: &[u64]) -> G1Projective {
        let mut p = blst::blst_p1::default();
        p.x.l.copy_from_slice(&w[0..6]);
        p.y.l.copy_from_slice(&w[6..12]);
        p.z.l.copy_from_slice(&w[12..18]);
        // SAFETY: G1Projective is repr(transparent) over blst_p1 (Jacobian, Montgomery).
        unsafe { std::mem::transmute::<blst::blst_p1, G1Projective>(p) }
    }
}

impl DeviceGroup for G2 {
    const XYZZ_WORDS: usize = 48;
    const JAC_WORDS: usize = 36;
    fn from_jacobian(w: &[u64]) -> G2Projective {
        let mut p = blst::blst_p2::default();
        for (k, fp2) in [&mut p.x, &mut p.y, &mut p.z].into_iter().enumerate() {
            fp2.fp[0].l.copy_from_slice(&w[12 * k..12 * k + 6]);
            fp2.fp[1].l.copy_from_slice(&w[12 * k + 6..12 * k + 12]);
        }
        // SAFETY: G2Projective is repr(transparent) over blst_p2 (Jacobian, Montgomery).
        unsafe { std::mem::transmute::<blst::blst_p2, G2Projective>(p) }
    }
}
